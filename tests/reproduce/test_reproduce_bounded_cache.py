"""The ``bounded-cache`` reproduction: its smoke run (study invariants of the
bounded DL8.5 cache, the report's verdict table) and every verdict branch of
its claims module on synthetic records."""

import json
import math

import pandas as pd
import pytest
from reproduce_records import checked_results, run_smoke, verdict_rows

from odtstudy.reproduce import claims_module, load_published, verdict_table_problems
from odtstudy.study import load_config
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.results import ResultsStore

bounded_cache = claims_module("bounded-cache")

NAME = "bounded-cache"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return run_smoke(NAME, tmp_path_factory.mktemp("bounded-cache"))


@pytest.mark.ci_slow
def test_smoke_report_opens_with_a_complete_verdict_table(smoke):
    verdict_rows((smoke / "report.md").read_text(), load_published(NAME))
    assert verdict_table_problems(smoke / "report.md") == []  # from the file


def test_smoke_bounded_runs_reach_the_unbounded_optimum(smoke):
    config = load_config(NAME, scale="smoke")
    assert "dl85-unbounded" in [m.label for m in config.methods]
    df = ResultsStore(smoke).load()
    assert len(df) == len(config.datasets) * len(config.depths) * len(config.methods)
    assert (df["status"] == "ok").all(), df[["method", "status", "error"]]
    assert df["optimal"].astype(bool).all()
    bounded_seen = 0

    def parsed(value):
        return value if isinstance(value, dict) else json.loads(value)

    for (dataset, depth), group in df.groupby(["dataset", "depth"]):
        ref = group[group["method"] == "dl85-unbounded"]
        assert len(ref) == 1
        ref_peak = parsed(ref["stats"].iloc[0])["cache_peak_entries"]
        for row in group.itertuples():
            assert row.objective == ref["objective"].iloc[0], (dataset, row.method)
            stats, params = parsed(row.stats), parsed(row.params)
            if params.get("max_cache_fraction"):
                bounded_seen += 1
                # the probe's unbounded search is the unbounded run's
                assert stats["probe_peak_entries"] == ref_peak
                bound = math.ceil(params["max_cache_fraction"] * ref_peak)
                assert stats["max_cache_size"] == bound
                assert stats["cache_peak_entries"] <= bound
                assert stats["cache_wipes"] > 0
    assert bounded_seen == len(df) - df["method"].eq("dl85-unbounded").sum()


def test_smoke_deterministic_claims_hold(smoke):
    frame = ResultsStore(smoke).load()
    records = StudyRecords.from_frame(frame)
    verdicts = {
        r.claim: r.verdict
        for r in bounded_cache.evaluate(records, load_published(NAME))
    }
    assert verdicts["optimum-kept"] == "pass"
    assert verdicts["entries-within-bound"] == "pass"
    assert verdicts["entries-rise-as-bound-tightens"] == "reproduced"
    # smoke fits take milliseconds: no time claim is judged on them
    assert verdicts["time-rises-as-bound-tightens"] == "not comparable"
    assert verdicts["binoct-times-out"] == "not comparable"


# -- synthetic records ------------------------------------------------------

STRATEGY_COST = {"reuses": 1.0, "descendants": 1.1, "all_non_useful": 1.3}
BOUND_COST = {750: 1.2, 500: 1.5, 120: 2.0}
REF = {"time": 10.0, "created": 1000, "peak": 1000, "mem": 100.0}


def _label(strategy, bound, wipe):
    return f"dl85-{strategy}-{bound}-w{int(wipe * 100)}"


def _grid():
    grid = [(s, b, w) for s in STRATEGY_COST for b in (750, 500) for w in (0.4, 0.3)]
    return [*grid, ("reuses", 120, 0.4)]


def _row(dataset, method, *, time, created, peak, mem, objective=10.0,
         optimal=True, wipes=0, rtime=0.0):  # fmt: skip
    stats = {
        "cache_entries_created": created,
        "cache_peak_entries": peak,
        "cache_wipes": wipes,
        "reconstitution_ms": rtime,
    }
    return {
        "dataset": dataset, "depth": 5, "fold": 0, "seed": 0, "method": method,
        "status": "ok", "has_tree": True, "optimal": optimal,
        "objective": objective, "fit_time_s": time, "fit_mem_mb": mem,
        "stats": json.dumps(stats),
    }  # fmt: skip


#: Six (data set, depth) units: the fewest a test is made on (MIN_UNITS).
SIX = tuple(f"d{i}" for i in range(1, 7))


