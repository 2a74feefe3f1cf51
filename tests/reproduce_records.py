"""What the reproduction tests (``tests/reproduce/test_*.py``) share: synthetic
study records, a claims module's results checked as a verdict table, and the
smoke run of a reproduction with its report's verdict table checked."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from odtstudy import cli
from odtstudy.reproduce import PAPER_HEADING, VERDICTS, verdict_table_problems
from odtstudy.reproduce._claims import CHECK_VERDICTS
from odtstudy.study.report._records import StudyRecords

__all__ = ["checked_results", "grid", "run_row", "run_smoke", "study_records",
           "verdict_rows"]  # fmt: skip


def run_row(dataset, method, depth, fold, **values) -> dict:
    """One recorded run with a tree (seed 0, status ok, not optimal).

    ``values`` override the defaults (``test_acc`` 0.9, ``train_acc`` 1.0,
    ``objective`` 0, ``stats`` empty, ...); a dict ``stats`` is written as
    JSON, as the results store does.
    """
    row = {
        "run_id": f"{dataset}-{depth}-{method}-{fold}", "protocol_id": "p",
        "dataset": dataset, "method": method, "depth": depth, "fold": fold,
        "seed": 0, "status": "ok", "has_tree": True, "optimal": False,
        "claimed_optimal": False, "test_acc": 0.9, "train_acc": 1.0,
        "objective": 0.0, "n_train": 50, "fit_time_s": 0.1, "fit_mem_mb": 1.0,
        "time_limit": 60.0, "stats": {},
    }  # fmt: skip
    row.update(values)
    if isinstance(row["stats"], dict):
        row["stats"] = json.dumps(row["stats"])
    return row


def study_records(rows: list, folds: int, methods: dict | None = None):
    """The records of one protocol (``folds`` folds, seed 0) made of ``rows``.

    ``methods``: label -> ``{"method", "params", "time_limit"}``; default:
    every label of ``rows`` is its own method, without parameters.
    """
    frame = pd.DataFrame(rows)
    if methods is None:
        methods = {
            m: {"method": m, "params": {}, "time_limit": 60}
            for m in sorted(frame["method"].unique())
        }
    frame["protocol"] = json.dumps({"folds": folds, "seeds": [0], "methods": methods})
    return StudyRecords.from_frame(frame)


def grid(values: dict, datasets, depths) -> dict:
    """``{(dataset, depth, method): value}`` for every data set and depth."""
    return {(d, k, m): v for d in datasets for k in depths for m, v in values.items()}


def checked_results(module, records, published) -> dict:
    """``module.evaluate(records, published)`` as claim id -> ClaimResult,
    checked: one row per claim in the data file's order, a complete table."""
    results = module.evaluate(records, published)
    entries = [*published.claims, *published.checks]
    assert [r.claim for r in results] == [c["id"] for c in entries]
    for r in results:
        assert r.verdict in (CHECK_VERDICTS if r.check else VERDICTS)
        assert r.check or r.sensitivity  # every claim says how stable it is
    assert verdict_table_problems(results, published) == []
    return {r.claim: r for r in results}


def run_smoke(name: str, output) -> Path:
    """Run ``odtstudy reproduce <name> --scale smoke``; its study folder."""
    argv = ["reproduce", name, "--scale", "smoke", "--output", str(output)]
    assert cli.main([*argv, "--quiet"]) == 0
    return Path(output) / f"{name}-smoke"


def verdict_rows(text: str, published) -> list:
    """The verdict table's rows of a report, checked: the report opens with
    it, and it has one row per claim, in order, each with a verdict."""
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == f"## {PAPER_HEADING}"
    assert verdict_table_problems(text, published) == []
    section = text.split(f"## {PAPER_HEADING}")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| **")]
    claims, checks = rows[: len(published.claims)], rows[len(published.claims) :]
    assert len(checks) == len(published.checks)
    for claim, row in zip(published.claims, claims):
        assert row.startswith(f"| **{claim['id']}**")
        assert row.split(" | ")[4] in VERDICTS
    for check, row in zip(published.checks, checks):
        assert row.startswith(f"| **{check['id']}**")
        assert row.split(" | ")[4] in CHECK_VERDICTS
    return claims
