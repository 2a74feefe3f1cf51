"""Mechanics shared by the claims modules (``papers/<name>/claims.py``).

A claims module keeps its own rules: which cells it compares and the text
of its reasons; every number its rules compare with is a threshold of its
data file, read through :class:`~odtstudy.reproduce._rules.Rules`. What
several of them do the same way lives here: the verdict row of a claim, the
ways a count or a share becomes a verdict (with a sign test where the share
counts noisy comparisons), the (dataset, depth) × method table of cell
values, counting the signs of differences, the geometric mean, and the
claim-by-claim dispatch of ``evaluate`` with each verdict's sensitivity.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from odtstudy.reproduce._claims import ClaimResult
from odtstudy.reproduce._rules import sensitivity
from odtstudy.study._solver_tree import stats_dict
from odtstudy.study.report._speed import MIN_UNITS

__all__ = [
    "NO_RULE",
    "all_some_verdict",
    "both_verdict",
    "check_verdict",
    "claim_result",
    "combine_verdicts",
    "geomean",
    "graded_verdict",
    "judge_claims",
    "limit_decided",
    "method_table",
    "percent",
    "points",
    "share_text",
    "share_verdict",
    "sign_counts",
    "sign_test",
    "tested_share",
    "too_few",
    "unit_signs",
]

#: The reason of a claim of the data file that the claims module has no rule
#: for.
NO_RULE = "no rule for this claim in the claims module"


def claim_result(claim: dict, published: str, ours: str, verdict: str, reason: str):
    """The verdict row of one claim of the paper's data file.

    Parameters
    ----------
    claim : dict
        One ``[[claims]]`` entry of :class:`~odtstudy.reproduce.Published`
        (``id``, ``statement``, ``where``).
    published : str
        The published evidence, short.
    ours : str
        The same quantity measured on this run of the study.
    verdict : str
        One of :data:`~odtstudy.reproduce.VERDICTS`.
    reason : str
        The rule that decided the verdict, with the numbers it compared.

    Returns
    -------
    ClaimResult
        With the claim's statement on one line (white space folded); a
        ``[[checks]]`` entry gives a check's row.
    """
    return ClaimResult(
        claim=claim["id"],
        statement=" ".join(claim["statement"].split()),
        where=claim["where"],
        published=published,
        ours=ours,
        verdict=verdict,
        reason=reason,
        check=bool(claim.get("check", False)),
    )


def check_verdict(holds: bool) -> str:
    """A check's outcome: "pass" when the invariant holds, else "fail"."""
    return "pass" if holds else "fail"


def sign_test(
    hits: int, total: int, chance: float = 0.5, alternative: str = "greater"
) -> float:
    """One-sided sign test: P(at least ``hits`` of ``total``) by chance.

    Parameters
    ----------
    hits : int
        Paired comparisons (independent units) where the claimed relation
        holds.
    total : int
        Paired comparisons made.
    chance : float, default=0.5
        The probability of a hit when nothing is claimed: 1/2 for "A above
        B", 1/k for "A the highest of k".
    alternative : {"greater", "less"}, default="greater"
        "less": P(at most ``hits``), the test of the other direction.

    Returns
    -------
    float
        The p-value (NaN for no comparison).
    """
    if total <= 0:
        return float("nan")
    return float(
        binomtest(int(hits), int(total), chance, alternative=alternative).pvalue
    )


def too_few(n: int) -> str:
    """The text of a test not made: ``"n = 3: too few for a test"``."""
    return f"n = {n}: too few for a test (at least {MIN_UNITS} independent units)"


