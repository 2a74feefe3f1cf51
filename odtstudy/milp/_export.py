"""A PuLP model as arrays: what the solver processes read.

The MILP learners build their models with PuLP; :func:`export_model` turns
one into a row-wise sparse matrix with bounds, integrality and the warm start,
checking the fit's deadline as it goes. Both solver back-ends start from it
(HiGHS reads the arrays, CBC an MPS file written from them), and the solution
vector comes back through :meth:`MatrixModel.assign`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pulp
import scipy.sparse as sp

from odtstudy._deadline import Deadline
from odtstudy.milp._pulp_api import constraint_list, constraint_terms, variable_key

__all__ = ["MatrixModel", "export_model"]

_CHECK_EVERY = 20_000  # coefficients between two looks at the clock


@dataclass
class MatrixModel:
    """``min cost x + offset`` s.t. ``row_lower <= A x <= row_upper``, bounds.

    Attributes
    ----------
    variables : list of pulp.LpVariable
        Column ``j`` is ``variables[j]``.
    cost, col_lower, col_upper : ndarray of float
        Infinite bounds are ``-inf`` / ``inf``.
    integer : ndarray of bool
    row_lower, row_upper : ndarray of float
    indptr, indices, values : ndarray
        ``A`` in CSR form.
    offset : float
        Constant of the objective.
    start : ndarray of float
        The variables' initial values (``nan`` where none is set).
    count : ndarray of float or None
        0/1 over the columns: the sum a solver's trace records at each
        incumbent (the learner's errors); ``None`` when not asked for.
    """

    variables: list
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    offset: float
    start: np.ndarray
    count: np.ndarray | None = None

    @property
    def n_cols(self) -> int:
        return len(self.cost)

    @property
    def n_rows(self) -> int:
        return len(self.row_lower)

    @property
    def n_nonzeros(self) -> int:
        return len(self.values)

    @property
    def has_start(self) -> bool:
        """True when every variable has an initial value."""
        return bool(self.n_cols) and not np.isnan(self.start).any()

    def matrix(self) -> sp.csr_matrix:
        return sp.csr_matrix(
            (self.values, self.indices, self.indptr), shape=(self.n_rows, self.n_cols)
        )

    def objective(self, x) -> float:
        return float(self.cost @ x + self.offset)

    def is_feasible(self, x, tol=1e-6) -> bool:
        """Whether ``x`` satisfies bounds, integrality and rows within ``tol``."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_cols,) or not np.isfinite(x).all():
            return False
        if np.any(x < self.col_lower - tol) or np.any(x > self.col_upper + tol):
            return False
        xi = x[self.integer]
        if np.any(np.abs(xi - np.round(xi)) > tol):
            return False
        activity = self.matrix() @ x
        scale = tol * np.maximum(1.0, np.abs(activity))
        return bool(
            np.all(activity >= self.row_lower - scale)
            and np.all(activity <= self.row_upper + scale)
        )

    def assign(self, x) -> None:
        """Set the PuLP variables' values to ``x``."""
        for var, value in zip(self.variables, np.asarray(x, dtype=float).tolist()):
            var.varValue = value


def _indicator(column, variables, n_cols):
    vector = np.zeros(n_cols)
    vector[[column[variable_key(var)] for var in variables]] = 1.0
    return vector


def _bound(value, default):
    return default if value is None else float(value)


def export_model(
    prob: pulp.LpProblem, deadline: Deadline | None = None, count=None
) -> MatrixModel:
    """The arrays of ``prob`` (a minimisation); ``count`` (PuLP variables or
    ``None``) gives :attr:`MatrixModel.count`.

    Raises
    ------
    odtstudy._deadline.DeadlineReached
        When ``deadline`` passes during the export.
    """
    if prob.sense != pulp.LpMinimize:
        raise ValueError("only minimisation problems are exported")
    deadline = Deadline.of(deadline)
    variables = list(prob.variables())
    column = {variable_key(var): j for j, var in enumerate(variables)}
    n_cols = len(variables)
    cost = np.zeros(n_cols)
    for var, coef in prob.objective.items():
        cost[column[variable_key(var)]] = coef
    col_lower = np.array([_bound(v.lowBound, -np.inf) for v in variables], dtype=float)
    col_upper = np.array([_bound(v.upBound, np.inf) for v in variables], dtype=float)
    integer = np.array([v.cat == pulp.LpInteger for v in variables], dtype=bool)
    start = np.array(
        [np.nan if v.varValue is None else float(v.varValue) for v in variables]
    )

    constraints = constraint_list(prob)
    n_rows = len(constraints)
    row_lower = np.empty(n_rows)
    row_upper = np.empty(n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    indices, values = [], []
    next_check = 0
    for i, con in enumerate(constraints):
        if len(values) >= next_check:
            deadline.check("while exporting the MILP")
            next_check = len(values) + _CHECK_EVERY
        terms = constraint_terms(con)
        indices.extend(column[variable_key(var)] for var, _ in terms)
        values.extend(coef for _, coef in terms)
        indptr[i + 1] = len(values)
        row_lower[i] = _bound(con.getLb(), -np.inf)
        row_upper[i] = _bound(con.getUb(), np.inf)
    deadline.check("while exporting the MILP")
    return MatrixModel(
        variables=variables,
        cost=cost,
        col_lower=col_lower,
        col_upper=col_upper,
        integer=integer,
        row_lower=row_lower,
        row_upper=row_upper,
        indptr=indptr,
        indices=np.asarray(indices, dtype=np.int32),
        values=np.asarray(values, dtype=float),
        offset=float(prob.objective.constant),
        start=start,
        count=None if count is None else _indicator(column, count, n_cols),
    )
