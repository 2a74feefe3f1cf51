"""Claims of Bosch's MSc thesis on forests of optimal trees (``dl8-forests``).

The thesis's figures 3.1, 3.4 and 4.3-4.5 are tables of test accuracy; its
claims are orderings of methods, set by set. Every verdict below is computed
from the study's records by the rules of ``published.toml``; the thesis's side of
each comparison is computed from the transcribed values
(``published.toml``) on the same data sets, by the same rule.
Every threshold is in ``[thresholds]`` of that file.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from odtstudy.reproduce._evidence import (
    both_verdict,
    claim_result,
    combine_verdicts,
    judge_claims,
    percent,
    points,
    sign_counts,
    tested_share,
    too_few,
)

__all__ = ["evaluate", "our_value"]

OPT = "optdl8-forest"
DL8 = "dl85"
RF = "random-forest"
GB = "gradient-boosting"
NAIVE = "dl8forest"
PROGRESSIVE = "dl8forest-progressive"
PROGRESSIVE_RANDOM = "dl8forest-progressive-random"
RANDOM_ATTRIBUTES = "dl8forest-random-attributes"
NAMES = {
    OPT: "optimal forest",
    DL8: "DL8",
    RF: "random forest",
    GB: "gradient boosting",
    NAIVE: "DL8-forest",
}
#: The larger sets §4.3 names for the depth-2 optimal forest.
LARGER_SETS = ("soybean", "kr-vs-kp", "mushroom")
#: The unit of every test of these claims: each compares methods at one
#: depth (or one method at two depths), over data sets.
UNIT_NOTE = (
    "unit: the data set (a cell's folds and seeds are averaged first; each "
    "claim is at one depth)"
)
#: Why a claim about one data set gets no test.
ONE_SET = "one data set: its folds and seeds are not independent units, so " + too_few(
    1
)


# ------------------------------------------------------------------ helpers
def _accuracies(records) -> dict:
    """``(dataset, depth, method) -> mean test accuracy`` of complete cells,
    optimal-forest cells without a positive margin left out (dashes)."""
    cells = records.cells
    cells = cells[cells["complete"]]
    dashes = _dashes(records)
    out = {}
    for row in cells.itertuples(index=False):
        key = (row.dataset, int(row.depth), row.method)
        if key in dashes:
            continue
        out[key] = float(row.test_acc)
    return out


def _positive_margin(stats) -> bool | None:
    """True when the run's forest reached rho > 0; None without the stat."""
    try:
        stats = json.loads(stats) if isinstance(stats, str) else (stats or {})
    except ValueError:
        return None
    if "positive_margin_at" not in stats:
        return None
    return stats["positive_margin_at"] is not None


def _margins(records) -> pd.DataFrame:
    """Optimal-forest runs with a tree: dataset, depth, positive (bool/None)."""
    frame = records.frame
    runs = frame[(frame["method"] == OPT) & frame["has_tree"]]
    stats = runs["stats"] if "stats" in runs else pd.Series(None, index=runs.index)
    return pd.DataFrame(
        {
            "dataset": runs["dataset"],
            "depth": runs["depth"].astype(int),
            "positive": stats.map(_positive_margin),
        }
    )


def _dashes(records) -> set:
    """Optimal-forest cells none of whose runs reached a positive margin."""
    margins = _margins(records)
    out = set()
    for (dataset, depth), group in margins.groupby(["dataset", "depth"]):
        known = group["positive"].dropna()
        if len(known) and not known.astype(bool).any():
            out.add((dataset, int(depth), OPT))
    return out


def _paper(published, where, method, depth) -> dict:
    values = published.values
    rows = values[
        (values["where"] == where)
        & (values["method"] == method)
        & (values["depth"] == depth)
        & (values["metric"] == "test_acc")
        & ~values["timeout"]
    ]
    return {r["dataset"]: float(r["value"]) for _, r in rows.iterrows()}


def _ours(acc, method, depth) -> dict:
    return {d: v for (d, dp, m), v in acc.items() if m == method and dp == depth}


