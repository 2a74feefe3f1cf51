"""Hardening of the DL8.5 estimators: extreme parameters and bad losses get a
clear error or a correct result, never a crash, a hang or a false "optimal".

Each reproducer runs in a child interpreter (``subproc.run_snippet``), so a
crash or a hang fails the test instead of the test run.
"""

from subproc import run_ok

ANNEAL = """
import sys
import numpy as np
from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier, DL85Cluster, DL85Predictor, DL85Regressor
data = load_dataset("anneal")
X, y = data.X, data.y
"""


def _run(body, timeout=60):
    return run_ok(ANNEAL + body, timeout)


def test_huge_max_cache_size_is_a_clean_error():
    # was: SIGABRT "double free" (sys.maxsize), an endless loop (9e17), a
    # bare MemoryError (2**31 + 5), an OverflowError (2**64)
    lines = _run(
        """
for cache in ("trie", "hash"):
    for size in (sys.maxsize, 900_000_000_000_000_000, 2**31 + 5, 2**64):
        attempt(lambda: DL85Classifier(
            max_cache_size=size, cache=cache, time_limit=5).fit(X, y))
"""
    )
    assert len(lines) == 8
    for line in lines:
        assert line.startswith("RAISED") and "max_cache_size" in line, line
        assert "2147483646" in line, line


def test_largest_max_cache_size_allocates_lazily():
    lines = _run(
        """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
plain = DL85Classifier(max_depth=3).fit(X, y)
for cache in ("trie", "hash"):
    bounded = DL85Classifier(max_depth=3, max_cache_size=2**31 - 2, cache=cache)
    bounded.fit(X, y)
    print(bounded.objective_ == plain.objective_, bounded.optimal_)
"""
    )
    assert lines == ["True True", "True True"]


def test_cache_configure_rejects_too_large_bound():
    lines = _run(
        """
from odtstudy.dl85.engine._cache import MAX_CACHE_SIZE, HashCache, TrieCache
for cls in (TrieCache, HashCache):
    attempt(lambda: cls(3).configure(MAX_CACHE_SIZE + 1))
"""
    )
    assert len(lines) == 2 and all("is too large" in line for line in lines)


def test_huge_min_sup_is_a_clean_error_and_large_one_a_leaf():
    lines = _run(
        """
attempt(lambda: DL85Classifier(min_sup=2**31).fit(X, y))
attempt(lambda: DL85Regressor(min_sup=2**31).fit(X, y * 1.0))
clf = DL85Classifier(min_sup=len(y) + 1).fit(X, y)
print(clf.tree_.n_leaves, clf.optimal_)
"""
    )
    assert lines[0].startswith("RAISED") and "min_sup" in lines[0]
    assert "2147483647" in lines[0] and "min_sup" in lines[1]
    assert lines[2] == "1 True"


def test_non_finite_or_negative_losses_are_rejected():
    # was: NaN / inf -> "infeasible" and no tree; negative -> a one-leaf
    # tree with optimal_=True
    lines = _run(
        """
for bad in (float("nan"), float("inf"), -1.0):
    attempt(lambda: DL85Classifier(
        max_depth=2, fast_error_function=lambda w: (bad, 0)).fit(X, y))
    attempt(lambda: DL85Predictor(
        max_depth=2, error_function=lambda rows: bad).fit(X))
"""
    )
    assert len(lines) == 6
    for i, line in enumerate(lines):
        name = "fast_error_function" if i % 2 == 0 else "error_function"
        assert line.startswith(f"RAISED {name} returned the leaf loss"), line
        assert "finite, non-negative" in line


def test_loss_functions_of_the_wrong_type_name_the_contract():
    lines = _run(
        """
attempt(lambda: DL85Classifier(
    max_depth=2, fast_error_function=lambda w: 1.0).fit(X, y), TypeError)
attempt(lambda: DL85Predictor(
    max_depth=2, error_function=lambda rows: "x").fit(X), TypeError)
"""
    )
    assert "fast_error_function must return a pair (loss, label)" in lines[0]
    assert "error_function must return a number" in lines[1]


def test_regressor_extreme_targets():
    # was: |y| ~ 1e154 -> "infeasible" with no tree and no error
    lines = _run(
        """
ramp = np.linspace(-1, 1, len(y))
for scale in (1e154, 1e200, 1e307):
    attempt(lambda: DL85Regressor(max_depth=2).fit(X, ramp * scale))
attempt(lambda: DL85Regressor(max_depth=2).fit(X, ramp * 1e-200))
steps = np.where(X[:, 0] == 1, 3.0, -2.0) + X[:, 5]
for scale in (1.0, 1e140, 1e-100):
    reg = DL85Regressor(max_depth=2).fit(X, steps * scale)
    fits = np.allclose(reg.predict(X), steps * scale, rtol=1e-9, atol=0)
    print(reg.status_, reg.objective_ <= 1e-20 * scale**2, fits)
"""
    )
    for line in lines[:3]:
        assert line.startswith("RAISED y has values up to"), line
        assert "Divide y by a constant" in line
    assert "underflow" in lines[3] and "Multiply y by a constant" in lines[3]
    assert lines[4:] == ["optimal True True"] * 3


