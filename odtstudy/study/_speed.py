"""Speed of exact methods against a reference, per depth, on the instances
both prove.

An *instance* is one run's data (dataset, depth, fold, seed). Each exact
method is timed against the first reference it shares an instance with
(:func:`assign_references`: ``dl85`` when present, then the study's other
DL8.5 methods, e.g. ``dl85-numeric`` for the tools of a numeric tier). For
an exact method ``m`` and its reference ``r`` of the same objective family,
at one depth:

- the proven counts of each, the instances both prove, and those only one
  of them proves (counted, never dropped silently);
- the geometric mean of the time-to-proof ratio ``t_m / t_r`` over the
  instances both prove, with a percentile bootstrap 95 % interval
  (:data:`N_RESAMPLES` resamples of the instances, NumPy generator seeded
  with :data:`SEED`);
- the two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) of the
  paired log times (H0: the ratios are symmetric around 1);
- the same ratio on CPU time (``cpu_time_s``) when the records have it.

Methods whose fit time includes an interpreter start-up (stats
``startup_s`` > 0) are named by :func:`startup_methods`, for a footnote.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "N_RESAMPLES",
    "SEED",
    "SPEED_RULE",
    "RatioEstimate",
    "assign_references",
    "geometric_ratio",
    "paired_wilcoxon",
    "speed_table",
    "startup_methods",
]

N_RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
_INSTANCE = ["dataset", "fold", "seed"]

SPEED_RULE = (
    "Per depth, each exact method against {reference} on the instances "
    "(dataset, fold, seed) both proved optimal within the allowed time: the "
    "geometric mean of the time-to-proof ratio (method / {reference}; < 1: "
    "faster than {reference}) with a 95 % percentile bootstrap interval "
    f"({N_RESAMPLES} resamples of the instances, NumPy seed {SEED}), and the "
    "two-sided Wilcoxon signed-rank p-value of the paired log times (scipy). "
    "Instances only one of the two proved are counted, not timed. Only "
    "methods of {reference}'s objective family are compared."
)


@dataclass(frozen=True)
class RatioEstimate:
    """Geometric-mean ratio with its bootstrap interval.

    Attributes
    ----------
    ratio, low, high : float
        Geometric mean and the bounds of its percentile bootstrap interval.
    n : int
        Number of paired instances.
    """

    ratio: float
    low: float
    high: float
    n: int

    def text(self) -> str:
        if self.n == 0:
            return ""
        return f"{self.ratio:.3g}× [{self.low:.3g}, {self.high:.3g}]"


def geometric_ratio(
    numerator, denominator, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> RatioEstimate:
    """Geometric mean of ``numerator / denominator`` with a bootstrap interval.

    Parameters
    ----------
    numerator, denominator : array-like of float
        Paired positive times (one pair per instance).
    n_resamples : int, default=N_RESAMPLES
        Bootstrap resamples of the pairs.
    seed : int, default=SEED
        Seed of the NumPy generator drawing the resamples.

    Returns
    -------
    RatioEstimate
        NaN ratio and bounds when there is no pair.

    Raises
    ------
    ValueError
        When the arrays differ in length or hold a time that is not positive.
    """
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"numerator and denominator must be paired 1-d arrays, got shapes "
            f"{a.shape} and {b.shape}"
        )
    if not (np.all(a > 0) and np.all(b > 0) and np.isfinite(a).all()):
        raise ValueError("times must be positive and finite to take their ratio")
    if len(a) == 0:
        return RatioEstimate(math.nan, math.nan, math.nan, 0)
    logs = np.log(a) - np.log(b)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(logs), size=(n_resamples, len(logs)))
    means = logs[picks].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return RatioEstimate(
        float(np.exp(logs.mean())), float(np.exp(low)), float(np.exp(high)), len(a)
    )


def paired_wilcoxon(numerator, denominator) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired log times.

    NaN for fewer than 2 pairs; 1.0 when every pair is equal.
    """
    logs = np.log(np.asarray(numerator, float)) - np.log(np.asarray(denominator, float))
    if len(logs) < 2:
        return math.nan
    if np.all(np.abs(logs) < 1e-12):
        return 1.0
    return float(stats.wilcoxon(logs).pvalue)


def _family(frame: pd.DataFrame, method: str) -> str:
    families = frame.loc[frame["method"] == method, "objective_family"].dropna()
    return str(families.mode().iloc[0]) if len(families) else ""


def _proof_times(runs: pd.DataFrame, column: str) -> pd.Series:
    """Time of each proven instance (median over duplicated records)."""
    proven = runs[runs["optimal"] & runs[column].notna() & (runs[column] > 0)]
    return proven.groupby(_INSTANCE)[column].median()


