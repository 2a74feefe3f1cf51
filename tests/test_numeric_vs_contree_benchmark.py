"""The numeric-vs-ConTree benchmark's record summary and its README table."""

import json
import math
from pathlib import Path

import pytest
from benchmark_module import load_benchmark, rebuilt_region

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("numeric_vs_contree")


def _fit(seconds, errors, optimal=True, note=""):
    return {"seconds": seconds, "errors": errors, "optimal": optimal, "note": note}


def _run():
    def inst(name, depth, ours, contree):
        return {
            "name": name,
            "depth": depth,
            "rows": 10,
            "features": 2,
            "thresholds": 9,
            "fits": {"ours": ours, "contree": contree},
        }

    return {
        "command": "python benchmarks/numeric_vs_contree.py",
        "commit": "abc1234",
        "date": "2026-11-27T00:00:00Z",
        "machine": "test",
        "note": "",
        "depths": [2, 3],
        "time_limit": 60.0,
        "repeats": 3,
        "solvers": ["ours", "contree"],
        "planned": 3,
        "instances": [
            inst("a", 2, _fit(1.0, 5), _fit(4.0, 5)),
            inst("b", 2, _fit(2.0, 3), _fit(1.0, 3)),
            inst("a", 3, _fit(9.0, 2), _fit(60.0, 2, optimal=False)),
            inst("b", 3, _fit(math.nan, math.nan, False, "killed"), _fit(3.0, 1)),
            inst("c", 2, _fit(1.0, 4), _fit(1.0, 5)),
        ],
        "skipped": [],
    }


def test_summary_counts_proofs_ratios_and_mismatches(bench):
    stats = bench.summary(_run())
    d2, d3 = stats[2], stats[3]
    assert d2["proven"] == {"ours": 3, "contree": 3}
    assert d2["ratios"]["contree"] == {
        "a": pytest.approx(0.25),
        "b": pytest.approx(2.0),
        "c": pytest.approx(1.0),
    }
    assert d2["mismatches"] == [("c", "ours", "contree")]
    assert d3["proven"] == {"ours": 1, "contree": 1} and d3["ratios"]["contree"] == {}
    assert d3["only"]["contree"] == {"ours": ["a"], "contree": ["b"]}


def test_at_the_limit_counts_fewer_same_and_more_errors(bench):
    run = _run()
    errors = [("x", 3, 4), ("y", 5, 5), ("z", 7, 6), ("w", 1, math.nan)]
    run["instances"] += [
        {**run["instances"][0], "name": n, "depth": 4, "fits": {
            "ours": _fit(60.0, mine, optimal=False),
            "contree": _fit(60.0, theirs, optimal=False),
        }}
        for n, mine, theirs in errors
    ]  # fmt: skip
    run["depths"].append(4)
    d4 = bench.summary(run)[4]
    assert d4["at_limit"]["contree"] == {"fewer": ["x"], "same": ["y"], "more": ["z"]}
    assert "| 1 / 1 / 1 (more: z) |" in bench.readme_table(run)


def test_readme_region_is_rebuilt_from_the_record(bench, tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps(_run()))
    text = rebuilt_region(bench.update_readme, record, tmp_path, "numeric-vs-contree")
    # geometric mean of 0.25, 2 and 1
    assert "| 2 | 3 | 3 / 3 | 0.79 (3) | 1 of 3 | 2.00 (b) | — | 0 / 0 / 0 |" in text
    assert (
        "| 3 | 2 | 1 / 1 | none both prove | — | — | ours: a; contree: b | 0 / 0 / 0 |"
        in text
    )
    assert "**objective mismatches: 1**" in text


def test_a_run_over_chosen_datasets_writes_no_record_unless_asked(bench):
    args = bench.argparse.Namespace(record=None, datasets=["uci/iris"])
    assert bench._record_path(args) is None
    args.datasets = None
    assert bench._record_path(args) == bench.RECORD
    args.record = "-"
    assert bench._record_path(args) is None


def test_committed_readme_table_equals_the_committed_record(bench):
    if not bench.RECORD.exists():
        pytest.fail("benchmarks/results/numeric_vs_contree.json is not committed")
    readme = bench.README.read_text()
    start = "<!-- figures:numeric-vs-contree -->\n"
    end = "<!-- /figures:numeric-vs-contree -->"
    region = readme.split(start, 1)[1].split(end, 1)[0]
    assert region == bench.readme_table(json.loads(bench.RECORD.read_text()))


def test_printed_summary_lists_failures_and_mismatches_with_their_fits(bench):
    lines = []
    mismatches = bench._summary(lambda line="": lines.append(line), _run())
    assert mismatches == [("c", 2, "ours", "contree", (1.0, 4, True), (1.0, 5, True))]
    assert "depth 3: proven / 2: ours 1, contree 1" in lines
    assert "  failed (error, crash or hard timeout): ours 1, contree 0" in lines
    assert any(line.startswith("!!! MISMATCH ('c', 2") for line in lines)