def _records(change=None, ref=REF, binoct=None, datasets=SIX):
    """Records where every claim of the paper holds; ``change(row, strategy,
    bound, wipe)`` edits a bounded run's row (returns it). Each data set is
    one unit of the tests (one depth)."""
    methods = {"dl85-unbounded": {"method": "dl85", "params": {}}}
    rows = []
    for dataset in datasets:
        rows.append(_row(dataset, "dl85-unbounded", **ref))
        for strategy, bound, wipe in _grid():
            label = _label(strategy, bound, wipe)
            methods[label] = {
                "method": "dl85",
                "params": {
                    "max_cache_size": bound,
                    "wipe_factor": wipe,
                    "wipe_strategy": strategy,
                },
            }
            factor = BOUND_COST[bound] * STRATEGY_COST[strategy]
            row = _row(
                dataset,
                label,
                time=ref["time"] * factor,
                created=ref["created"] * factor,
                peak=bound,
                mem=ref["mem"] * bound / ref["peak"],
                wipes=3,
                rtime=0.2,
            )
            if change is not None:
                row = change(row, strategy, bound, wipe)
            rows.append(row)
        if binoct is not None:
            methods["binoct"] = {"method": "binoct", "params": {}}
            rows.append(_row(dataset, "binoct", **binoct))
    return StudyRecords(pd.DataFrame(rows), 1, methods)


def _verdicts(records):
    results = checked_results(bounded_cache, records, load_published(NAME))
    return {claim: r.verdict for claim, r in results.items()}


def _with_stat(row, key, value):
    """``row`` with one of its stats set (what a ``change`` returns)."""
    stats = json.loads(row["stats"])
    stats[key] = value
    row["stats"] = json.dumps(stats)
    return row


def test_every_claim_reproduced_when_the_paper_holds():
    verdicts = _verdicts(_records(binoct=dict(time=300, created=0, peak=0, mem=900,
                                              optimal=False)))  # fmt: skip
    checks = {"optimum-kept", "entries-within-bound"}
    claims = {c: v for c, v in verdicts.items() if c not in checks}
    assert set(claims.values()) == {"reproduced"}, verdicts
    assert {verdicts[c] for c in checks} == {"pass"}


def test_optimum_kept_branches():
    def worse(row, strategy, bound, wipe):
        if strategy == "descendants" and bound == 500:
            row["objective"] = 11.0
        return row

    def no_wipes(row, *_):
        return _with_stat(row, "cache_wipes", 0)

    assert _verdicts(_records(worse))["optimum-kept"] == "fail"
    assert _verdicts(_records(no_wipes))["optimum-kept"] == "not comparable"


def _scale_time(multipliers):
    def change(row, strategy, bound, wipe):
        row["fit_time_s"] = REF["time"] * BOUND_COST[bound] * multipliers[strategy]
        return row

    return change


def test_strategy_ranking_reversed_is_not_reproduced():
    reversed_cost = {"reuses": 1.3, "descendants": 1.1, "all_non_useful": 1.0}
    # against a chance of one in three, 0 of 6 units is not significant
    # ((2/3)^6 = 0.088); 0 of 8 is ((2/3)^8 = 0.039)
    six = _verdicts(_records(_scale_time(reversed_cost)))
    assert six["all-non-useful-slowest"] == "inconclusive"
    eight = tuple(f"d{i}" for i in range(1, 9))
    verdicts = _verdicts(_records(_scale_time(reversed_cost), datasets=eight))
    assert verdicts["all-non-useful-slowest"] == "not reproduced"
    assert verdicts["reuses-fastest"] == "not reproduced"


def test_strategy_ranking_in_a_majority_of_units_is_partly():
    def change(row, strategy, bound, wipe):
        cost = dict(STRATEGY_COST)
        if row["dataset"] in ("d5", "d6"):  # reuses and all_non_useful swap
            cost["reuses"], cost["all_non_useful"] = 1.3, 1.0
        row["fit_time_s"] = REF["time"] * BOUND_COST[bound] * cost[strategy]
        return row

    verdicts = _verdicts(_records(change))  # 4 of 6 units: p = 0.10
    assert verdicts["all-non-useful-slowest"] == "partly"
    assert verdicts["reuses-fastest"] == "partly"


def test_a_unit_counts_once_whatever_its_groups():
    """Two units with 13 groups each: 26 concordant groups are not 26 units."""
    verdicts = _verdicts(_records(datasets=("d1", "d2")))
    for claim in (
        "all-non-useful-slowest", "reuses-fastest", "time-rises-as-bound-tightens",
        "time-proportional-to-entries",
    ):  # fmt: skip
        assert verdicts[claim] == "inconclusive", claim
    results = checked_results(
        bounded_cache, _records(datasets=("d1", "d2")), load_published(NAME)
    )
    assert "n = 2: too few for a test" in results["reuses-fastest"].reason
    assert "p =" not in results["time-proportional-to-entries"].ours
    # entries created are deterministic counts: no test, no floor
    assert verdicts["entries-rise-as-bound-tightens"] == "reproduced"


def test_rise_claims_reversed_are_not_reproduced():
    def falling(row, strategy, bound, wipe):
        factor = {750: 0.9, 500: 0.8, 120: 0.7}[bound]
        row["fit_time_s"] = REF["time"] * factor
        return _with_stat(row, "cache_entries_created", REF["created"] * factor)

    verdicts = _verdicts(_records(falling))
    assert verdicts["entries-rise-as-bound-tightens"] == "not reproduced"
    assert verdicts["time-rises-as-bound-tightens"] == "not reproduced"


