"""Cross-checks between methods on the same run: proven optima and gaps to them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy.study._records import RUN_KEYS, single_tree_runs, with_defaults

__all__ = ["consistency_violations", "heuristic_gaps"]

_KEYS = [*RUN_KEYS, "n_features", "objective_family"]


def consistency_violations(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs where two methods both proved optimality but disagree on the objective.

    Runs are matched on dataset, depth, fold and seed, on the number of
    features the learner saw (a numeric learner and a 0/1 learner on the
    binarised data solve different problems) and on the objective family
    (records without one are single trees minimising misclassifications).
    Forests are not compared. Disagreements between two different tools
    (say odtstudy and a published solver) come first.

    Returns
    -------
    DataFrame
        One row per disagreeing run: the keys, ``tools`` (how many different
        tools proved an optimum there) and ``objectives`` (method -> value).
    """
    frame = single_tree_runs(with_defaults(frame))
    proven = frame[(frame["status"] == "ok") & frame["optimal"]]
    rows = []
    for key, group in proven.groupby(_KEYS):
        values = group.set_index("method")["objective"].round(6)
        if values.nunique() > 1:
            rows.append(
                dict(
                    zip(_KEYS, key),
                    tools=group["tool"].nunique(),
                    objectives=values.to_dict(),
                )
            )
    table = pd.DataFrame(rows, columns=[*_KEYS, "tools", "objectives"])
    return table.sort_values("tools", ascending=False, kind="stable").reset_index(
        drop=True
    )


def heuristic_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """Training-objective gap of every non-proven run to the proven optimum.

    For each run that did not prove optimality, the gap is its objective minus
    the optimum another method proved on the same fold, data (same features)
    and objective family. ``gap_points`` is the gap in training-accuracy
    points (``100 * gap / n_train``). A negative gap means a method reports a
    better tree than a proven optimum: a bug.
    """
    frame = single_tree_runs(with_defaults(frame))
    ok = frame[(frame["status"] == "ok") & frame["objective"].notna()]
    optimum = ok[ok["optimal"]].groupby(_KEYS)["objective"].min().rename("optimum")
    others = ok[~ok["optimal"]].join(optimum, on=_KEYS, how="inner")
    gap = others["objective"] - others["optimum"]
    rows = others["n_train"] if "n_train" in others else np.nan
    others = others.assign(gap=gap, gap_points=100.0 * gap / rows)
    return others[[*_KEYS, "method", "objective", "optimum", "gap", "gap_points"]]
