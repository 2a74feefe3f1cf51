"""DL85Classifier's scikit-learn contract, input checks, caches and bitsets."""

import pickle

import numpy as np
import pytest

from odtstudy._deadline import now
from odtstudy.dl85 import DL85Classifier
from odtstudy.dl85.engine import _bitset, _cache


def test_dl85_rejects_non_binary_x():
    X = np.array([[0, 1], [2, 0], [1, 1]])
    with pytest.raises(ValueError, match="Binarizer"):
        DL85Classifier().fit(X, [0, 1, 0])


@pytest.mark.parametrize(
    "params, match",
    [
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 100}, "max_depth"),
        ({"min_sup": 0}, "min_sup"),
        ({"branching": "random"}, "branching"),
        ({"cache": "lru"}, "cache"),
        ({"algorithm": "dl9"}, "algorithm"),
        ({"time_limit": -1}, "time_limit"),
        ({"max_error": 0}, "max_error"),
        ({"use_similarity_lb": "yes"}, "use_similarity_lb"),
    ],
)
def test_dl85_bad_params(params, match):
    X = np.array([[0, 1], [1, 0], [1, 1]])
    with pytest.raises(ValueError, match=match):
        DL85Classifier(**params).fit(X, [0, 1, 0])


def test_dl85_bool_and_int_dtypes_agree(rng):
    X = rng.integers(0, 2, size=(40, 5))
    y = rng.integers(0, 2, size=40)
    ref = DL85Classifier(max_depth=2).fit(X, y)
    for Xt in (X.astype(bool), X.astype(np.int8), X.astype(float)):
        clf = DL85Classifier(max_depth=2).fit(Xt, y)
        assert clf.objective_ == ref.objective_
        assert clf.tree_ == ref.tree_


def test_dl85_max_error_infeasible_then_feasible(rng):
    X = rng.integers(0, 2, size=(60, 6))
    y = rng.integers(0, 2, size=60)
    best = DL85Classifier(max_depth=2).fit(X, y).objective_
    assert best > 0
    clf = DL85Classifier(max_depth=2, max_error=best).fit(X, y)
    assert clf.tree_ is None and clf.status_ == "infeasible"
    assert clf.objective_ is None and not clf.optimal_
    assert clf.lower_bound_ >= best
    with pytest.raises(ValueError, match="max_error"):
        clf.predict(X)
    clf = DL85Classifier(max_depth=2, max_error=best + 0.5).fit(X, y)
    assert clf.objective_ == best and clf.optimal_


def test_dl85_shallowest_perfect_tree_loop(rng):
    """The thesis's loop: increase the depth until a perfect tree exists."""
    X = rng.integers(0, 2, size=(30, 6))
    y = X[:, 0] ^ (X[:, 1] & X[:, 2])
    depth = 1
    while DL85Classifier(max_depth=depth, max_error=1).fit(X, y).tree_ is None:
        depth += 1
    assert depth == 3


def test_dl85_stats_and_pickle(rng):
    X = rng.integers(0, 2, size=(80, 8))
    y = rng.integers(0, 3, size=80)
    start = now()
    clf = DL85Classifier(max_depth=3).fit(X, y)
    wall = now() - start
    for key in ("cache_entries", "itemsets_explored", "depth2_calls", "timeout"):
        assert key in clf.stats_
    assert clf.stats_["timeout"] is False and clf.stats_["depth2_calls"] > 0
    assert 0 < clf.fit_time_ <= wall
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    dl8 = DL85Classifier(max_depth=3, algorithm="dl8").fit(X, y)
    assert dl8.objective_ == clf.objective_
    assert dl8.stats_["depth2_calls"] == 0


def test_dl85_integer_sample_weights_repeat_rows(rng):
    X = rng.integers(0, 2, size=(30, 5))
    y = rng.integers(0, 2, size=30)
    w = rng.integers(0, 3, size=30)
    clf = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w)
    rep = DL85Classifier(max_depth=2).fit(np.repeat(X, w, 0), np.repeat(y, w))
    assert clf.objective_ == rep.objective_
    half = DL85Classifier(max_depth=2).fit(X, y, sample_weight=np.full(30, 0.5))
    unit = DL85Classifier(max_depth=2).fit(X, y)
    assert half.objective_ == pytest.approx(unit.objective_ / 2)


def test_dl85_registry_constructor_arguments():
    clf = DL85Classifier(max_depth=2, time_limit=5, random_state=0)
    assert clf.get_params()["random_state"] == 0


# ---------------------------------------------------------------- internals
def test_dl85_bitset_helpers(rng):
    X = rng.integers(0, 2, size=(130, 3)).astype(np.uint8)
    words = _bitset.pack_columns(X)
    assert words.shape == (3, 3) and words.dtype == np.uint64
    for j in range(3):
        assert _bitset.popcount(words[j]) == X[:, j].sum()
    assert _bitset.popcount_and(words[0], words[1]) == np.sum(X[:, 0] & X[:, 1])
    mask = _bitset.pack_mask(X[:, 2])
    np.testing.assert_array_equal(mask, words[2])
    with pytest.raises(ValueError):
        _bitset.popcount_and(words[0], words[0][:2])


@pytest.mark.parametrize("cache_cls", [_cache.TrieCache, _cache.HashCache])
def test_dl85_cache_lookup(cache_cls):
    cache = cache_cls(4, 16)
    seen = {}
    rng = np.random.default_rng(3)
    for _ in range(2000):  # forces several resizes
        items = tuple(sorted(rng.choice(200, size=rng.integers(0, 5), replace=False)))
        e = cache.lookup(list(items), create=True)
        assert seen.setdefault(items, e) == e
    for items, e in seen.items():
        assert cache.lookup(list(items)) == e
    assert cache.lookup([199, 200, 201, 202]) == -1
    assert cache.n_entries >= len(seen)
    # looked up together (the search's batched peeks): the same entries,
    # present and absent ones mixed, at every length
    for n in range(5):
        batch = [s for s in seen if len(s) == n][:40]
        batch += [tuple(range(195 - n, 195)), tuple(range(200 - n, 200))]
        assert cache.lookup_many([list(s) for s in batch]) == [
            cache.lookup(list(s)) for s in batch
        ]
    assert cache.lookup_many([[0, 1, 2, 203]]) == [-1]
    entry = cache.entry(seen[()])
    assert entry["solved"] is False and entry["lb"] == 0


@pytest.mark.parametrize("cache_cls", [_cache.TrieCache, _cache.HashCache])
def test_dl85_cache_opens_an_itemset_from_its_known_prefix(cache_cls):
    """The lookup of a search on threads (the known prefix outside the
    lock, the rest under it) finds the entry a plain lookup finds, makes the
    missing prefixes, and the trie knows every prefix already made."""
    cache = cache_cls(4, 16)
    two_steps = cache_cls(4, 16)
    rng = np.random.default_rng(5)
    for _ in range(2000):  # forces several resizes of entries and edges
        items = sorted(rng.choice(200, size=rng.integers(0, 5), replace=False))
        # the trie: the longest prefix made before (with an itemset, its
        # prefixes); the hash table knows no prefix, not even the empty one
        made = -1
        if cache_cls is _cache.TrieCache:
            prefixes = [items[:k] for k in range(len(items) + 1)]
            made = max(k for k, p in enumerate(prefixes) if two_steps.lookup(p) >= 0)
        e, known = two_steps.open_in_two_steps(items)
        assert cache.lookup(items, create=True) == e
        assert known == made
        assert two_steps.lookup(items) == e
    assert two_steps.n_entries == cache.n_entries
