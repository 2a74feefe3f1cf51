"""The search skeleton both DL8.5 searches share (``_skeleton.pyx``).

What the skeleton added to the numeric search is checked against the brute
force: its failure bound (``max(lb, ub, min_lb)``, and the best tree known
proved optimal when that bound reaches it) under a ``max_error`` and a
bounded cache that wipes what it stored; and the root's bound and loss
that ``run`` answers on both searches.
"""

from __future__ import annotations

import math

import bruteforce
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from odtstudy.dl85.engine._numeric import NumericSearcher
from odtstudy.dl85.engine._objective import make_objective
from odtstudy.dl85.engine._search import Searcher
from odtstudy.dl85.engine._skeleton import Skeleton

import odtstudy.dl85.engine._numeric_fit as nf
from odtstudy.dl85 import DL85Classifier
from odtstudy.dl85.engine import _bitset
from odtstudy.dl85.estimators import _classes

SETTINGS = settings(max_examples=40, deadline=None)
# max_error minus the optimum: a tie only on integer (unweighted) losses
ABOVE = [-1.0, -1e-6, 0.0, 1e-6, 0.5]


@pytest.fixture(scope="module")
def numeric_search():
    """Numeric data goes to the numeric search (never to threshold columns)."""
    saved = (nf.BITSET_MAX_THRESHOLDS, nf.BITSET_MAX_MEAN)
    nf.BITSET_MAX_THRESHOLDS = nf.BITSET_MAX_MEAN = -1
    yield
    nf.BITSET_MAX_THRESHOLDS, nf.BITSET_MAX_MEAN = saved


@st.composite
def problems(draw):
    """A small numeric table with ties, two or three classes, and weights."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(6, 30))
    m = draw(st.integers(1, 3))
    X = rng.integers(0, draw(st.integers(2, 6)), size=(n, m)).astype(float)
    y = rng.integers(0, draw(st.integers(2, 3)), size=n)
    y[:2] = [0, 1]
    y = np.unique(y, return_inverse=True)[1]
    w = None
    if draw(st.booleans()):
        w = np.round(rng.uniform(0.1, 3.0, size=n), 3)
    return X, y, w, draw(st.integers(1, 3)), draw(st.integers(1, 2))


def _numeric_searcher(X, y, depth, min_sup, w, **options):
    cuts = [bruteforce_cuts(X[:, j]) for j in range(X.shape[1])]
    rank, n_thr, _ = nf._ranks(X, cuts)
    n_classes = int(y.max()) + 1
    stats = nf.class_stats(y, n_classes, w)
    worst = np.ones(len(y)) if w is None else np.asarray(w, float)
    objective = make_objective(
        "error" if w is None else "weighted",
        np.zeros((0, 1), dtype=np.uint64),
        len(y),
        y_class=y.astype(np.int32),
        n_classes=n_classes,
        weights=w,
        min_sup=min_sup,
        bitsets=False,
    )
    return NumericSearcher(
        rank, n_thr, stats, objective, depth, min_sup=min_sup, worst=worst, **options
    )


def bruteforce_cuts(values):
    """Every split between consecutive distinct values (as the brute force)."""
    return np.unique(values)[:-1]


@SETTINGS
@given(problems(), st.sampled_from(ABOVE), st.sampled_from([0, 3]))
def test_numeric_max_error_and_tiny_cache_equal_bruteforce(
    numeric_search, problem, above, extra
):
    """Under ``max_error`` (around the optimum) and a bounded cache at its
    smallest, a fit is infeasible exactly when no tree beats ``max_error``,
    and otherwise proves the brute force's optimum."""
    X, y, w, depth, min_sup = problem
    assume(above != 0.0 or w is None)
    opt = bruteforce.optimal_error(X, y, depth, min_sup=min_sup, weights=w)
    max_error = max(opt + above, 0.25)  # the estimator takes max_error > 0
    clf = DL85Classifier(
        max_depth=depth,
        min_sup=min_sup,
        thresholds="all",
        max_error=max_error,
        max_cache_size=depth + 1 + extra,
        cache="hash",
    ).fit(X, y, sample_weight=w)
    case = (X.tolist(), y.tolist(), w, depth, min_sup, max_error)
    if opt >= max_error:
        assert clf.status_ == "infeasible", case
        assert max_error <= clf.lower_bound_ <= opt + 1e-9, case
    else:
        assert clf.optimal_, case
        assert clf.objective_ == pytest.approx(opt, abs=1e-9), case
        assert clf.training_error(X, y, w) == pytest.approx(opt, abs=1e-9), case


