"""Forests of optimal trees: the seeds' tables (Aglin's thesis ch. 6, Bosch ch. 3-4).

(a) Table 6.2: objective reached by LPBoost vs OptiLPBoost and MDBoost vs
    OptiMDBoost at equal ``reg`` (pricing by weighted CART vs an exact
    weighted optimal tree), on CP4IM sets, whole data set.
(b) Table 6.3 / Bosch figs. 4.3-4.5: cross-validated test accuracy and
    number of trees of OptiLPBoost, OptiMDBoost, LPBoost, MDBoost, AdaBoost,
    RandomForest, DL8-forest variants and a single DL8.5 tree.
(c) Bosch figs. 3.2 / 3.3: DL8-forest diagnostics (tree unanimity, how
    often the same features are used at the root and anywhere).

Small defaults (a few CP4IM sets, depth 2-3, 3 folds, fixed ``reg``) finish in
about ten minutes on two shared cores. The papers' settings by flag:

    --paper   thesis ch. 6: its 10 CP4IM sets, depth 3, 5-fold CV, ``reg``
              tuned per fold by 4-fold inner CV on the thesis grids.
    --bosch   Bosch ch. 4: 25% train / 75% test, 10 random splits, LPBoost
              D=1, stop 20 trees after the margin becomes positive, depths 1-3.

Exact pricing uses weighted DL8.5 when ``DL85Classifier`` accepts
real-valued sample weights, otherwise the exhaustive pricer (also exact,
depth <= 3); the header says which. Run from the repository root:

    python benchmarks/forests_table.py [--table a|b|c|all] [--out FILE]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.naiveforest import (
    AdaBoostBaseline,
    DL8ForestClassifier,
    OptimalBoostClassifier,
    RandomForestBaseline,
)

THESIS_SETS = [
    "anneal",
    "audiology",
    "heart-cleveland",
    "hepatitis",
    "lymph",
    "primary-tumor",
    "soybean",
    "tic-tac-toe",
    "vote",
    "zoo-1",
]
LP_GRID = [0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]
MD_GRID = [0.5, 1, 3, 6, 12, 25, 50, 100]
DL8_VARIANTS = [
    ("random", "all"),
    ("all", "progressive"),
    ("all", "progressive_random"),
    ("all", "random"),
    ("progressive", "all"),
]


def exact_pricing() -> str:
    return "dl85"


def fmt(value, digits=4):
    """Objective for a table: solver noise below 1e-9 shows as 0."""
    return "0" if abs(value) < 1e-9 else f"{value:.{digits}g}"


def boost(objective, reg, depth, pricing, args):
    return OptimalBoostClassifier(
        objective,
        reg,
        depth,
        pricing=pricing,
        lp_solver="highspy",
        time_limit=args.time_limit,
        max_iterations=args.max_iterations,
        stop_after_positive_margin=args.stop_after_positive_margin,
        random_state=0,
    )


# ---------------------------------------------------------------- table (a)
def table_a(args, out):
    pricing = exact_pricing()
    out(f"\n### (a) Objective at equal reg (Table 6.2), exact pricing = {pricing}\n")
    out(
        "| dataset | nFeat | nTrans | depth | LP reg | LPBoost | OptiLPBoost "
        "| trees LP/Opti | MD reg | MDBoost | OptiMDBoost | trees MD/Opti "
        "| Opti proven | time Opti (s) |"
    )
    out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        data = load_dataset(name)
        X, y = data.X, data.y
        for depth in args.depths:
            for reg_lp, reg_md in zip(args.reg_lp, args.reg_md):
                cells, proven, secs = {}, [], 0.0
                for objective, reg in (("lpboost", reg_lp), ("mdboost", reg_md)):
                    for pr in ("cart", pricing):
                        t0 = time.perf_counter()
                        clf = boost(objective, reg, depth, pr, args).fit(X, y)
                        if pr != "cart":
                            secs += time.perf_counter() - t0
                            proven.append("yes" if clf.optimal_ else clf.status_)
                        cells[objective, pr] = clf
                lp, olp = cells["lpboost", "cart"], cells["lpboost", pricing]
                md, omd = cells["mdboost", "cart"], cells["mdboost", pricing]
                out(
                    f"| {name} | {X.shape[1]} | {X.shape[0]} | {depth} | {reg_lp} "
                    f"| {fmt(lp.objective_)} | {fmt(olp.objective_)} "
                    f"| {len(lp.estimators_)}/{len(olp.estimators_)} | {reg_md} "
                    f"| {fmt(md.objective_, 5)} | {fmt(omd.objective_, 5)} "
                    f"| {len(md.estimators_)}/{len(omd.estimators_)} "
                    f"| {'/'.join(proven)} | {secs:.1f} |"
                )


# ---------------------------------------------------------------- table (b)
def methods_b(depth, reg_lp, reg_md, args):
    pricing = exact_pricing()
    methods = {
        "OptiLPBoost": lambda r=reg_lp: boost("lpboost", r, depth, pricing, args),
        "OptiMDBoost": lambda r=reg_md: boost("mdboost", r, depth, pricing, args),
        "LPBoost": lambda r=reg_lp: boost("lpboost", r, depth, "cart", args),
        "MDBoost": lambda r=reg_md: boost("mdboost", r, depth, "cart", args),
        "AdaBoost": lambda: AdaBoostBaseline(depth, random_state=0),
        "RandomForest": lambda: RandomForestBaseline(depth, random_state=0),
        "DL8.5": lambda: DL85Classifier(max_depth=depth, time_limit=args.time_limit),
    }
    for samples, attributes in DL8_VARIANTS:
        methods[f"DL8F {samples}/{attributes}"] = lambda s=samples, a=attributes: (
            DL8ForestClassifier(
                10,
                depth,
                sample_selection=s,
                attribute_selection=a,
                time_limit=args.time_limit,
                random_state=0,
            )
        )
    return methods


def n_trees(clf):
    if hasattr(clf, "estimators_") and isinstance(clf.estimators_, list):
        return len(clf.estimators_)
    if hasattr(clf, "stats_") and "n_trees" in clf.stats_:
        return clf.stats_["n_trees"]
    return 1


def tuned(name, make, grid, X, y, seed):
    """Inner 4-fold grid search over ``reg`` (thesis protocol)."""
    best, best_acc = grid[0], -1.0
    inner = StratifiedKFold(4, shuffle=True, random_state=seed)
    for reg in grid:
        accs = [
            make(reg).fit(X[tr], y[tr]).score(X[te], y[te])
            for tr, te in inner.split(X, y)
        ]
        if np.mean(accs) > best_acc:
            best, best_acc = reg, float(np.mean(accs))
    return best


def splits(args, y):
    if args.bosch:
        ss = StratifiedShuffleSplit(args.repeats, train_size=0.25, random_state=0)
        return list(ss.split(np.zeros(len(y)), y))
    skf = StratifiedKFold(args.folds, shuffle=True, random_state=0)
    return list(skf.split(np.zeros(len(y)), y))


def table_b(args, out):
    protocol = (
        f"{args.repeats} random 25%/75% splits"
        if args.bosch
        else f"{args.folds}-fold CV"
    )
    reg_note = (
        "reg tuned by inner 4-fold CV"
        if args.tune
        else f"LP reg={args.reg_lp[0]}, MD reg={args.reg_md[0]}"
    )
    out(
        f"\n### (b) Test accuracy % (mean number of trees), {protocol}, "
        f"{reg_note}, exact pricing = {exact_pricing()}\n"
    )
    names = None
    for depth in args.depths:
        for name in args.datasets:
            data = load_dataset(name)
            X, y = data.X, data.y
            methods = methods_b(depth, args.reg_lp[0], args.reg_md[0], args)
            if names is None:
                names = list(methods)
                out("| dataset | depth | " + " | ".join(names) + " |")
                out("|---|---|" + "---|" * len(names))
            acc = {m: [] for m in names}
            trees = {m: [] for m in names}
            for fold, (tr, te) in enumerate(splits(args, y)):
                for m, make in methods.items():
                    if args.tune and m in (
                        "OptiLPBoost",
                        "LPBoost",
                        "OptiMDBoost",
                        "MDBoost",
                    ):
                        grid = LP_GRID if "LP" in m else MD_GRID
                        reg = tuned(m, make, grid, X[tr], y[tr], fold)
                        clf = make(reg)
                    else:
                        clf = make()
                    clf.fit(X[tr], y[tr])
                    acc[m].append(100 * clf.score(X[te], y[te]))
                    trees[m].append(n_trees(clf))
            cells = [f"{np.mean(acc[m]):.2f} ({np.mean(trees[m]):.1f})" for m in names]
            out(f"| {name} | {depth} | " + " | ".join(cells) + " |")


# ---------------------------------------------------------------- table (c)
def table_c(args, out):
    """Bosch figs. 3.2 / 3.3: how diverse are the DL8-forests (whole data set)?"""
    out(
        "\n### (c) DL8-forest diagnostics (10 trees, whole data set): unanimity "
        "(share of rows where all trees agree), distinct root features, largest "
        "share of trees with the same root / using the same feature\n"
    )
    out(
        "| dataset | depth | variant | unanimity | distinct roots | top root share "
        "| top feature share | train acc |"
    )
    out("|---|---|---|---|---|---|---|---|")
    for depth in args.depths:
        for name in args.datasets:
            data = load_dataset(name)
            for samples, attributes in DL8_VARIANTS:
                forest = DL8ForestClassifier(
                    10,
                    depth,
                    sample_selection=samples,
                    attribute_selection=attributes,
                    time_limit=args.time_limit,
                    random_state=0,
                ).fit(data.X, data.y)
                usage = forest.feature_usage_
                out(
                    f"| {name} | {depth} | {samples}/{attributes} "
                    f"| {forest.unanimity_:.3f} "
                    f"| {int(np.sum(usage['root'] > 0))} "
                    f"| {usage['root'].max():.2f} | {usage['overall'].max():.2f} "
                    f"| {100 * forest.score(data.X, data.y):.2f} |"
                )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=["a", "b", "c", "all"], default="all")
    parser.add_argument(
        "--datasets", nargs="+", default=["zoo-1", "hepatitis", "lymph", "vote"]
    )
    parser.add_argument(
        "--depths",
        nargs="+",
        type=int,
        default=None,
        help="default: 2 3 for (a), 2 for (b)",
    )
    parser.add_argument("--reg-lp", nargs="+", type=float, default=[0.25])
    parser.add_argument("--reg-md", nargs="+", type=float, default=[3.0])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--tune",
        action="store_true",
        help="tune reg per fold by inner 4-fold CV (thesis grids)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=120.0, help="seconds per fit"
    )
    parser.add_argument("--max-iterations", type=int, default=1000)
    parser.add_argument("--stop-after-positive-margin", type=int, default=None)
    parser.add_argument(
        "--paper", action="store_true", help="Aglin's thesis ch. 6 settings (slow)"
    )
    parser.add_argument(
        "--bosch", action="store_true", help="Bosch ch. 4 settings (slow)"
    )
    parser.add_argument("--out", default=None, help="also write the tables here")
    args = parser.parse_args(argv)
    if args.paper:
        args.datasets, args.folds, args.tune = THESIS_SETS, 5, True
        args.depths = args.depths or [3]
        args.time_limit = max(args.time_limit, 600.0)
    if args.bosch:
        args.reg_lp, args.stop_after_positive_margin = [1.0], 20
        args.depths = args.depths or [1, 2, 3]

    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    start = time.perf_counter()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out(f"# Forests of optimal trees ({stamp})")
    depths_given = args.depths
    if args.table in ("a", "all"):
        args.depths = depths_given or [2, 3]
        table_a(args, out)
    if args.table in ("b", "all"):
        args.depths = depths_given or [2]
        table_b(args, out)
    if args.table in ("c", "all"):
        args.depths = depths_given or [3]
        table_c(args, out)
    out(f"\ntotal time: {time.perf_counter() - start:.0f} s")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
