"""DL8.5 against brute force: every switch combination finds the optimum."""

import itertools

import bruteforce
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from odtstudy.dl85 import DL85Classifier

# T11, thesis Table 4.1 (features A, B, C -> class)
T11 = "011 0,101 1,001 1,010 0,100 1,000 0,001 0,110 1,000 1,001 0,000 1"
T11_X = np.array([[int(c) for c in row.split()[0]] for row in T11.split(",")])
T11_Y = np.array([int(row.split()[1]) for row in T11.split(",")])

SWITCHES = [
    {
        "branching": branching,
        "cache": cache,
        "use_infeasibility_lb": inf_lb,
        "use_similarity_lb": sim,
        "use_depth2_solver": d2,
    }
    for branching, cache, inf_lb, sim, d2 in itertools.product(
        ["data", "asc", "desc"],
        ["trie", "hash"],
        [True, False],
        [True, False],
        [True, False],
    )
] + [
    {"algorithm": "dl8", "branching": branching, "cache": cache}
    for branching, cache in itertools.product(["data", "asc", "desc"], ["trie", "hash"])
]


def _leaf_errors(tree):
    leaves = tree.feature == -1
    counts = tree.value[leaves]
    return counts.sum(axis=1) - counts.max(axis=1), tree.n_samples[leaves]


def _check_fit(clf, X, y, depth, min_sup, expected):
    assert clf.optimal_ and clf.status_ == "optimal"
    assert clf.objective_ == expected
    assert clf.lower_bound_ == expected
    assert clf.tree_.depth <= depth
    assert np.sum(clf.predict(X) != y) == expected
    errors, sizes = _leaf_errors(clf.tree_)
    assert errors.sum() == expected
    if clf.tree_.node_count > 1:
        assert sizes.min() >= min_sup


@pytest.mark.parametrize("depth, expected", [(1, 3), (2, 3), (3, 2)])
@pytest.mark.parametrize(
    "params", SWITCHES, ids=lambda p: "-".join(map(str, p.values()))
)
def test_dl85_t11_oracle(depth, expected, params):
    clf = DL85Classifier(max_depth=depth, **params).fit(T11_X, T11_Y)
    _check_fit(clf, T11_X, T11_Y, depth, 1, expected)


@st.composite
def small_problems(draw):
    n_rows = draw(st.integers(1, 60))
    n_features = draw(st.integers(1, 8))
    n_classes = draw(st.integers(2, 3))
    X = draw(arrays(np.uint8, (n_rows, n_features), elements=st.integers(0, 1)))
    y = draw(arrays(np.int64, (n_rows,), elements=st.integers(0, n_classes - 1)))
    # at least two classes (the estimator rejects single-class targets)
    y[0] = 0
    if n_rows > 1 and np.all(y == 0):
        y[-1] = 1
    depth = draw(st.integers(1, 3))
    min_sup = draw(st.integers(1, 3))
    return X, y, depth, min_sup


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(small_problems())
def test_dl85_matches_bruteforce_all_switches(problem):
    X, y, depth, min_sup = problem
    if len(np.unique(y)) < 2:
        return
    expected = bruteforce.optimal_error(X, y, depth, min_sup=min_sup)
    for params in SWITCHES:
        clf = DL85Classifier(max_depth=depth, min_sup=min_sup, **params).fit(X, y)
        try:
            _check_fit(clf, X, y, depth, min_sup, expected)
        except AssertionError as exc:  # pragma: no cover - failure report
            raise AssertionError(f"{params}: {clf.objective_} != {expected}") from exc


def test_dl85_random_deeper_and_wider(rng):
    """Depth 4 and 10 features, fewer cases (brute force is slower there)."""
    for _ in range(4):
        X = rng.integers(0, 2, size=(40, 10))
        y = rng.integers(0, 2, size=40)
        expected = bruteforce.optimal_error(X, y, 4)
        for params in ({}, {"use_depth2_solver": False}, {"algorithm": "dl8"}):
            clf = DL85Classifier(max_depth=4, **params).fit(X, y)
            _check_fit(clf, X, y, 4, 1, expected)


