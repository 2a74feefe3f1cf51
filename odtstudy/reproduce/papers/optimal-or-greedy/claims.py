"""Claims of van der Linden et al., "Optimal or Greedy Decision Trees?"
(arXiv 2409.12788 v2, abstract only) judged on the ``optimal-or-greedy``
study.

Every claim compares two methods' out-of-sample test accuracy over data sets:
a data set's difference is the mean over its depths of the difference of the
two complete cells (each the mean over the outer folds), tested by a sign
test over data sets, with the mean difference and its bootstrap interval
over data sets as the effect size. Every threshold is in ``[thresholds]``
of ``published.toml``.
"""

from __future__ import annotations

import math

import pandas as pd

from odtstudy.reproduce._evidence import (
    claim_result,
    combine_verdicts,
    judge_claims,
    limit_decided,
    points,
    sign_counts,
    sign_test,
    tested_share,
)
from odtstudy.study.report._speed import MIN_UNITS, bootstrap_mean

__all__ = ["answer", "evaluate", "set_differences"]

#: The optimal learners, each untuned (max_depth = d) and tuned (``-tuned``).
OPTIMAL = ("dl85", "dl85-numeric", "pystreed")
GREEDY = "cart"
TUNED = "-tuned"
#: What the published column says of every claim: no number is transcribed.
PUBLISHED = "figure only: a sentence of the abstract, no number transcribed"
#: Decimals kept of a data set's mean difference: equal means tie exactly,
#: whatever the order their folds were summed in.
_DECIMALS = 12


def set_differences(cells: pd.DataFrame, a: str, b: str, depths=None) -> pd.Series:
    """Per data set, the mean over depths of ``a`` − ``b`` (test accuracy).

    Parameters
    ----------
    cells : DataFrame
        :attr:`StudyRecords.cells`: one row per (dataset, depth, method).
    a, b : str
        The two methods compared.
    depths : sequence of int, default=None
        The depths averaged (default: every depth where both cells of a data
        set are complete).

    Returns
    -------
    Series
        Indexed by data set; only data sets with a pair of complete cells.
    """
    part = cells[cells["complete"].astype(bool) & cells["method"].isin([a, b])]
    if depths is not None:
        part = part[part["depth"].isin(list(depths))]
    wide = part.pivot_table(
        index=["dataset", "depth"], columns="method", values="test_acc"
    )
    if a not in wide or b not in wide:
        return pd.Series(dtype=float, name="difference")
    both = wide[[a, b]].dropna()
    differences = (both[a] - both[b]).groupby(level="dataset").mean()
    return differences.rename("difference")


def _interval(low: float, high: float) -> str:
    """A bootstrap interval of a difference of fractions, in points."""
    return f"[{100 * low:+.2f}, {100 * high:+.2f}]"


def _effect(differences: pd.Series) -> str:
    """The mean difference over data sets with its bootstrap interval."""
    mean, low, high = bootstrap_mean(differences.to_numpy())
    n = len(differences)
    if math.isnan(low):
        return f"{points(mean)} (n = {n}: too few for an interval)"
    return f"{points(mean)} {_interval(low, high)} over {n} data sets"


def _unproven(frame: pd.DataFrame, methods) -> str:
    """How many runs of each exact method kept a tree not proven optimal."""
    parts = []
    for method in methods:
        runs = frame[(frame["method"] == method) & frame["has_tree"].astype(bool)]
        stopped = int((~runs["optimal"].astype(bool)).sum())
        if stopped:
            parts.append(f"{method} {stopped}/{len(runs)}")
    if not parts:
        return ""
    return (
        "; runs stopped at their time limit without a proof (best tree kept): "
        + ", ".join(parts)
    )


def _pair(rules, records, a: str, b: str, depths=None) -> tuple:
    """``(verdict, ours, reason)`` of "``a`` better than ``b``" over data sets,
    or None when a method was not run."""
    if not {a, b} <= set(records.method_order):
        return None
    label = f"{a} − {b}" + (f" at depth {depths[0]}" if depths else "")
    for method in (a, b):
        why = limit_decided(records.frame, method)
        if why is not None:
            return "not comparable", f"{label}: not measured", why
    differences = set_differences(records.cells, a, b, depths)
    if differences.empty:
        return (
            "not comparable",
            f"{label}: no data set",
            f"{label}: no data set where both cells are complete",
        )
    ahead, behind, tied = sign_counts(differences.round(_DECIMALS).to_numpy())
    verdict, evidence = tested_share(
        ahead, ahead + behind, rules, minimum=rules["min_sets"], tied=tied
    )
    ours = f"{label}: {_effect(differences)}"
    reason = (
        f"{label}: ahead on {ahead}, behind on {behind}, tied on {tied} data "
        f"sets; {evidence} ({verdict})"
    )
    return verdict, ours, reason


