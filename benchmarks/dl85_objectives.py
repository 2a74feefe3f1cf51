"""Cost of DL8.5's objectives beyond accuracy on the CP4IM sets (issue 4).

One command::

    python benchmarks/dl85_objectives.py [--depth 3] [--time-limit 60]
                                          [--repeats 3] [--datasets anneal vote ...]
                                          [--regression]

Per dataset, at the given depth, in this process (fits are timed with
``perf_counter`` around ``fit``; the best of ``--repeats`` runs is kept for
the core fits, one run for the general-search fits):

* ``unw``: ``DL85Classifier`` without weights (the popcount core);
* ``w``: the same with random real weights ``U(0.5, 2)`` (seed 0): weighted
  class supports, weighted depth-2 solver and similarity bound;
  ``w/unw`` is the time ratio (issue target: <= 2.0);
* ``gen-C``: the general search of ``_general.pyx`` with the built-in
  weighted error in C (no depth-2 solver, no similarity bound);
* ``gen-py``: the same search with a Python ``fast_error_function``
  computing the same error; ``py/C`` is the overhead of the Python callback.

The last line gives geometric means of the ratios over the datasets where
every fit finished (``TO``: time limit reached).

``--regression`` adds a table for ``DL85Regressor`` (squared error, a
synthetic target ``y = sum of the first 5 features + N(0, 1)``, random
weights): the time with the depth-2 solver from pair statistics (``d2``)
and with the plain recursion (``rec``), and whether both reach the same
objective.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier, DL85Regressor
from odtstudy.dl85._predictor import fit_classifier_general

CP4IM = [
    "anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes",
    "german-credit", "heart-cleveland", "hepatitis", "hypothyroid", "ionosphere",
    "kr-vs-kp", "lymph", "mushroom", "pendigits", "primary-tumor", "segment",
    "soybean", "splice-1", "tic-tac-toe", "vehicle", "vote", "yeast", "zoo-1",
]  # fmt: skip


def misclassification(weights):
    """The built-in error, as a Python ``fast_error_function``."""
    best = int(np.argmax(weights))
    return float(weights.sum() - weights[best]), best


def _time(fn, repeats):
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def run(datasets, depth, limit, repeats):
    head = (
        f"{'dataset':<18} {'n':>5} {'m':>4} {'unw s':>8} {'w s':>8} {'w/unw':>6} "
        f"{'gen-C s':>8} {'gen-py s':>9} {'py/C':>6} {'w obj':>10} {'same':>4}"
    )
    print(f"depth {depth}, time limit {limit} s, best of {repeats} (core fits)")
    print(head)
    print("-" * len(head))
    ratios_w, ratios_py = [], []
    for name in datasets:
        data = load_dataset(name)
        X = np.ascontiguousarray(data.X, dtype=np.uint8)
        y = np.unique(data.y, return_inverse=True)[1]
        k = int(y.max()) + 1
        w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))

        def core(sample_weight):
            clf = DL85Classifier(max_depth=depth, time_limit=limit)
            return clf.fit(X, y, sample_weight=sample_weight)

        t_unw, unw = _time(lambda: core(None), repeats)
        t_w, wei = _time(lambda: core(w), repeats)

        def general(fast):
            return fit_classifier_general(
                X,
                y,
                k,
                w,
                fast_error_function=fast,
                max_depth=depth,
                time_limit=limit,
            )

        t_c, gen_c = _time(lambda: general(None), 1)
        t_py, gen_py = _time(lambda: general(misclassification), 1)
        done_w = unw.optimal_ and wei.optimal_
        done_py = gen_c.optimal and gen_py.optimal
        same = (
            done_w
            and gen_c.optimal
            and math.isclose(wei.objective_, gen_c.objective, rel_tol=1e-9)
        )
        r_w = t_w / t_unw if done_w else math.nan
        r_py = t_py / t_c if done_py else math.nan
        if done_w:
            ratios_w.append(r_w)
        if done_py:
            ratios_py.append(r_py)

        def fmt(t, ok):
            return f"{t:8.4f}" if ok else f"{'TO':>8}"

        print(
            f"{name:<18} {X.shape[0]:>5} {X.shape[1]:>4} {fmt(t_unw, unw.optimal_)} "
            f"{fmt(t_w, wei.optimal_)} {r_w:6.2f} {fmt(t_c, gen_c.optimal)} "
            f"{fmt(t_py, gen_py.optimal):>9} {r_py:6.1f} "
            f"{wei.objective_:10.3f} {'yes' if same else '-':>4}",
            flush=True,
        )
    print("-" * len(head))

    def gmean(values):
        return math.exp(sum(math.log(v) for v in values) / len(values))

    if ratios_w:
        print(
            f"geometric mean w/unw = {gmean(ratios_w):.2f} over {len(ratios_w)} sets; "
            f"max {max(ratios_w):.2f}; <= 2.0 on "
            f"{sum(r <= 2.0 for r in ratios_w)}/{len(ratios_w)}"
        )
    if ratios_py:
        print(
            f"geometric mean py/C (Python fast_error_function overhead) = "
            f"{gmean(ratios_py):.1f} over {len(ratios_py)} sets"
        )


def run_regression(datasets, depth, limit):
    head = (
        f"{'dataset':<18} {'n':>5} {'m':>4} {'d2 s':>8} {'rec s':>8} "
        f"{'rec/d2':>7} {'objective':>14} {'same':>4}"
    )
    print(f"\nDL85Regressor, squared error, depth {depth}, time limit {limit} s")
    print(head)
    print("-" * len(head))
    speedups = []
    for name in datasets:
        data = load_dataset(name)
        X = np.ascontiguousarray(data.X, dtype=np.uint8)
        rng = np.random.default_rng(0)
        y = X[:, :5].sum(axis=1) + rng.normal(size=len(X))
        w = rng.uniform(0.5, 2.0, size=len(X))

        def fit(d2):
            reg = DL85Regressor(max_depth=depth, time_limit=limit, use_depth2_solver=d2)
            return _time(lambda: reg.fit(X, y, sample_weight=w), 1)

        t_d2, fast = fit(True)
        t_rec, plain = fit(False)
        done = fast.optimal_ and plain.optimal_
        same = done and math.isclose(fast.objective_, plain.objective_, rel_tol=1e-9)
        if done:
            speedups.append(t_rec / t_d2)
        rec = f"{t_rec:8.3f}" if plain.optimal_ else f"{'TO':>8}"
        ratio = (
            f"{t_rec / t_d2:7.1f}"
            if done
            else f"{'>=' + format(t_rec / t_d2, '.0f'):>7}"
        )
        print(
            f"{name:<18} {X.shape[0]:>5} {X.shape[1]:>4} {t_d2:8.3f} {rec} {ratio} "
            f"{fast.objective_:14.3f} {'yes' if same else '-':>4}",
            flush=True,
        )
    print("-" * len(head))
    if speedups:
        gm = math.exp(sum(math.log(v) for v in speedups) / len(speedups))
        print(f"geometric mean rec/d2 = {gm:.1f} over {len(speedups)} sets")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=CP4IM)
    parser.add_argument("--regression", action="store_true")
    args = parser.parse_args(argv)
    run(args.datasets, args.depth, args.time_limit, args.repeats)
    if args.regression:
        run_regression(args.datasets, args.depth, args.time_limit)


if __name__ == "__main__":
    main()
