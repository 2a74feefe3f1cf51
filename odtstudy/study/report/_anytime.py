"""Anytime traces of exact methods: curves and primal integrals.

A learner records ``stats_["anytime"]``: ``[time, objective]`` or
``[time, objective, bound]`` points (seconds since ``fit`` started), one per
improvement. The primal integral (Berthold, 2013) of a run over a horizon
``T`` is ``∫_0^T p(t) dt`` with ``p(t) = 1`` before the first incumbent and
``|z(t) - z*| / max(|z(t)|, |z*|)`` after it (0 when both are 0), where
``z*`` is the best objective any single-tree method reached on the same
run (for a tuned learner's refit: any run tuned to the same choice): lower is
better, in seconds.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from odtstudy.study.report._records import RUN_KEYS, tuned_choice

__all__ = ["anytime_curves", "primal_integral", "primal_integrals"]

# a tuned run's refit searches the depth its inner cross-validation chose
_INSTANCE = [*RUN_KEYS, "n_features", "objective_family", "tuned_to"]


def _trace(stats) -> list:
    try:
        return json.loads(stats or "{}").get("anytime") or []
    except (TypeError, ValueError, AttributeError):
        return []


def anytime_curves(frame: pd.DataFrame, methods) -> pd.DataFrame:
    """One row per recorded anytime point of the runs of ``methods``.

    The run's final objective and lower bound are appended at its fit time
    when they improve on the last recorded point, so every curve ends where
    the run ended.
    """
    rows = []
    frame = frame.assign(tuned_to=tuned_choice(frame))
    runs = frame[frame["method"].isin(methods) & frame["has_tree"]]
    for run in runs.itertuples(index=False):
        trace = _trace(run.stats)
        if not trace:
            continue
        base = {key: getattr(run, key) for key in [*_INSTANCE, "method"]}
        last_obj, last_bound = np.inf, -np.inf
        for point in trace:
            bound = (
                float(point[2]) if len(point) > 2 and point[2] is not None else np.nan
            )
            last_obj = min(last_obj, float(point[1]))
            if not np.isnan(bound):
                last_bound = max(last_bound, bound)
            rows.append(
                {
                    **base,
                    "time": float(point[0]),
                    "objective": float(point[1]),
                    "bound": bound,
                }
            )
        final_bound = run.lower_bound if pd.notna(run.lower_bound) else np.nan
        if run.objective < last_obj or final_bound > last_bound:
            rows.append(
                {
                    **base,
                    "time": float(run.fit_time_s),
                    "objective": min(float(run.objective), last_obj),
                    "bound": max(final_bound, last_bound)
                    if last_bound > -np.inf
                    else final_bound,
                }
            )
    columns = [*_INSTANCE, "method", "time", "objective", "bound"]
    return pd.DataFrame(rows, columns=columns)


def primal_integral(times, objectives, best: float, horizon: float) -> float:
    """Primal integral of one incumbent curve over ``[0, horizon]`` seconds.

    Parameters
    ----------
    times, objectives : array-like
        The incumbent's improvements (sorted by time).
    best : float
        Best known objective ``z*`` on the instance.
    horizon : float
        Upper end of the integral (the time limit).
    """
    times = np.clip(np.asarray(times, dtype=float), 0.0, horizon)
    objectives = np.minimum.accumulate(np.asarray(objectives, dtype=float))
    scale = np.maximum(np.abs(objectives), abs(best))
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps = np.where(scale > 0, np.abs(objectives - best) / scale, 0.0)
    edges = np.append(times, horizon)
    total = times[0] if len(times) else horizon  # no incumbent: p = 1
    return float(total + np.sum(gaps * np.diff(edges)))


def primal_integrals(frame: pd.DataFrame, curves: pd.DataFrame, horizons: dict):
    """Primal integral of every traced run.

    Parameters
    ----------
    frame : DataFrame
        All records (``z*`` is the best objective of any single tree on the
        same run and data).
    curves : DataFrame
        :func:`anytime_curves`.
    horizons : dict
        method -> time limit (seconds).

    Returns
    -------
    DataFrame
        One row per run: instance keys, ``method``, ``primal_integral`` (s).
    """
    if curves.empty:
        return pd.DataFrame(columns=[*_INSTANCE, "method", "primal_integral"])
    frame = frame.assign(tuned_to=tuned_choice(frame))
    trees = frame[frame["has_tree"] & frame["n_trees"].isna()]
    best = trees.groupby(_INSTANCE)["objective"].min()
    best = np.minimum(
        best, curves.groupby(_INSTANCE)["objective"].min().reindex(best.index)
    )
    rows = []
    for key, run in curves.groupby([*_INSTANCE, "method"], sort=False):
        run = run.sort_values("time")
        z_star = best.get(key[:-1], run["objective"].min())
        value = primal_integral(
            run["time"], run["objective"], z_star, horizons[key[-1]]
        )
        rows.append(
            {**dict(zip([*_INSTANCE, "method"], key)), "primal_integral": value}
        )
    return pd.DataFrame(rows)
