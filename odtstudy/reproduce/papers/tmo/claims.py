"""Claims of the TMO paper (Aldinucci, Tables 1-3) judged on the ``tmo`` study.

Every claim compares mean test accuracies per (data set, depth): orderings of
methods (win shares over data sets with a sign test, and win counts) and the values
themselves against the paper's spread. Only complete cells count (every fold
yielded a tree, see :data:`odtstudy.study.report._records.CELL_RULE`). Every
threshold is in ``[thresholds]`` of ``published.toml``.
"""

from __future__ import annotations

import functools
from collections import Counter

import pandas as pd

from odtstudy.reproduce._evidence import (
    claim_result,
    combine_verdicts,
    graded_verdict,
    judge_claims,
    limit_decided,
    method_table,
    points,
    sign_counts,
    tested_share,
)

__all__ = ["evaluate", "our_value"]

METHODS = ("cart", "tao", "tmo", "oct")
NAMES = {"cart": "CART", "tao": "TAO", "tmo": "TMO", "oct": "OCT"}
#: A difference of accuracies in percentage points, as the paper prints them.
_pp = functools.partial(points, unit="pp", digits=1, sign=False)
#: The sets the paper calls larger (Section 5).
LARGE = ("uci/phishing", "uci/a4a", "uci/spambase", "uci/digits")


# -- tables: one row per (dataset, depth), one column per method -------------


def _published_tables(published) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's means and standard deviations (NaN for a '-' entry)."""
    values = published.values
    frames = []
    for metric in ("test_acc", "test_acc_std"):
        rows = values[(values["metric"] == metric) & values["method"].isin(METHODS)]
        frames.append(method_table(rows, "value", METHODS, dropna=False))
    means, stds = frames
    return means, stds.reindex(means.index)


def _our_table(records, value: str = "test_acc") -> pd.DataFrame:
    """Our mean ``value`` (a cell column) of every complete cell (NaN
    elsewhere)."""
    cells = records.cells
    cells = cells[cells["complete"] & cells["method"].isin(METHODS)]
    if cells.empty:
        index = pd.MultiIndex.from_tuples([], names=["dataset", "depth"])
        return pd.DataFrame(index=index, columns=list(METHODS), dtype=float)
    cells = cells.assign(depth=cells["depth"].astype(int))
    return method_table(cells, value, METHODS)


# -- helpers ------------------------------------------------------------------


def _by_depth(outcome: pd.Series) -> str:
    """``"k/n cells (d2 a/b, d3 c/d)"`` for a boolean Series on (dataset, depth)."""
    if outcome.empty:
        return "no cell"
    depths = outcome.index.get_level_values("depth")
    parts = [
        f"d{d} {int(outcome[depths == d].sum())}/{int((depths == d).sum())}"
        for d in sorted(set(depths))
    ]
    return f"{int(outcome.sum())}/{len(outcome)} cells ({', '.join(parts)})"


def _relation(
    table: pd.DataFrame, better: str, others: tuple, optional: tuple = ()
) -> pd.Series:
    """Whether ``better`` is at least every method of ``others`` (and of
    ``optional`` where it has a value), per cell where ``better`` and all of
    ``others`` have a value."""
    both = table[[better, *others]].dropna()
    rivals = table.loc[both.index, [*others, *optional]].max(axis=1, skipna=True)
    return both[better] >= rivals


def _margin(
    table: pd.DataFrame, better: str, others: tuple, optional: tuple = ()
) -> pd.Series:
    """``better`` minus the best of ``others`` (and of ``optional`` where it
    has a value), per cell where ``better`` and all of ``others`` have one."""
    both = table[[better, *others]].dropna()
    rivals = table.loc[both.index, [*others, *optional]].max(axis=1, skipna=True)
    return both[better] - rivals


def _per_dataset(margin: pd.Series) -> tuple:
    """``(hits, losses, ties)`` over data sets: a data set's margins averaged
    over its depths first."""
    if margin.empty:
        return 0, 0, 0
    return sign_counts(margin.groupby(level="dataset").mean().to_numpy())


#: Why the unit of the ordering tests is the data set.
UNIT_NOTE = (
    "unit: the data set (its depths share its rows and folds, so its cells are "
    "not independent: their margins are averaged, ties left out)"
)


def _limited(records, methods) -> list:
    """(method, why) for each of ``methods`` whose time limit decided every
    run (:func:`~odtstudy.reproduce._evidence.limit_decided`)."""
    found = [(m, limit_decided(records.frame, m)) for m in methods]
    return [(m, why) for m, why in found if why is not None]


def _unmeasured(records, methods) -> str | None:
    """Why one of ``methods`` was not measured (its time limit decided every
    run), or None."""
    for method in methods:
        why = limit_decided(records.frame, method)
        if why is not None:
            return why
    return None


# -- the claims ---------------------------------------------------------------


