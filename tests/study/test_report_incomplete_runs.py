"""Runs without a tree of their own: recorded, shown, never ranked nor in a gap
table; run status counts learner time-outs and runner kills apart; rank
tests only where they can separate methods."""

import json
import re

import pandas as pd
import pytest
from report_doubles import METHODS, grid, protocol, run, write_study

from odtstudy.study import make_report
from odtstudy.study._solver_tree import has_solver_tree, solver_tree_column
from odtstudy.study._worker import execute_run
from odtstudy.study.report import heuristic_gaps
from odtstudy.study.report._build import _rank_tests
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.report._status import status_table
from odtstudy.study.results import ResultsStore

DATASETS = tuple(f"d{i:02d}" for i in range(11))  # enough for a Friedman test
ADAPTER = {**METHODS, "gosdt": "gosdt"}


def _fallback(record):
    """The adapter's solver gave nothing: a majority leaf at the limit."""
    record.update(
        learner_status="timeout",
        optimal=False,
        claimed_optimal=False,
        objective=40.0,
        lower_bound=None,
        test_acc=0.5,
        train_acc=0.6,
        stats={"no_solver_tree": True, "tool": "gosdt"},
    )
    return record


def _killed(record):
    """Killed by the runner at its hard deadline; the incumbent was kept."""
    record.update(
        status="timeout",
        learner_status=None,
        optimal=False,
        claimed_optimal=False,
        objective=30.0,
        fit_time_s=12.5,
        test_acc=0.99,
        error="killed in fit after 13.0 s; best tree reported at 0.2 s kept",
    )
    return record


def _adapter_study():
    """gosdt's runs: fold 0 a fallback leaf on every dataset, fold 1 killed
    on d00..d05 (its best test accuracy); cart is a heuristic with a gap."""
    proto = protocol(methods=ADAPTER)
    records = []
    for record in grid(datasets=DATASETS, depths=(2,), proto=proto):
        if record["method"] == "gosdt":
            if record["fold"] == 0:
                record = _fallback(record)
            elif record["dataset"] < "d06":
                record = _killed(record)
        if record["method"] == "cart":
            record.update(objective=12.0, test_acc=0.7)
        records.append(record)
    return records


@pytest.fixture(scope="module")
def adapter_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    store = write_study(out / "synthetic", _adapter_study())
    text = make_report("synthetic", output_dir=out).read_text()
    return StudyRecords.from_frame(store.load()), text


def test_fallback_and_killed_runs_have_no_tree_of_their_own(adapter_report):
    records, _ = adapter_report
    frame = records.frame
    gosdt = frame[frame["method"] == "gosdt"]
    fallback = gosdt["learner_status"] == "timeout"
    killed = gosdt["status"] == "timeout"
    assert fallback.sum() == 11 and killed.sum() == 6
    assert not gosdt.loc[fallback | killed, "has_solver_tree"].any()
    assert gosdt.loc[~(fallback | killed), "has_solver_tree"].all()
    cells = records.cells.set_index(["dataset", "method"])
    assert not cells.loc[(slice(None), "gosdt"), "complete"].any()
    # fallback leaf and kept incumbent: trees, neither its own
    assert cells.loc[("d00", "gosdt"), "n_not_own"] == 2
    assert cells.loc[("d00", "gosdt"), "n_trees"] == 0


def test_killed_adapter_is_never_ranked_nor_in_the_gap_table(adapter_report):
    records, text = adapter_report
    test = _rank_tests(records)[2]
    assert test.tested and "gosdt" in test.left_out and "gosdt" not in test.ranks
    assert "gosdt" not in set(heuristic_gaps(records.frame)["method"])
    assert set(heuristic_gaps(records.frame)["method"]) == {"cart"}
    gap_section = text.split("## Heuristics vs the proven optimum", 1)[1]
    gap_section = gap_section.split("## ", 1)[0]
    assert "| cart |" in gap_section and "gosdt" not in gap_section


def test_run_status_counts_learner_timeouts_and_kills_apart(adapter_report):
    records, text = adapter_report
    table = status_table(records.frame).set_index("method")
    row = table.loc["gosdt"]
    assert row["runs"] == 22 and row["returned"] == 16
    assert row["learner time-out"] == 11 and row["killed"] == 6
    assert row["killed, tree kept"] == 6 and row["not its own"] == 11
    assert row["proven optimal"] == 5
    assert table.loc["dl85", "learner time-out"] == 0
    assert table.loc["dl85", "killed"] == 0
    assert "gosdt: fallback leaf (11)" in text
    summary = text.split("## Summary", 1)[1].split("## ", 1)[0]
    assert re.search(r"\| 2 \| gosdt \|[^\n]*\| 0/11 \| 5/22 \| 5/22 \|", summary)


