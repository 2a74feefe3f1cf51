"""Oracles of methods.md for BinOCT (section 1) and OCT (section 2)."""

import itertools

import numpy as np
import pytest

from odtstudy.milp import BinOCTClassifier, OCTClassifier
from odtstudy.milp._binoct import (
    bst_decode,
    bst_encode,
    n_bits,
    routing_rules,
    threshold_candidates,
)

SOLVERS = ["cbc", "highs"]
LEARNERS = [BinOCTClassifier, OCTClassifier]

X6 = np.arange(1, 7, dtype=float).reshape(-1, 1)
Y6 = np.array([0, 0, 1, 1, 1, 0])

# T11 (thesis Table 4.1): features A, B, C -> class
T11 = [
    "0110", "1011", "0011", "0100", "1001", "0000",
    "0010", "1101", "0001", "0010", "0001",
]  # fmt: skip
X11 = np.array([[int(c) for c in row[:3]] for row in T11], dtype=float)
Y11 = np.array([int(row[3]) for row in T11])


def test_binoct_cuts_of_the_six_point_example():
    cuts = threshold_candidates(X6, Y6)
    assert cuts[0].tolist() == [2.5, 5.5]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("learner", LEARNERS)
@pytest.mark.parametrize(("depth", "expected"), [(1, 1), (2, 0)])
def test_six_point_example(learner, solver, depth, expected):
    est = learner(max_depth=depth, solver=solver).fit(X6, Y6)
    assert est.objective_ == expected
    assert est.optimal_ and est.status_ == "optimal"
    assert est.lower_bound_ == expected
    assert np.sum(est.predict(X6) != Y6) == expected
    if depth == 1:
        assert est.tree_.threshold[0] == pytest.approx(2.5)


@pytest.mark.parametrize("learner", LEARNERS)
@pytest.mark.parametrize(("depth", "expected"), [(1, 3), (2, 3), (3, 2)])
def test_t11(learner, depth, expected):
    est = learner(max_depth=depth).fit(X11, Y11)
    assert est.optimal_
    assert est.objective_ == expected
    assert np.sum(est.predict(X11) != Y11) == expected


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("warm_start", [True, False])
def test_oct_non_split_cannot_partition_for_free(solver, warm_start):
    # without the (1 + eps_max)(1 - d) fix the model reports 0 errors here
    X = np.array([[0.0], [0.0]])
    y = np.array([0, 1])
    est = OCTClassifier(max_depth=1, solver=solver, warm_start=warm_start).fit(X, y)
    assert est.objective_ == 1
    assert est.stats_["milp_errors"] == pytest.approx(1)
    assert est.lower_bound_ == 1


def _forbidden_sides(K, bits):
    """Sides each value 0..K may not take under the active rules of one node."""
    forbidden = {v: set() for v in range(K + 1)}  # value v lies between cuts
    for rule in routing_rules(K):
        if all(bits[k] for k in rule.ones) and not any(bits[k] for k in rule.zeros):
            # value v has exactly v cuts below it (cut c_k = k + 0.5)
            for v in range(rule.lo + 1, rule.hi + 1):
                forbidden[v].add(rule.forbidden)
    return forbidden


@pytest.mark.parametrize("K", range(1, 21))
def test_bit_scheme_forces_exactly_the_decoded_threshold(K):
    B = n_bits(K)
    for bits in itertools.product((0, 1), repeat=B):
        tau = bst_decode(K, bits)
        forbidden = _forbidden_sides(K, bits)
        for v, sides in forbidden.items():
            expected = {"right"} if v <= tau else {"left"}  # v < c_tau = tau + .5
            assert sides == expected, (K, bits, tau, v)
    for tau in range(K):
        assert bst_decode(K, bst_encode(K, tau, B)) == tau


def test_binary_data_special_cases():
    from odtstudy.milp._binoct import BinOCTModel
    from odtstudy.milp._oct import OCTModel

    binoct = BinOCTModel(X11, Y11, 2, 2)
    assert binoct.B == 0  # 0/1 data: one cut per feature, no threshold bits
    assert all(c.tolist() == [0.5] for c in binoct.cuts)
    assert not any(v.name.startswith("q") for v in binoct.prob.variables())
    oct_model = OCTModel(X11, Y11, 2, 2)
    assert oct_model.binary and oct_model.b is None  # variant without b
    assert OCTModel(X6, Y6, 2, 1).b is not None


@pytest.mark.parametrize("solver", SOLVERS)
def test_binoct_warm_start_reproduces_cart(solver):
    est = BinOCTClassifier(max_depth=2, solver=solver).fit(X11, Y11)
    assert est.stats_["warm_start_objective"] == est.stats_["cart_objective"]