def test_regressor_string_targets_name_y():
    lines = _run("attempt(lambda: DL85Regressor().fit(X, np.array(['a'] * len(y))))")
    assert lines[0].startswith("RAISED y must be numeric for DL85Regressor")


def test_cluster_non_finite_x_error_is_named():
    # was: "no tree of depth <= 2 with loss < max_error=None exists"
    lines = _run(
        """
for bad in (np.nan, np.inf):
    E = np.ones((len(y), 2))
    E[3, 1] = bad
    attempt(lambda: DL85Cluster(max_depth=2).fit(X, X_error=E))
"""
    )
    assert lines == [lines[0]] * 2
    assert lines[0].startswith("RAISED X_error contains NaN or infinity")


def test_tiny_sample_weights_fit_as_real_weights():
    # was: "all sample weights are zero"
    lines = _run(
        """
w = np.random.default_rng(0).uniform(1e-300, 3e-300, len(y))
tiny = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w)
unit = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w * 1e300)
print(tiny.status_, np.isclose(tiny.objective_ * 1e300, unit.objective_))
"""
    )
    assert lines == ["optimal True"]


def test_max_error_at_the_time_limit_is_a_timeout_not_infeasible():
    # was: status_ "infeasible" (a claimed proof) with stats_["timeout"] True
    lines = _run(
        """
diabetes = load_dataset("diabetes")
numeric = load_dataset("contree/fault")
regression = load_dataset("osrt/airfoil")
fits = [
    DL85Classifier(max_depth=6, max_error=60, time_limit=0.3),
    DL85Classifier(max_depth=6, max_error=60, time_limit=0.3, n_jobs=2),
]
for clf in fits:
    clf.fit(diabetes.X, diabetes.y)
numeric_clf = DL85Classifier(max_depth=4, max_error=50, thresholds="all")
fits.append(numeric_clf.set_params(time_limit=0.3).fit(numeric.X, numeric.y))
# below the optimum (35 690) and above the floor of identical rows (33 760),
# which proves a lower max_error infeasible at once; the proof takes ~1 s
reg = DL85Regressor(max_depth=8, max_error=35_600, thresholds=8, time_limit=0.2)
fits.append(reg.fit(regression.X, regression.y))
for clf in fits:
    print(clf.status_, clf.tree_ is None, clf.optimal_, clf.stats_["timeout"],
          "time limit" in clf._no_tree_reason)
attempt(lambda: fits[0].predict(diabetes.X))
"""
    )
    assert lines[:4] == ["timeout True False True True"] * 4
    assert lines[4].startswith("RAISED") and "time_limit" in lines[4]


def test_max_error_below_the_optimum_is_proven_infeasible_without_a_limit():
    lines = _run(
        """
diabetes = load_dataset("diabetes")  # optimum at depth 4: 137 errors
for bound in (137, 138):
    clf = DL85Classifier(max_depth=4, max_error=bound).fit(diabetes.X, diabetes.y)
    print(clf.status_, clf.objective_, clf.lower_bound_)
"""
    )
    assert lines[0].split()[:2] == ["infeasible", "None"]
    assert lines[1].split()[0] == "optimal"


def test_n_jobs_is_capped_at_four_threads_per_cpu():
    # was: n_jobs=10_000 started 10,000 threads (7 s and 0.67 GB for a
    # depth-2 fit on 200 x 20 with time_limit=1); 100,000 took 52 s, 4.8 GB
    lines = _run(
        """
import time, warnings
from odtstudy.dl85.estimators._options import max_threads
rng = np.random.RandomState(0)
Xr, yr = rng.randint(0, 2, (200, 20)), rng.randint(0, 2, 200)
for n_jobs in (10_000, 100_000):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = DL85Classifier(max_depth=2, n_jobs=n_jobs, time_limit=1).fit(Xr, yr)
    print(clf.stats_["threads"] == max_threads(), clf.optimal_,
          time.perf_counter() - start < 2.1,
          any("n_jobs" in str(w.message) and "-1" in str(w.message) for w in caught))
one = DL85Classifier(max_depth=2).fit(Xr, yr)
print(one.objective_ == clf.objective_)
"""
    )
    assert lines == ["True True True True"] * 2 + ["True"]
