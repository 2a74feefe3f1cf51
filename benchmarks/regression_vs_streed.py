"""DL85Regressor's squared error on the OSRT regression sets: exact sums
against the path before them, and against pystreed's STreeDRegressor.

One command::

    python benchmarks/regression_vs_streed.py [--depths 3 4] [--repeats 5]
        [--time-limit 60] [--once-above 5] [--datasets osrt/enb-heat ...]
        [--no-record]

Three solvers fit the same 0/1 table (the vendored binarisation of each
OSRT set), one fit each in turn, ``--repeats`` times; a solver's time is
its best fit (a fit over ``--once-above`` seconds is not repeated):

- ``new``: ``DL85Regressor(max_depth=d)`` of this tree (short-decimal
  targets searched as integers with exact sums,
  :mod:`odtstudy.dl85._exact_sums`);
- ``before``: the same estimator with the exact sums turned off, i.e. the
  path of the code before them (rounded sums, re-run in the stable form
  when their bound does not certify); the Cython engine is the same, so
  this is the build of ``main`` for this purpose;
- ``streed``: ``pystreed.STreeDRegressor(optimization_task="regression",
  max_depth=d)``, its SSE recomputed from its predictions.

The table gives the three times, the ratios new/before and new/streed,
whether the new SSE equals before's and STreeD's (``=bef``, ``=str``, to
1e-9 relative: STreeD's tree can be off by its own rounding, e.g. 1e-7 on
optical at depth 3) and which DL8.5 fits ran in the stable form; the
summary gives the geometric means of the ratios over the fits every solver
finished within the limit. The run, with the machine's
load average, is appended to ``benchmarks/results/regression_vs_streed.txt``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from odtstudy.datasets import list_datasets, load_dataset
from odtstudy.dl85 import DL85Regressor, _regressor

RESULTS = Path(__file__).resolve().parent / "results" / "regression_vs_streed.txt"
SOLVERS = ("new", "before", "streed")


@contextlib.contextmanager
def _without_exact_sums():
    """DL85Regressor as before exact sums: no target is exact."""
    saved = _regressor.exact_target
    _regressor.exact_target = lambda y, weights: None
    try:
        yield
    finally:
        _regressor.exact_target = saved


def fit(solver, X, y, depth, limit):
    """``(seconds, SSE, finished, stable form)`` of one fit."""
    if solver == "streed":
        import pystreed

        model = pystreed.STreeDRegressor(
            optimization_task="regression", max_depth=depth, time_limit=limit
        )
        start = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - start
        sse = float(np.sum((model.predict(X) - y) ** 2))
        return elapsed, sse, elapsed < limit, False
    context = _without_exact_sums() if solver == "before" else contextlib.nullcontext()
    with context:
        reg = DL85Regressor(max_depth=depth, time_limit=limit)
        start = time.perf_counter()
        reg.fit(X, y)
        elapsed = time.perf_counter() - start
    stable = bool(reg.stats_.get("stable_form"))
    return elapsed, float(reg.objective_), bool(reg.optimal_), stable


def _same(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _geomean(values):
    return math.exp(np.mean(np.log(values))) if values else math.nan


def run(datasets, depths, repeats, limit, once_above):
    """Print the table; returns its lines."""
    lines = [
        f"DL85Regressor squared error vs before exact sums vs STreeD, 0/1 OSRT "
        f"sets, best of {repeats} (once above {once_above:g} s), limit "
        f"{limit:g} s, interleaved",
        f"{'dataset':<18}{'d':>2}{'rows':>6}{'new s':>9}{'before s':>10}"
        f"{'streed s':>10}{'new/bef':>9}{'new/str':>9}{'=bef':>7}{'=str':>7}"
        f"  stable(new,before)",
    ]
    print("\n".join(lines), flush=True)
    ratios = {"before": [], "streed": []}
    for name in datasets:
        data = load_dataset(name)
        X, y = np.asarray(data.X), np.asarray(data.y, dtype=np.float64)
        for depth in depths:
            best, out = dict.fromkeys(SOLVERS, math.inf), {}
            for _ in range(repeats):
                for solver in SOLVERS:
                    if best[solver] > once_above and solver in out:
                        continue
                    out[solver] = fit(solver, X, y, depth, limit)
                    best[solver] = min(best[solver], out[solver][0])
            finished = all(out[s][2] for s in SOLVERS)
            same = [_same(out["new"][1], out[s][1]) for s in ratios]
            cells = []
            for other in ratios:
                ratio = best["new"] / best[other]
                cells.append(f"{ratio:>9.3f}")
                if finished:
                    ratios[other].append(ratio)
            line = (
                f"{name:<18}{depth:>2}{len(y):>6}{best['new']:>9.3f}"
                f"{best['before']:>10.3f}{best['streed']:>10.3f}{''.join(cells)}"
                f"{same[0]!s:>7}{same[1]!s:>7}  {out['new'][3]!s},{out['before'][3]!s}"
                + ("" if finished else "  (a solver hit the limit)")
            )
            print(line, flush=True)
            lines.append(line)
    n = len(ratios["before"])
    line = (
        f"geometric means over {n} fits all finished: new/before "
        f"{_geomean(ratios['before']):.3f}, new/streed "
        f"{_geomean(ratios['streed']):.3f}"
    )
    print(line)
    return [*lines, line]


def _record(argv, lines):
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=RESULTS.parent,
        capture_output=True,
        text=True,
    ).stdout.strip()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    header = (
        f"# python benchmarks/regression_vs_streed.py {' '.join(argv)}   "
        f"(at {commit}, {date.today()}, load average {load}, "
        f"cpus {sorted(os.sched_getaffinity(0))})"
    )
    with RESULTS.open("a") as handle:
        handle.write("\n".join([header, *lines]) + "\n\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--datasets", nargs="+", default=list_datasets(collection="osrt")
    )
    parser.add_argument("--once-above", type=float, default=5.0)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    warm = load_dataset(args.datasets[0])
    with contextlib.redirect_stdout(io.StringIO()):  # imports, first calls
        for solver in SOLVERS:
            fit(solver, np.asarray(warm.X)[:40], np.asarray(warm.y)[:40], 2, 10.0)
    lines = run(
        args.datasets, args.depths, args.repeats, args.time_limit, args.once_above
    )
    if not args.no_record:
        _record(argv, lines)


if __name__ == "__main__":
    main()