def tested_share(
    hits: int,
    total: int,
    rules,
    *,
    minimum: int,
    chance: float = 0.5,
    least: float | None = None,
    tied: int = 0,
) -> tuple:
    """The verdict of a comparison counted over independent units.

    Each unit (a data set, or a (data set, depth) where depths are separate
    problems) is one hit or one miss; ties are left out by the caller.

    - **not comparable**: no unit at all (nothing measured);
    - **inconclusive**: every unit tied (``tied``), fewer than
      ``max(minimum, MIN_UNITS)`` units (no test: :func:`too_few`), or
      neither direction significant and the claimed one not in a majority;
    - **reproduced**: ``hits / total`` ≥ ``least`` (default
      ``rules["reproduced"]``) and the sign test (:func:`sign_test`) gives
      p < ``rules["alpha"]``;
    - **not reproduced**: the sign test of the other direction gives p <
      ``rules["alpha"]`` (significant the other way);
    - **partly**: the claimed direction in a majority (more than half the
      units, and at least ``rules["partly"]``) without reaching
      "reproduced": not significant, or significant below ``least``.

    Parameters
    ----------
    hits, total : int
    rules : Rules
        Reads ``reproduced`` (unless ``least`` is given), ``partly`` and
        ``alpha``.
    minimum : int
        The data file's fewest units (never below
        :data:`~odtstudy.study.report._speed.MIN_UNITS`).
    chance : float, default=0.5
        See :func:`sign_test`.
    least : float, default=None
        The least share that is "reproduced" when the claim states its own
        (read by the caller from the data file's thresholds).
    tied : int, default=0
        The units left out as ties: with no untied unit, they make the claim
        "inconclusive" (no difference), not "not comparable".

    Returns
    -------
    tuple of str
        ``(verdict, evidence)``, the evidence as "9/21 = 43 %, sign test p =
        0.74".
    """
    if total <= 0 and tied:
        return "inconclusive", f"tied on all {tied} units: no difference"
    if total <= 0:
        return "not comparable", "no comparison measured"
    if total < max(minimum, MIN_UNITS):
        return "inconclusive", f"{hits}/{total}; {too_few(total)}"
    share, p = hits / total, sign_test(hits, total, chance)
    other = sign_test(hits, total, chance, alternative="less")
    evidence = f"{hits}/{total} = {share:.0%}, sign test p = {p:.2g}"
    if chance != 0.5:
        evidence += f" (chance {chance:.2g})"
    alpha = rules["alpha"]
    least = rules["reproduced"] if least is None else least
    if share >= least and p < alpha:
        return "reproduced", evidence
    if other < alpha:
        return "not reproduced", f"{evidence}; the other way p = {other:.2g}"
    if share > 0.5 and share >= rules["partly"]:
        if p < alpha:
            return "partly", evidence + f" (significant, but below {least:.0%})"
        return "partly", evidence + " (a majority, not significant)"
    return "inconclusive", (
        f"{evidence}, the other way p = {other:.2g} (no significant difference "
        "either way)"
    )


def unit_signs(frame: pd.DataFrame, unit, difference: str, tie: float = 0.0) -> tuple:
    """Signs of a difference counted over independent units.

    The rows (folds, seeds, depths or settings of one unit) are averaged per
    unit first, so a unit counts once whatever its number of rows.

    Parameters
    ----------
    frame : DataFrame
        One row per paired comparison, with the ``unit`` column(s).
    unit : str or list of str
        The column(s) naming the independent unit ("dataset").
    difference : str
        The column of differences (claimed direction positive).
    tie : float, default=0.0
        A unit's mean difference of at most this size is a tie.

    Returns
    -------
    tuple of int
        ``(higher, lower, tied)`` over the units.
    """
    if frame.empty:
        return 0, 0, 0
    means = frame.groupby(unit, sort=True)[difference].mean()
    return sign_counts(means.to_numpy(), tie)


def combine_verdicts(verdicts) -> str:
    """The verdict of a claim made of several comparisons (pairs, depths).

    Every part the same: that verdict. Otherwise: a part reproduced and
    none not reproduced, or parts reproduced and parts not reproduced
    (mixed): "partly"; a part not reproduced and none reproduced: "not
    reproduced" (a significant contrary part outweighs a non-significant
    majority); parts partly and none not reproduced: "partly"; else
    (inconclusive and not comparable parts): "inconclusive".

    Parameters
    ----------
    verdicts : sequence of str
        Each one of :data:`~odtstudy.reproduce.VERDICTS`.

    Returns
    -------
    str
        "not comparable" when no part was measured.
    """
    verdicts = list(verdicts)
    if not verdicts or all(v == "not comparable" for v in verdicts):
        return "not comparable"
    if len(set(verdicts)) == 1:
        return verdicts[0]
    if "reproduced" in verdicts:
        return "partly"
    if "not reproduced" in verdicts:
        return "not reproduced"
    if "partly" in verdicts:
        return "partly"
    return "inconclusive"


