"""The threads benchmark's summary and its README table."""

import json
import math
from pathlib import Path

import pytest
from benchmark_module import load_benchmark, rebuilt_region

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def threads():
    return load_benchmark("dl85_threads")


def _fit(seconds, objective, optimal=True, bound=None):
    return {
        "seconds": seconds,
        "objective": objective,
        "optimal": optimal,
        "lower_bound": objective if bound is None else bound,
    }


def _run():
    def inst(kind, name, one, two):
        return {"kind": kind, "name": name, "rows": 10, "fits": {"1": one, "2": two}}

    return {
        "command": "python benchmarks/dl85_threads.py",
        "commit": "abc1234",
        "date": "2026-11-27T00:00:00Z",
        "machine": "test",
        "note": "",
        "jobs": 2,
        "cap": 60.0,
        "instances": [
            inst("binary", "fast", _fit(1.0, 5), _fit(0.5, 5)),
            inst("binary", "slow", _fit(10.0, 5), _fit(4.0, 5)),
            inst("binary", "slower", _fit(40.0, 7), _fit(10.0, 7)),
            inst("binary", "killed", _fit(math.nan, math.nan), _fit(50.0, 3)),
            inst("numeric", "differs", _fit(8.0, 3), _fit(6.0, 3, False, 2)),
        ],
    }


def test_summary_takes_the_slow_instances_that_both_fits_end(threads):
    stats = threads.summary(_run())
    binary = stats["binary"]
    assert (binary["instances"], binary["ended"], binary["different"]) == (4, 3, 0)
    assert binary["slow"] == {"slow": pytest.approx(0.4), "slower": pytest.approx(0.25)}
    assert stats["numeric"]["different"] == 1


def test_readme_region_is_rebuilt_from_the_record(threads, tmp_path):
    record = tmp_path / "threads.json"
    record.write_text(json.dumps(_run()))
    text = rebuilt_region(threads.update_readme, record, tmp_path, "threads")
    # geometric mean of 0.4 and 0.25
    assert (
        "| binary depth 6 | 2 of 4 | 0.32 | 0.25–0.40 | 0 of 3 "
        "| killed (n_jobs=1; n_jobs=2: 50 s) |" in text
    )
    assert "| numeric depth 3 | 1 of 1 | 0.75 | 0.75–0.75 | 1 of 1 | — |" in text


def test_committed_readme_table_equals_the_committed_record(threads):
    if not threads.RECORD.exists():
        pytest.fail("benchmarks/results/dl85_threads.json is not committed")
    readme = threads.README.read_text()
    start, end = "<!-- figures:threads -->\n", "<!-- /figures:threads -->"
    region = readme.split(start, 1)[1].split(end, 1)[0]
    assert region == threads.readme_table(json.loads(threads.RECORD.read_text()))