@SETTINGS
@given(problems(), st.sampled_from(ABOVE), st.booleans())
def test_numeric_root_bound_is_sound_and_reaches_max_error(problem, above, bounded):
    """``run(max_error)`` with no tree below ``max_error``: the root's bound
    lies in ``[max_error, optimum]`` (the failure bound includes the upper
    bound the node was searched under)."""
    X, y, w, depth, min_sup = problem
    assume(above != 0.0 or w is None)
    opt = bruteforce.optimal_error(X, y, depth, min_sup=min_sup, weights=w)
    max_error = max(opt + above, 0.0)
    searcher = _numeric_searcher(
        X, y, depth, min_sup, w, max_cache_size=depth + 2 if bounded else 0
    )
    err, lb = searcher.run(max_error, 0.0)
    case = (X.tolist(), y.tolist(), w, depth, min_sup, max_error)
    if opt < max_error:
        assert err == pytest.approx(opt, abs=1e-9) and lb == err, case
        feature, _, _, _, _, loss = searcher.tree_arrays()
        leaves = sum(v for v, f in zip(loss, feature) if f < 0)
        assert leaves == pytest.approx(opt, abs=1e-9), case
    else:
        # an exact optimum may be answered when the bound proves it
        assert err == math.inf or err == pytest.approx(opt, abs=1e-9), case
        assert max_error - 1e-12 <= lb <= opt + 1e-9, case


@SETTINGS
@given(problems(), st.sampled_from(ABOVE))
def test_binary_root_bound_is_sound_and_reaches_max_error(problem, above):
    """The same answer from the 0/1 search (same skeleton) on 0/1 data."""
    X, y, w, depth, min_sup = problem
    assume(above != 0.0 or w is None)
    Xb = (X >= np.median(X, axis=0)).astype(np.uint8)
    opt = bruteforce.optimal_error(Xb, y, depth, min_sup=min_sup, weights=w)
    max_error = max(opt + above, 0.0)
    searcher = Searcher(
        _bitset.pack_columns(np.ascontiguousarray(Xb)),
        _classes._pack_classes(y, int(y.max()) + 1),
        Xb.shape[0],
        depth,
        min_sup=min_sup,
        weights=w,
    )
    err, lb = searcher.run(max_error)
    if opt < max_error:
        assert err == pytest.approx(opt, abs=1e-9) and lb == err
        feature, _, _, _ = searcher.tree_arrays()
        loss = searcher.node_losses()
        assert sum(v for v, f in zip(loss, feature) if f < 0) == pytest.approx(opt)
    else:
        assert err == math.inf or err == pytest.approx(opt, abs=1e-9)
        assert max_error - 1e-12 <= lb <= opt + 1e-9


def test_both_searches_answer_the_same_trace_and_counters():
    """One ``run`` / ``anytime`` / rebuild for both: the same shape of
    answers on the same problem (both prove the same optimum)."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 5)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int) ^ (rng.random(60) < 0.2)).astype(int)
    binary = Searcher(
        _bitset.pack_columns(np.ascontiguousarray(X.astype(np.uint8))),
        _classes._pack_classes(y, 2),
        60,
        3,
    )
    numeric = _numeric_searcher(X, y, 3, 1, None)
    answers = [s.run() for s in (binary, numeric)]
    assert answers[0] == answers[1]
    assert answers[0][0] == bruteforce.optimal_error(X, y, 3)
    for s in (binary, numeric):
        trace = s.anytime()
        assert trace[-1][1] == trace[-1][2] == answers[0][0]
        assert trace[0][1] == s.root_leaf_loss()
        stats = s.stats()
        assert stats["reconstituted_nodes"] == 0
        assert stats["itemsets_explored"] > 0


def test_the_skeleton_alone_does_not_search():
    with pytest.raises(TypeError, match="Searcher or a NumericSearcher"):
        Skeleton().run()