def graded_verdict(value: float, reproduced: float, partly: float) -> str:
    """Grade a quantity without sampling noise against two thresholds.

    For a measured quantity the claim states (a count of entries, a value
    within the paper's spread), not a comparison of noisy units: those go
    through :func:`tested_share`.

    Parameters
    ----------
    value : float
        The measured quantity (a share, a lead, ...).
    reproduced : float
        The least value that is "reproduced".
    partly : float
        The least value that is "partly" (at most ``reproduced``).

    Returns
    -------
    str
        "reproduced", "partly" or "not reproduced".
    """
    if value >= reproduced:
        return "reproduced"
    if value >= partly:
        return "partly"
    return "not reproduced"


def share_verdict(
    hits: int, total: int, *, reproduced: float, partly: float, minimum: int
) -> str:
    """The share rule: ``hits / total`` graded by :func:`graded_verdict`.

    Parameters
    ----------
    hits : int
        Cells (pairs, groups) where the claimed relation holds.
    total : int
        Cells (pairs, groups) decided.
    reproduced, partly : float
        The least shares that are "reproduced" and "partly" (e.g. 0.8, 0.5).
    minimum : int
        Fewer decided cells than this are "not comparable".

    Returns
    -------
    str
        "reproduced", "partly", "not reproduced" or "not comparable".
    """
    if total < minimum:
        return "not comparable"
    return graded_verdict(hits / total, reproduced, partly)


def both_verdict(first: bool, second: bool) -> str:
    """The two-part rule: both parts hold, one of them, or neither.

    Parameters
    ----------
    first, second : bool
        Whether part (a) and part (b) of the claim hold.

    Returns
    -------
    str
        "reproduced" when both hold, "partly" when one does, else "not
        reproduced".
    """
    if first and second:
        return "reproduced"
    if first or second:
        return "partly"
    return "not reproduced"


def all_some_verdict(held: int, total: int) -> str:
    """The all-or-some rule: the claim holds on every item, on some, or on none.

    Parameters
    ----------
    held : int
        Items (data sets, depths, pairs of methods) where the claim holds.
    total : int
        Items judged.

    Returns
    -------
    str
        "not comparable" when nothing was judged (``total`` 0),
        "reproduced" when ``held == total``, "partly" when ``held`` > 0, else
        "not reproduced".
    """
    if total <= 0:
        return "not comparable"
    if held == total:
        return "reproduced"
    if held:
        return "partly"
    return "not reproduced"


def _warm_start_kept(stats) -> bool:
    """Whether a run's solver returned its warm start unimproved."""
    stats = stats_dict(stats)
    start, found = stats.get("warm_start_objective"), stats.get("milp_objective")
    if start is None or found is None:
        return False
    return abs(float(found) - float(start)) <= 1e-9 * max(1.0, abs(float(start)))


def limit_decided(frame: pd.DataFrame, method: str) -> str | None:
    """Why ``method``'s trees do not measure it, or None when they do.

    They do not when every run of ``method`` was stopped by its time limit
    without a proof (the learner's or the runner's time-out): the limit, not
    the method, decided the tree. The reason counts the runs whose solver
    returned its warm start unimproved (``stats``).

    Parameters
    ----------
    frame : DataFrame
        Records with ``method``, ``status`` and ``optimal`` (and, when
        recorded, ``learner_status``, ``time_limit`` and ``stats``).
    method : str

    Returns
    -------
    str or None
    """
    runs = frame[frame["method"] == method]
    if runs.empty:
        return None
    stopped = runs["status"] == "timeout"
    if "learner_status" in runs:
        stopped |= runs["learner_status"] == "timeout"
    if not (stopped & ~runs["optimal"].astype(bool)).all():
        return None
    kept = 0
    if "stats" in runs:
        kept = int(runs["stats"].map(_warm_start_kept).sum())
    limits = "limit not recorded"
    if "time_limit" in runs:
        limits = ", ".join(f"{t:g} s" for t in sorted(runs["time_limit"].unique()))
    return (
        f"{method} stopped at its time limit ({limits}) without a proof in "
        f"{len(runs)} of {len(runs)} runs and returned its warm start unimproved "
        f"in {kept}: its trees measure the limit, not the method"
    )


