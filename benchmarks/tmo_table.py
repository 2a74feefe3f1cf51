"""Generalisation table of the TMO paper (Aldinucci, Tables 1-3) on vendored data.

Protocol: each dataset is split 64 % / 16 % / 20 % (train / validation /
test, stratified, one split per seed); CART, TAO (refining CART) and TMO are
fitted on the training part; OCT's ``alpha`` is tuned on the validation part
(3 values drawn log-uniformly in [1e-3, 1]); DL8.5 runs on the data
binarised on the training part. The table reports the mean ± std test
accuracy (%) over the seeds for depths 2-4, then the mean fit time (s; for
OCT the whole tuning). OCT and DL8.5 columns appear only when
``odtstudy.milp`` / ``odtstudy.dl85`` are importable.

Small defaults (a few minutes on 2 cores); ``--paper`` switches to the
paper's settings (14 datasets, 5 seeds, population 100, 600 s limits).

Usage::

    python benchmarks/tmo_table.py
    python benchmarks/tmo_table.py --datasets heart sonar --depths 2 3 --seeds 2
    python benchmarks/tmo_table.py --paper --csv tmo_results.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np
from sklearn.model_selection import train_test_split

from odtstudy.cart import CARTClassifier
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.memetic import TAOClassifier, TMOClassifier

DEFAULT_DATASETS = ["heart", "parkinsons", "sonar", "breast-wpbc", "uci/diabetes"]
PAPER_DATASETS = [
    "uci/a2a",
    "uci/a4a",
    "uci/biodeg",
    "uci/breast-wpbc",
    "uci/diabetes",
    "uci/digits",
    "uci/heart",
    "uci/ionosphere",
    "uci/libras",
    "uci/parkinsons",
    "uci/phishing",
    "uci/spambase",
    "uci/spectf",
    "uci/sonar",
]


def _optional(module, name):
    try:
        mod = __import__(module, fromlist=[name])
        return getattr(mod, name)
    except (ImportError, AttributeError):
        return None


def split(X, y, seed):
    """64 / 16 / 20 split (stratified when every class allows it)."""
    strat = y if np.min(np.unique(y, return_counts=True)[1]) >= 5 else None
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=0.2, random_state=seed, stratify=strat
    )
    strat = y_rest if strat is not None else None
    X_train, X_val, y_train, y_val = train_test_split(
        X_rest, y_rest, test_size=0.2, random_state=seed, stratify=strat
    )
    return X_train, X_val, X_test, y_train, y_val, y_test


def run_cell(X, y, depth, seed, args, OCT, DL85):
    """All methods on one (dataset, depth, seed): {method: (test_acc, fit_s)}."""
    X_train, X_val, X_test, y_train, y_val, y_test = split(X, y, seed)
    out = {}
    cart = CARTClassifier(max_depth=depth, random_state=seed).fit(X_train, y_train)
    out["CART"] = (cart.score(X_test, y_test), cart.fit_time_)
    tao = TAOClassifier(
        max_depth=depth, time_limit=args.time_limit, random_state=seed
    ).fit(X_train, y_train)
    out["TAO"] = (tao.score(X_test, y_test), tao.fit_time_)
    tmo = TMOClassifier(
        max_depth=depth,
        population_size=args.population,
        n_generations=args.generations,
        time_limit=args.time_limit,
        random_state=seed,
        n_jobs=args.jobs,
    ).fit(X_train, y_train)
    out["TMO"] = (tmo.score(X_test, y_test), tmo.fit_time_)
    if OCT is not None:
        out["OCT"] = _guard(
            "OCT",
            _fit_oct,
            OCT,
            X_train,
            X_val,
            X_test,
            y_train,
            y_val,
            y_test,
            depth,
            seed,
            args,
        )
    if DL85 is not None:
        out["DL8.5"] = _guard(
            "DL8.5", _fit_dl85, DL85, X_train, X_test, y_train, y_test, depth, args
        )
    return out


def _guard(method, fn, *fn_args):
    """Run an optional baseline; a crash is reported and counted, not fatal."""
    try:
        return fn(*fn_args)
    except Exception as exc:  # third-party solvers may crash (e.g. CBC)
        print(f"  {method} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return (float("nan"), float("nan"))


def _fit_oct(OCT, X_train, X_val, X_test, y_train, y_val, y_test, depth, seed, args):
    rng = np.random.default_rng(seed)
    alphas = 10.0 ** rng.uniform(-3, 0, size=3)
    best, total = None, 0.0
    for alpha in alphas:
        model = OCT(
            max_depth=depth,
            alpha=float(alpha),
            time_limit=args.oct_time_limit,
            random_state=seed,
        ).fit(X_train, y_train)
        total += model.fit_time_
        val = model.score(X_val, y_val)
        if best is None or val > best[0]:
            best = (val, model)
    return best[1].score(X_test, y_test), total


def _fit_dl85(DL85, X_train, X_test, y_train, y_test, depth, args):
    binarizer = Binarizer(max_thresholds=args.max_thresholds).fit(X_train)
    model = DL85(max_depth=depth, time_limit=args.dl85_time_limit).fit(
        binarizer.transform(X_train), y_train
    )
    return model.score(binarizer.transform(X_test), y_test), model.fit_time_


def fmt(values, scale=100.0, digits=2):
    """``mean ± std`` over the runs that did not fail (failures counted)."""
    values = np.asarray(values, dtype=float) * scale
    ok = values[~np.isnan(values)]
    if ok.size == 0:
        return "failed"
    text = f"{ok.mean():.{digits}f} ± {ok.std():.{digits}f}"
    if ok.size < values.size:
        text += f" ({values.size - ok.size} failed)"
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1")
    parser.add_argument("--population", type=int, default=20)
    parser.add_argument("--generations", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--oct-time-limit", type=float, default=2.0)
    parser.add_argument("--dl85-time-limit", type=float, default=10.0)
    parser.add_argument("--max-thresholds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-oct", action="store_true")
    parser.add_argument("--no-dl85", action="store_true")
    parser.add_argument("--csv", default=None, help="also write per-run rows here")
    parser.add_argument(
        "--paper",
        action="store_true",
        help="paper settings: 14 datasets, 5 seeds, population 100, 600 s limits",
    )
    args = parser.parse_args(argv)
    if args.paper:
        args.datasets = args.datasets or PAPER_DATASETS
        args.seeds, args.population, args.generations = 5, 100, 5
        args.time_limit = args.oct_time_limit = args.dl85_time_limit = 600.0
    datasets = args.datasets or DEFAULT_DATASETS
    OCT = None if args.no_oct else _optional("odtstudy.milp", "OCTClassifier")
    DL85 = None if args.no_dl85 else _optional("odtstudy.dl85", "DL85Classifier")
    methods = ["CART", "TAO", "TMO"]
    methods += ["OCT"] * (OCT is not None) + ["DL8.5"] * (DL85 is not None)

    start = time.perf_counter()
    csv_file = open(args.csv, "w", newline="") if args.csv else None
    fields = ["dataset", "depth", "seed", "method", "test_acc", "fit_time_s"]
    writer = csv.DictWriter(csv_file, fieldnames=fields) if csv_file else None
    if writer:
        writer.writeheader()
    results = {}  # (dataset, depth) -> {method: [(acc, time), ...]}
    shapes = {}
    for name in datasets:
        data = load_dataset(name)
        X = np.asarray(data.X, dtype=float)
        y = np.asarray(data.y)
        shapes[name] = X.shape
        for depth in args.depths:
            cell = results.setdefault((name, depth), {m: [] for m in methods})
            for seed in range(args.seeds):
                out = run_cell(X, y, depth, seed, args, OCT, DL85)
                for method, (acc, fit) in out.items():
                    cell[method].append((acc, fit))
                    if writer:
                        writer.writerow(
                            {
                                "dataset": name,
                                "depth": depth,
                                "seed": seed,
                                "method": method,
                                "test_acc": acc,
                                "fit_time_s": fit,
                            }
                        )
                        csv_file.flush()
                print(
                    f"[{time.perf_counter() - start:7.1f}s] {name} d={depth} "
                    f"seed={seed}: "
                    + ", ".join(f"{m} {a * 100:.1f}" for m, (a, _) in out.items()),
                    file=sys.stderr,
                    flush=True,
                )

    settings = (
        f"seeds={args.seeds}, population={args.population}, "
        f"generations={args.generations}, time_limit={args.time_limit:g}s"
    )
    if OCT is not None:
        settings += f", OCT limit={args.oct_time_limit:g}s x 3 alphas (CBC)"
    if DL85 is not None:
        settings += (
            f", DL8.5 limit={args.dl85_time_limit:g}s on "
            f"Binarizer(max_thresholds={args.max_thresholds})"
        )
    print(f"TMO paper protocol (64/16/20 split), {settings}\n")
    for depth in args.depths:
        print(f"Test accuracy (%), mean ± std, depth {depth}\n")
        print("| Dataset | n × p | " + " | ".join(methods) + " |")
        print("|---|---|" + "---|" * len(methods))
        for name in datasets:
            cell = results[(name, depth)]
            n, p = shapes[name]
            accs = [fmt([a for a, _ in cell[m]]) for m in methods]
            print(f"| {name} | {n} × {p} | " + " | ".join(accs) + " |")
        print()
    print("Fit time (s) per run, mean ± std\n")
    print("| Dataset | depth | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for name in datasets:
        for depth in args.depths:
            cell = results[(name, depth)]
            times = [fmt([t for _, t in cell[m]], 1.0, 3) for m in methods]
            print(f"| {name} | {depth} | " + " | ".join(times) + " |")
    print(f"\nTotal wall time: {time.perf_counter() - start:.0f} s")
    if csv_file:
        csv_file.close()


if __name__ == "__main__":
    main()
