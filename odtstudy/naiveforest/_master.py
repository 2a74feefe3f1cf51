"""Restricted master problems of the boosting column generation.

Two masters share one small interface (``add_column``, ``solve``):

- :class:`LPBoostMaster`: the soft-margin LP of LPBoost (Rätsch form, as in
  Aglin's thesis, eq. 6.9), built with PuLP and solved by HiGHS; the sample
  weights are the duals of the margin rows (``constraint.pi``).
- :class:`MDBoostMaster`: the convex QP of MDBoost (Shen and Li, eq. 6.11),
  solved with highspy directly in the sparse-Hessian form of methods.md §6
  (free ``mu`` and ``sigma_i = rho_i - mu``); the sample weights follow from
  the primal as ``u = 1 - A rho``.

A column is the vector ``a_t`` with ``a_it = +1`` when tree ``t`` classifies
row ``i`` correctly and ``-1`` otherwise. Both masters return a
:class:`MasterSolution` holding the primal objective, the tree weights, the
sample weights ``u``, the dual threshold ``beta`` (``max_t u . a_t``) and the
dual objective, so callers can check primal = dual.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pulp

from odtstudy.milp._pulp_api import (
    add_constraint,
    affine,
    cbc_command,
    set_coefficient,
    solve_status,
)
from odtstudy.milp._solvers import check_solver_available
from odtstudy.naiveforest._bounded import BoundedSolves

__all__ = [
    "HighsLPBoostMaster",
    "LPBoostMaster",
    "MDBoostMaster",
    "MasterSolution",
    "make_master",
]


@dataclass
class MasterSolution:
    """Solution of a restricted master problem.

    Attributes
    ----------
    objective : float
        Primal objective (maximised).
    weights : ndarray of shape (n_columns,)
        Tree weights ``w``.
    sample_weights : ndarray of shape (n_samples,)
        Dual sample weights ``u`` (LPBoost: in ``[0, D]``, summing to 1;
        MDBoost: free, summing to ``M``).
    beta : float
        ``max_t u . a_t`` over the current columns: a new tree violates a dual
        constraint iff its ``u . a`` exceeds ``beta``.
    dual_objective : float
        Dual objective at ``(u, beta)``; equals ``objective`` at optimality.
    margins : ndarray of shape (n_samples,)
        ``rho_i = sum_t a_it w_t``.
    rho : float
        LPBoost's margin variable ``rho``; for MDBoost the minimum margin.
    """

    objective: float
    weights: np.ndarray
    sample_weights: np.ndarray
    beta: float
    dual_objective: float
    margins: np.ndarray
    rho: float


def _run_highs(h, highspy, time_limit, what):
    """Solve the HiGHS model ``h`` within ``time_limit`` seconds (None: no
    limit); returns its solution, or raises unless it is optimal."""
    if time_limit is not None:
        # HiGHS compares its time_limit with the run time summed over all
        # solves of this model, so the budget is added to what is spent
        h.setOptionValue("time_limit", h.getRunTime() + max(float(time_limit), 0.01))
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"the {what} was not solved to optimality "
            f"(HiGHS status {h.modelStatusToString(status)})"
        )
    return h.getSolution()


class _Master:
    def __init__(self, n_samples: int, reg: float):
        self.n_samples = int(n_samples)
        self.reg = float(reg)
        self.columns: list[np.ndarray] = []
        self._solves = BoundedSolves(self.n_samples)

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def column_matrix(self) -> np.ndarray:
        return np.column_stack(self.columns) if self.columns else np.zeros((0, 0))

    def add_column(self, a) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def solve(self, time_limit=None) -> MasterSolution:  # pragma: no cover
        raise NotImplementedError

    def single_tree_solution(self) -> MasterSolution:  # pragma: no cover
        """The master's solution restricted to the first tree (all weight on it)."""
        raise NotImplementedError


