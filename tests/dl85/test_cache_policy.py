"""The bounded-cache wipe policy (``_cache_policy``): one rule per strategy in
the 0/1 caches and the numeric search's box cache, the optima it keeps, and
the errors of its options."""

import bruteforce
import numpy as np
import pytest
from odtstudy.dl85.engine._boxcache import BoxCache
from odtstudy.dl85.engine._cache import HashCache, TrieCache
from odtstudy.dl85.engine._cache_policy import (
    NUMERIC_WIPE_STRATEGIES,
    WIPE_STRATEGIES,
    check_wipe_strategy,
)

from odtstudy.dl85 import DL85Classifier

MAX_LEN = 3
BOUND = 12
WIPE_FACTOR = 0.25
#: (reuses, remaining depth) of hand-made entries, in insertion order, with
#: ties on both
ENTRIES = [
    (0, 2),
    (2, 0),
    (1, 1),
    (0, 0),
    (3, 2),
    (1, 1),
    (0, 0),
    (2, 1),
    (0, 2),
    (1, 0),
    (5, 1),
]


def _itemset(index, remaining):
    """A distinct sorted itemset of ``MAX_LEN - remaining`` items."""
    return [100 * index + 2 * j for j in range(MAX_LEN - remaining)]


def _box_key(index, remaining):
    return [remaining, index, 0, index]


def _rule_survivors(entries, strategy, n_delete):
    """The documented rule, written out: the candidates of smallest key go
    first, ties in entry order; ``"all_non_useful"`` takes every one."""
    if strategy == "all_non_useful":
        return set()

    def key(i):
        reuses, remaining = entries[i]
        if strategy == "remaining_depth":
            return remaining
        return (min(reuses, 2**26 - 1) << 6) | remaining

    order = sorted(range(len(entries)), key=lambda i: (key(i), i))
    return set(order[n_delete:])


def _fill_and_wipe(lookup, make_key, n_before):
    """Insert ENTRIES, look each up ``reuses`` times, then insert one more
    entry into the full cache (one wipe); the indices of ENTRIES still
    cached. ``n_before``: entries inserted before ENTRIES."""
    for i, (_, remaining) in enumerate(ENTRIES):
        assert lookup(make_key(i, remaining), True) >= 0
    for i, (reuses, remaining) in enumerate(ENTRIES):
        for _ in range(reuses):
            assert lookup(make_key(i, remaining), False) >= 0
    assert n_before + len(ENTRIES) == BOUND
    assert lookup(make_key(len(ENTRIES), 0), True) >= 0
    return {i for i, (_, r) in enumerate(ENTRIES) if lookup(make_key(i, r), False) >= 0}


@pytest.mark.parametrize("strategy", sorted(NUMERIC_WIPE_STRATEGIES))
def test_same_strategy_wipes_the_same_entries_in_both_caches(strategy):
    n_delete = int(BOUND * WIPE_FACTOR)
    # the hash cache keeps its root (the empty itemset, inserted first)
    hashed = HashCache(MAX_LEN)
    hashed.configure(BOUND, WIPE_FACTOR, strategy)
    assert hashed.lookup([], create=True) == 0
    kept_hash = _fill_and_wipe(hashed.lookup, _itemset, 1)
    # the box cache keeps nothing: its first entry is the most reused and
    # deepest-remaining one, last in every order
    box = BoxCache(BOUND, WIPE_FACTOR, strategy)
    root = [MAX_LEN, 999, 0, 999]
    assert box.lookup(root, True) == 0
    for _ in range(10):
        box.lookup(root)
    kept_box = _fill_and_wipe(box.lookup, _box_key, 1)
    assert hashed.n_wipes == box.n_wipes == 1
    expected = _rule_survivors(ENTRIES, strategy, n_delete)
    assert kept_hash == expected
    if strategy != "all_non_useful":
        assert box.lookup(root) >= 0
    assert kept_box == expected
    assert len(ENTRIES) - len(expected) in (n_delete, len(ENTRIES))


@pytest.mark.parametrize("strategy", ["descendants", "reuses", "remaining_depth"])
def test_trie_wipes_children_before_parents(strategy):
    """Whatever the strategy, a trie node is never wiped while a node below
    it stays: the live nodes stay the prefixes of what is reachable."""
    rng = np.random.default_rng(3)
    trie = TrieCache(4)
    trie.configure(30, 0.3, strategy)
    inserted = []
    for _ in range(400):
        n = int(rng.integers(1, 5))
        items = sorted(rng.choice(12, size=n, replace=False).tolist())
        assert trie.lookup(items, create=True) >= 0
        inserted.append(items)
        reachable = sum(
            1
            for k in {tuple(s[:j]) for s in inserted for j in range(len(s) + 1)}
            if trie.lookup(list(k)) >= 0
        )
        assert reachable == trie.n_live <= 30
    assert trie.n_wipes > 0


