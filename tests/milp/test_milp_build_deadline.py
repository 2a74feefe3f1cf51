"""Building a MILP model honours the fit's deadline.

A complete tree of depth 14 has 32,767 nodes: FlowOCT's model on 12 rows holds
about 737,000 variables, which PuLP used to make in one call that never looked
at the clock. Every fit here runs in a child interpreter (a fit that overruns
fails the test instead of stalling it), timed there around ``fit``, and must
return within the contract, ``1.1 T + 1`` s, with a tree no worse than CART
and no claim of optimality it cannot back.
"""

import json
import textwrap

import numpy as np
import pytest
from subproc import run_ok

from odtstudy._deadline import allowed_fit_time
from odtstudy.milp._flow_tree import FlowTree, reduce_data, terminals

LEARNERS = ("BinOCTClassifier", "OCTClassifier", "FlowOCTClassifier",
            "BendersOCTClassifier")  # fmt: skip

# Defines fit_timed(learner, params, X, y): fits the MILP (or CP-SAT) learner
# of that name and prints one JSON line.
FIT_TIMED = """
import json, time
import numpy as np
import odtstudy.cp as cp
import odtstudy.milp as milp

def rows(n, n_features=20, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = (0, 1)  # two classes, even on two rows
    return rng.integers(0, 2, (n, n_features)), y

def fit_timed(learner, params, X, y):
    est = getattr(milp, learner, None) or getattr(cp, learner)
    est = est(**params)
    start = time.perf_counter()
    est.fit(X, y)
    elapsed = time.perf_counter() - start
    errors = int(np.sum(est.predict(X) != y))
    print(json.dumps(dict(
        learner=learner, params=params, n=len(y), elapsed=elapsed,
        status=est.status_, optimal=bool(est.optimal_),
        objective=est.objective_, errors=errors, lower_bound=est.lower_bound_,
        solver_status=est.stats_.get("solver_status"),
        returned=est.stats_.get("returned"),
        cart=est.stats_.get("cart_objective"),
    )))
"""


def _fits(code, timeout=240) -> list[dict]:
    lines = run_ok(FIT_TIMED + textwrap.dedent(code), timeout=timeout)
    return [json.loads(line) for line in lines if line.startswith("{")]


def _holds_the_contract(fit) -> None:
    limit = fit["params"]["time_limit"]
    assert fit["elapsed"] <= allowed_fit_time(limit), fit
    assert fit["objective"] == fit["errors"], fit  # the tree returned
    if fit["cart"] is not None:
        assert fit["objective"] <= fit["cart"], fit
    if fit["optimal"]:
        assert fit["status"] == "optimal" and fit["lower_bound"] == fit["objective"]
    else:
        assert fit["status"] in ("timeout", "feasible"), fit


def _built_too_late(fit) -> None:
    """The deadline passed while the model was built: CART's tree, a
    time-out, no claim."""
    assert fit["status"] == "timeout" and not fit["optimal"], fit
    assert fit["returned"] == "cart", fit
    assert fit["solver_status"].startswith("not run: time limit reached"), fit


@pytest.mark.parametrize(
    "learner, solver",
    [("FlowOCTClassifier", "cbc"), ("BendersOCTClassifier", "highs")],
)
def test_depth_14_on_12_rows_stops_building_at_the_limit(learner, solver):
    (fit,) = _fits(
        f"""
        X, y = rows(12, n_features=40)
        fit_timed({learner!r}, dict(max_depth=14, time_limit=2, solver={solver!r}),
                  X, y)
        """
    )
    _holds_the_contract(fit)
    _built_too_late(fit)


def test_flowoct_depth_8_on_german_credit_stops_at_the_limit():
    (fit,) = _fits(
        """
        from odtstudy.datasets import load_dataset
        data = load_dataset("german-credit")
        fit_timed("FlowOCTClassifier",
                  dict(max_depth=8, time_limit=1, solver="highs"), data.X, data.y)
        """
    )
    _holds_the_contract(fit)
    _built_too_late(fit)


def test_flow_models_route_rows_below_node_127():
    # node numbers past 127 overflowed the int8 features while routing rows
    data = reduce_data(np.eye(9, 8), np.arange(9) % 2, 2)
    chain = FlowTree({2**d: 0 if d == 0 else d for d in range(8)}, {})
    chain.labels.update({2 * n + 1: 0 for n in chain.splits} | {256: 0})
    ends = {2 * 2**d + 1 for d in range(8)} | {256}  # one row each
    assert sorted(terminals(data, chain).tolist()) == sorted(ends)


def _sweep(sizes, depths, solvers=("cbc", "highs"), time_limit=1):
    code = "\n".join(
        f"X, y = rows({n})\n"
        f"fit_timed({learner!r}, dict(max_depth={depth}, time_limit={time_limit}, "
        f"solver={solver!r}), X, y)"
        for learner in LEARNERS
        for depth in depths
        for n in sizes(depth)
        for solver in solvers
    )
    fits = _fits(code, timeout=600)
    assert len(fits) == code.count("fit_timed(")
    for fit in fits:
        _holds_the_contract(fit)
    return fits


def test_every_formulation_keeps_the_deadline_at_depth_14():
    # two rows: the fewest a classifier takes (one row has one class)
    fits = _sweep(lambda depth: (2, 12), depths=(14,), solvers=("highs",))
    assert sum(fit["returned"] == "cart" for fit in fits) >= len(LEARNERS)


@pytest.mark.slow
def test_every_formulation_keeps_the_deadline_on_small_data():
    _sweep(lambda depth: (2, 12), depths=(8, 14))


@pytest.mark.slow
def test_every_formulation_keeps_the_deadline_on_the_largest_data():
    # the most rows check_complete_tree allows at each depth (2**22 row-leaf
    # pairs), and 50,000 rows at the deepest depth that allows them
    fits = _sweep(lambda depth: (2**22 // 2**depth,), depths=(6, 8, 14))
    fits += _sweep(lambda depth: (50_000,), depths=(1,))
    for fit in fits:
        _built_too_late(fit)


def test_cpsat_depth_14_stops_building_at_the_limit():
    # the same gap in the CP-SAT model: its branch variables and its
    # no-feature-twice-on-a-path clauses (2**14 positions, 40 features)
    (fit,) = _fits(
        """
        X, y = rows(12, n_features=40)
        fit_timed("CPSATClassifier", dict(max_depth=14, time_limit=2), X, y)
        """
    )
    _holds_the_contract(fit)
    assert fit["status"] == "timeout" and not fit["optimal"], fit