def _ordering(
    claim,
    rules,
    pub,
    ours,
    better,
    others,
    optional=(),
    datasets=None,
    label=None,
    train=None,
    unmeasured=None,
):
    if datasets is not None:
        pub = pub[pub.index.get_level_values("dataset").isin(datasets)]
        ours = ours[ours.index.get_level_values("dataset").isin(datasets)]
    relation = label or (f"{NAMES[better]} ≥ " + " and ".join(NAMES[o] for o in others))
    theirs = _relation(pub, better, others, optional)
    mine = _relation(ours, better, others, optional)
    published_text = f"{relation} on {_by_depth(theirs)}"
    ours_text = f"{relation} on {_by_depth(mine)}"
    if unmeasured is not None:
        return claim_result(
            claim, published_text, ours_text, "not comparable", unmeasured
        )
    minimum = rules["min_cells"]
    hits, losses, ties = _per_dataset(_margin(ours, better, others, optional))
    verdict, evidence = tested_share(
        hits, hits + losses, rules, minimum=minimum, tied=ties
    )
    p_hits, p_losses, _ = _per_dataset(_margin(pub, better, others, optional))
    paper_verdict, paper_evidence = tested_share(
        p_hits, p_hits + p_losses, rules, minimum=minimum
    )
    if verdict == "not comparable":
        reason = (
            f"{relation}: no data set where the methods compared are all "
            "complete at this scale"
        )
    else:
        reason = (
            f"{relation} on our data sets: {evidence} ({ties} tied); the "
            f"paper's tables by the same rule: {paper_verdict} "
            f"({paper_evidence}); {UNIT_NOTE}"
        )
    if train is not None and verdict != "not comparable":
        fitted = _relation(train, better, others, optional)
        reason += (
            f"; on training accuracy (what TMO maximises) {relation} on "
            f"{int(fitted.sum())}/{len(fitted)} cells"
        )
    return claim_result(claim, published_text, ours_text, verdict, reason)


def _wins(table: pd.DataFrame, depth: int) -> tuple[Counter, int]:
    """Wins per method at one depth (ties credit all), and the data sets
    counted (TMO and at least one other method have a value)."""
    rows = table[table.index.get_level_values("depth") == depth]
    wins, counted = Counter(), 0
    for _, row in rows.iterrows():
        values = row.dropna()
        if "tmo" not in values or len(values) < 2:
            continue
        counted += 1
        best = values.max()
        wins.update(m for m, v in values.items() if v == best)
    return wins, counted


def _wins_text(wins: Counter, counted: int) -> str:
    rivals = [(n, m) for m, n in wins.items() if m != "tmo"]
    rival = max(rivals, default=(0, None))
    text = f"TMO {wins.get('tmo', 0)}/{counted}"
    if rival[1] is not None:
        text += f", next {NAMES[rival[1]]} {rival[0]}"
    return text


def _most_wins(claim, rules, pub, ours, unmeasured=()):
    """TMO the best of the methods measured, per depth over data sets (a
    sign test against chance one in the number of methods), the depths
    combined; ``unmeasured``: (method, why) pairs left out of our side."""
    ours = ours.drop(columns=[m for m, _ in unmeasured], errors="ignore")
    depths = sorted(
        set(pub.index.get_level_values("depth"))
        | set(ours.index.get_level_values("depth"))
    )
    published_parts, our_parts, verdicts, parts = [], [], [], []
    for depth in depths:
        wins, counted = _wins(pub, depth)
        if counted:
            published_parts.append(f"d{depth}: {_wins_text(wins, counted)}")
        wins, counted = _wins(ours, depth)
        if not counted:
            continue
        our_parts.append(f"d{depth}: {_wins_text(wins, counted)}")
        k = int(ours.xs(depth, level="depth").notna().any().sum())
        tmo = wins.get("tmo", 0)
        most = all(tmo >= n for m, n in wins.items() if m != "tmo")
        verdict, evidence = tested_share(
            tmo, counted, rules, minimum=rules["min_cells"], chance=1 / k
        )
        if verdict in ("reproduced", "partly") and not most:
            verdict = "inconclusive"
            evidence += ", but another method has more wins"
        verdicts.append(verdict)
        parts.append(f"d{depth}: TMO best on {evidence} ({verdict})")
    verdict = combine_verdicts(verdicts)
    if not parts:
        reason = "no depth where TMO and another method are complete"
    else:
        reason = (
            "; ".join(parts)
            + "; the depths combined (unit: the data set at one depth; each "
            "depth is one test, a set's folds averaged)"
        )
    for method, why in unmeasured:
        reason += f"; {NAMES[method]} left out: {why}"
    return claim_result(
        claim,
        "; ".join(published_parts) + " (best of four per data set, ties credit all)",
        "; ".join(our_parts) or "no cell",
        verdict,
        reason,
    )