def _wins(a: dict, b: dict, sets) -> tuple:
    """(wins, ties, losses of a, mean difference a - b) over ``sets``."""
    diffs = np.array([a[s] - b[s] for s in sets]) if len(sets) else np.zeros(0)
    wins, losses, ties = sign_counts(diffs)
    return wins, ties, losses, float(diffs.mean()) if len(diffs) else 0


def _score(wins, ties, losses) -> str:
    """``"w–l"``, with the ties when there are any."""
    tie_text = f" ({ties} tie{'s' if ties > 1 else ''})" if ties else ""
    return f"{wins}–{losses}{tie_text}"


def _ahead_count(wins, ties) -> str:
    """Wins of a, ties counting half."""
    return f"{wins + ties / 2:g}"


def _dash_note(dashes, depths, sets=None) -> str:
    """Which optimal-forest cells at ``depths`` (on ``sets``) are dashes."""
    cells = sorted(
        (d, dp) for d, dp, _ in dashes if dp in depths and (sets is None or d in sets)
    )
    if not cells:
        return ""
    by_set = {}
    for d, dp in cells:
        by_set.setdefault(d, []).append(dp)
    if len(depths) == 1:
        text = ", ".join(by_set)
    else:
        text = ", ".join(
            f"{d} (depth {', '.join(map(str, dps))})" for d, dps in by_set.items()
        )
    return f"; optimal forest without ρ > 0 (a dash, left out) on {text}"


# ------------------------------------------------------------------- claims
def _ahead(
    claim, rules, name_a, name_b, paper_a, paper_b, ours_a, ours_b, note="", sets=None
):
    """The "A ahead of B" rule (see ``[rules]`` of ``published.toml``)."""
    common = sorted(set(paper_a) & set(paper_b) & set(ours_a) & set(ours_b))
    if sets is not None:
        common = [s for s in common if s in sets]
    full = sorted(set(paper_a) & set(paper_b))
    if sets is not None:
        full = [s for s in full if s in sets]
    pw, pt, pl, pm = _wins(paper_a, paper_b, full)
    published = (
        f"{name_a} ahead of {name_b} on {_ahead_count(pw, pt)}/{len(full)} sets "
        f"(mean {points(pm)})"
    )
    minimum = rules["min_sets"]
    if not common:
        return claim_result(
            claim,
            published,
            f"no common set{note}",
            "not comparable",
            "no data set both in the thesis's table and with complete cells "
            "at this scale",
        )
    cw, ct, cl, _ = _wins(paper_a, paper_b, common)
    ow, ot, ol, om = _wins(ours_a, ours_b, common)
    agree = sum(
        np.sign(paper_a[s] - paper_b[s]) == np.sign(ours_a[s] - ours_b[s])
        for s in common
    )
    published += f"; on our {len(common)} sets: {_score(cw, ct, cl)}"
    ours = (
        f"{name_a} ahead on {_ahead_count(ow, ot)}/{len(common)} sets "
        f"(mean {points(om)}); "
        f"same sign as the thesis on {agree}/{len(common)}{note}"
    )
    verdict, evidence = tested_share(ow, ow + ol, rules, minimum=minimum, tied=ot)
    thesis, thesis_evidence = tested_share(pw, pw + pl, rules, minimum=minimum)
    reason = (
        f"{name_a} ahead on the untied sets: {evidence}; the thesis's table "
        f"by the same rule: {thesis} ({thesis_evidence}); {UNIT_NOTE}"
    )
    return claim_result(claim, published, ours, verdict, reason)


