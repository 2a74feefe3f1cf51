"""Anytime traces of BinOCT / OCT: CART's tree, then the solver's progress."""

import itertools
import math

import numpy as np
import pytest

from odtstudy._deadline import Deadline
from odtstudy.milp import BinOCTClassifier, OCTClassifier
from odtstudy.milp._anytime import anytime_trace, integral
from odtstudy.milp._cbc_log import cbc_progress, wall_per_cpu
from odtstudy.milp._highs import _read_trace

# lines of real CBC logs: CBC "Devel" (the cbcbox wheel of PuLP 4) on BinOCT
# and OCT, CBC 2.10.3 (bundled with PuLP 3.3)
_CBC_DEVEL = """\
Cbc0045I MIPStart provided solution with cost 12
Cbc0012I Integer solution of 12 found by Reduced search after 0 iterations and 0 nodes (0.17 seconds)
Cbc0046I Root node pass 55, 211 rows, 68 total tight cuts  -  objective 0 (1.20 seconds)
Cbc0014I Cut generator 0 (Probing) - 6546 row cuts average 2.4 elements, 0 column cuts (0 active)  in 0.482 seconds - new frequency is 1
Cbc0010I After 0 nodes, 1 on tree, 12 best solution, best possible 0 (2.14 seconds)
Cbc0004I Integer solution of 11 found after 15834 iterations and 42 nodes (2.33 seconds)
Cbc0012I Integer solution of 11 found by heuristic after 15798 iterations and 41 nodes (2.33 seconds)
Cbc0004I Integer solution of 10 found after 16271 iterations and 54 nodes (2.36 seconds)
Cbc0010I After 251 nodes, 1 on tree, 10 best solution, best possible 0 (2.84 seconds)
Cbc0001I Search completed - best objective 10, took 51109 iterations and 1223 nodes (4.35 seconds)
Total time (CPU seconds):       4.37816   (Wallclock seconds):       4.6956
"""  # noqa: E501
_CBC_PARTIAL = """\
Cbc0012I Integer solution of 0.9 found by Reduced search after 0 iterations and 0 nodes (0.10 seconds)
Cbc0010I After 3370 nodes, 9 on tree, 0.9 best solution, best possible 0 (3.11 seconds)
Cbc0027I Exiting on user event
Cbc0005I Partial search - best objective 0.9 (best possible 0), took 84504 iterations and 3805 nodes (3.42 seconds)
Total time (CPU seconds):       3.44515   (Wallclock seconds):       3.96652
"""  # noqa: E501
_CBC_2_10 = """\
Cbc0038I Solution found of 9
Cbc0012I Integer solution of 3 found by feasibility pump after 0 iterations and 0 nodes (0.28 seconds)
Cbc0010I After 0 nodes, 1 on tree, 3 best solution, best possible 0 (0.76 seconds)
Cbc0001I Search completed - best objective 3, took 7660 iterations and 30 nodes (0.88 seconds)
Total time (CPU seconds):       0.91   (Wallclock seconds):       3.18
"""  # noqa: E501


def test_cbc_log_gives_incumbents_and_bounds_in_log_order():
    assert cbc_progress(_CBC_DEVEL) == [
        (0.17, 12.0, None),
        (2.14, 12.0, 0.0),
        (2.33, 11.0, None),
        (2.33, 11.0, None),
        (2.36, 10.0, None),
        (2.84, 10.0, 0.0),
        (4.35, 10.0, None),
    ]
    assert cbc_progress(_CBC_PARTIAL) == [
        (0.10, 0.9, None),
        (3.11, 0.9, 0.0),
        (3.42, 0.9, 0.0),
    ]
    assert cbc_progress(_CBC_2_10) == [
        (0.28, 3.0, None),
        (0.76, 3.0, 0.0),
        (0.88, 3.0, None),
    ]


def test_cbc_log_without_incumbent_or_cut_short_gives_what_it_holds():
    no_incumbent = (
        "Cbc0010I After 100 nodes, 7 on tree, 1e+50 best solution, "
        "best possible 2.5 (1.50 seconds)\n"
    )
    assert cbc_progress(no_incumbent) == [(1.5, None, 2.5)]
    cut = _CBC_2_10[: _CBC_2_10.index("(0.76")]
    assert cbc_progress(cut) == [(0.28, 3.0, None)]
    assert cbc_progress("") == []
    assert cbc_progress("garbage\n\x00Cbc0010I After x nodes") == []


def test_cbc_clock_is_scaled_by_its_wall_per_cpu_ratio():
    assert wall_per_cpu(_CBC_2_10, None, None) == pytest.approx(3.18 / 0.91)
    # no closing line (interrupted): the process's own times
    assert wall_per_cpu("", elapsed=3.0, cpu=2.0) == pytest.approx(1.5)
    assert wall_per_cpu("", elapsed=None, cpu=None) == 1.0


