"""Speed of exact methods against a reference, per depth, on the same
problem, with tests over independent units (datasets).

A *run* is one fit (dataset, depth, fold, seed). Two runs are paired only
when they solve the same problem (:func:`~odtstudy.study.report._checks.with_problem`):
the same trees to search (the same 0/1 matrix, or a numeric set at every
threshold, searched by a numeric learner or on the binarisation at every
midpoint; never a binarisation with fewer thresholds against either), the
same objective family, the same depth, fold and seed. Each exact method is
timed against the first reference it shares such a run with
(:func:`assign_references`:
``dl85`` when present, then the study's other DL8.5 methods, e.g.
``dl85-numeric`` for the tools of a numeric tier). For an exact method ``m``
and its reference ``r`` at one depth:

- the proven counts of each (runs), the runs both prove, and those only one
  of them proves (counted, never dropped silently);
- the geometric mean of the time-to-proof ratio ``t_m / t_r``: the log
  ratios of the runs both prove are averaged per dataset first (folds and
  seeds of one dataset are not independent), then over datasets;
- with at least :data:`MIN_UNITS` datasets, a percentile bootstrap 95 %
  interval (:data:`N_RESAMPLES` resamples of the datasets, NumPy generator
  seeded with :data:`SEED`) and the two-sided Wilcoxon signed-rank test
  (``scipy.stats.wilcoxon``) of the per-dataset log ratios (H0: symmetric
  around 1); with fewer, neither (the text says "too few for a test");
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

from odtstudy.study.report._checks import with_problem

__all__ = [
    "MIN_UNITS",
    "N_RESAMPLES",
    "SEED",
    "SPEED_RULE",
    "RatioEstimate",
    "assign_references",
    "bootstrap_mean",
    "geometric_ratio",
    "paired_wilcoxon",
    "speed_table",
    "startup_methods",
]

N_RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
#: Fewer independent units (datasets) than this: no interval, no p-value.
MIN_UNITS = 6
_RUN = ["dataset", "fold", "seed"]
#: What makes two runs of one depth the same problem (with ``_RUN``).
_PROBLEM = ["problem", "objective_family"]
NOT_SAME_PROBLEM = "not the same problem as"
OTHER_FAMILY = "another objective family than"

SPEED_RULE = (
    "Per depth, each exact method against {reference} on the same problem "
    "(the same trees to search: the same 0/1 matrix, or a numeric set at every "
    "threshold, whether by a numeric learner or on its binarisation at every "
    "midpoint; the same objective and depth; runs paired by dataset, fold and "
    "seed) on the runs both proved optimal within the allowed time. "
    "The unit is the dataset: the log time-to-proof ratios (method / "
    "{reference}; < 1: faster than {reference}) are averaged over a "
    "dataset's folds and seeds, then over datasets (geometric mean). With at "
    f"least {MIN_UNITS} datasets: a 95 % percentile bootstrap interval "
    f"({N_RESAMPLES} resamples of the datasets, NumPy seed {SEED}) and the "
    "two-sided Wilcoxon signed-rank p-value of the per-dataset log ratios "
    f"(scipy); below {MIN_UNITS}, neither. Runs only one of the two proved "
    "are counted, not timed. Methods that solve another problem or another "
    "objective family are named below the table, never timed against "
    "{reference}."
)


@dataclass(frozen=True)
class RatioEstimate:
    """Geometric-mean ratio over independent units, with its bootstrap
    interval when there are enough units.

    Attributes
    ----------
    ratio, low, high : float
        Geometric mean and the bounds of its percentile bootstrap interval
        (NaN bounds below :data:`MIN_UNITS` units).
    n : int
        Number of independent units (datasets, or pairs when the caller
        gives no units).
    """

    ratio: float
    low: float
    high: float
    n: int

    def text(self) -> str:
        if self.n == 0:
            return ""
        if math.isnan(self.low):
            return f"{self.ratio:.3g}× (n = {self.n}: too few for a test)"
        return f"{self.ratio:.3g}× [{self.low:.3g}, {self.high:.3g}]"


def _unit_logs(numerator, denominator, units=None) -> np.ndarray:
    """The log ratios of paired positive times, averaged per unit."""
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"numerator and denominator must be paired 1-d arrays, got shapes "
            f"{a.shape} and {b.shape}"
        )
    if not (np.all(a > 0) and np.all(b > 0) and np.isfinite(a).all()):
        raise ValueError("times must be positive and finite to take their ratio")
    logs = np.log(a) - np.log(b)
    if units is None:
        return logs
    units = np.asarray(units)
    if units.shape != logs.shape:
        raise ValueError(
            f"units must label each pair: {len(units)} units for {len(logs)} pairs"
        )
    return pd.Series(logs).groupby(units, sort=True).mean().to_numpy()


def geometric_ratio(
    numerator,
    denominator,
    units=None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> RatioEstimate:
    """Geometric mean of ``numerator / denominator`` with a bootstrap interval.

    Parameters
    ----------
    numerator, denominator : array-like of float
        Paired positive times.
    units : array-like, default=None
        The independent unit of each pair (its dataset): the log ratios are
        averaged per unit first, and the bootstrap resamples units. None:
        each pair is a unit.
    n_resamples : int, default=N_RESAMPLES
        Bootstrap resamples of the units.
    seed : int, default=SEED
        Seed of the NumPy generator drawing the resamples.

    Returns
    -------
    RatioEstimate
        NaN ratio and bounds when there is no pair; NaN bounds (no interval)
        with fewer than :data:`MIN_UNITS` units.

    Raises
    ------
    ValueError
        When the arrays differ in length or hold a time that is not positive.
    """
    logs = _unit_logs(numerator, denominator, units)
    mean, low, high = bootstrap_mean(logs, n_resamples, seed)
    return RatioEstimate(
        float(np.exp(mean)), float(np.exp(low)), float(np.exp(high)), len(logs)
    )


def bootstrap_mean(values, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> tuple:
    """The mean of independent units' values with its bootstrap interval.

    Parameters
    ----------
    values : array-like of float
        One value per independent unit (a dataset's mean difference).
    n_resamples, seed : int
        As in :func:`geometric_ratio`, which bootstraps its log ratios here.

    Returns
    -------
    tuple of float
        ``(mean, low, high)``: the bounds of the 95 % percentile bootstrap
        interval, NaN with fewer than :data:`MIN_UNITS` units (all NaN for
        none).
    """
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if len(values) < MIN_UNITS:
        return mean, math.nan, math.nan
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(n_resamples, len(values)))
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values[picks].mean(axis=1), [tail, 100 - tail])
    return mean, float(low), float(high)


def paired_wilcoxon(numerator, denominator, units=None) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired log times (averaged
    per unit when ``units`` is given).

    NaN for fewer than :data:`MIN_UNITS` units; 1.0 when every unit's log
    ratio is 0.
    """
    logs = _unit_logs(numerator, denominator, units)
    if len(logs) < MIN_UNITS:
        return math.nan
    if np.all(np.abs(logs) < 1e-12):
        return 1.0
    return float(stats.wilcoxon(logs).pvalue)


def _family(frame: pd.DataFrame, method: str) -> str:
    families = frame.loc[frame["method"] == method, "objective_family"].dropna()
    return str(families.mode().iloc[0]) if len(families) else ""


def _proof_times(runs: pd.DataFrame, column: str) -> pd.Series:
    """Time of each proven run, by run and problem (median over duplicated
    records)."""
    proven = runs[runs["optimal"] & runs[column].notna() & (runs[column] > 0)]
    return proven.groupby([*_RUN, *_PROBLEM])[column].median()


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
    """The (dataset, fold, seed, depth, problem) of the method's runs (a
    method of another objective family is named by the speed table)."""
    runs = frame.loc[frame["method"] == method, [*_RUN, "depth", "problem"]]
    return set(runs.itertuples(index=False, name=None))


def assign_references(
    frame: pd.DataFrame, methods: list, references: list
) -> tuple[dict, list]:
    """Each exact method to the first of ``references`` it shares a run
    (dataset, depth, fold, seed) of the same problem with, and to the later
    ones that share the runs the earlier ones do not.

    A study whose tiers run on different data (0/1 sets for ``dl85``, numeric
    sets for ``dl85-numeric``) has no instance where a numeric tool and
    ``dl85`` both ran; such a tool is timed against the later reference it
    shares instances with instead of being left out. A numeric tool on a
    numeric set that ``dl85`` saw binarised is timed there against
    ``dl85-numeric``, and against ``dl85`` on the 0/1 sets.

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
        first reference, and a reference only with those before it: one
        table for a variant and its base), for the references that have any,
        in the order of ``references``.
    unpaired : list of str
        Methods that share no run of the same problem with any reference,
        except the references that head a table of their own.
    """
    frame = with_problem(frame)
    shared = {r: _instances(frame, r) for r in references}
    assigned: dict = {}
    unpaired = []
    for method in methods:
        if method == references[0]:
            continue
        left = shared[method] if method in shared else _instances(frame, method)
        # a reference is timed only against those preferred before it, so
        # two references of one problem (a variant and its base) get one table
        candidates = (
            references[: references.index(method)]
            if method in references
            else references
        )
        targets = []
        for reference in candidates:
            common = left & shared[reference]
            if common:
                targets.append(reference)
                left = left - common
        if not targets:
            unpaired.append(method)
        for reference in targets:
            assigned.setdefault(reference, []).append(method)
    ordered = {r: assigned[r] for r in references if r in assigned}
    unpaired = [m for m in unpaired if m not in ordered]
    return ordered, unpaired


def speed_table(
    frame: pd.DataFrame, methods: list, reference: str, depths: list
) -> tuple[pd.DataFrame, dict]:
    """Per depth and exact method: proven counts and time ratio to ``reference``
    on the same problem, over datasets.

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
        One row per (depth, method other than ``reference``) with runs of
        the same problem as ``reference``'s.
    not_compared : dict
        :data:`OTHER_FAMILY` / :data:`NOT_SAME_PROBLEM` -> the exact methods
        not timed for that reason (only the reasons that have any).
    """
    frame = with_problem(frame)
    family = _family(frame, reference)
    same_family = [m for m in methods if m != reference and _family(frame, m) == family]
    not_compared = {
        OTHER_FAMILY: [m for m in methods if m != reference and m not in same_family]
    }
    cpu = "cpu_time_s" in frame and bool(frame["cpu_time_s"].notna().any())
    rows, paired = [], {}
    for depth in depths:
        part = frame[frame["depth"] == depth]
        ref_runs = part[part["method"] == reference]
        for method in same_family:
            runs, refs = _same_problem(part[part["method"] == method], ref_runs)
            if runs.empty:
                continue
            paired.setdefault(method, set()).update(runs["dataset"])
            rows.append(_row(depth, method, reference, runs, refs, cpu))
    not_compared[NOT_SAME_PROBLEM] = _other_problems(
        frame, same_family, reference, paired
    )
    return pd.DataFrame(rows), {k: v for k, v in not_compared.items() if v}


def _other_problems(frame, methods, reference, paired) -> list:
    """The methods never paired with ``reference``, and ``"m on d1, d2"`` for
    those that ran datasets with it as another problem only."""
    ref_datasets = set(frame.loc[frame["method"] == reference, "dataset"])
    named = []
    for method in methods:
        if method not in paired:
            named.append(method)
            continue
        mine = set(frame.loc[frame["method"] == method, "dataset"])
        other = sorted((mine & ref_datasets) - paired[method])
        if other:
            named.append(f"{method} on {', '.join(other)}")
    return named


def _same_problem(runs: pd.DataFrame, ref_runs: pd.DataFrame):
    """The runs of each side that the other ran as the same problem."""
    keys = [*_RUN, *_PROBLEM]
    mine = runs.merge(ref_runs[keys].drop_duplicates(), on=keys)
    theirs = ref_runs.merge(runs[keys].drop_duplicates(), on=keys)
    return mine, theirs


def _paired(runs, ref_runs, column):
    """The proof times of the runs both prove, and each pair's dataset."""
    mine = _proof_times(runs, column)
    theirs = _proof_times(ref_runs, column)
    both = mine.index.intersection(theirs.index)
    return mine, theirs, both, both.get_level_values("dataset")


def _row(depth, method, reference, runs, ref_runs, cpu) -> dict:
    mine, theirs, both, datasets = _paired(runs, ref_runs, "fit_time_s")
    ratio = geometric_ratio(mine[both], theirs[both], units=datasets)
    pvalue = paired_wilcoxon(mine[both], theirs[both], units=datasets)
    row = {
        "depth": depth,
        "method": method,
        "datasets both proved": ratio.n,
        "runs": runs.groupby(_RUN).ngroups,
        "proven by method": len(mine),
        f"proven by {reference}": len(theirs),
        "both": len(both),
        "only method": len(mine.index.difference(theirs.index)),
        f"only {reference}": len(theirs.index.difference(mine.index)),
        f"time to proof / {reference}'s (geo-mean over datasets [95 % CI])": (
            ratio.text() or "no common proof"
        ),
        "Wilcoxon p (datasets)": "" if math.isnan(pvalue) else f"{pvalue:.3g}",
    }
    if cpu:
        a, b, common, units = _paired(runs, ref_runs, "cpu_time_s")
        row[f"CPU time / {reference}'s (geo-mean over datasets [95 % CI])"] = (
            geometric_ratio(a[common], b[common], units=units).text()
        )
    return row
