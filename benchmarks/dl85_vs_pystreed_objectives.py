"""DL8.5's regression and cost-sensitive objectives against pystreed (STreeD).

One command::

    python benchmarks/dl85_vs_pystreed_objectives.py [--depths 3 4]
        [--time-limit 60] [--datasets anneal vote ...] [--tasks regression cost]

On the same binarised CP4IM data, per instance (dataset, depth):

* ``regression``: ``DL85Regressor()`` (squared error) against
  ``STreeDRegressor(optimization_task="regression", cost_complexity=0)``,
  target ``y = sum of the first 5 features + N(0, 1)`` (seed 0); the
  objective compared is the sum of squared errors of each tree's
  predictions on the training rows;
* ``cost``: ``DL85Classifier(cost_matrix=C)`` against
  ``STreeDCostSensitiveClassifier`` with the same misclassification costs
  (no feature costs), ``C = [[0, 5], [1, 0]]`` (``C[predicted, true]``);
  the objective is ``sum C[pred, y]``.

Each fit runs in a forked child (killed at the time limit plus a grace
period) after a warm-up fit on a tiny problem; times are the wall-clock
seconds of ``fit`` inside the child. The summary gives the geometric-mean
time ratio ours / pystreed over the instances both prove optimal, and
whether the objectives agree there.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl85_vs_pydl85 import CP4IM, _geomean, run_fit

from odtstudy.datasets import load_dataset

COST = np.array([[0.0, 5.0], [1.0, 0.0]])


def _ours_regression(X, y, depth, limit):
    from odtstudy.dl85 import DL85Regressor

    reg = DL85Regressor(max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    reg.fit(X, y)
    elapsed = time.perf_counter() - start
    return elapsed, float(np.sum((y - reg.predict(X)) ** 2)), reg.optimal_


def _streed_regression(X, y, depth, limit):
    from pystreed import STreeDRegressor

    reg = STreeDRegressor(
        optimization_task="regression",
        cost_complexity=0.0,
        max_depth=depth,
        min_leaf_node_size=1,
        time_limit=limit,
    )
    start = time.perf_counter()
    reg.fit(X, y)
    elapsed = time.perf_counter() - start
    sse = float(np.sum((y - reg.predict(X)) ** 2))
    return elapsed, sse, bool(reg.fit_result.is_optimal())


def _ours_cost(X, y, depth, limit):
    from odtstudy.dl85 import DL85Classifier

    clf = DL85Classifier(max_depth=depth, time_limit=limit, cost_matrix=COST)
    start = time.perf_counter()
    clf.fit(X, y)
    elapsed = time.perf_counter() - start
    return elapsed, float(COST[clf.predict(X), y].sum()), clf.optimal_


def _streed_cost(X, y, depth, limit):
    from pystreed import STreeDCostSensitiveClassifier
    from pystreed.data import CostSpecifier, FeatureCostSpecifier

    # STreeD's matrix is indexed [true][predicted]
    spec = CostSpecifier(
        COST.T.tolist(),
        [FeatureCostSpecifier(0.0, 0.0, f"f{j}", j, j) for j in range(X.shape[1])],
    )
    clf = STreeDCostSensitiveClassifier(
        max_depth=depth, min_leaf_node_size=1, time_limit=limit
    )
    start = time.perf_counter()
    clf.fit(X, y, spec)
    elapsed = time.perf_counter() - start
    cost = float(COST[clf.predict(X), y].sum())
    return elapsed, cost, bool(clf.fit_result.is_optimal())


TASKS = {
    "regression": (_ours_regression, _streed_regression),
    "cost": (_ours_cost, _streed_cost),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--datasets", nargs="+", default=CP4IM)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    args = parser.parse_args(argv)
    print(
        f"# ours vs pystreed: depths {args.depths}, time limit {args.time_limit:g} s;"
        " times in seconds, * = not proven optimal"
    )
    failed = False
    for task in args.tasks:
        ours, theirs = TASKS[task]
        head = (
            f"{'dataset':<18} {'d':>1} {'t_ours':>9} {'t_streed':>9} "
            f"{'obj_ours':>12} {'obj_streed':>12} {'ours/streed':>11}"
        )
        print(f"\n## {task}")
        print(head)
        print("-" * len(head))
        rows = []
        turn = 0
        for name in args.datasets:
            data = load_dataset(name)
            X = np.ascontiguousarray(data.X, dtype=np.uint8)
            y = np.unique(data.y, return_inverse=True)[1]
            if task == "regression":
                rng = np.random.default_rng(0)
                y = X[:, :5].sum(axis=1) + rng.normal(size=len(X))
            for depth in args.depths:
                order = [ours, theirs] if turn % 2 == 0 else [theirs, ours]
                turn += 1
                res = {f: run_fit(f, X, y, depth, args.time_limit) for f in order}
                a, b = res[ours], res[theirs]
                rows.append((name, depth, a, b))
                both = a[2] and b[2]
                ratio = a[0] / b[0] if both and b[0] > 0 else math.nan
                line = (
                    f"{name:<18} {depth:>1} {a[0]:8.3f}{'' if a[2] else '*'} "
                    f"{b[0]:8.3f}{'' if b[2] else '*'} {a[1]:12.4f} {b[1]:12.4f} "
                    + (f"{ratio:11.3f}" if both else f"{'--':>11}")
                )
                notes = [n for n in (a[3], b[3]) if n]
                if notes:
                    line += "  [" + "; ".join(notes) + "]"
                print(line, flush=True)
        both = [(n, d, a, b) for n, d, a, b in rows if a[2] and b[2]]
        ratios = [a[0] / max(b[0], 1e-9) for _, _, a, b in both]
        mism = [
            (n, d, a[1], b[1])
            for n, d, a, b in both
            if not math.isclose(a[1], b[1], rel_tol=1e-6, abs_tol=1e-6)
        ]
        print("-" * len(head))
        print(
            f"{task}: solved by ours {sum(1 for r in rows if r[2][2])}, by pystreed "
            f"{sum(1 for r in rows if r[3][2])} of {len(rows)}"
        )
        gm = _geomean(ratios)
        print(
            f"{task}: geometric mean time ratio ours/pystreed = {gm:.3f} over "
            f"{len(ratios)} instances both prove (target <= 1.0: "
            f"{'met' if gm <= 1.0 else 'NOT met'})"
        )
        if mism:
            failed = True
            print(f"{task}: OBJECTIVE MISMATCHES where both prove: {mism}")
        else:
            print(f"{task}: objectives equal wherever both prove optimality: yes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