def test_rank_test_runs_with_enough_datasets_and_draws_its_cd(adapter_report):
    _, text = adapter_report
    assert "Friedman p = " in text and "k = 3 methods on N = 11 datasets" in text
    assert "](cd-test_acc-d2.png)" in text


def test_no_rank_test_for_16_methods_on_3_datasets(tmp_path):
    labels = {f"m{i:02d}": "cart" for i in range(16)}
    proto = protocol(methods=labels)
    records = grid(datasets=("a", "b", "c"), depths=(2,), proto=proto)
    for record in records:
        record["test_acc"] = 0.5 + 0.02 * int(record["method"][1:])
    write_study(tmp_path / "synthetic", records)
    path = make_report("synthetic", output_dir=tmp_path)
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith("**Depth 2, test acc"))
    assert "no rank test: k = 16 methods on N = 3 datasets, Nemenyi CD = 13.3" in line
    assert "of at most k − 1 = 15 rank units" in line
    assert "more than 10 datasets" in line
    assert "best" not in text.lower().split("## consistency")[0]
    assert "Friedman p" not in text and "avg rank" not in text
    assert not list(path.parent.glob("cd-*"))


def test_fitted_on_all_rows_ranks_nothing(tmp_path):
    proto = protocol(folds=1)
    write_study(tmp_path / "synthetic", grid(datasets=DATASETS, proto=proto))
    text = make_report("synthetic", output_dir=tmp_path).read_text()
    assert "No ranks: the study fits on all rows" in text
    assert "Friedman" not in text.split("## Statistics", 1)[0]
    assert "## Training accuracy per depth (fitted on all rows)" in text
    assert "training acc (fitted on all rows), mean over complete cells" in text


@pytest.mark.parametrize(
    ("stats", "status", "fit_time", "optimal", "expected"),
    [
        ({}, "ok", 1.0, False, True),
        ({"no_solver_tree": True}, "ok", 1.0, False, False),
        # MILP: the solver gave no solution, CART returned unchanged
        ({"returned": "cart", "milp_objective": None}, "ok", 1.0, False, False),
        # ... unless its bound proved CART optimal
        ({"returned": "cart", "milp_objective": None}, "ok", 1.0, True, True),
        ({"returned": "cart", "milp_objective": 3.0}, "ok", 1.0, False, True),
        # CP-SAT found nothing: the hint (or a leaf) returned
        ({"status": "UNKNOWN", "hint": "cart"}, "ok", 1.0, False, False),
        ({"status": "FEASIBLE", "hint": "cart"}, "ok", 1.0, False, True),
        ({}, "ok", 12.1, False, False),  # after 10 s × 1.1 + 1 s
        ({}, "timeout", 12.0, False, False),
        ({}, "error", None, False, False),
    ],
)
def test_has_solver_tree_rules(stats, status, fit_time, optimal, expected):
    assert has_solver_tree(json.dumps(stats), status, fit_time, 10.0, optimal) is (
        expected
    )


def test_older_records_get_the_column_from_their_stats(tmp_path):
    old = run("a", 2, "dl85", stats={"no_solver_tree": True})
    new = run("a", 2, "cpsat", has_solver_tree=False)
    plain = run("a", 2, "cart")
    failed = run("a", 2, "dl85", fold=1, has_tree=False)
    frame = write_study(tmp_path, [old, new, plain, failed]).load()
    assert "has_solver_tree" not in old
    assert frame["has_solver_tree"].tolist() == [False, False, True, False]
    assert frame["has_solver_tree"].dtype == bool
    parquet = pd.read_parquet(ResultsStore(tmp_path).export_parquet())
    assert parquet["has_solver_tree"].tolist() == [False, False, True, False]
    # a frame without the column at all (built by hand)
    bare = pd.DataFrame([{"has_tree": True, "status": "ok", "stats": "{}"}])
    assert solver_tree_column(bare).tolist() == [True]


def test_the_worker_writes_the_column():
    outcome = execute_run(
        {
            "dataset": "zoo-1",
            "method": "cart",
            "params": {},
            "depth": 2,
            "fold": 0,
            "n_folds": 2,
            "seed": 0,
            "time_limit": 10.0,
            "max_thresholds": 8,
        }
    )
    assert outcome["has_solver_tree"] is True