def _pair_verdict(rules, other, paper_counts, ours_counts) -> tuple:
    """(verdict, text) of the optimal forest against ``other``: the
    direction of the thesis's table (its majority), tested on our sets."""
    pw, pt, pl = paper_counts
    ow, ot, ol = ours_counts
    name = NAMES[other]
    if pw == pl:
        return "inconclusive", (
            f"vs {name}: the thesis's table has no direction ({_score(pw, pt, pl)}); "
            "'no difference' needs an equivalence margin, which the data file "
            "does not give"
        )
    ahead = pw > pl
    hits, misses = (ow, ol) if ahead else (ol, ow)
    verdict, evidence = tested_share(
        hits, hits + misses, rules, minimum=rules["min_sets"], tied=ot
    )
    word = "ahead" if ahead else "behind"
    return verdict, (
        f"vs {name}: the thesis has it {word} ({_score(pw, pt, pl)}); ours "
        f"{_score(ow, ot, ol)}, {word} on the untied sets: {evidence} ({verdict})"
    )


def _versus_others(claim, rules, published, acc, where, depth, dashes):
    paper_opt = _paper(published, where, OPT, depth)
    ours_opt = _ours(acc, OPT, depth)
    pub_parts, our_parts, verdicts, reasons = [], [], [], []
    for other in (DL8, RF, GB):
        paper_o = _paper(published, where, other, depth)
        ours_o = _ours(acc, other, depth)
        full = sorted(set(paper_opt) & set(paper_o))
        common = sorted(set(full) & set(ours_opt) & set(ours_o))
        pw, pt, pl, _ = _wins(paper_opt, paper_o, full)
        pub_parts.append(f"vs {NAMES[other]} {_score(pw, pt, pl)}")
        if not common:
            verdicts.append("not comparable")
            reasons.append(f"vs {NAMES[other]}: no common set at this scale")
            continue
        ow, ot, ol, _ = _wins(ours_opt, ours_o, common)
        our_parts.append(f"vs {NAMES[other]} {_score(ow, ot, ol)} on {len(common)}")
        verdict, reason = _pair_verdict(rules, other, (pw, pt, pl), (ow, ot, ol))
        verdicts.append(verdict)
        reasons.append(reason)
    published_text = f"optimal forest wins–losses: {', '.join(pub_parts)}"
    note = _dash_note(dashes, [depth])
    verdict = combine_verdicts(verdicts)
    reason = "; ".join(reasons) + f"; the three pairs combined; {UNIT_NOTE}"
    return claim_result(
        claim,
        published_text,
        ("; ".join(our_parts) or "no common set") + note,
        verdict,
        reason,
    )


def _attribute_variants(claim, rules, published, acc):
    where, depth, data = "Figure 3.4", 3, "hypothyroid"
    labels = (NAIVE, PROGRESSIVE, PROGRESSIVE_RANDOM, RANDOM_ATTRIBUTES)
    paper = {m: _paper(published, where, m, depth).get(data) for m in labels}
    published_text = (
        "hypothyroid: all / progressive / progressive random / random = "
        + (" / ".join(percent(paper[m]) for m in labels))
    )
    ours = {m: acc.get((data, depth, m)) for m in labels}
    if any(v is None for v in ours.values()):
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            f"the four DL8-forest variants on {data} at depth {depth} were not "
            "all run (complete) at this scale",
        )
    within = max(
        abs(ours[PROGRESSIVE] - ours[NAIVE]),
        abs(ours[PROGRESSIVE_RANDOM] - ours[NAIVE]),
    )
    close, far = rules["within_points"], rules["below_points"]
    a = within < close
    lowest = ours[RANDOM_ATTRIBUTES] < min(
        ours[m] for m in labels if m != RANDOM_ATTRIBUTES
    )
    b = lowest and ours[NAIVE] - ours[RANDOM_ATTRIBUTES] > far
    return claim_result(
        claim,
        published_text,
        "hypothyroid: " + " / ".join(percent(ours[m]) for m in labels),
        "inconclusive",
        f"{ONE_SET}; by the margins alone it would be {both_verdict(a, b)}: "
        f"(a) progressive variants within {100 * close:g} point(s) of all: "
        f"{'yes' if a else 'no'} (largest gap {100 * within:.2f} pts); (b) random "
        f"attributes lowest and > {100 * far:g} point(s) below all: "
        f"{'yes' if b else 'no'} "
        f"({points(ours[RANDOM_ATTRIBUTES] - ours[NAIVE])})",
    )