def startup_methods(frame: pd.DataFrame) -> dict:
    """Method -> median interpreter start-up (s) counted in its fit time
    (stats ``startup_s`` > 0), for the methods that have one."""
    startup = frame["stats"].map(_startup_s)
    found = frame.assign(_s=startup)[startup > 0]
    return {m: float(part.median()) for m, part in found.groupby("method")["_s"]}


def _startup_s(text) -> float:
    try:
        stats_ = json.loads(text) if isinstance(text, str) else (text or {})
        return float(stats_.get("startup_s") or 0.0)
    except (TypeError, ValueError, AttributeError):
        return 0.0


def _instances(frame: pd.DataFrame, method: str) -> set:
    """The (dataset, fold, seed, depth) of the method's runs."""
    runs = frame.loc[frame["method"] == method, [*_INSTANCE, "depth"]]
    return set(runs.itertuples(index=False, name=None))


def assign_references(
    frame: pd.DataFrame, methods: list, references: list
) -> tuple[dict, list]:
    """Each exact method to the first of ``references`` it shares an
    instance (dataset, depth, fold, seed) with.

    A study whose tiers run on different data (0/1 sets for ``dl85``, numeric
    sets for ``dl85-numeric``) has no instance where a numeric tool and
    ``dl85`` both ran; such a tool is timed against the later reference it
    shares instances with instead of being left out.

    Parameters
    ----------
    frame : DataFrame
    methods : list of str
        Exact methods, in report order.
    references : list of str
        Candidate references, the preferred first.

    Returns
    -------
    assigned : dict
        Reference -> the methods compared with it (never itself, never the
        first reference), for the references that have any, in the order of
        ``references``.
    unpaired : list of str
        Methods that share no instance with any reference, except the
        references that head a table of their own.
    """
    shared = {r: _instances(frame, r) for r in references}
    assigned: dict = {}
    unpaired = []
    for method in methods:
        if method == references[0]:
            continue
        mine = shared[method] if method in shared else _instances(frame, method)
        target = next((r for r in references if r != method and mine & shared[r]), None)
        if target is None:
            unpaired.append(method)
        else:
            assigned.setdefault(target, []).append(method)
    ordered = {r: assigned[r] for r in references if r in assigned}
    unpaired = [m for m in unpaired if m not in ordered]
    return ordered, unpaired


def speed_table(
    frame: pd.DataFrame, methods: list, reference: str, depths: list
) -> tuple[pd.DataFrame, list]:
    """Per depth and exact method: proven counts and time ratio to ``reference``.

    Parameters
    ----------
    frame : DataFrame
        Records (with ``objective_family``; see ``_records.with_defaults``).
    methods : list of str
        Exact methods, in report order (``reference`` among them).
    reference : str
    depths : list of int

    Returns
    -------
    table : DataFrame
        One row per (depth, method other than ``reference``).
    other_family : list of str
        Exact methods not compared: another objective family.
    """
    family = _family(frame, reference)
    compared = [m for m in methods if m != reference and _family(frame, m) == family]
    other_family = [m for m in methods if m != reference and m not in compared]
    cpu = "cpu_time_s" in frame and bool(frame["cpu_time_s"].notna().any())
    rows = []
    for depth in depths:
        part = frame[frame["depth"] == depth]
        ref_runs = part[part["method"] == reference]
        for method in compared:
            runs = part[part["method"] == method]
            if runs.empty or ref_runs.empty:
                continue
            rows.append(_row(depth, method, reference, runs, ref_runs, cpu))
    return pd.DataFrame(rows), other_family


def _row(depth, method, reference, runs, ref_runs, cpu) -> dict:
    mine = _proof_times(runs, "fit_time_s")
    theirs = _proof_times(ref_runs, "fit_time_s")
    both = mine.index.intersection(theirs.index)
    ratio = geometric_ratio(mine[both], theirs[both])
    pvalue = paired_wilcoxon(mine[both], theirs[both])
    instances = runs.groupby(_INSTANCE).ngroups
    row = {
        "depth": depth,
        "method": method,
        "instances": instances,
        "proven by method": len(mine),
        f"proven by {reference}": len(theirs),
        "both": len(both),
        "only method": len(mine.index.difference(theirs.index)),
        f"only {reference}": len(theirs.index.difference(mine.index)),
        f"time to proof / {reference}'s (geo-mean [95 % CI])": ratio.text()
        or "no common proof",
        "Wilcoxon p": "" if math.isnan(pvalue) else f"{pvalue:.3g}",
    }
    if cpu:
        a = _proof_times(runs, "cpu_time_s")
        b = _proof_times(ref_runs, "cpu_time_s")
        common = a.index.intersection(b.index)
        row[f"CPU time / {reference}'s (geo-mean [95 % CI])"] = geometric_ratio(
            a[common], b[common]
        ).text()
    return row
