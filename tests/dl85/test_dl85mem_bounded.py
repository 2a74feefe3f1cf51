"""DL8.5 under a memory bound (issue 5): bounded caches, wipes, reconstitution."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odtstudy.dl85.engine._cache import HashCache, TrieCache
from odtstudy.dl85.engine._cache_policy import WIPE_STRATEGIES

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier

STRATEGIES = sorted(WIPE_STRATEGIES)
CACHES = ["trie", "hash"]
MEMORY_KEYS = (
    "cache_entries_created",
    "cache_peak_entries",
    "cache_wipes",
    "cache_entries_wiped",
    "reconstitution_ms",
)


def _min_size(cache, depth):
    return 1 + depth * (depth + 1) // 2 if cache == "trie" else depth + 1


def _tree_error(clf, X, y):
    return float(np.sum(clf.predict(X) != y))


def _check_bounded(clf, X, y, bound, objective):
    assert clf.optimal_
    assert clf.objective_ == objective
    assert _tree_error(clf, X, y) == clf.objective_
    stats = clf.stats_
    assert stats["cache_peak_entries"] <= bound
    # the entry array itself never grows past the bound (free list)
    assert stats["cache_entries"] <= bound + 1
    assert (
        stats["cache_entries_created"] - stats["cache_entries_wiped"]
        == (stats["cache_live_entries"])
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(8, 70),
    n_features=st.integers(2, 9),
    n_classes=st.integers(2, 3),
    depth=st.integers(1, 4),
    strategy=st.sampled_from(STRATEGIES),
    cache=st.sampled_from(CACHES),
    extra=st.sampled_from([0, 3, 20, 100, 400]),
    depth2=st.booleans(),
    wipe_factor=st.sampled_from([0.1, 0.3, 0.5, 1.0]),
)
def test_dl85mem_random_data_matches_unbounded(
    seed,
    n_rows,
    n_features,
    n_classes,
    depth,
    strategy,
    cache,
    extra,
    depth2,
    wipe_factor,
):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_rows, n_features))
    y = rng.integers(0, n_classes, size=n_rows)
    # some signal so that deep trees are needed
    y[X[:, 0] == X[:, 1 % n_features]] = 0
    y[-1] = 1  # two classes at least
    params = dict(max_depth=depth, use_depth2_solver=depth2, cache=cache)
    ref = DL85Classifier(**params).fit(X, y)
    bound = _min_size(cache, depth) + extra
    clf = DL85Classifier(
        **params, max_cache_size=bound, wipe_strategy=strategy, wipe_factor=wipe_factor
    ).fit(X, y)
    _check_bounded(clf, X, y, bound, ref.objective_)


@pytest.fixture(scope="module")
def cp4im():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = load_dataset(name)
        return cache[name]

    return get


CP4IM_CASES = [
    ("anneal", 4, True),
    ("vote", 4, True),
    ("soybean", 4, True),
    ("primary-tumor", 4, True),
    ("anneal", 3, False),
    ("tic-tac-toe", 3, False),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize(
    "name, depth, depth2",
    CP4IM_CASES,
    ids=[f"{n}-d{d}{'' if d2 else '-nod2'}" for n, d, d2 in CP4IM_CASES],
)
def test_dl85mem_cp4im_matches_unbounded(cp4im, name, depth, depth2, cache, strategy):
    data = cp4im(name)
    params = dict(max_depth=depth, use_depth2_solver=depth2, cache=cache)
    ref = DL85Classifier(**params).fit(data.X, data.y)
    peak = ref.stats_["cache_peak_entries"]
    assert ref.stats_["cache_wipes"] == 0
    for frac in (0.5, 0.25, 0.1, 0.02):
        bound = max(int(frac * peak), _min_size(cache, depth) + 5)
        clf = DL85Classifier(**params, max_cache_size=bound, wipe_strategy=strategy)
        clf.fit(data.X, data.y)
        _check_bounded(clf, data.X, data.y, bound, ref.objective_)
        assert clf.stats_["cache_wipes"] > 0
        if bound >= 200:
            assert clf.stats_["reconstitution_ms"] < 50


def test_dl85mem_unbounded_stats_filled(cp4im):
    data = cp4im("vote")
    clf = DL85Classifier(max_depth=3).fit(data.X, data.y)
    for key in MEMORY_KEYS:
        assert key in clf.stats_
    s = clf.stats_
    assert s["cache_wipes"] == 0 and s["cache_entries_wiped"] == 0
    assert s["reconstitution_ms"] == 0.0
    assert s["cache_peak_entries"] == s["cache_entries_created"] == s["cache_entries"]


def test_dl85mem_bound_above_need_has_no_wipes(cp4im):
    data = cp4im("soybean")
    ref = DL85Classifier(max_depth=4).fit(data.X, data.y)
    bound = ref.stats_["cache_peak_entries"]
    clf = DL85Classifier(max_depth=4, max_cache_size=bound).fit(data.X, data.y)
    assert clf.stats_["cache_wipes"] == 0
    assert clf.objective_ == ref.objective_
    assert clf.stats_["cache_peak_entries"] == bound


@pytest.mark.parametrize("cache", CACHES)
def test_dl85mem_too_small_bound_raises(cache):
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([0, 1, 1, 0])
    need = _min_size(cache, 4)
    with pytest.raises(ValueError, match=r"max_cache_size=\d+ is too small"):
        DL85Classifier(max_depth=4, cache=cache, max_cache_size=need - 1).fit(X, y)
    clf = DL85Classifier(max_depth=4, cache=cache, max_cache_size=need).fit(X, y)
    assert clf.objective_ == 0


@pytest.mark.parametrize(
    "params",
    [
        {"max_cache_size": 0},
        {"wipe_factor": 0.0},
        {"wipe_factor": 1.5},
        {"wipe_strategy": "lru"},
    ],
)
def test_dl85mem_parameter_validation(params):
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([0, 1, 1, 0])
    with pytest.raises(ValueError):
        DL85Classifier(max_depth=2, **params).fit(X, y)


def test_dl85mem_time_limit_and_weights(cp4im):
    data = cp4im("anneal")
    w = np.random.default_rng(0).integers(0, 3, size=len(data.y))
    ref = DL85Classifier(max_depth=3).fit(data.X, data.y, sample_weight=w)
    clf = DL85Classifier(max_depth=3, max_cache_size=300, use_depth2_solver=False)
    clf.fit(data.X, data.y, sample_weight=w)
    assert clf.objective_ == ref.objective_
    tl = DL85Classifier(max_depth=5, max_cache_size=500, time_limit=0.2)
    tl.fit(data.X, data.y)
    assert tl.tree_ is not None
    assert _tree_error(tl, data.X, data.y) == tl.objective_
    assert tl.stats_["cache_peak_entries"] <= 500


@pytest.mark.parametrize("kind", [TrieCache, HashCache])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_dl85mem_cache_consistent_after_wipes(kind, strategy):
    """Random insertions into a tiny bounded cache: every itemset still
    found maps to a live entry of that very itemset (deletions keep the
    hash tables consistent), and the live count never exceeds the bound."""
    rng = np.random.default_rng(1)
    depth = 4
    cache = kind(depth)
    cache.configure(40, 0.3, strategy)
    inserted = {()}
    for _ in range(3000):
        n = int(rng.integers(0, depth + 1))
        items = sorted(rng.choice(20, size=n, replace=False).tolist())
        e = cache.lookup(items, create=True)
        assert e >= 0
        assert cache.n_live <= 40
        # trie nodes are the prefixes of the inserted itemsets
        prefixes = range(len(items) + 1) if kind is TrieCache else [len(items)]
        inserted.update(tuple(items[:k]) for k in prefixes)
        if kind is HashCache:
            assert cache.itemset(e) == items
    assert cache.peak_live <= 40 and cache.n_wipes > 0
    seen = {}
    for items in inserted:
        found = cache.lookup(list(items))
        if found >= 0:
            cache.entry(found)  # live
            assert found not in seen, (items, seen.get(found))
            seen[found] = items
            if kind is HashCache:
                assert cache.itemset(found) == list(items)
    assert len(seen) == cache.n_live


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    depth=st.integers(2, 4),
    cache=st.sampled_from(CACHES),
    strategy=st.sampled_from(STRATEGIES),
    algorithm=st.sampled_from(["dl85", "dl8"]),
    min_sup=st.integers(1, 3),
)
def test_dl85mem_real_weights_and_variants(
    seed, depth, cache, strategy, algorithm, min_sup
):
    """Real-valued weights (non-integer errors: the reconstitution bounds
    carry a tolerance), DL8 and min_sup also agree with the unbounded cache."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(50, 7))
    y = rng.integers(0, 2, size=50)
    y[:2] = [0, 1]
    w = rng.random(50) * 3
    params = dict(max_depth=depth, cache=cache, algorithm=algorithm, min_sup=min_sup)
    ref = DL85Classifier(**params).fit(X, y, sample_weight=w)
    bound = _min_size(cache, depth) + 10
    clf = DL85Classifier(**params, max_cache_size=bound, wipe_strategy=strategy)
    clf.fit(X, y, sample_weight=w)
    assert abs(clf.objective_ - ref.objective_) < 1e-9
    assert clf.stats_["cache_peak_entries"] <= bound


def test_dl85mem_custom_error_function_with_bound_matches_unbounded(cp4im):
    """The bounded cache now works with a Python loss too (one engine)."""
    data = cp4im("vote")

    def error(s):
        return float(sum(s) - max(s)), int(np.argmax(s))

    ref = DL85Classifier(max_depth=3, fast_error_function=error).fit(data.X, data.y)
    bound = max(ref.stats_["cache_peak_entries"] // 4, _min_size("trie", 3))
    clf = DL85Classifier(max_depth=3, max_cache_size=bound, fast_error_function=error)
    clf.fit(data.X, data.y)
    assert clf.optimal_ and clf.objective_ == ref.objective_
    assert clf.stats_["cache_peak_entries"] <= bound
