"""Did a run return a tree of its own? (the record column ``has_solver_tree``)

A run has a tree of its own when the learner returned, within its allowed
time, a tree its own search produced. It has none when

- the run did not return (error, out of memory, killed at the hard deadline,
  even if the runner kept a tree the learner had reported before);
- an adapter's solver gave no tree and a majority leaf stands in for it
  (``stats["no_solver_tree"]``);
- a MILP learner's solver produced no solution (it crashed, was killed or
  never started) and the learner returned its CART warm start unchanged
  (``stats["returned"] == "cart"`` without a MILP objective), unless the
  solver's bound proved that tree optimal;
- CP-SAT found no solution (``stats["status"]`` ``UNKNOWN``) and the learner
  returned its hint or a single leaf, unproven;
- the tree came after the allowed time (``fit_time_s`` > time limit × 1.1 +
  1 s).

Such a run makes its cell incomplete: it is never ranked, never in a gap
table, and counted per method in the report.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from odtstudy._deadline import allowed_fit_time

__all__ = [
    "has_solver_tree",
    "no_solver_tree_reason",
    "solver_tree_column",
    "stats_dict",
]


def stats_dict(stats) -> dict:
    """A record's ``stats`` as a dict (a JSON string parsed; else ``{}``)."""
    if isinstance(stats, dict):
        return stats
    if isinstance(stats, str):
        try:
            value = json.loads(stats)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def no_solver_tree_reason(
    stats, status="ok", fit_time_s=None, time_limit=None, optimal=False
) -> str | None:
    """Why a run has no tree of its own, or ``None`` when it has one.

    Parameters
    ----------
    stats : dict or str
        The run's ``stats`` (a dict, or its JSON text).
    status : str, default="ok"
        The run's ``status``: anything but ``"ok"`` means the fit did not
        return.
    fit_time_s : float, default=None
        Seconds the fit took (``None``: unknown, not checked).
    time_limit : float, default=None
        The run's time limit in seconds (``None``: no limit).
    optimal : bool, default=False
        The run proved optimality within its allowed time.

    Returns
    -------
    str or None
        A short reason (``"not returned"``, ``"fallback leaf"``, ``"warm
        start returned"``, ``"after the allowed time"``) or ``None``.
    """
    if status != "ok":
        return "not returned"
    stats = stats_dict(stats)
    if stats.get("no_solver_tree"):
        return "fallback leaf"
    if not optimal:
        if stats.get("returned") == "cart" and stats.get("milp_objective") is None:
            return "warm start returned"
        if str(stats.get("status", "")).startswith("UNKNOWN") and "hint" in stats:
            return "warm start returned"
    seconds, limit = _number(fit_time_s), _number(time_limit)
    if seconds is not None and limit is not None and seconds > allowed_fit_time(limit):
        return "after the allowed time"
    return None


def has_solver_tree(
    stats, status="ok", fit_time_s=None, time_limit=None, optimal=False
) -> bool:
    """True when the run returned a tree of its own in time.

    Same parameters as :func:`no_solver_tree_reason`.
    """
    return no_solver_tree_reason(stats, status, fit_time_s, time_limit, optimal) is None


def solver_tree_column(frame: pd.DataFrame) -> pd.Series:
    """``has_solver_tree`` of every record: as written, else derived.

    Records written before the column existed (or whose value is missing)
    get it from their ``status``, ``stats``, ``fit_time_s``, ``time_limit``
    and ``optimal`` (:func:`has_solver_tree`); a run without any tree never
    has one of its own.

    Parameters
    ----------
    frame : DataFrame
        Records (``stats`` as dicts or JSON text).

    Returns
    -------
    Series of bool
    """
    written = (
        frame["has_solver_tree"]
        if "has_solver_tree" in frame
        else pd.Series(None, index=frame.index, dtype=object)
    )
    values = []
    for row, value in zip(frame.to_dict("records"), written):
        if not _truthy(row.get("has_tree", True)):
            values.append(False)
        elif isinstance(value, (bool, np.bool_)):
            values.append(bool(value))
        else:
            values.append(
                has_solver_tree(
                    row.get("stats"),
                    row.get("status", "ok"),
                    row.get("fit_time_s"),
                    row.get("time_limit"),
                    _truthy(row.get("optimal", False)),
                )
            )
    return pd.Series(values, index=frame.index, dtype=bool)


def _truthy(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return isinstance(value, (int, float, np.number)) and value == 1