def test_time_proportional_branches():
    def inverse(row, strategy, bound, wipe):
        # time factor falls as the entries factor rises, and is 3x lower
        entries = BOUND_COST[bound] * STRATEGY_COST[strategy]
        row["fit_time_s"] = REF["time"] / (3 * entries)
        return row

    def doubled(row, strategy, bound, wipe):
        row["fit_time_s"] *= 2  # same order, twice the entries factor
        return row

    assert _verdicts(_records(inverse))["time-proportional-to-entries"] == (
        "not reproduced"
    )
    assert _verdicts(_records(doubled))["time-proportional-to-entries"] == "partly"


def test_time_claims_need_an_unbounded_fit_of_a_second():
    fast = dict(REF, time=0.05)
    verdicts = _verdicts(_records(ref=fast))
    for claim in (
        "all-non-useful-slowest", "reuses-fastest", "time-rises-as-bound-tightens",
        "time-proportional-to-entries", "time-factor-moderate",
    ):  # fmt: skip
        assert verdicts[claim] == "not comparable", claim
    assert verdicts["entries-rise-as-bound-tightens"] == "reproduced"
    assert verdicts["memory-reduced"] == "reproduced"


def test_entries_within_bound_violated():
    def over(row, strategy, bound, wipe):
        return _with_stat(row, "cache_peak_entries", bound + 1)

    assert _verdicts(_records(over))["entries-within-bound"] == "fail"


def _table2(key, value):
    def change(row, strategy, bound, wipe):
        if bound == 120:
            row[key] = value
        return row

    return change


def test_memory_reduced_branches():
    mem = REF["mem"]
    assert _verdicts(_records(_table2("fit_mem_mb", 0.8 * mem)))["memory-reduced"] == (
        "partly"
    )
    assert _verdicts(_records(_table2("fit_mem_mb", 1.2 * mem)))["memory-reduced"] == (
        "not reproduced"
    )


def test_memory_and_time_factor_need_the_table2_setting():
    records = _records(datasets=("d1",))
    records.frame = records.frame[~records.frame["method"].str.contains("-120-")]
    verdicts = _verdicts(records)
    assert verdicts["memory-reduced"] == "not comparable"
    assert verdicts["time-factor-moderate"] == "not comparable"


def test_time_factor_branches():
    slow = _table2("fit_time_s", 4 * REF["time"])
    assert _verdicts(_records(slow))["time-factor-moderate"] == "not reproduced"

    def one_slow(row, strategy, bound, wipe):
        if bound == 120 and row["dataset"] == "d1":
            row["fit_time_s"] = 4 * REF["time"]
        return row

    records = _records(one_slow, datasets=("d1", "d2", "d3"))
    assert _verdicts(records)["time-factor-moderate"] == "partly"


def test_reconstitution_branches():
    def slow(row, strategy, bound, wipe):
        return _with_stat(row, "reconstitution_ms", 12.0)

    assert _verdicts(_records(slow))["reconstitution-fast"] == "not reproduced"


def test_binoct_branches():
    assert _verdicts(_records())["binoct-times-out"] == "not comparable"
    solved = dict(time=3, created=0, peak=0, mem=900, optimal=True)
    assert _verdicts(_records(binoct=solved))["binoct-times-out"] == "not reproduced"


def test_our_value_gives_the_depth5_analogue():
    records = _records()
    row = {"dataset": "d1", "method": "dl85-reuses-12pct-w40", "metric": "time_factor"}
    assert (
        bounded_cache.our_value(records, row)
        == "2.00 (depth 5, bound 12% of the entries)"
    )
    row = {"dataset": "d1", "method": "dl85-unbounded", "metric": "cache_entries"}
    assert bounded_cache.our_value(records, row) == "1,000 entries (depth 5)"
    assert bounded_cache.our_value(records, dict(row, dataset="anneal")) is None


def test_relative_bounds_resolved_a_few_entries_apart_form_one_group():
    """A relative bound resolves per run from a probe fit, whose entries can
    differ by a few (its first descent stops on the clock): runs of one
    configured fraction are still compared with each other."""
    records = _records()
    jitter = iter(range(1, 1000))
    for label, method in records.methods.items():
        bound = method["params"].pop("max_cache_size", None)
        if bound is not None:
            method["params"]["max_cache_fraction"] = bound / REF["peak"]
    rows = []
    for row in records.frame.to_dict("records"):
        params = records.methods[row["method"]]["params"]
        if "max_cache_fraction" in params:
            resolved = params["max_cache_fraction"] * REF["peak"] + next(jitter)
            row = _with_stat(row, "max_cache_size", resolved)
        rows.append(row)
    verdicts = _verdicts(StudyRecords(pd.DataFrame(rows), 1, records.methods))
    assert verdicts["all-non-useful-slowest"] == "reproduced"
    assert verdicts["reuses-fastest"] == "reproduced"
    assert verdicts["time-rises-as-bound-tightens"] == "reproduced"
