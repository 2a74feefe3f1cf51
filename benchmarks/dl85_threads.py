"""``n_jobs``: DL8.5 on two threads against one, in the same run.

Command (the frontier issue's target: on 2 cores, ``n_jobs=2`` takes at most
0.6x the time of ``n_jobs=1`` on the instances that take more than 5 s on
one thread, geometric mean, with identical objectives)::

    python benchmarks/dl85_threads.py [--kind binary|numeric|both] [--cap 60]
        [--jobs 2] [--datasets NAME ...] [--note TEXT]

``binary``: the 15 CP4IM sets of ``frontier.py`` at depth 6
(``DL85Classifier``); ``numeric``: the 14 sets of the ConTree suite at
depth 3 (``DL85Classifier(thresholds="all")``). The rule, fixed before any
run: each instance is fitted with ``n_jobs=1`` and ``n_jobs=--jobs``, no
time limit (the threads serve the exact search), each fit in a fresh forked
child killed after ``--cap`` seconds plus a grace period, one fit at a time,
the order of the two alternating from one instance to the next. The ratio
is ``t(n_jobs) / t(1)``; the summary is its geometric mean over the
instances whose one-thread fit takes more than 5 s and both fits end, and
the count of instances where both end with a different objective, lower
bound or proof (it must be 0).

The header (command, commit, date, machine, load) and the table are printed
and appended to ``benchmarks/results/dl85_threads.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl85_vs_pydl85 import _geomean, run_fit
from frontier import _datasets, _provenance

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "dl85_threads.txt"
DEPTH = {"binary": 6, "numeric": 3}
SLOW_S = 5.0  # the target counts the instances slower than this on one thread


def _fit(kind, n_jobs):
    """The fitter of ``run_fit``: a ``DL85Classifier`` on ``n_jobs`` threads."""

    def fit(X, y, depth, limit):
        from odtstudy.dl85 import DL85Classifier

        warnings.simplefilter("ignore")
        thresholds = "all" if kind == "numeric" else None
        est = DL85Classifier(max_depth=depth, thresholds=thresholds, n_jobs=n_jobs)
        start = time.perf_counter()
        est.fit(X, y)
        elapsed = time.perf_counter() - start
        bound = float(est.lower_bound_)
        return elapsed, float(est.objective_), bool(est.optimal_), bound

    return fit


def _instance(kind, name, data, jobs, cap, flip):
    X = np.asarray(data.X, dtype=float if kind == "numeric" else np.uint8)
    y = np.asarray(data.y)
    order = [jobs, 1] if flip else [1, jobs]
    fits = {}
    for n_jobs in order:
        seconds, objective, optimal, _note, *extra = run_fit(
            _fit(kind, n_jobs), X, y, DEPTH[kind], cap
        )
        fits[n_jobs] = (seconds, objective, optimal, extra[0] if extra else math.nan)
    return fits


def _row(kind, name, data, fits, jobs):
    one, many = fits[1], fits[jobs]
    ended = math.isfinite(one[0]) and math.isfinite(many[0])
    ratio = many[0] / one[0] if ended else math.nan
    same = ended and one[1:] == many[1:]
    cells = []
    for t, obj, optimal, _ in (one, many):
        proof = "" if optimal else "*"
        cells.append(f"{t:7.2f}{proof}" if math.isfinite(t) else "     --")
        cells.append(f"{obj:8g}" if math.isfinite(obj) else "      --")
    line = (
        f"{kind:8s} {name:20s} {DEPTH[kind]:2d} {data.X.shape[0]:6d} "
        + " ".join(cells)
        + (f" {ratio:6.3f}" if ended else "     --")
        + ("" if not ended else ("  same" if same else "  DIFFERENT"))
    )
    return line, ended, ratio, same, one[0]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", choices=["binary", "numeric", "both"], default="both")
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    run = _provenance(argv, "dl85_threads.py")
    kinds = ["binary", "numeric"] if args.kind == "both" else [args.kind]
    note = f"; {args.note}" if args.note else ""
    lines = [
        f"# command: {run['command']}",
        f"# commit: {run['commit']}, {run['date']}, {run['machine']}{note}",
        f"# n_jobs={args.jobs} against n_jobs=1, no time limit, each fit in its own "
        f"process killed after {args.cap:g} s (+ grace), one fit at a time, the order "
        "alternating; * = not proven; ratio = t(n_jobs) / t(1)",
        f"{'kind':8s} {'dataset':20s} {'d':>2s} {'rows':>6s} {'t(1)':>7s} "
        f"{'obj(1)':>8s} {'t(' + str(args.jobs) + ')':>7s} {'obj':>8s} {'ratio':>6s}",
    ]
    print("\n".join(lines), flush=True)
    slow, differ, ended_count, total = [], 0, 0, 0
    flip = False
    for kind in kinds:
        names = args.datasets
        if names is not None:
            numeric = kind == "numeric"
            names = [n for n in names if n.startswith("contree/") == numeric]
            if not names:
                continue
        for name, data in _datasets(kind, names, None):
            fits = _instance(kind, name, data, args.jobs, args.cap, flip)
            flip = not flip
            line, ended, ratio, same, t_one = _row(kind, name, data, fits, args.jobs)
            print(line, flush=True)
            lines.append(line)
            total += 1
            if ended:
                ended_count += 1
                differ += not same
                if t_one > SLOW_S:
                    slow.append(ratio)
    summary = [
        f"# {total} instances, {ended_count} ended with both; different objective, "
        f"bound or proof on {differ}",
        f"# time ratio n_jobs={args.jobs} / n_jobs=1 over the {len(slow)} instances "
        f"slower than {SLOW_S:g} s on one thread: geometric mean "
        f"{_geomean(slow):.3f} (target <= 0.6)",
    ]
    print("\n".join(summary))
    lines += summary
    with open(args.output, "a") as fh:
        fh.write("\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
