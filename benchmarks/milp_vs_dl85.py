"""BinOCT / OCT (MILP, PuLP) against DL8.5: objective, optimality, time, gap.

The shape of the DL8.5 paper's tables: CP4IM (0/1) sets at depths 2-3 and UCI
numeric sets at depth 2, one time limit per run. BinOCT runs with CBC and with
HiGHS, OCT with one solver (``--oct-solver``), DL8.5 on the 0/1 data (UCI
sets binarised with all midpoints by ``odtstudy.datasets.Binarizer``, so the
optimum is the same as over numeric thresholds). Every run is sequential,
single-threaded, in this process.

Usage::

    python benchmarks/milp_vs_dl85.py                      # defaults, <= ~10 min
    python benchmarks/milp_vs_dl85.py --time-limit 60 --cp4im anneal vote \\
        --cp4im-depths 2 3 --uci uci/iris banknote --uci-depths 2
    python benchmarks/milp_vs_dl85.py --quick             # a one-minute smoke run

A cell reads ``objective[*] time [gap]``: ``*`` = proven optimal; time is
wall-clock seconds of the whole fit (model building included); the gap is the
solver's relative MIP gap when not proven. CBC's own limit counts its CPU
seconds, but the learner stops it at the wall-clock limit (see
``odtstudy.milp._solvers``); the last column shows BinOCT-CBC's CPU seconds. DL8.5
speed factors at the end are geometric means of ``t_MILP / t_DL8.5`` over
the instances both ran (a timed-out MILP makes the factor a lower bound,
marked ``>=``).
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
import warnings

import numpy as np

from odtstudy.datasets import load_dataset
from odtstudy.milp import BinOCTClassifier, OCTClassifier

try:
    from odtstudy.dl85 import DL85Classifier
except ImportError:  # DL8.5 not built / not there yet
    DL85Classifier = None

try:
    from odtstudy.datasets import Binarizer
except ImportError:
    Binarizer = None

DEFAULT_CP4IM = ["zoo-1", "hepatitis", "vote"]
DEFAULT_UCI = ["uci/iris", "monk1", "balance-scale"]


def _methods(oct_solver):
    return [
        ("BinOCT-CBC", lambda d, t: BinOCTClassifier(d, time_limit=t, solver="cbc")),
        (
            "BinOCT-HiGHS",
            lambda d, t: BinOCTClassifier(d, time_limit=t, solver="highs"),
        ),
        (
            f"OCT-{'HiGHS' if oct_solver == 'highs' else 'CBC'}",
            lambda d, t: OCTClassifier(d, time_limit=t, solver=oct_solver),
        ),
    ]


def _run(make, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = make().fit(X, y)
    elapsed = time.perf_counter() - start
    stats = getattr(est, "stats_", {})
    gap = stats.get("mip_gap")
    return {
        "cpu": stats.get("solver_cpu_time"),
        "obj": est.objective_,
        "opt": bool(est.optimal_),
        "time": elapsed,
        "gap": gap,
        "lb": est.lower_bound_,
    }


def _cell(res):
    if res is None:
        return "-"
    if "error" in res:
        return "error"
    obj = "?" if res["obj"] is None else f"{res['obj']:g}"
    secs = res["time"]
    shown = f"{secs:6.1f}s" if secs >= 1 else f"{1000 * secs:5.0f}ms"
    text = f"{obj}{'*' if res['opt'] else ' '} {shown}"
    if not res["opt"] and res.get("gap") is not None:
        text += f" {100 * res['gap']:3.0f}%"
    elif not res["opt"]:
        text += "   ? "
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cp4im", nargs="*", default=DEFAULT_CP4IM)
    parser.add_argument("--cp4im-depths", nargs="*", type=int, default=[2, 3])
    parser.add_argument("--uci", nargs="*", default=DEFAULT_UCI)
    parser.add_argument("--uci-depths", nargs="*", type=int, default=[2])
    parser.add_argument("--time-limit", type=float, default=15.0)
    parser.add_argument("--oct-solver", choices=["cbc", "highs"], default="highs")
    parser.add_argument(
        "--quick", action="store_true", help="zoo-1 and uci/iris at depth 2, 5 s"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.cp4im, args.cp4im_depths = ["zoo-1"], [2]
        args.uci, args.uci_depths = ["uci/iris"], [2]
        args.time_limit = 5.0

    methods = _methods(args.oct_solver)
    names = [m[0] for m in methods] + ["DL8.5"]
    print(
        f"# MILP vs DL8.5 — time limit {args.time_limit:g} s per run, 1 thread, "
        f"{platform.node()} ({platform.processor() or platform.machine()}), "
        f"python {sys.version.split()[0]}"
    )
    if DL85Classifier is None:
        print("# DL8.5 (odtstudy.dl85.DL85Classifier) is not importable: skipped")

    instances = [(n, d, "cp4im") for n in args.cp4im for d in args.cp4im_depths]
    instances += [(n, d, "uci") for n in args.uci for d in args.uci_depths]
    header = f"{'dataset':<16}{'d':>2}{'n':>6}{'p':>5}{'p01':>5}  " + "".join(
        f"{name:<22}" for name in names
    )
    header += "CBC cpu"

    print(header)
    print("-" * len(header))
    rows = []
    for name, depth, family in instances:
        data = load_dataset(name)
        X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
        X01 = X
        if family == "uci" and Binarizer is not None:
            X01 = Binarizer().fit_transform(X)
        elif family == "uci":
            X01 = None
        results = {}
        for label, factory in methods:
            try:
                results[label] = _run(lambda: factory(depth, args.time_limit), X, y)
            except Exception as exc:  # report and keep going
                results[label] = {"error": repr(exc)}
        if DL85Classifier is not None and X01 is not None:
            try:
                results["DL8.5"] = _run(
                    lambda: DL85Classifier(max_depth=depth, time_limit=args.time_limit),
                    X01,
                    y,
                )
            except Exception as exc:
                results["DL8.5"] = {"error": repr(exc)}
        p01 = X01.shape[1] if X01 is not None else 0
        line = f"{name:<16}{depth:>2}{X.shape[0]:>6}{X.shape[1]:>5}{p01:>5}  "
        line += "".join(f"{_cell(results.get(m)):<22}" for m in names)
        cbc_cpu = results.get("BinOCT-CBC", {}).get("cpu")
        line += "-" if cbc_cpu is None else f"{cbc_cpu:6.1f}s"
        print(line, flush=True)
        rows.append((name, depth, results))

    print()
    print("Speed factor of DL8.5 (geometric mean of t_MILP / t_DL8.5):")
    for label in names[:-1]:
        ratios, lower = [], False
        solved = 0
        for _, _, res in rows:
            mres, dres = res.get(label), res.get("DL8.5")
            if not mres or not dres or "error" in mres or "error" in dres:
                continue
            ratios.append(mres["time"] / max(dres["time"], 1e-4))
            solved += mres["opt"]
            lower |= not mres["opt"]
        if ratios:
            gm = math.exp(float(np.mean(np.log(ratios))))
            print(
                f"  {label:<14} {'>=' if lower else '  '}{gm:10.0f}x  "
                f"(min {min(ratios):.0f}x, max {max(ratios):.0f}x; "
                f"{solved}/{len(ratios)} proven optimal by the MILP)"
            )
        else:
            print(f"  {label:<14} n/a (DL8.5 not run)")
    dl = [r["DL8.5"] for _, _, r in rows if "DL8.5" in r and "error" not in r["DL8.5"]]
    if dl:
        print(f"  DL8.5 proven optimal on {sum(r['opt'] for r in dl)}/{len(dl)}")
    mismatch = []
    for name, depth, res in rows:
        proven = {k: v["obj"] for k, v in res.items() if "error" not in v and v["opt"]}
        if len(set(proven.values())) > 1:
            mismatch.append((name, depth, proven))
    print(
        "Proven optima agree across methods"
        if not mismatch
        else f"DISAGREEMENT between proven optima: {mismatch}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