def _depth1_margin(claim, rules, published, records):
    paper_sets = set(_paper(published, "Figure 4.3", OPT, 1))
    published_text = (
        "dash (no forest with ρ > 0) on primary-tumor and letter; an accuracy on "
        f"the other {len(paper_sets)} sets"
    )
    margins = _margins(records)
    margins = margins[margins["depth"] == 1]
    tumour = margins[margins["dataset"] == "primary-tumor"]
    if tumour.empty:
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            "no optimal-forest run on primary-tumor at depth 1 at this scale",
        )
    if tumour["positive"].isna().any():
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            "the optimal forest's runs record no `positive_margin_at` stat",
        )
    margins = margins[margins["positive"].notna()]
    hits = int(tumour["positive"].astype(bool).sum())
    others = margins[margins["dataset"].isin(paper_sets)]
    reached = others.groupby("dataset")["positive"].apply(lambda s: bool(s.any()))
    never = sorted(reached[~reached].index)
    ours = (
        f"primary-tumor: ρ > 0 in {hits}/{len(tumour)} runs; other sets with "
        f"ρ > 0 in some run: {int(reached.sum())}/{len(reached)}"
        + (f" (never on {', '.join(never)})" if never else "")
    )
    if hits:
        verdict, reason = "not reproduced", "a run on primary-tumor reached ρ > 0"
    elif never:
        verdict = "partly"
        reason = "primary-tumor has no positive margin, but other sets have none either"
    else:
        verdict = "reproduced"
        reason = "no positive margin on primary-tumor only"
    return claim_result(claim, published_text, ours, verdict, reason)


def _zoo(claim, rules, published, records):
    paper = {
        d: (
            _paper(published, w, OPT, d).get("zoo-1"),
            _paper(published, w, DL8, d).get("zoo-1"),
        )
        for w, d in (("Figure 4.4", 2), ("Figure 4.5", 3))
    }
    published_text = "; ".join(
        f"depth {d}: optimal forest {percent(o)}, DL8 {percent(t)}"
        for d, (o, t) in paper.items()
    )
    frame = records.frame
    keys = ["dataset", "depth", "fold", "seed"]
    parts, scores = [], {}
    for depth in (2, 3):
        cell = frame[(frame["dataset"] == "zoo-1") & (frame["depth"] == depth)]
        opt = cell[(cell["method"] == OPT) & cell["has_tree"]]
        tree = cell[(cell["method"] == DL8) & cell["has_tree"]]
        if len(opt) < records.expected or len(tree) < records.expected:
            continue
        both = opt.merge(tree, on=keys, suffixes=("_opt", "_dl8"))
        n = len(both)
        single = int((both["n_trees_opt"] == 1).sum())
        same_train = int((both["train_acc_opt"] == both["train_acc_dl8"]).sum())
        same_test = int((both["test_acc_opt"] == both["test_acc_dl8"]).sum())
        scores[depth] = (
            2 if single == same_test == n else 1 if single == same_train == n else 0
        )
        parts.append(
            f"depth {depth}: one tree in {single}/{n} runs, DL8's training "
            f"accuracy in {same_train}/{n}, its test accuracy in {same_test}/{n}"
        )
    if not scores:
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            "zoo-1 at depths 2 and 3 (optimal forest and DL8) not run at this scale",
        )
    values = list(scores.values())
    if min(values) == 2 and len(scores) == 2:
        verdict = "reproduced"
    elif max(values) == 0:
        verdict = "not reproduced"
    else:
        verdict = "partly"
    reason = "; ".join(
        f"depth {d}: "
        + (
            "a single tree with DL8's test accuracy in every run"
            if v == 2
            else "a single optimal tree in every run, but an equally optimal "
            "tree other than DL8's in some (a different tie-break)"
            if v == 1
            else "more than one tree in some run"
        )
        for d, v in scores.items()
    )
    if len(scores) < 2:
        reason += " (the other depth not run at this scale)"
    return claim_result(claim, published_text, "; ".join(parts), verdict, reason)


