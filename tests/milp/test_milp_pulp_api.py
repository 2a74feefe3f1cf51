"""The PuLP helpers give the same model on PuLP 3 (Python 3.10, 3.11) and
PuLP 4 (Python >= 3.12): built from terms, read back, edited, solved."""

import numpy as np
import pulp
import pytest

from odtstudy._deadline import Deadline
from odtstudy.milp._export import export_model
from odtstudy.milp._pulp_api import (
    add_constraint,
    affine,
    cbc_command,
    constraint_list,
    constraint_terms,
    set_coefficient,
    solve_status,
)
from odtstudy.milp._solvers import solve


def _knapsack():
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 5, a + b + c >= 1, a - b == 0
    (binary): as a minimisation of the negated values."""
    prob = pulp.LpProblem("knapsack", pulp.LpMinimize)
    a, b, c = (prob.add_variable(n, 0, 1, cat="Binary") for n in "abc")
    prob.setObjective(affine([(a, -5.0), (b, -4.0), (c, -3.0)]))
    add_constraint(prob, {a: 2, b: 3, c: 1}, "<=", 5, "weight")
    add_constraint(prob, [(a, 1), (b, 1), (c, 1)], ">=", 1, "some")
    add_constraint(prob, {a: 1, b: -1}, "==", 0, "tied")
    return prob, (a, b, c)


def test_constraints_read_back_as_built():
    prob, (a, b, c) = _knapsack()
    cons = constraint_list(prob)
    assert [len(con) for con in cons] == [3, 3, 2]
    assert dict(constraint_terms(cons[0])) == {a: 2, b: 3, c: 1}
    model = export_model(prob)
    np.testing.assert_allclose(model.cost, [-5, -4, -3])
    np.testing.assert_allclose(model.row_lower, [-np.inf, 1, 0])
    np.testing.assert_allclose(model.row_upper, [5, np.inf, 0])
    np.testing.assert_allclose(model.matrix().toarray()[2], [1, -1, 0])
    assert model.integer.all()


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_model_built_from_terms_solves_to_its_optimum(solver):
    prob, variables = _knapsack()
    info = solve(prob, solver, deadline=Deadline(30))
    assert info.proven_optimal and info.objective == pytest.approx(-9.0)
    assert [round(v.varValue) for v in variables] == [1, 1, 0]


def test_unknown_sense_is_refused():
    prob, (a, _, _) = _knapsack()
    with pytest.raises(ValueError, match="sense"):
        add_constraint(prob, {a: 1}, "<", 1)


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_a_column_added_to_stored_rows_changes_the_lp(solver):
    # max x + y s.t. x + 2y <= 4 (y enters the row after it was added)
    prob = pulp.LpProblem("columns", pulp.LpMaximize)
    x = prob.add_variable("x", 0, 1)
    row = add_constraint(prob, {x: 1.0}, "<=", 4.0, "row")
    y = prob.add_variable("y", 0, None)
    set_coefficient(row, y, 2.0)
    prob.setObjective(affine({x: 1.0, y: 1.0}))
    engine = pulp.HiGHS(msg=False) if solver == "highs" else cbc_command(msg=False)
    optimal, status = solve_status(prob, engine)
    assert optimal, status
    assert prob.objective.value() == pytest.approx(2.5)
    assert dict(constraint_terms(row)) == {x: 1.0, y: 2.0}


def test_infeasible_lp_reports_its_status():
    prob = pulp.LpProblem("infeasible", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 1)
    prob.setObjective(affine({x: 1.0}))
    add_constraint(prob, {x: 1.0}, ">=", 2.0)
    optimal, status = solve_status(prob, pulp.HiGHS(msg=False))
    assert not optimal and "nfeasible" in status