def test_dl85_string_labels_and_many_classes(rng):
    X = rng.integers(0, 2, size=(50, 6))
    y_int = rng.integers(0, 5, size=50)
    labels = np.array(["a", "b", "c", "d", "e"])[y_int]
    clf = DL85Classifier(max_depth=2).fit(X, labels)
    assert clf.objective_ == bruteforce.optimal_error(X, y_int, 2)
    assert set(clf.predict(X)) <= set(labels)
    assert clf.predict_proba(X).shape == (50, 5)


@pytest.mark.parametrize("isa", ["baseline", "popcnt", "avx2", "avx512"])
def test_dl85_every_kernel_isa_is_exact(isa, rng):
    """The depth-2 kernels compiled per instruction set agree with brute force."""
    from odtstudy.dl85.engine import _search

    if not _search.set_kernel_isa(isa):
        pytest.skip(f"this CPU lacks {isa}")
    try:
        for _ in range(6):
            n_rows = int(rng.integers(20, 200))  # several 64-bit words
            X = rng.integers(0, 2, size=(n_rows, 12))
            y = rng.integers(0, 2, size=n_rows)
            for min_sup in (1, 3):
                expected = bruteforce.optimal_error(X, y, 2, min_sup=min_sup)
                clf = DL85Classifier(max_depth=2, min_sup=min_sup).fit(X, y)
                assert clf.stats_["kernel_isa"] == isa
                _check_fit(clf, X, y, 2, min_sup, expected)
        # deeper: depth-2 subproblems on sparse covers (compacted words)
        X = rng.integers(0, 2, size=(700, 9))
        y = (X[:, 0] ^ X[:, 1] ^ (rng.random(700) < 0.2)).astype(int)
        expected = bruteforce.optimal_error(X, y, 3)
        _check_fit(DL85Classifier(max_depth=3).fit(X, y), X, y, 3, 1, expected)
    finally:
        _search.set_kernel_isa("auto")


@pytest.mark.parametrize("cache", ["trie", "hash"])
def test_dl85_batched_cache_lookups_change_nothing(cache, rng):
    """The children of a chunk of candidates looked up together
    (``_peek_chunk``) from the first entry on, or never: the same search
    (every counter), the same tree; brute force at depth 3."""
    from odtstudy.datasets import load_dataset
    from odtstudy.dl85.engine import _search

    cases = []
    for n_rows, n_feat, depth in ((300, 10, 3), (400, 20, 5)):
        X = rng.integers(0, 2, size=(n_rows, n_feat))
        X[:, 5] = X[:, 2]  # a duplicate column
        y = (X[:, 0] ^ X[:, 3] ^ (rng.random(n_rows) < 0.25)).astype(int)
        cases.append((X, y, depth))
    vote = load_dataset("vote")  # cache hits on both children, dynamic order
    cases.append((np.asarray(vote.X), np.asarray(vote.y), 4))
    try:
        for X, y, depth in cases:
            fits = []
            for threshold in (0, 2**40):
                _search.set_peek_min_entries(threshold)
                fits.append(DL85Classifier(max_depth=depth, cache=cache).fit(X, y))
            batched, plain = fits
            assert batched.stats_["cache_entries"] > (1000 if depth > 3 else 10)
            for key in (
                "itemsets_explored",
                "cache_hits",
                "depth2_calls",
                "similarity_prunes",
                "cache_entries",
            ):
                assert batched.stats_[key] == plain.stats_[key], key
            assert batched.objective_ == plain.objective_
            np.testing.assert_array_equal(batched.predict(X), plain.predict(X))
            if depth == 3:
                expected = bruteforce.optimal_error(X, y, 3)
                _check_fit(batched, X, y, 3, 1, expected)
    finally:
        _search.set_peek_min_entries(None)