def _fold_spread(records, dataset, depth, method, others) -> float:
    """The standard error of ``method`` minus the best of ``others`` (by mean),
    over their paired runs (fold, seed) on one cell; NaN with fewer than 2."""
    frame = records.frame
    cell = frame[
        (frame["dataset"] == dataset) & (frame["depth"] == depth) & frame["has_tree"]
    ]
    keys = ["fold", "seed"]
    mine = cell[cell["method"] == method].set_index(keys)["test_acc"]
    rivals = {m: cell[cell["method"] == m].set_index(keys)["test_acc"] for m in others}
    best = max(rivals, key=lambda m: rivals[m].mean())
    diffs = (mine - rivals[best]).dropna()
    if len(diffs) < 2:
        return float("nan")
    return float(diffs.std(ddof=1) / np.sqrt(len(diffs)))


def _beyond(lead: float, spread: float) -> bool:
    """A lead larger than the fold spread (never without a spread)."""
    return bool(np.isfinite(spread) and lead > spread)


def _larger(claim, rules, published, records, acc, dashes):
    depth, where = 2, "Figure 4.4"
    methods = (OPT, DL8, RF, GB)
    paper = {m: _paper(published, where, m, depth) for m in methods}
    pub_parts = []
    for s in LARGER_SETS:
        lead = paper[OPT][s] - max(paper[m][s] for m in methods[1:])
        pub_parts.append(f"{s} {points(lead)}")
    published_text = "optimal forest's lead over the best other: " + ", ".join(
        pub_parts
    )
    parts, ahead, behind, ran = [], 0, 0, 0
    for s in LARGER_SETS:
        others = [acc.get((s, depth, m)) for m in methods[1:]]
        if any(v is None for v in others):
            continue
        if (s, depth, OPT) in dashes:
            ran += 1
            parts.append(f"{s}: no ρ > 0 (a dash)")
            continue
        opt = acc.get((s, depth, OPT))
        if opt is None:
            continue
        ran += 1
        lead = opt - max(others)
        spread = _fold_spread(records, s, depth, OPT, methods[1:])
        ahead += lead > 0
        behind += lead < 0
        parts.append(f"{s} {points(lead)} (fold spread {points(spread)})")
    if not ran:
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            f"none of {', '.join(LARGER_SETS)} run at depth 2 at this scale",
        )
    verdict, evidence = tested_share(
        ahead, ahead + behind, rules, minimum=rules["min_larger_sets"]
    )
    return claim_result(
        claim,
        published_text,
        "lead over the best other: " + ", ".join(parts),
        verdict,
        f"the most accurate on the named sets run: {evidence}; {UNIT_NOTE}",
    )


def _tic_tac_toe(claim, rules, published, records, acc, dashes):
    depth, where, data = 3, "Figure 4.5", "tic-tac-toe"
    others = (DL8, RF, GB)
    paper = {m: _paper(published, where, m, depth)[data] for m in (OPT, *others)}
    paper_lead = paper[OPT] - max(paper[m] for m in others)
    published_text = f"lead {points(paper_lead)} ({percent(paper[OPT])})"
    ours_other = [acc.get((data, depth, m)) for m in others]
    dash = (data, depth, OPT) in dashes
    opt = acc.get((data, depth, OPT))
    if any(v is None for v in ours_other) or (opt is None and not dash):
        return claim_result(
            claim,
            published_text,
            "—",
            "not comparable",
            "tic-tac-toe at depth 3 not run (complete) at this scale",
        )
    if dash:
        return claim_result(
            claim,
            published_text,
            "no ρ > 0 (a dash)",
            "not reproduced",
            "no forest with a positive margin in any run: the claimed forest "
            "does not exist here",
        )
    lead = opt - max(ours_other)
    spread = _fold_spread(records, data, depth, OPT, others)
    best_other = NAMES[others[int(np.argmax(ours_other))]]
    share = rules["lead_share"]
    if lead >= share * paper_lead:
        by_lead = "reproduced"
    elif _beyond(lead, spread):
        by_lead = "partly"
    else:
        by_lead = "not reproduced"
    return claim_result(
        claim,
        published_text,
        f"lead {points(lead)} ({percent(opt)}; best other: {best_other} "
        f"{percent(max(ours_other))}); fold spread {points(spread)}",
        "inconclusive",
        f"{ONE_SET}; by the lead alone it would be {by_lead}: lead "
        f"{points(lead)} against {share:.0%} of the thesis's, "
        f"{points(share * paper_lead)}, and the fold spread {points(spread)}",
    )