def _combined(claim, rules, records, pairs) -> object:
    """The claim's verdict over ``pairs`` ((a, b, depths) each): one test per
    pair, combined; the pairs of a method not run are left out and named."""
    verdicts, ours, reasons, absent = [], [], [], []
    for a, b, depths in pairs:
        part = _pair(rules, records, a, b, depths)
        if part is None:
            absent.append(f"{a} − {b}")
            continue
        verdicts.append(part[0])
        ours.append(part[1])
        reasons.append(part[2])
    verdict = combine_verdicts(verdicts)
    reason = "; ".join(reasons) or "no pair of methods of this claim was run"
    if absent:
        reason += f"; not run (not installed or not in the study): {', '.join(absent)}"
    if len(verdicts) > 1:
        reason += f"; the {len(verdicts)} tests combined: {verdict}"
    methods = {m for a, b, _ in pairs for m in (a, b) if m in records.method_order}
    exact = [m for m in records.method_order if m in methods and records.is_exact(m)]
    reason += _unproven(records.frame, exact)
    reason += f"; unit: the data set (no test below {MIN_UNITS})"
    return claim_result(claim, PUBLISHED, "; ".join(ours) or "—", verdict, reason)


def _tuning_pairs() -> list:
    return [(f"{m}{TUNED}", m, None) for m in OPTIMAL]


def _tuned_pairs() -> list:
    return [(f"{m}{TUNED}", f"{GREEDY}{TUNED}", None) for m in OPTIMAL]


def _fixed_depth_pairs(records) -> list:
    return [(m, GREEDY, [depth]) for m in OPTIMAL for depth in records.depths]


def evaluate(records, published) -> list:
    """One :class:`ClaimResult` per claim of ``published.toml``, in order.

    Parameters
    ----------
    records : StudyRecords
        The ``optimal-or-greedy`` study's records of one protocol.
    published : Published
        ``load_published("optimal-or-greedy")``.
    """
    judges = {
        "tuning-helps-odt": lambda c, r: _combined(c, r, records, _tuning_pairs()),
        "optimal-vs-greedy-tuned": lambda c, r: _combined(
            c, r, records, _tuned_pairs()
        ),
        "optimal-vs-greedy-fixed-depth": lambda c, r: _combined(
            c, r, records, _fixed_depth_pairs(records)
        ),
    }
    return judge_claims(published, judges)


def answer(records, alpha: float, min_sets: int) -> str:
    """The README's one sentence: tuned optimal trees against tuned CART.

    Parameters
    ----------
    records : StudyRecords
        The ``optimal-or-greedy`` study's records of one protocol.
    alpha, min_sets : float, int
        ``[thresholds]`` of ``published.toml``: the significance level, and
        the fewest untied data sets a sign test is made on (never below
        :data:`~odtstudy.study.report._speed.MIN_UNITS`); below it the
        sentence gives no p-value.
    """
    greedy = f"{GREEDY}{TUNED}"
    minimum = max(int(min_sets), MIN_UNITS)
    parts, significant, p_values, means = [], [], [], []
    for a, b, _ in _tuned_pairs():
        if not {a, b} <= set(records.method_order):
            continue
        differences = set_differences(records.cells, a, b)
        if differences.empty:
            continue
        ahead, behind, _ = sign_counts(differences.round(_DECIMALS).to_numpy())
        untied = ahead + behind
        mean, low, high = bootstrap_mean(differences.to_numpy())
        means.append(mean)
        interval = "" if math.isnan(low) else f" {_interval(low, high)}"
        text = f"{a} ahead on {ahead} of {untied} untied data sets"
        if untied < minimum:
            parts.append(f"{text} (too few for a test), {points(mean)}{interval}")
            continue
        better = sign_test(ahead, untied)
        worse = sign_test(ahead, untied, alternative="less")
        p_values.append(min(better, worse))
        if better < alpha:
            significant.append(f"{a} better (p = {better:.2g})")
        elif worse < alpha:
            significant.append(f"{greedy} better than {a} (p = {worse:.2g})")
        parts.append(f"{text}, {points(mean)}{interval}")
    if not parts:
        return "No tuned optimal learner and tuned CART share a complete data set."
    depths = [str(d) for d in records.depths]
    limit = records.time_limit(_tuned_pairs()[0][0])
    protocol = (
        f"depth{'s' if len(depths) > 1 else ''} {' and '.join(depths)}, "
        f"{records.frame['fold'].nunique()}-fold cross-validation, "
        f"{limit:g} s per fit"
    )
    advantage = (
        f"their mean advantage is {100 * min(means):+.2f} to "
        f"{100 * max(means):+.2f} accuracy points"
    )
    if significant:
        verdict = "; significant: " + "; ".join(significant)
    elif p_values:
        verdict = (
            f"; no sign test is significant (p >= {min(p_values):.2g}): the "
            f"tuned optimal trees are not better on significantly many data "
            f"sets, and {advantage}"
        )
    else:
        verdict = (
            f"; no test: fewer than {minimum} untied data sets for each "
            f"learner, so our data cannot tell, and {advantage}"
        )
    return (
        f"Out of sample, on {len(records.datasets)} data sets ({protocol}), "
        f"tuned optimal trees against tuned CART (mean difference of test "
        f"accuracy over data sets, 95 % bootstrap interval): {'; '.join(parts)}"
        f"{verdict}."
    )
