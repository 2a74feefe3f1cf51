"""Exact-methods table on CP4IM data: CP-SAT (1 and 2 workers), DL8.5, BinOCT.

Every method fits the whole (already 0/1) dataset at each depth under the
same per-run time limit. For each instance the table gives the training
error reached, whether optimality was proven (``*``) and the fit time; a
``!`` marks an instance where two methods proved different optima. The
summary counts the instances each method proves optimal within the limit.
DL8.5 (``odtstudy.dl85``) and BinOCT (``odtstudy.milp``) columns appear only
when importable.

Runs are sequential, each in a forked child killed at ``--kill-after``
(default twice the limit plus 5 s) so that a method overshooting its limit
cannot stall the table. ``--methods`` picks the columns (``cpsat-counts``
is the methods.md §3 counts formulation on one worker). Defaults take about
8 minutes on 2 cores.

Usage::

    python benchmarks/cpsat_exact.py
    python benchmarks/cpsat_exact.py --datasets vote anneal --depths 2 3 --time-limit 60
    python benchmarks/cpsat_exact.py --methods cpsat-w1 cpsat-counts dl85 --csv out.csv
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import sys
import time
import warnings

import numpy as np

from odtstudy.cp import CPSATClassifier
from odtstudy.datasets import load_dataset

DEFAULT_DATASETS = ["zoo-1", "vote", "anneal", "tic-tac-toe"]
ALL_METHODS = ["cpsat-w1", "cpsat-w2", "cpsat-counts", "dl85", "binoct"]
DEFAULT_METHODS = ["cpsat-w1", "cpsat-w2", "dl85", "binoct"]


def _optional(module, name):
    try:
        mod = __import__(module, fromlist=[name])
        return getattr(mod, name)
    except (ImportError, AttributeError):
        return None


def make_estimator(method, depth, time_limit, seed):
    """The estimator of a table column, or None when it is not importable."""
    if method.startswith("cpsat"):
        workers = 2 if method == "cpsat-w2" else 1
        formulation = "counts" if method == "cpsat-counts" else "errors"
        return CPSATClassifier(
            max_depth=depth,
            time_limit=time_limit,
            num_workers=workers,
            formulation=formulation,
            random_state=seed,
        )
    if method == "dl85":
        cls = _optional("odtstudy.dl85", "DL85Classifier")
        return None if cls is None else cls(max_depth=depth, time_limit=time_limit)
    if method == "binoct":
        cls = _optional("odtstudy.milp", "BinOCTClassifier")
        if cls is None:
            return None
        return cls(max_depth=depth, time_limit=time_limit, random_state=seed)
    raise ValueError(f"unknown method {method!r}")


def _fit_and_report(method, X, y, depth, time_limit, seed):
    est = make_estimator(method, depth, time_limit, seed)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
    except Exception as exc:  # reported in the table
        return {
            "objective": None,
            "bound": None,
            "proven": False,
            "time": time.perf_counter() - start,
            "status": f"error: {type(exc).__name__}: {exc}"[:80],
        }
    elapsed = time.perf_counter() - start
    wrong = float(np.sum(est.predict(X) != y)) if est.tree_ is not None else None
    objective = est.objective_
    if objective is not None and wrong is not None and abs(objective - wrong) > 1e-6:
        status = f"objective {objective} != tree error {wrong}"
    else:
        status = est.status_
    return {
        "objective": objective,
        "bound": getattr(est, "lower_bound_", None),
        "proven": bool(est.optimal_),
        "time": elapsed,
        "status": status,
    }


def _child(conn, *args):
    conn.send(_fit_and_report(*args))
    conn.close()


def run_one(method, X, y, depth, time_limit, seed, kill_after):
    """Fit one column on one instance in a forked child, killed at ``kill_after``.

    A crash or a kill becomes a row of the table, not an abort.
    """
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    proc = ctx.Process(
        target=_child, args=(child, method, X, y, depth, time_limit, seed)
    )
    proc.start()
    child.close()
    result = None
    if parent.poll(kill_after):
        try:
            result = parent.recv()
        except EOFError:
            result = None
    elapsed = time.perf_counter() - start
    if proc.is_alive():
        proc.kill()
    proc.join()
    if result is None:
        killed = elapsed >= kill_after
        return {
            "objective": None,
            "bound": None,
            "proven": False,
            "time": elapsed,
            "status": f"killed > {kill_after:g}s" if killed else "crashed",
        }
    return result


def _fmt_obj(value):
    if value is None:
        return "-"
    return f"{value:g}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument(
        "--kill-after",
        type=float,
        default=None,
        help="hard wall-clock kill per run (default: 2 x time limit + 5 s)",
    )
    parser.add_argument(
        "--methods", nargs="+", default=DEFAULT_METHODS, choices=ALL_METHODS
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", help="also write one row per run to this file")
    args = parser.parse_args(argv)

    methods = [m for m in args.methods if make_estimator(m, 1, 1.0, 0) is not None]
    missing = sorted(set(args.methods) - set(methods))
    if missing:
        print(f"not importable, skipped: {', '.join(missing)}", file=sys.stderr)

    kill_after = args.kill_after or 2 * args.time_limit + 5
    records = []
    rows = []
    for name in args.datasets:
        data = load_dataset(name)
        X, y = np.asarray(data.X), np.asarray(data.y)
        for depth in args.depths:
            cells = {}
            for method in methods:
                res = run_one(
                    method, X, y, depth, args.time_limit, args.seed, kill_after
                )
                cells[method] = res
                records.append(
                    {"dataset": name, "depth": depth, "method": method, **res}
                )
                print(
                    f"{name} d={depth} {method}: {_fmt_obj(res['objective'])} "
                    f"{'proven' if res['proven'] else res['status']} "
                    f"{res['time']:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
            optima = {c["objective"] for c in cells.values() if c["proven"]}
            rows.append((name, X.shape, depth, cells, len(optima) > 1))

    header = ["dataset", "n x p", "depth"] + methods
    print(
        f"\nTime limit {args.time_limit:g} s per run (hard kill {kill_after:g} s); "
        "objective = training errors, * = proven optimal, time = fit seconds "
        "(incl. hint / model).\n"
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, shape, depth, cells, clash in rows:
        out = [name, f"{shape[0]} x {shape[1]}", f"{depth}{' !' if clash else ''}"]
        for method in methods:
            c = cells[method]
            star = "*" if c["proven"] else ""
            if c["objective"] is None:
                out.append(f"{c['status'][:30]} ({c['time']:.1f}s)")
            else:
                out.append(f"{_fmt_obj(c['objective'])}{star} ({c['time']:.1f}s)")
        print("| " + " | ".join(out) + " |")
    n_inst = len(rows)
    print("\nProven optimal within the limit:")
    for method in methods:
        proven = sum(1 for *_, cells, _ in rows if cells[method]["proven"])
        print(f"  {method:<13} {proven}/{n_inst}")
    clashes = [f"{r[0]} d={r[2]}" for r in rows if r[4]]
    if clashes:
        print(f"\nDISAGREEMENT between proven optima: {', '.join(clashes)}")

    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
