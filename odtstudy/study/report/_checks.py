"""Cross-checks between methods on the same run: proven optima and gaps to them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from odtstudy.datasets import dataset_info
from odtstudy.study.registry import get_method
from odtstudy.study.report._records import (
    RUN_KEYS,
    single_tree_runs,
    tuned_choice,
    with_defaults,
)
from odtstudy.study.report._regression import (
    REGRESSION,
    objective_tolerance,
    relative_gap,
    study_task,
)

__all__ = [
    "below_optimum",
    "consistency_counts",
    "consistency_violations",
    "heuristic_gaps",
]

_KEYS = [*RUN_KEYS, "problem", "objective_family"]
#: Every threshold of every numeric feature: what a numeric exact learner
#: searches, and what a 0/1 learner sees after binarising at every midpoint.
ALL_THRESHOLDS = "all thresholds"


def _learner_data(label: str, protocol: dict) -> str:
    spec = protocol.get("methods", {}).get(label, {})
    if "data" in spec:
        return spec["data"]
    try:
        return get_method(spec.get("method", label)).data
    except KeyError:
        return "binary"


def _max_thresholds(label: str, protocol: dict) -> int | None:
    """k when a numeric learner searches at most k thresholds per feature
    (DL8.5's ``thresholds=k``): a restricted problem, not every threshold."""
    params = protocol.get("methods", {}).get(label, {}).get("params", {})
    k = params.get("thresholds")
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _dataset_kind(name: str) -> str | None:
    try:
        return dataset_info(name)["kind"]
    except (KeyError, ValueError):
        return None


def with_problem(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``problem``: runs with the same problem have the same optimum.

    On a numeric dataset, a numeric learner and a 0/1 learner given every
    midpoint search the same trees (all thresholds). Otherwise the problem is
    the matrix the learner saw, identified by its number of features (a 0/1
    learner given at most k thresholds per feature, or a numeric one told to
    search at most k, solves a restricted problem). A tuned learner's tree
    solves the problem of the parameters its inner cross-validation chose
    (``"...; tuned to max_depth 2"``): never the untuned learner's problem.
    """
    if "problem" in frame:  # added already
        return frame
    kinds = {name: _dataset_kind(name) for name in frame["dataset"].unique()}
    problems = []
    for row in frame.itertuples(index=False):
        text = getattr(row, "protocol", None)
        protocol = json.loads(text) if isinstance(text, str) else {}
        kind = kinds.get(row.dataset)
        every_midpoint = protocol.get("max_thresholds", 8) in (None, "all")
        numeric_learner = _learner_data(row.method, protocol) == "numeric"
        k = _max_thresholds(row.method, protocol) if numeric_learner else None
        if kind == "numeric" and k is not None:
            problems.append(f"{row.n_features:g} features, at most {k} thresholds")
        elif kind == "numeric" and (every_midpoint or numeric_learner):
            problems.append(ALL_THRESHOLDS)
        else:  # the matrix the learner saw, identified by its width
            problems.append(f"{row.n_features:g} features")
    tuned = tuned_choice(frame)
    problems = [
        f"{problem}; tuned to {choice}" if choice else problem
        for problem, choice in zip(problems, tuned)
    ]
    return frame.assign(problem=problems)


def consistency_violations(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs where two methods both proved optimality but disagree on the objective.

    Runs are matched on dataset, depth, fold and seed, on the problem (see
    :func:`with_problem`: ConTree on numeric data and DL8.5 on the data
    binarised at every midpoint solve the same one) and on the objective family
    (records without one are single trees minimising misclassifications).
    Forests are not compared. Disagreements between two different tools
    (say odtstudy and a published solver) come first. Objectives agree when
    equal at 6 decimals; on regression records (float sums of losses),
    within a relative tolerance
    (:func:`~odtstudy.study.report._regression.objective_tolerance`).

    Returns
    -------
    DataFrame
        One row per disagreeing run: the keys, ``tools`` (how many different
        tools proved an optimum there) and ``objectives`` (method -> value).
    """
    rows = [
        dict(zip(_KEYS, key), tools=group["tool"].nunique(), objectives=values)
        for key, group, values, differ in _proven_runs(frame)
        if differ
    ]
    table = pd.DataFrame(rows, columns=[*_KEYS, "tools", "objectives"])
    return table.sort_values("tools", ascending=False, kind="stable").reset_index(
        drop=True
    )


def _proven_runs(frame: pd.DataFrame):
    """``(key, runs, method -> objective, differ)`` for each run (the keys of
    :func:`consistency_violations`) where some method proved optimality."""
    regression = study_task(frame) == REGRESSION
    frame = with_problem(single_tree_runs(with_defaults(frame)))
    proven = frame[(frame["status"] == "ok") & frame["optimal"]]
    for key, group in proven.groupby(_KEYS):
        values = group.set_index("method")["objective"]
        if regression:
            spread = values.max() - values.min()
            differ = bool(spread > objective_tolerance(values.abs().max()))
        else:
            values = values.round(6)
            differ = values.nunique() > 1
        yield key, group, values.to_dict(), differ


def consistency_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per objective family: the exact methods that proved an optimum, the
    runs where two or more of them did (compared), and the disagreements
    among those (:func:`consistency_violations`)."""
    family_at = _KEYS.index("objective_family")
    counts: dict = {}
    for key, group, _, differ in _proven_runs(frame):
        row = counts.setdefault(key[family_at], [set(), 0, 0])
        row[0].update(group["method"])
        if group["method"].nunique() > 1:
            row[1] += 1
            row[2] += differ
    return pd.DataFrame(
        [
            {
                "objective family": family,
                "methods that proved an optimum": ", ".join(sorted(methods)),
                "runs compared": compared,
                "disagreements": disagree,
            }
            for family, (methods, compared, disagree) in sorted(counts.items())
        ],
        columns=[
            "objective family",
            "methods that proved an optimum",
            "runs compared",
            "disagreements",
        ],
    )


def heuristic_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """Training-objective gap of every non-proven run to the proven optimum.

    For each run that did not prove optimality, the gap is its objective minus
    the optimum another method proved on the same fold, data (same features)
    and objective family. ``gap_points`` is the gap in training-accuracy
    points (``100 * gap / n_train``); on regression records ``relative_gap``
    replaces it: ``100 * gap / optimum``, in percent of the proven optimum
    (the objective is a sum of losses, not a count of errors). A negative gap
    means a method reports a
    better tree than a proven optimum: a bug. Runs without a tree of their
    own (a fallback leaf, a warm start returned unchanged, a late tree:
    ``has_solver_tree``) are left out: their objective is not the method's.
    """
    regression = study_task(frame) == REGRESSION
    frame = with_problem(single_tree_runs(with_defaults(frame)))
    returned = (frame["status"] == "ok") & frame["has_solver_tree"]
    ok = frame[returned & frame["objective"].notna()]
    optimum = ok[ok["optimal"]].groupby(_KEYS)["objective"].min().rename("optimum")
    others = ok[~ok["optimal"]].join(optimum, on=_KEYS, how="inner")
    gap = others["objective"] - others["optimum"]
    if regression:
        unit = "relative_gap"
        others = others.assign(
            gap=gap, relative_gap=relative_gap(gap, others["optimum"])
        )
    else:
        unit = "gap_points"
        rows = others["n_train"] if "n_train" in others else np.nan
        others = others.assign(gap=gap, gap_points=100.0 * gap / rows)
    return others[[*_KEYS, "method", "objective", "optimum", "gap", unit]]


def below_optimum(gaps: pd.DataFrame) -> pd.Series:
    """Which gaps (of :func:`heuristic_gaps`) are below the proven optimum by
    more than rounding: 1e-6, or on regression records the relative
    tolerance of their optimum."""
    if "relative_gap" in gaps:
        return gaps["gap"] < -objective_tolerance(gaps["optimum"])
    return gaps["gap"] < -1e-6
