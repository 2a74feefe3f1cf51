"""The frontier benchmark's arithmetic and its README table."""

import json
import math
from pathlib import Path

import pytest
from benchmark_module import load_benchmark, rebuilt_region

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def frontier():
    return load_benchmark("frontier")


def test_primal_integral_counts_the_gap_until_each_improvement(frontier):
    # gap 1 for 2 s, then (20 - 10) / 20 = 0.5 for 3 s, then 0 (the best) for 5 s
    value = frontier.primal_integral([[2.0, 20.0]], 5.0, 10.0, 10.0, 10.0)
    assert value == pytest.approx(2.0 + 1.5)
    # no tree at all: the whole limit at gap 1
    assert frontier.primal_integral([], 10.0, math.nan, 10.0, 10.0) == 10.0


def _fit(seconds, errors, optimal, trace=()):
    return {
        "seconds": seconds,
        "errors": errors,
        "optimal": optimal,
        "trace": [list(p) for p in trace],
        "note": "",
    }


def _run():
    def inst(name, ours, theirs):
        return {
            "name": name,
            "rows": 10,
            "features": 2,
            "fits": {"a": ours, "b": theirs},
        }

    return {
        "command": "python benchmarks/frontier.py",
        "commit": "abc1234",
        "date": "2026-11-26T00:00:00Z",
        "machine": "test",
        "kind": "binary",
        "depth": 6,
        "time_limit": 60.0,
        "methods": ["a", "b"],
        "instances": [
            inst("both", _fit(1.0, 5, True), _fit(4.0, 5, True)),
            inst("ours", _fit(2.0, 3, True), _fit(60.0, 4, False)),
            inst("none-win", _fit(60.0, 7, False), _fit(60.0, 9, False)),
            inst("none-lose", _fit(60.0, 9, False), _fit(60.0, 7, False)),
        ],
    }


def test_summary_counts_proofs_ratios_and_the_trees_at_the_limit(frontier):
    stats = frontier.summary(_run())
    assert stats["a"]["proven"] == 2 and stats["b"]["proven"] == 1
    assert stats["b"]["time_ratio"] == pytest.approx(0.25)
    assert stats["b"]["both_proven"] == 1
    assert (stats["b"]["no_worse"], stats["b"]["unproven"]) == (1, 2)


def test_readme_region_is_rebuilt_from_the_records(frontier, tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    (records / "binary-d6-60s.json").write_text(json.dumps(_run()))
    text = rebuilt_region(frontier.update_readme, records, tmp_path, "frontier")
    assert "| binary d6, 60 s, 4 sets (abc1234) | a | 2 | reference |" in text
    assert "| b | 1 | 0.25 (1) | 1 of 2 |" in text


def test_committed_readme_table_equals_the_committed_records(frontier):
    readme = frontier.README.read_text()
    start, end = "<!-- figures:frontier -->\n", "<!-- /figures:frontier -->"
    region = readme.split(start, 1)[1].split(end, 1)[0]
    assert region == frontier.readme_table(frontier.RECORDS)


def test_a_run_cut_short_says_how_many_sets_it_ran(frontier, tmp_path):
    run = {**_run(), "planned": 14}
    (tmp_path / "numeric-d3-300s.json").write_text(json.dumps(run))
    table = frontier.readme_table(tmp_path)
    assert "binary d6, 60 s, 4 of 14 sets (run cut short) (abc1234)" in table