class LPBoostMaster(_Master):
    """LPBoost's soft-margin LP over the current trees (PuLP + HiGHS).

    .. math::

        \\max_{w, \\xi, \\rho}\\ \\rho - D \\sum_i \\xi_i \\quad \\text{s.t.}\\quad
        \\sum_t a_{it} w_t + \\xi_i \\ge \\rho,\\ \\sum_t w_t = 1,\\ w, \\xi \\ge 0.

    Its dual is ``min beta`` s.t. ``u . a_t <= beta``, ``sum u = 1``,
    ``0 <= u <= D``: it is feasible iff ``D >= 1 / M``.

    Parameters
    ----------
    n_samples : int
    reg : float
        The regularisation ``D``.
    solver : {"highs", "cbc"}, default="highs"
        PuLP solver; both report the duals in ``constraint.pi``.
    """

    def __init__(self, n_samples, reg, solver="highs"):
        super().__init__(n_samples, reg)
        _check_lpboost_reg(self.reg, self.n_samples)
        self.solver = solver
        self._prob = pulp.LpProblem("lpboost_master", pulp.LpMaximize)
        self._rho = self._prob.add_variable("rho")
        xi = self._prob.add_variable_dicts("xi", range(self.n_samples), lowBound=0)
        self._xi = [xi[i] for i in range(self.n_samples)]
        self._w: list[pulp.LpVariable] = []
        objective = {x: -self.reg for x in self._xi}
        objective[self._rho] = 1.0
        self._prob.setObjective(affine(objective))
        self._margin = [
            add_constraint(
                self._prob, {xi: 1.0, self._rho: -1.0}, ">=", 0.0, f"margin_{i}"
            )
            for i, xi in enumerate(self._xi)
        ]
        self._sum_w = add_constraint(self._prob, {}, "==", 1.0, "sum_w")

    def add_column(self, a) -> int:
        a = np.asarray(a, dtype=np.float64)
        t = len(self._w)
        var = self._prob.add_variable(f"w_{t}", lowBound=0)
        self._w.append(var)
        for con, coef in zip(self._margin, a.tolist()):
            if coef:
                set_coefficient(con, var, coef)
        set_coefficient(self._sum_w, var, 1.0)
        self.columns.append(a)
        return t

    def _pulp_solver(self, time_limit):
        kwargs = {"msg": False}
        if time_limit is not None:
            kwargs["timeLimit"] = max(float(time_limit), 0.01)
        if self.solver == "highs":
            return pulp.HiGHS(**kwargs)
        solver = cbc_command(**kwargs)
        if solver is None:
            check_solver_available("cbc")  # raises, with the install hint
        return solver

    def _solve_lp(self, time_limit):
        """Solve the LP; return ``(w, margin row duals, objective, rho)``."""
        optimal, status = solve_status(self._prob, self._pulp_solver(time_limit))
        if not optimal:
            raise RuntimeError(
                "the LPBoost master LP was not solved to optimality "
                f"(PuLP status {status})"
            )
        w = np.array([v.varValue or 0.0 for v in self._w])
        pi = np.array([c.pi if c.pi is not None else 0.0 for c in self._margin])
        objective = float(self._prob.objective.value())
        return w, pi, objective, float(self._rho.varValue or 0.0)

    def solve(self, time_limit=None) -> MasterSolution:
        if not self._w:
            raise ValueError("the master has no column yet")
        w, pi, objective, rho = self._solves.run(
            partial(self._solve_lp, time_limit), time_limit, "LPBoost master LP"
        )
        w = np.clip(w, 0.0, None)
        u = np.abs(pi)
        A = self.column_matrix()
        scores = u @ A
        beta = float(scores.max())
        return MasterSolution(
            objective=objective,
            weights=w,
            sample_weights=u,
            beta=beta,
            dual_objective=beta,
            margins=A @ w,
            rho=rho,
        )

    def dual_objective(self, u, beta) -> float:
        """LPBoost dual objective of a feasible ``(u, beta)``: ``beta``."""
        return float(beta)

    def single_tree_solution(self) -> MasterSolution:
        return _lpboost_single_tree(self)


def _lpboost_single_tree(master) -> MasterSolution:
    """LPBoost's solution with the first tree alone (``w = (1,)``).

    The best ``rho`` lies at a breakpoint of the concave piecewise-linear
    objective (a margin value); the sample weights are uniform (a fallback
    when the time limit stops the first master: no tree is priced after it).
    """
    a = master.columns[0]
    candidates = np.unique(a)
    values = [r - master.reg * np.maximum(r - a, 0.0).sum() for r in candidates]
    best = int(np.argmax(values))
    u = np.full(master.n_samples, 1.0 / master.n_samples)
    beta = float(u @ a)
    return MasterSolution(
        objective=float(values[best]),
        weights=np.array([1.0]),
        sample_weights=u,
        beta=beta,
        dual_objective=beta,
        margins=a.copy(),
        rho=float(candidates[best]),
    )