def sign_counts(diffs, tie: float = 0.0) -> tuple:
    """Count the differences above ``tie``, below ``-tie`` and within it.

    Parameters
    ----------
    diffs : array-like of float
        Differences of two methods' values, one per cell.
    tie : float, default=0.0
        Differences of at most this size are ties.

    Returns
    -------
    tuple of int
        ``(higher, lower, tied)``; a NaN difference counts in none.
    """
    diffs = np.asarray(diffs, dtype=float)
    return (
        int(np.sum(diffs > tie)),
        int(np.sum(diffs < -tie)),
        int(np.sum(np.abs(diffs) <= tie)),
    )


def geomean(values) -> float:
    """The geometric mean of the positive, finite ``values`` (NaN for none).

    Parameters
    ----------
    values : array-like of float

    Returns
    -------
    float
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(values).mean())) if len(values) else np.nan


def method_table(
    cells: pd.DataFrame, column: str, methods=None, dropna: bool = True
) -> pd.DataFrame:
    """A cell value as a table: (dataset, depth) rows, one column per method.

    Parameters
    ----------
    cells : DataFrame
        One row per (dataset, depth, method), with those three columns.
    column : str
        The value shown (a cell's mean test accuracy, its time, ...).
    methods : sequence of str, default=None
        The columns, in this order (a method without a cell: NaN); default:
        the methods of ``cells``.
    dropna : bool, default=True
        Passed to :meth:`pandas.DataFrame.pivot_table`: False keeps the
        (dataset, depth) rows without any value.

    Returns
    -------
    DataFrame
    """
    table = cells.pivot_table(
        index=["dataset", "depth"],
        columns="method",
        values=column,
        aggfunc="first",
        dropna=dropna,
    )
    return table if methods is None else table.reindex(columns=list(methods))


def judge_claims(published, judges: dict, *args) -> list:
    """One :class:`ClaimResult` per claim, then per check, of ``published``.

    Parameters
    ----------
    published : Published
        The paper's data file.
    judges : dict
        Claim (or check) id -> ``judge(claim, rules, *args)`` returning its
        :class:`ClaimResult`; ``rules`` is a fresh
        :class:`~odtstudy.reproduce._rules.Rules` on the file's thresholds.
    *args
        Passed to every judge after the rules.

    Returns
    -------
    list of ClaimResult
        In file order, claims first. A claim without a judge is "not
        comparable" (:data:`NO_RULE`). Each claim's ``sensitivity`` is its
        verdict with every threshold its rule read moved by the file's
        margin (the judge is called again); checks have none.
    """
    results = []
    for claim in [*published.claims, *published.checks]:
        judge = judges.get(claim["id"])
        if judge is None:
            results.append(claim_result(claim, "—", "—", "not comparable", NO_RULE))
            continue
        rules = published.rules()
        result = judge(claim, rules, *args)
        if not result.check:
            again = lambda moved, j=judge, c=claim: j(c, moved, *args)  # noqa: E731
            result = replace(
                result, sensitivity=sensitivity(again, rules, published.margin)
            )
        results.append(result)
    return results


# ------------------------------------------------------------------- wording
def percent(fraction: float, digits: int = 2) -> str:
    """A fraction as a percentage: ``0.1234`` -> ``"12.34 %"``."""
    return f"{100 * fraction:.{digits}f} %"


def share_text(hits: int, total: int) -> str:
    """``hits`` out of ``total`` and its percentage: ``"3/4 (75 %)"``
    (``"0/0"`` for none)."""
    return f"{hits}/{total} ({100 * hits / total:.0f} %)" if total else "0/0"


def points(
    difference: float, unit: str = "pts", digits: int = 2, sign: bool = True
) -> str:
    """A difference of fractions in percentage points: ``0.012`` -> ``"+1.20 pts"``
    (``sign=False``: no ``+`` on a positive difference)."""
    return f"{100 * difference:{'+' if sign else ''}.{digits}f} {unit}"