def _binary_problem(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(40, 6))
    y = (X[:, 0] ^ X[:, 2] | (rng.random(40) < 0.2)).astype(int)
    return X, y


def _numeric_problem(seed):
    # random labels: no short tree, so the numeric search caches tens of boxes
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(36, 4)), 2)
    return X, rng.integers(0, 3, size=36)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("strategy", sorted(WIPE_STRATEGIES))
def test_every_strategy_keeps_the_optimum_on_binary_data(seed, strategy):
    X, y = _binary_problem(seed)
    expected = bruteforce.optimal_error(X, y, 3)
    for cache, bound in (("trie", 9), ("hash", 6)):
        clf = DL85Classifier(
            max_depth=3, cache=cache, max_cache_size=bound, wipe_strategy=strategy
        ).fit(X, y)
        assert clf.optimal_ and clf.objective_ == expected, (cache, strategy)
        assert clf.stats_["cache_wipes"] > 0
        assert clf.stats_["cache_peak_entries"] <= bound


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("strategy", sorted(NUMERIC_WIPE_STRATEGIES))
def test_every_strategy_keeps_the_optimum_on_numeric_data(seed, strategy):
    X, y = _numeric_problem(seed)
    params = dict(max_depth=3, thresholds="all")
    # the unbounded numeric search is checked against brute force elsewhere
    # (test_numeric_bruteforce.py; too slow here)
    ref = DL85Classifier(**params).fit(X, y)
    bound = ref.stats_["cache_peak_entries"] // 5
    assert bound >= 4
    clf = DL85Classifier(**params, max_cache_size=bound, wipe_strategy=strategy)
    clf.fit(X, y)
    assert clf.optimal_ and clf.objective_ == ref.objective_, strategy
    assert clf.training_error(X, y) == clf.objective_
    assert clf.stats_["cache_wipes"] > 0
    assert clf.stats_["cache_peak_entries"] <= bound


ALLOWED = "'all_non_useful', 'descendants', 'remaining_depth', 'reuses'"
NUMERIC_ALLOWED = "'all_non_useful', 'remaining_depth', 'reuses'"


def test_unknown_strategy_is_refused_by_every_cache_with_one_wording():
    message = f"wipe_strategy='lru' is not a wipe strategy; use one of {ALLOWED}"
    for cache in (TrieCache(3), HashCache(3)):
        with pytest.raises(ValueError) as err:
            cache.configure(20, 0.5, "lru")
        assert str(err.value) == message
    with pytest.raises(ValueError) as err:
        check_wipe_strategy("lru")
    assert str(err.value) == message
    with pytest.raises(ValueError) as err:
        BoxCache(20, 0.5, "lru")
    assert str(err.value) == message.replace(ALLOWED, NUMERIC_ALLOWED)


def test_descendants_refused_with_thresholds_whatever_the_search():
    """'descendants' is refused with thresholds both when the data goes to
    the numeric search and when few thresholds send it to the bitset one."""
    wording = (
        r"wipe_strategy='descendants' is not available with thresholds .*box "
        rf"cache.*; use one of {NUMERIC_ALLOWED}"
    )
    with pytest.raises(ValueError, match=wording):
        BoxCache(20, 0.5, "descendants")
    rng = np.random.default_rng(0)
    many = rng.normal(size=(300, 3))  # many thresholds: the numeric search
    few = rng.integers(0, 3, size=(30, 3)).astype(float)  # few: the bitset one
    for X in (many, few):
        y = (X[:, 0] > 0.5).astype(int)
        clf = DL85Classifier(
            max_depth=2,
            thresholds="all",
            max_cache_size=50,
            wipe_strategy="descendants",
        )
        with pytest.raises(ValueError, match=wording):
            clf.fit(X, y)
    # without thresholds it is a valid 0/1 strategy
    X01 = (few > 1).astype(int)
    DL85Classifier(max_depth=2, wipe_strategy="descendants").fit(X01, y)


@pytest.mark.parametrize("factor", [0.0, -0.5, 1.5])
def test_bad_wipe_factor_is_refused_by_every_cache(factor):
    wording = rf"wipe_factor={factor!r} is not in \(0, 1\]"
    with pytest.raises(ValueError, match=wording):
        TrieCache(3).configure(20, factor, "reuses")
    with pytest.raises(ValueError, match=wording):
        BoxCache(20, factor, "reuses")