def evaluate(records, published) -> list:
    """One :class:`ClaimResult` per claim of ``published``, in file order."""
    acc = _accuracies(records)
    dashes = _dashes(records)

    def ahead(a, b, where_a, where_b, da, db, small=False):
        def judge(claim, rules):
            sets = None
            if small:
                sets = {
                    r["dataset"]
                    for _, r in published.values.iterrows()
                    if r["metric"] == "n_train" and r["value"] <= rules["small_rows"]
                }
            return _ahead(
                claim,
                rules,
                NAMES[a] + ("" if da == db else f" (depth {da})"),
                NAMES[b] + ("" if da == db else f" (depth {db})"),
                _paper(published, where_a, a, da),
                _paper(published, where_b, b, db),
                _ours(acc, a, da),
                _ours(acc, b, db),
                note=_dash_note(dashes, {da, db}, sets) if OPT in (a, b) else "",
                sets=sets,
            )

        return judge

    def versus(where, depth):
        return lambda c, r: _versus_others(c, r, published, acc, where, depth, dashes)

    judges = {
        "naive-forest-below-random-forest": ahead(
            RF, NAIVE, "Figure 3.1", "Figure 3.1", 3, 3
        ),
        "naive-forest-below-dl8": ahead(DL8, NAIVE, "Figure 3.1", "Figure 3.1", 3, 3),
        "attribute-selection-variants": lambda c, r: _attribute_variants(
            c, r, published, acc
        ),
        "depth1-no-positive-margin": lambda c, r: _depth1_margin(
            c, r, published, records
        ),
        "depth1-optimal-forest-vs-others": versus("Figure 4.3", 1),
        "depth2-optimal-forest-vs-others": versus("Figure 4.4", 2),
        "depth3-optimal-forest-vs-others": versus("Figure 4.5", 3),
        "zoo-stops-at-dl8-tree": lambda c, r: _zoo(c, r, published, records),
        "depth2-best-on-larger-sets": lambda c, r: _larger(
            c, r, published, records, acc, dashes
        ),
        "trails-random-forest-on-small-sets": ahead(
            RF, OPT, "Figure 4.4", "Figure 4.4", 2, 2, small=True
        ),
        "depth3-below-depth2": ahead(OPT, OPT, "Figure 4.4", "Figure 4.5", 2, 3),
        "tic-tac-toe-depth3-best": lambda c, r: _tic_tac_toe(
            c, r, published, records, acc, dashes
        ),
    }
    return judge_claims(published, judges)


def our_value(records, row) -> str | None:
    """Our training-set size beside the thesis's (rows without a method), and
    a note on optimal-forest cells without a positive margin."""
    frame = records.frame
    if row["metric"] == "n_train" and not isinstance(row.get("method"), str):
        runs = frame[(frame["dataset"] == row["dataset"]) & frame["has_tree"]]
        if runs.empty:
            return "— (not run at this scale)"
        return f"{runs['n_train'].mean():.0f}"
    if row.get("method") == OPT and row["metric"] == "test_acc":
        key = (row["dataset"], int(row["depth"]), OPT)
        if key in _dashes(records):
            runs = frame[
                (frame["dataset"] == row["dataset"])
                & (frame["depth"] == int(row["depth"]))
                & (frame["method"] == OPT)
                & frame["has_tree"]
            ]
            return f"{runs['test_acc'].mean():.4g} (no run reached ρ > 0: a dash)"
    return None