def _phishing_depth4(claim, rules, published, records):
    values = published.values
    entry = values[
        (values["dataset"] == "uci/phishing")
        & (values["depth"] == 4)
        & (values["method"] == "oct")
        & (values["metric"] == "test_acc")
    ]
    published_text = (
        "no tree (out of memory at 128 GB)"
        if not entry.empty and bool(entry["timeout"].iloc[0])
        else "see Table 3"
    )
    frame = records.frame
    runs = frame[
        (frame["dataset"] == "uci/phishing")
        & (frame["depth"].astype(int) == 4)
        & (frame["method"] == "oct")
    ]
    if runs.empty:
        return claim_result(
            claim, published_text, "not run at this scale", "not comparable",
            "uci/phishing at depth 4 is only in the paper scale",
        )  # fmt: skip
    n_trees = int(runs["has_tree"].sum())
    statuses = ", ".join(
        f"{status} {count}" for status, count in runs["status"].value_counts().items()
    )
    ours = f"{n_trees}/{records.expected} folds gave a tree ({statuses})"
    if n_trees == 0:
        verdict = "reproduced"
    elif n_trees < records.expected:
        verdict = "partly"
    else:
        verdict = "not reproduced"
    reason = f"OCT on uci/phishing at depth 4: {ours}"
    return claim_result(claim, published_text, ours, verdict, reason)


def _values(claim, rules, method, pub, pub_std, ours, unmeasured=None):
    index = pub[method].dropna().index
    paper = pub.loc[index, method]
    spread = pub_std.loc[index, method]
    mine = ours[method].reindex(index)
    ran = mine.notna()
    diff = (mine[ran] - paper[ran]).abs()
    within = diff <= spread[ran]
    n = int(ran.sum())
    published_text = (
        f"{len(index)} means, spread ± {_pp(spread.min())}–{_pp(spread.max())} "
        "(std over 5 seeds)"
    )
    if n == 0:
        ours_text = "no published cell run at this scale"
    else:
        ours_text = (
            f"{int(within.sum())}/{n} of the cells run within the spread; "
            f"median |ours − paper| {_pp(diff.median())}"
        )
    if unmeasured is not None:
        verdict, reason = "not comparable", unmeasured
    elif n < rules["min_cells"]:
        verdict = "not comparable"
        reason = (
            f"{n} published cell(s) of {NAMES[method]} run at this scale "
            f"(the rule needs {rules['min_cells']})"
        )
    else:
        share = within.mean()
        good, partly = rules["values_reproduced"], rules["partly"]
        verdict = graded_verdict(share, good, partly)
        signed = (mine[ran] - paper[ran])[~within]
        worst = signed.abs().sort_values(ascending=False).head(3).index
        outside = ", ".join(
            f"{d} d{k} {_pp(signed[(d, k)], sign=True)}" for d, k in worst
        )
        reason = (
            f"{share:.0%} within the paper's spread (≥ {good:.0%} "
            f"reproduced, ≥ {partly:.0%} partly)"
            + (f"; largest misses: {outside}" if outside else "")
        )
    return claim_result(claim, published_text, ours_text, verdict, reason)


def our_value(records, row: dict):
    """Our value beside a published one: the standard deviation of the test
    accuracy over the folds for ``test_acc_std`` (as the report's tables), the
    report's default (the mean over the cell's runs) otherwise."""
    if row["metric"] != "test_acc_std":
        return None
    frame = records.frame
    runs = frame[
        (frame["dataset"] == row["dataset"])
        & (frame["method"] == row["method"])
        & (frame["depth"].astype(int) == int(row["depth"]))
    ]
    if runs.empty:
        return "— (not run at this scale)"
    trees = runs[runs["has_tree"]]
    if len(trees) < 2:
        return f"— ({len(trees)} run(s) with a tree)"
    return f"{trees['test_acc'].std():.4g}"


def evaluate(records, published) -> list:
    """One :class:`ClaimResult` per claim of ``published.toml``, in order.

    Parameters
    ----------
    records : StudyRecords
        The ``tmo`` study's records of one protocol.
    published : Published
        ``load_published("tmo")``.
    """
    pub, pub_std = _published_tables(published)
    ours = _our_table(records)
    train = _our_table(records, "train_acc")

    def ordering(better, others, **kwargs):
        unmeasured = _unmeasured(records, (better, *others))
        return lambda c, r: _ordering(
            c, r, pub, ours, better, others, unmeasured=unmeasured, **kwargs
        )

    judges = {
        "tmo-vs-cart": ordering("tmo", ("cart",), train=train),
        "tmo-vs-tao": ordering("tmo", ("tao",), train=train),
        "tmo-vs-oct": ordering("tmo", ("oct",), train=train),
        "tmo-most-wins": lambda c, r: _most_wins(
            c, r, pub, ours, _limited(records, METHODS)
        ),
        "oct-rarely-beats-cart": ordering("cart", ("oct",)),
        "tmo-large-sets": ordering(
            "tmo",
            ("cart", "tao"),
            optional=("oct",),
            datasets=LARGE,
            label="TMO ≥ CART, TAO (and OCT where it has a tree)",
        ),
        "oct-phishing-depth4": lambda c, r: _phishing_depth4(c, r, published, records),
    }
    for method in METHODS:
        judges[f"values-{method}"] = lambda c, r, m=method: _values(
            c, r, m, pub, pub_std, ours, _unmeasured(records, (m,))
        )
    return judge_claims(published, judges)
