"""The run-status table: how each method's runs ended.

A *learner time-out* is a fit that returned at its time limit with its best
tree (``learner_status == "timeout"``); a *runner kill* is a fit the runner
stopped at its hard deadline (``status == "timeout"``), keeping the tree the
learner had reported before, if any. The two are counted apart, as are the
runs that returned a tree not of their own (``has_solver_tree``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy._deadline import allowed_fit_time
from odtstudy.study._solver_tree import no_solver_tree_reason

__all__ = ["STATUS_RULE", "not_own_reasons", "status_table"]

STATUS_RULE = (
    "`returned`: the fit returned (of which `learner time-out`: at its time "
    "limit, with its best tree so far); `killed`: stopped by the runner at "
    "its hard deadline (allowed time + grace), of which `tree kept`: the "
    "learner had reported a tree before; `not its own`: the fit returned a "
    "tree its solver did not produce in time (fallback leaf, warm start "
    "returned unchanged, tree after the allowed time); `proven optimal`: "
    "within the allowed time; `optimal after the limit`: claimed after it; "
    "`over the allowed time`: fits that took longer than the time a learner "
    "may take (its limit T × 1.1 + 1 s), killed runs included; `slowest fit / "
    "allowed`: the longest fit time over the allowed time (above 1: the "
    "limit was not honoured)."
)


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: how its runs ended (counts).

    Parameters
    ----------
    frame : DataFrame
        Records with ``status``, ``learner_status``, ``has_tree``,
        ``has_solver_tree``, ``optimal`` and ``claimed_optimal``.

    Returns
    -------
    DataFrame
        One row per method: ``runs``, ``returned``, ``learner time-out``,
        ``killed``, ``killed, tree kept``, ``error``, ``memout``,
        ``not its own``, ``proven optimal``, ``optimal after the limit``
        (and ``other status`` when a run has another status), ``over the
        allowed time`` and ``slowest fit / allowed``.
    """
    ok = frame["status"] == "ok"
    killed = frame["status"] == "timeout"
    known = ok | killed | frame["status"].isin(["error", "memout"])
    columns = {
        "runs": pd.Series(True, index=frame.index),
        "returned": ok,
        "learner time-out": ok & (frame["learner_status"] == "timeout"),
        "killed": killed,
        "killed, tree kept": killed & frame["has_tree"],
        "error": frame["status"] == "error",
        "memout": frame["status"] == "memout",
        "not its own": ok & frame["has_tree"] & ~frame["has_solver_tree"],
        "proven optimal": ok & frame["optimal"],
        "optimal after the limit": frame["claimed_optimal"] & ~frame["optimal"],
    }
    if not known.all():
        columns["other status"] = ~known
    allowed = frame["time_limit"].astype(float).map(allowed_fit_time)
    seconds = frame["fit_time_s"].astype(float)
    columns["over the allowed time"] = (seconds > allowed) | killed
    flags = pd.DataFrame(columns).astype(int)
    table = flags.groupby(frame["method"]).sum()
    share = (seconds / allowed).groupby(frame["method"]).max().reindex(table.index)
    table["slowest fit / allowed"] = [
        "" if np.isnan(value) else f"{value:.2f}" for value in share
    ]
    return table.reset_index(names="method")


def not_own_reasons(frame: pd.DataFrame) -> dict:
    """Method -> {reason: count} for the returned runs whose tree is not
    their own (see :func:`odtstudy.study._solver_tree.no_solver_tree_reason`)."""
    runs = frame[(frame["status"] == "ok") & frame["has_tree"]]
    runs = runs[~runs["has_solver_tree"]]
    reasons: dict = {}
    for row in runs.to_dict("records"):
        why = (
            no_solver_tree_reason(
                row.get("stats"),
                "ok",
                row.get("fit_time_s"),
                row.get("time_limit"),
                bool(row.get("optimal")),
            )
            or "recorded so"
        )
        counts = reasons.setdefault(row["method"], {})
        counts[why] = counts.get(why, 0) + 1
    return reasons