def test_trace_keeps_improvements_only_and_ends_with_the_fit():
    points = [
        (0.5, 11.0, 0.0),
        (0.1, 12.0, None),  # out of order: sorted by time
        (0.7, 11.0, 0.0),  # nothing new
        (0.9, 9.0, None),  # below objective_: the fit never held it
        (1.2, None, 4.0),  # a bound alone
        (9.0, 10.0, 12.0),  # past the end; bound above the incumbent
    ]
    trace = anytime_trace(points, objective=10.0, bound=10.0, end=2.0)
    assert trace == [
        [0.1, 12.0],
        [0.5, 11.0, 0.0],
        [1.2, 11.0, 4.0],
        [2.0, 10.0, 10.0],
    ]


def test_trace_without_points_is_the_final_result():
    assert anytime_trace([], objective=3.0, bound=None, end=1.5) == [[1.5, 3.0]]


def test_counts_are_rounded_within_the_solver_tolerance():
    assert integral(10.999999) == 11.0
    assert integral(9.999999999994921) == 10.0
    assert integral(2.5) == 2.5
    assert integral(math.nan) is None
    assert integral(None) is None


def test_highs_trace_file_cut_by_a_kill_gives_its_whole_lines(tmp_path):
    deadline = Deadline(None, start=100.0)
    path = tmp_path / "trace.txt"
    path.write_text("100.5 12.0 0.0 12.0\n101.0 inf 3.5 nan\n101.2 11.0 4")
    assert _read_trace(str(path), deadline, end=5.0) == [
        (0.5, 12.0, 0.0, 12.0),
        (1.0, None, 3.5, None),
    ]
    assert _read_trace(str(tmp_path / "absent.txt"), deadline, end=5.0) == []


def _data():
    # 24 rows, 5 binary features: CART (4 errors at depth 2) is not optimal
    # (3); the MILPs prove it in a few hundred nodes
    rng = np.random.default_rng(10)
    X = rng.integers(0, 2, size=(24, 5)).astype(float)
    y = ((X[:, 0] + X[:, 1] + X[:, 2] + rng.random(24) * 1.2) > 1.8).astype(int)
    return X, y


def _check_trace(est):
    trace = est.stats_["anytime"]
    assert trace, "no anytime trace"
    times = [p[0] for p in trace]
    objectives = [p[1] for p in trace]
    assert times == sorted(times)
    assert 0.0 <= times[0] and times[-1] <= est.fit_time_
    assert all(a >= b for a, b in itertools.pairwise(objectives))
    bounds = [p[2] for p in trace if len(p) > 2]
    assert bounds == sorted(bounds)
    assert all(p[2] <= p[1] for p in trace if len(p) > 2)
    assert objectives[0] == est.stats_["cart_objective"]
    assert objectives[-1] == est.objective_
    return trace


@pytest.mark.parametrize("solver", ["cbc", "highs"])
@pytest.mark.parametrize("learner", [BinOCTClassifier, OCTClassifier])
def test_trace_follows_the_solver_to_the_proven_optimum(learner, solver):
    X, y = _data()
    est = learner(max_depth=2, solver=solver, time_limit=60).fit(X, y)
    assert est.optimal_ and est.objective_ == 3.0
    assert est.stats_["cart_objective"] == 4.0
    trace = _check_trace(est)
    assert trace[-1][2] == est.lower_bound_ == est.objective_
    # the improvement is the solver's, seen before the solve ended
    assert any(p[1] == est.objective_ for p in trace[:-1])


def test_penalised_oct_counts_highs_incumbents_in_errors():
    # alpha > 0: the MILP's objective does not give the errors; HiGHS's
    # incumbents are counted from their error variables
    X, y = _data()
    est = OCTClassifier(max_depth=2, alpha=0.01, solver="highs", time_limit=60)
    est.fit(X, y)
    trace = _check_trace(est)
    assert est.optimal_
    assert any(p[1] == est.objective_ for p in trace[:-1])
    assert all(float(p[1]).is_integer() for p in trace)


def test_penalised_oct_on_cbc_leaves_out_incumbents_known_by_objective_only():
    X, y = _data()
    est = OCTClassifier(max_depth=2, alpha=0.01, solver="cbc", time_limit=60)
    est.fit(X, y)
    trace = _check_trace(est)
    assert est.optimal_ and est.objective_ < est.stats_["cart_objective"]
    assert [p[1] for p in trace[:-1]] == [est.stats_["cart_objective"]] * (
        len(trace) - 1
    )


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_trace_of_a_fit_stopped_at_its_limit_holds_what_the_fit_had(solver):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(120, 12)).astype(float)
    y = (X[:, :6].sum(axis=1) + rng.random(120) * 2 > 4).astype(int)
    est = BinOCTClassifier(max_depth=3, solver=solver, time_limit=1.5).fit(X, y)
    assert not est.optimal_
    _check_trace(est)