def _searcher(X, y, depth, min_sup, **params):
    from odtstudy.dl85.engine import _bitset, _engine, _search

    X = np.ascontiguousarray(X, dtype=np.uint8)
    return _search.Searcher(
        _bitset.pack_columns(X), _engine._pack_classes(y, int(y.max()) + 1),
        X.shape[0], depth,
        min_sup=min_sup, cache="hash", **params,
    )  # fmt: skip


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"use_depth2_solver": False},
        {"use_similarity_lb": False, "branching": "desc"},
        {"use_infeasibility_lb": False, "branching": "asc"},
    ],
)
def test_dl85_cache_entries_are_sound(params, rng):
    """Every stored lower bound <= the itemset's true optimum; every entry
    marked solved holds exactly that optimum (checked by brute force)."""
    checked = 0
    for trial in range(8):
        n_rows = int(rng.integers(10, 50))
        X = rng.integers(0, 2, size=(n_rows, 6))
        y = rng.integers(0, 2 + trial % 2, size=n_rows)
        depth = 3
        min_sup = 1 + trial % 2
        searcher = _searcher(X, y, depth, min_sup, **params)
        error, _ = searcher.run()
        assert error == bruteforce.optimal_error(X, y, depth, min_sup=min_sup)
        cache = searcher.cache
        for e in range(cache.n_entries):
            items = cache.itemset(e)
            rows = np.ones(n_rows, dtype=bool)
            for item in items:
                rows &= X[:, item // 2] == item % 2
            opt = bruteforce.optimal_error(
                X[rows], y[rows], depth - len(items), min_sup=min_sup,
                n_classes=int(y.max()) + 1,
            )  # fmt: skip
            entry = cache.entry(e)
            assert entry["lb"] <= opt + 1e-9, (items, entry, opt)
            if entry["solved"]:
                assert entry["error"] == opt, (items, entry, opt)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("isa", ["baseline", "avx512"])
@pytest.mark.parametrize("depth", [3, 4])
def test_dl85_children_by_difference_are_exact(isa, depth, rng):
    """Below a depth-3 node the depth-2 solver counts the smaller child of a
    split and takes its sibling as the parent minus it, over the parent's
    features less duplicate and mirrored ones: same loss as brute force and
    as the plain recursion, on duplicate, mirrored and constant columns and
    covers of several words."""
    from odtstudy.dl85.engine import _search

    if not _search.set_kernel_isa(isa):
        pytest.skip(f"this CPU lacks {isa}")
    try:
        for n_rows in (30, 150, 400):
            base = rng.integers(0, 2, size=(n_rows, 6))
            both = base[:, :1] & base[:, 1:2]
            # mirrored, duplicated, a conjunction, and (30 rows) a constant column
            X = np.hstack([base, 1 - base[:, :3], base[:, 1:3], both])
            X[:, -1] = X[:, -1] if n_rows > 30 else 0
            y = (base[:, 0] ^ base[:, 2] ^ (rng.random(n_rows) < 0.25)).astype(int)
            fast = DL85Classifier(max_depth=depth).fit(X, y)
            plain = DL85Classifier(max_depth=depth, use_depth2_solver=False).fit(X, y)
            assert fast.stats_["depth2_by_difference"] > 0
            assert plain.stats_["depth2_by_difference"] == 0
            expected = plain.objective_
            if depth == 3:
                assert expected == bruteforce.optimal_error(X, y, 3)
            _check_fit(fast, X, y, depth, 1, expected)
        # more partners than a kernel's 16 lanes (full blocks and a tail)
        X = rng.integers(0, 2, size=(300, 37))
        y = (X[:, 0] ^ X[:, 5] ^ (rng.random(300) < 0.2)).astype(int)
        fast = DL85Classifier(max_depth=depth).fit(X, y)
        plain = DL85Classifier(max_depth=depth, use_depth2_solver=False).fit(X, y)
        assert fast.stats_["depth2_by_difference"] > 0
        _check_fit(fast, X, y, depth, 1, plain.objective_)
    finally:
        _search.set_kernel_isa("auto")


@pytest.mark.parametrize("min_sup", [1, 4])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dl85_duplicate_and_mirrored_features_are_left_out_exactly(
    n_classes, min_sup, rng
):
    """The depth-2 solver leaves out a feature that splits the cover as an
    earlier one or its mirror: brute force agrees, on dense (compacted) and
    sparse covers, and the root it picks is the first of equal ones."""
    for n_rows in (25, 90, 300):
        base = rng.integers(0, 2, size=(n_rows, 5))
        X = np.hstack([1 - base[:, :2], base, base[:, 3:], 1 - base[:, 4:]])
        y = rng.integers(0, n_classes, size=n_rows)
        for depth in (1, 2, 3):
            expected = bruteforce.optimal_error(X, y, depth, min_sup=min_sup)
            clf = DL85Classifier(max_depth=depth, min_sup=min_sup).fit(X, y)
            _check_fit(clf, X, y, depth, min_sup, expected)
            # the mirror of feature 2 (feature 0) comes first
            assert clf.tree_.feature[0] not in (2, 3, 8, 9)