def _check_lpboost_reg(reg, n_samples):
    if reg * n_samples < 1 - 1e-12:
        raise ValueError(
            f"LPBoost needs reg >= 1/n_samples = {1 / n_samples:.4g} "
            f"(got reg={reg}): otherwise its dual is infeasible and its "
            "primal unbounded"
        )


class HighsLPBoostMaster(_Master):
    """The LP of :class:`LPBoostMaster`, kept in one highspy model.

    New trees are added with ``addCol`` and the LP is re-solved from the
    previous simplex basis (hot start), instead of PuLP rebuilding and
    solving the whole model at every iteration; the sample weights are the
    row duals of the margin rows. Same solutions, several times faster on
    a few hundred rows.

    Parameters
    ----------
    n_samples : int
    reg : float
    """

    def __init__(self, n_samples, reg):
        super().__init__(n_samples, reg)
        _check_lpboost_reg(self.reg, self.n_samples)
        import highspy

        self._highspy = highspy
        M = self.n_samples
        inf = highspy.kHighsInf
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # columns: rho (free), xi_0..xi_{M-1} >= 0; minimise -rho + D sum xi
        cost = np.append(-1.0, np.full(M, self.reg))
        lower = np.append(-inf, np.zeros(M))
        none = np.array([], dtype=np.int32)
        h.addCols(M + 1, cost, lower, np.full(M + 1, inf), 0, none, none, none)
        # rows: xi_i - rho + sum_t a_it w_t >= 0, then sum_t w_t = 1
        starts = np.append(np.arange(0, 2 * M, 2), 2 * M).astype(np.int32)
        index = np.column_stack([np.zeros(M), np.arange(1, M + 1)]).ravel()
        values = np.tile([-1.0, 1.0], M)
        bounds = np.append(np.zeros(M), 1.0)
        upper = np.append(np.full(M, inf), 1.0)
        h.addRows(M + 1, bounds, upper, 2 * M, starts, index.astype(np.int32), values)
        self._h = h

    def add_column(self, a) -> int:
        a = np.asarray(a, dtype=np.float64)
        M = self.n_samples
        idx = np.arange(M + 1, dtype=np.int32)
        vals = np.concatenate([a, [1.0]])
        self._h.addCol(0.0, 0.0, self._highspy.kHighsInf, M + 1, idx, vals)
        self.columns.append(a)
        return self.n_columns - 1

    def solve(self, time_limit=None) -> MasterSolution:
        if not self.columns:
            raise ValueError("the master has no column yet")
        sol = _run_highs(self._h, self._highspy, time_limit, "LPBoost master LP")
        x = np.asarray(sol.col_value)
        M = self.n_samples
        w = np.clip(x[1 + M :], 0.0, None)
        u = np.abs(np.asarray(sol.row_dual)[:M])
        A = self.column_matrix()
        beta = float((u @ A).max())
        return MasterSolution(
            objective=-float(self._h.getInfo().objective_function_value),
            weights=w,
            sample_weights=u,
            beta=beta,
            dual_objective=beta,
            margins=A @ w,
            rho=float(x[0]),
        )

    def dual_objective(self, u, beta) -> float:
        """LPBoost dual objective of a feasible ``(u, beta)``: ``beta``."""
        return float(beta)

    def single_tree_solution(self) -> MasterSolution:
        return _lpboost_single_tree(self)


