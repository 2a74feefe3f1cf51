"""Claims of Aglin, Nijssen & Schaus (AAAI 2020), DL8.5: Table 2 and Figure 4.

Every rule is applied twice with the same code: to the paper's Table 2 (depth
4, its 600 s limit; an instance that timed out counts its limit as its time)
and to our records (every depth run, our limit). Both sides are turned into
the same *cells* (dataset × depth × method: proven, time, objective), so the
published column of the verdict table is computed, not paraphrased. Every
threshold is in ``[thresholds]`` of ``published.toml``; that the
data and the optima are the paper's are checks, not claims.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy.reproduce._claims import ClaimResult
from odtstudy.reproduce._evidence import (
    both_verdict,
    check_verdict,
    claim_result,
    geomean,
    judge_claims,
    method_table,
    share_text,
    tested_share,
    unit_signs,
)

#: The paper's methods, as labelled in the study.
DL85 = "dl85"
OTHERS = {"binoct": "BinOCT", "dl8": "DL8", "cpsat": "the CP model"}
ORDERS = {"dl85": "d.o.", "dl85-asc": "asc", "dl85-desc": "desc"}
NO_LB = "dl85-no-lb"
VARIANTS = [DL85, "dl85-asc", "dl85-desc", NO_LB]

CELL_COLUMNS = ["dataset", "depth", "method", "proven", "time", "objective"]
#: The unit of the speed tests.
UNIT_NOTE = (
    "unit: the data set (its depths are searches on the same rows, so their "
    "times are not independent: a set counts once, by the mean of its decided "
    "cells' signs, ties left out)"
)


# ------------------------------------------------------------ the two sides
def paper_cells(published, tick: float) -> pd.DataFrame:
    """Table 2 as cells (depth 4; a time-out counts the paper's limit; times
    at least ``tick``)."""
    limit = float(published.paper["time_limit"])
    values = published.values
    table = values[(values["where"] == "Table 2") & values["method"].notna()]
    rows = []
    for (dataset, method), part in table.groupby(["dataset", "method"], sort=False):
        by = part.set_index("metric")
        time, objective = by.loc["fit_time_s"], by.loc["objective"]
        rows.append(
            {
                "dataset": dataset,
                "depth": int(time["depth"]),
                "method": method,
                "proven": not bool(time["timeout"]),
                "time": limit if time["timeout"] else max(float(time["value"]), tick),
                "objective": np.nan
                if objective["timeout"]
                else float(objective["value"]),
            }
        )
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def our_cells(records, tick: float) -> pd.DataFrame:
    """Our cells with a tree or not (time: the limit when not proven; at
    least ``tick``)."""
    cells = records.cells.copy()
    limit = cells["method"].map(records.time_limit)
    fit = cells["fit_time"].astype(float)
    time = np.where(
        cells["all_proven"],
        np.maximum(fit.fillna(0), tick),
        np.maximum(limit, fit.fillna(0)),
    )
    return pd.DataFrame(
        {
            "dataset": cells["dataset"],
            "depth": cells["depth"].astype(int),
            "method": cells["method"],
            "proven": cells["all_proven"].astype(bool),
            "time": time,
            "objective": cells["objective"].astype(float),
        }
    )


# ----------------------------------------------------------------- measures
def compare(cells, first, second, rules) -> dict:
    """Decided cells, and those where ``first`` / ``second`` is the faster.

    Decided: either proves optimality and the longer time is at least
    ``noise_s``. Faster: proves while the other does not, or takes ``tie``
    (a fraction) less time.
    """
    noise, tie = rules["noise_s"], 1 + rules["tie"]
    proven, time = method_table(cells, "proven"), method_table(cells, "time")
    if first not in proven or second not in proven:
        return {"decided": 0, "first": 0, "second": 0, "sets": (0, 0, 0)}
    both = proven[[first, second]].dropna().astype(bool)
    t = time.loc[both.index, [first, second]]
    a, b = both[first], both[second]
    decided = (a | b) & (t.max(axis=1) >= noise)
    one = decided & ((a & ~b) | (a & b & (t[second] >= tie * t[first])))
    two = decided & ((b & ~a) | (a & b & (t[first] >= tie * t[second])))
    signs = (one.astype(int) - two.astype(int))[decided]
    sets = unit_signs(signs.rename("sign").reset_index(), "dataset", "sign")
    return {
        "decided": int(decided.sum()),
        "first": int(one.sum()),
        "second": int(two.sum()),
        "sets": sets,
    }


def faster(cells, other, rules) -> dict:
    """Decided cells where DL8.5 is faster / slower than ``other``."""
    r = compare(cells, DL85, other, rules)
    return {
        "decided": r["decided"],
        "faster": r["first"],
        "slower": r["second"],
        "sets": r["sets"],
    }


def speedup(cells, other) -> tuple:
    """(geometric-mean time ratio other / DL8.5 over DL8.5's proofs, cells,
    cells where the ratio is only a lower bound)."""
    proven, time = method_table(cells, "proven"), method_table(cells, "time")
    if DL85 not in proven or other not in proven:
        return np.nan, 0, 0
    part = proven[[DL85, other]].dropna()
    part = part[part[DL85].astype(bool)]
    ratio = time.loc[part.index, other] / time.loc[part.index, DL85]
    return geomean(ratio), len(part), int((~part[other].astype(bool)).sum())


def solved(cells) -> pd.DataFrame:
    """Instances proven: depth × method."""
    return cells.pivot_table(
        index="depth", columns="method", values="proven", aggfunc="sum"
    ).astype(int)


def _cactus_ok(cells, method, other, noise) -> bool:
    """``method``'s cactus curve is at or above ``other``'s at every depth
    (times below ``noise`` count as ``noise``)."""

    def curve(part, label):
        return np.sort(
            np.maximum(part.loc[part["method"] == label].query("proven")["time"], noise)
        )

    for _, part in cells.groupby("depth"):
        mine, theirs = curve(part, method), curve(part, other)
        for t in theirs:
            if np.searchsorted(mine, t, side="right") < np.searchsorted(
                theirs, t, side="right"
            ):
                return False
    return True


def slower_without_lb(cells, rules) -> dict:
    r = compare(cells, DL85, NO_LB, rules)
    faster_sets, slower_sets, tied = r["sets"]
    return {
        "decided": r["decided"],
        "slower": r["first"],
        "faster": r["second"],
        "sets": (faster_sets, slower_sets, tied),
    }


def branching(cells, count_share: float) -> dict:
    """Solve counts per depth and geometric-mean times of the three orders."""
    orders = [m for m in ORDERS if m in set(cells["method"])]
    counts = solved(cells[cells["method"].isin(orders)])
    n_sets = cells["dataset"].nunique()
    spread = (
        int((counts.max(axis=1) - counts.min(axis=1)).max())
        if len(counts.columns) == 3
        else None
    )
    proven, time = method_table(cells, "proven"), method_table(cells, "time")
    means, n_common = {}, 0
    if len(orders) == 3:
        common = proven[orders].dropna().astype(bool).all(axis=1)
        common = common[common].index
        n_common = len(common)
        means = {m: geomean(time.loc[common, m]) for m in orders}
    return {
        "counts": counts,
        "spread": spread,
        "allowed": max(1, int(count_share * n_sets)),
        "means": means,
        "n_common": n_common,
    }


def desc_deep(cells, limit_of) -> dict:
    deepest = cells["depth"].max()
    part = cells[(cells["depth"] == deepest) & cells["method"].isin(ORDERS)]
    counts = part.groupby("method")["proven"].sum().astype(int)
    par1 = {
        m: float(
            sum(
                t if p else limit_of(m)
                for t, p in zip(g["time"], g["proven"], strict=True)
            )
        )
        for m, g in part.groupby("method")
    }
    return {"depth": int(deepest), "counts": counts, "par1": par1}


# ------------------------------------------------------------------- claims
def _names(method):
    return OTHERS.get(method, ORDERS.get(method, method))


def _same_data(records, published) -> tuple:
    values = published.values
    expect = values[values["metric"].isin(["n_train", "n_features"])]
    frame = records.frame
    rows_bad, feats_bad, checked = [], [], 0
    for dataset in records.datasets:
        want = expect[expect["dataset"] == dataset].set_index("metric")["value"]
        if want.empty:
            continue
        runs = frame[frame["dataset"] == dataset]
        checked += 1
        got_rows = runs["n_train"].dropna().max()
        got_feats = runs["n_features"].dropna().max()
        if got_rows != want.get("n_train"):
            rows_bad.append(f"{dataset} {got_rows:g} rows vs {want['n_train']:g}")
        if got_feats != want.get("n_features"):
            feats_bad.append(
                f"{dataset} {got_feats:g} features vs {want['n_features']:g}"
            )
    published_text = f"{len(expect) // 2} sets: rows and items of Table 2"
    if not checked:
        return (
            published_text,
            "no Table 2 set run",
            "not comparable",
            ("no dataset of Table 2 at this scale"),
        )
    ours = (
        f"{checked} sets checked; {checked - len(set(rows_bad) | set(feats_bad))} match"
    )
    if feats_bad or rows_bad:
        return (
            published_text,
            ours,
            check_verdict(False),
            "; ".join(feats_bad + rows_bad),
        )
    return (
        published_text,
        ours,
        check_verdict(True),
        (f"all {checked} sets have Table 2's rows and nItems / 2 features"),
    )


def _same_optimum(records, published) -> tuple:
    values = published.values
    table = values[
        (values["where"] == "Table 2")
        & (values["metric"] == "objective")
        & values["method"].notna()
        & ~values["timeout"]
    ]
    optimum, best_found = {}, {}
    for row in table.itertuples():
        if "proven" in str(row.note) and "not proven" not in str(row.note):
            optimum.setdefault(row.dataset, set()).add(float(row.value))
        else:
            best_found[row.dataset] = min(
                best_found.get(row.dataset, np.inf), float(row.value)
            )
    inconsistent = [d for d, v in optimum.items() if len(v) > 1]
    published_text = (
        f"proven optima of {len(optimum)} sets at depth 4 (all methods agree"
        + (f", except {inconsistent})" if inconsistent else ")")
    )
    cells = records.cells
    exact = set(records.exact_methods)
    deep = cells[(cells["depth"] == 4) & cells["method"].isin(exact)]
    equal, violations, bounded = 0, [], 0
    for row in deep.itertuples():
        if np.isnan(row.objective):
            continue
        if row.dataset in optimum:
            opt = min(optimum[row.dataset])
            if row.all_proven and row.objective == opt:
                equal += 1
            elif row.all_proven:
                violations.append(
                    f"{row.method} on {row.dataset}: {row.objective:g} "
                    f"proven vs {opt:g}"
                )
            elif row.objective < opt:
                violations.append(
                    f"{row.method} on {row.dataset}: {row.objective:g} "
                    f"beats the proven {opt:g}"
                )
            else:
                bounded += 1
        elif row.dataset in best_found and row.all_proven:
            if row.objective > best_found[row.dataset]:
                violations.append(
                    f"{row.method} on {row.dataset}: proven {row.objective:g} worse "
                    f"than the paper's tree {best_found[row.dataset]:g}"
                )
            else:
                bounded += 1
    ours = (
        f"{equal} proven optima equal to the paper's; {bounded} consistent bounds; "
        f"{len(violations)} violations"
    )
    if violations:
        return published_text, ours, check_verdict(False), "; ".join(violations[:8])
    if not equal:
        return (
            published_text,
            ours,
            "not comparable",
            ("no depth-4 cell of ours proven on a set the paper proved"),
        )
    return (
        published_text,
        ours,
        check_verdict(True),
        (f"{equal} optima equal across {deep['dataset'].nunique()} sets, no violation"),
    )


# Each rule maps (cells, limit_of, rules) to (shown evidence, verdict,
# reason); it is applied to Table 2 and to our records alike.
def _faster(other):
    def rule(cells, limit_of, rules):
        r = faster(cells, other, rules)
        depths = sorted(int(d) for d in cells["depth"].unique())
        ahead, behind, tied = r["sets"]
        verdict, evidence = tested_share(
            ahead, ahead + behind, rules, minimum=rules["min_cells"], tied=tied
        )
        return (
            f"faster on {share_text(r['faster'], r['decided'])} decided cells (slower "
            f"on {r['slower']}; depths {depths}); on {ahead} data sets, slower "
            f"on {behind}, tied {tied}",
            verdict,
            f"DL8.5 faster than {OTHERS[other]} on the data sets with a decided "
            f"cell: {evidence}; {UNIT_NOTE}",
        )

    return rule


def _orders(cells, limit_of, rules):
    parts, big, n_min = [], [], np.inf
    factor = rules["orders_factor"]
    for other, name in OTHERS.items():
        ratio, n, bounded = speedup(cells, other)
        n_min = min(n_min, n)
        parts.append(
            f"{name} {ratio:.3g}× ({n} cells, {bounded} lower bounds)"
            if n
            else f"{name} —"
        )
        if n and ratio >= factor:
            big.append(name)
    if n_min == 0:
        verdict = "not comparable"
    elif n_min < rules["min_cells"]:
        verdict = "inconclusive"
    else:
        verdict = ["not reproduced", "partly", "partly", "reproduced"][len(big)]
    return (
        "geometric-mean slowdown vs DL8.5: " + "; ".join(parts),
        verdict,
        f"geometric mean ≥ {factor:g}× against: "
        + (", ".join(big) or "none")
        + f"; below {factor:g}× against: "
        + (", ".join(n for n in OTHERS.values() if n not in big) or "none"),
    )


def _solves_most(cells, limit_of, rules):
    counts = solved(cells)
    n = cells["dataset"].nunique()
    shown = "; ".join(
        f"depth {d}: "
        + ", ".join(
            f"{m} {counts.loc[d, m]}" for m in [DL85, *OTHERS] if m in counts.columns
        )
        + f" of {n}"
        for d in counts.index
    )
    present = [m for m in OTHERS if m in counts.columns]
    if DL85 not in counts.columns or not present:
        return shown, "not comparable", "DL8.5 or the others not run"
    at_least = all((counts[DL85] >= counts[m]).all() for m in present)
    deepest = counts.index.max()
    strictly = all(counts.loc[deepest, DL85] > counts.loc[deepest, m] for m in present)
    if at_least and strictly:
        return (
            shown,
            "reproduced",
            (f"DL8.5 proves the most at every depth, strictly at depth {deepest}"),
        )
    if at_least:
        level = [
            OTHERS[m]
            for m in present
            if counts.loc[deepest, m] >= counts.loc[deepest, DL85]
        ]
        return (
            shown,
            "partly",
            (
                f"DL8.5 proves at least as many at every depth, but at depth "
                f"{deepest} as many proofs by {', '.join(level)}"
            ),
        )
    beaten = [
        f"{OTHERS[m]} at depth {d}"
        for m in present
        for d in counts.index
        if counts.loc[d, m] > counts.loc[d, DL85]
    ]
    return shown, "not reproduced", "more proofs by " + ", ".join(beaten)


def _cactus(cells, limit_of, rules):
    variants = [m for m in VARIANTS if m in set(cells["method"])]
    others = [m for m in OTHERS if m in set(cells["method"])]
    depths = sorted(int(d) for d in cells["depth"].unique())
    shown = (
        f"{len(variants)} DL8.5 variants vs {len(others)} methods, depths {depths} "
        "(the cactus plot is in the study's report below)"
    )
    if not cells["proven"].any() or DL85 not in variants or not others:
        return shown, "not comparable", "no proof recorded"
    noise = rules["noise_s"]
    failing = [
        f"{_names(v)} below {OTHERS[o]}"
        for v in variants
        for o in others
        if not _cactus_ok(cells, v, o, noise)
    ]
    if not failing:
        return shown, "reproduced", "every DL8.5 variant at or above every other curve"
    if all(_cactus_ok(cells, DL85, o, noise) for o in others):
        return shown, "partly", "DL8.5 d.o. dominates; " + ", ".join(failing)
    return shown, "not reproduced", ", ".join(failing)


def _branching_small(cells, limit_of, rules):
    o = branching(cells, rules["branching_count_share"])
    if o["spread"] is None:
        return "—", "not comparable", "not all three orders run"
    means = ", ".join(f"{ORDERS[m]} {v:.3g} s" for m, v in o["means"].items())
    shown = (
        f"solve counts differ by ≤ {o['spread']} (allowed {o['allowed']}); "
        f"geometric-mean time on {o['n_common']} common proofs: {means}"
    )
    a = o["spread"] <= o["allowed"]
    if o["n_common"] < rules["min_cells"]:
        return (
            shown,
            "inconclusive" if a else "not reproduced",
            f"(a) solve counts differ by {o['spread']} (allowed {o['allowed']}); "
            f"(b) fewer than {rules['min_cells']} cells proven by d.o., asc and "
            "desc",
        )
    values = list(o["means"].values())
    within = rules["branching_time_factor"]
    b = max(values) <= within * min(values)
    return (
        shown,
        both_verdict(a, b),
        (
            f"(a) counts {'within' if a else 'beyond'} {o['allowed']}; (b) times "
            f"{'within' if b else 'beyond'} {within:g}× of each other (a claim "
            "of no difference, judged by the data file's equivalence margins)"
        ),
    )


def _desc_best(cells, limit_of, rules):
    o = desc_deep(cells, limit_of)
    shown = f"depth {o['depth']}: " + ", ".join(
        f"{ORDERS[m]} {o['counts'].get(m, 0)} proven, PAR-1 {o['par1'][m]:.4g} s"
        for m in ORDERS
        if m in o["par1"]
    )
    if len(o["par1"]) < len(ORDERS):
        return shown, "not comparable", "not all three orders run"
    counts = o["counts"]
    a = all(counts["dl85-desc"] >= counts[m] for m in ("dl85", "dl85-asc"))
    b = o["par1"]["dl85-desc"] <= min(o["par1"]["dl85"], o["par1"]["dl85-asc"])
    return (
        shown,
        both_verdict(a, b),
        (
            f"(a) desc proves {'at least' if a else 'fewer than'} as many; (b) desc's "
            f"total time is {'the lowest' if b else 'not the lowest'}"
        ),
    )


def _no_lb(cells, limit_of, rules):
    r = slower_without_lb(cells, rules)
    counts = solved(cells)
    deepest = counts.index.max()
    count = (
        f"; depth {deepest}: {counts.loc[deepest].get(NO_LB, 0)} proven vs "
        f"{counts.loc[deepest].get(DL85, 0)}"
        if NO_LB in counts.columns
        else ""
    )
    return (
        f"slower on {share_text(r['slower'], r['decided'])} decided cells (faster on "
        f"{r['faster']}); on {r['sets'][0]} data sets (faster on {r['sets'][1]})"
        f"{count}",
        *_slower_verdict(r, rules),
    )


def _slower_verdict(r, rules) -> tuple:
    # "sets" counts DL8.5 with the bound faster first: no LB slower
    slower, faster_sets, tied = r["sets"]
    verdict, evidence = tested_share(
        slower, slower + faster_sets, rules, minimum=rules["min_cells"], tied=tied
    )
    return verdict, (
        f"no LB slower on the data sets with a decided cell: {evidence}; {UNIT_NOTE}"
    )


RULE_OF = {
    "faster-than-binoct": _faster("binoct"),
    "faster-than-dl8": _faster("dl8"),
    "faster-than-cp": _faster("cpsat"),
    "orders-of-magnitude": _orders,
    "solves-most": _solves_most,
    "cactus-dominates": _cactus,
    "branching-small": _branching_small,
    "desc-best-deep": _desc_best,
    "no-lb-slower": _no_lb,
}


def _judge(claim, rules, records, published, cells) -> ClaimResult:
    rule = RULE_OF[claim["id"]]
    tick = rules["tick_s"]
    ours_shown, verdict, why = rule(cells("ours", tick), records.time_limit, rules)
    if claim.get("figure_only"):
        shown = "figure only (Figure 4: cactus plots at depths 2, 3, 4)"
        paper_verdict = ""
    else:
        limit = float(published.paper["time_limit"])
        paper = cells("paper", tick)
        shown, paper_verdict, _ = rule(paper, lambda m: limit, rules)
        paper_verdict = f"; Table 2 itself, by the same rule: {paper_verdict}"
    return claim_result(claim, shown, ours_shown, verdict, why + paper_verdict)


def evaluate(records, published) -> list:
    """One :class:`ClaimResult` per claim, then per check, of
    ``published.toml``."""
    tables = {}

    def cells(side, tick):
        # each claim is judged again at every moved threshold: the cells of
        # one tick are built once (a copy each time, so no rule shares one)
        if (side, tick) not in tables:
            build = our_cells if side == "ours" else paper_cells
            tables[side, tick] = build(records if side == "ours" else published, tick)
        return tables[side, tick].copy()

    judges = {
        cid: lambda c, r: _judge(c, r, records, published, cells) for cid in RULE_OF
    }
    judges["same-data"] = lambda c, r: claim_result(c, *_same_data(records, published))
    judges["same-optimum"] = lambda c, r: claim_result(
        c, *_same_optimum(records, published)
    )
    return judge_claims(published, judges)


def our_value(records, row) -> str | None:
    """Rows and features of a set (Table 2's nTrans and nItems / 2)."""
    if row["metric"] not in ("n_train", "n_features") or isinstance(
        row.get("method"), str
    ):
        return None
    runs = records.frame[records.frame["dataset"] == row["dataset"]]
    if runs.empty:
        return "— (not run at this scale)"
    return f"{runs[row['metric']].dropna().max():g}"