class MDBoostMaster(_Master):
    """MDBoost's QP over the current trees, solved with highspy.

    .. math::

        \\max_w\\ \\mathbf 1^\\top\\rho - \\tfrac12 \\rho^\\top A \\rho,\\quad
        \\rho = \\mathbf a w,\\ \\mathbf 1^\\top w = D,\\ w \\ge 0,

    with ``A = M/(M-1) (I - 11^T/M)`` (singular). HiGHS gets the equivalent
    sparse form: columns ``sigma_0..sigma_{M-1}``, ``mu`` (free) and one
    ``w_t >= 0`` per tree; rows ``sigma_i + mu - sum_t a_it w_t = 0`` and
    ``sum_t w_t = D``; minimise ``-sum_t (sum_i a_it) w_t +
    M/(2(M-1)) ||sigma||^2``. The sample weights are ``u = 1 - A rho`` and
    the exact dual objective is ``D r + (M-1)/(2M) ||u - 1||^2`` with
    ``r = max_t u . a_t`` (methods.md §6).

    Parameters
    ----------
    n_samples : int
        ``M``; at least 2.
    reg : float
        The regularisation ``D > 0`` (sum of the tree weights).
    """

    def __init__(self, n_samples, reg):
        super().__init__(n_samples, reg)
        import highspy

        M = self.n_samples
        if M < 2:
            raise ValueError("MDBoost needs at least 2 training rows")
        self._highspy = highspy
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        inf = highspy.kHighsInf
        n_free = M + 1
        # columns: sigma_0..sigma_{M-1}, mu
        h.addVars(n_free, np.full(n_free, -inf), np.full(n_free, inf))
        # rows: sigma_i + mu - sum_t a_it w_t = 0, then sum_t w_t = D
        lower = np.append(np.zeros(M), self.reg)
        starts = np.append(np.arange(0, 2 * M, 2), 2 * M).astype(np.int32)
        index = np.column_stack([np.arange(M), np.full(M, M)]).ravel()
        h.addRows(
            M + 1, lower, lower, 2 * M, starts, index.astype(np.int32), np.ones(2 * M)
        )
        self._h = h
        self._n_free = n_free
        self._hessian_set = False

    def _pass_hessian(self):
        M = self.n_samples
        n_cols = self._n_free + self.n_columns
        coef = M / (M - 1)
        # lower triangle, column-wise: one diagonal entry per sigma column
        start = np.concatenate([np.arange(M + 1), np.full(n_cols - M, M)])
        index = np.arange(M, dtype=np.int32)
        value = np.full(M, coef)
        self._h.passHessian(
            n_cols,
            M,
            self._highspy.HessianFormat.kTriangular,
            start[:n_cols].astype(np.int32),
            index,
            value,
        )

    def add_column(self, a) -> int:
        a = np.asarray(a, dtype=np.float64)
        M = self.n_samples
        t = self.n_columns
        idx = np.concatenate([np.arange(M), [M]]).astype(np.int32)
        vals = np.concatenate([-a, [1.0]])
        self._h.addCol(
            -float(a.sum()), 0.0, self._highspy.kHighsInf, len(idx), idx, vals
        )
        self.columns.append(a)
        return t

    def solve(self, time_limit=None) -> MasterSolution:
        if not self.columns:
            raise ValueError("the master has no column yet")
        if self.n_columns == 1:
            # w = (D,) is the only feasible point: no QP to solve (HiGHS can
            # take longer than any time limit on it with many rows)
            return self.single_tree_solution()
        self._pass_hessian()
        w = self._solves.run(
            partial(self._qp_weights, time_limit), time_limit, "MDBoost master QP"
        )
        return self._solution(np.clip(w, 0.0, None))

    def _qp_weights(self, time_limit):
        """Solve the QP; return the tree weights (unclipped)."""
        sol = _run_highs(self._h, self._highspy, time_limit, "MDBoost master QP")
        return np.asarray(sol.col_value)[self._n_free :]

    def single_tree_solution(self) -> MasterSolution:
        return self._solution(np.array([self.reg]))

    def _solution(self, w) -> MasterSolution:
        A = self.column_matrix()[:, : len(w)]
        rho = A @ w
        M = self.n_samples
        centred = rho - rho.mean()
        objective = float(rho.sum() - 0.5 * M / (M - 1) * np.sum(centred**2))
        u = 1.0 - M / (M - 1) * centred
        beta = float((u @ A).max())
        return MasterSolution(
            objective=objective,
            weights=w,
            sample_weights=u,
            beta=beta,
            dual_objective=self.dual_objective(u, beta),
            margins=rho,
            rho=float(rho.min() / max(w.sum(), 1e-300)),
        )

    def dual_objective(self, u, beta) -> float:
        """Exact MDBoost dual objective ``D r + (M-1)/(2M) ||u - 1||^2``."""
        M = self.n_samples
        u = np.asarray(u, dtype=np.float64)
        return float(self.reg * beta + (M - 1) / (2 * M) * np.sum((u - 1.0) ** 2))


def make_master(objective: str, n_samples: int, reg: float, lp_solver="pulp"):
    """Return an empty master for ``objective`` in {"lpboost", "mdboost"}.

    ``lp_solver`` picks the LPBoost backend: ``"pulp"`` (PuLP + HiGHS, the
    model rebuilt at each solve) or ``"highspy"`` (one warm-started model).
    """
    if objective == "lpboost":
        if lp_solver == "highspy":
            return HighsLPBoostMaster(n_samples, reg)
        return LPBoostMaster(n_samples, reg)
    if objective == "mdboost":
        return MDBoostMaster(n_samples, reg)
    raise ValueError(f"objective must be 'lpboost' or 'mdboost', got {objective!r}")
