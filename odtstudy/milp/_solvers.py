"""Solver plumbing shared by the MILP learners: pick, configure, warm-start, read back.

Two solvers are supported through PuLP:

- ``"cbc"``: the CBC binary bundled with PuLP (``PULP_CBC_CMD``), or a CBC on
  the ``PATH`` (``COIN_CMD``). Warm starts go through PuLP's ``warmStart``
  (an ``.mst`` file built from the variables' initial values); the best bound
  and the gap are read from CBC's log.
- ``"highs"``: HiGHS through ``highspy`` (PuLP's ``HiGHS`` API solver). PuLP
  does not pass warm starts to HiGHS, so :class:`_WarmHiGHS` hands the
  initial values to ``Highs.setSolution`` just before ``run``; the bound and
  the gap come from ``Highs.getInfo()``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass

import pulp

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None

__all__ = ["SOLVERS", "SolveInfo", "check_solver_available", "solve"]

SOLVERS = ("cbc", "highs")

_INSTALL_HINT = {
    "cbc": "CBC ships with PuLP: reinstall it with `pip install pulp` "
    "(or install a `cbc` binary on the PATH)",
    "highs": "install highspy with `pip install highspy`",
}


@dataclass
class SolveInfo:
    """What a MILP solve produced, solver-independent.

    Attributes
    ----------
    has_solution : bool
        True when the variables hold a feasible (integer) solution.
    proven_optimal : bool
        True when the solver proved optimality (gap closed).
    objective : float or None
        Objective value of the incumbent.
    bound : float or None
        Best bound on the optimum (a lower bound, since we minimise).
    gap : float or None
        Relative MIP gap as reported by the solver (0 when optimal).
    solver_status : str
        The solver's own status text.
    solve_time : float
        Wall-clock seconds spent in the solver call.
    warm_start_accepted : bool or None
        HiGHS only: whether ``setSolution`` accepted the warm start.
    solver_cpu_time : float or None
        CBC only: CPU seconds used by the CBC process.
    """

    has_solution: bool
    proven_optimal: bool
    objective: float | None
    bound: float | None
    gap: float | None
    solver_status: str
    solve_time: float
    warm_start_accepted: bool | None = None
    solver_cpu_time: float | None = None


def _cbc_solver_class():
    """The CBC command solver class that can run here, or ``None``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("PULP_CBC_CMD", "COIN_CMD"):
            solver_class = getattr(pulp, name, None)
            if solver_class is not None and solver_class(msg=False).available():
                return name
    return None


def _highs_available() -> bool:
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return bool(getattr(pulp, "HiGHS", None)) and pulp.HiGHS().available()


def check_solver_available(name: str) -> None:
    """Raise a clear error when solver ``name`` is unknown or not installed."""
    if name not in SOLVERS:
        raise ValueError(
            f"unknown solver {name!r}; choose one of {', '.join(map(repr, SOLVERS))}"
        )
    ok = _cbc_solver_class() is not None if name == "cbc" else _highs_available()
    if not ok:
        raise ImportError(
            f"the MILP solver {name!r} is not available: {_INSTALL_HINT[name]}"
        )


if getattr(pulp, "HiGHS", None) is not None and hasattr(pulp.HiGHS, "callSolver"):

    class _WarmHiGHS(pulp.HiGHS):
        """PuLP's HiGHS API solver, plus a warm start through ``setSolution``."""

        def __init__(self, *args, warm_start=False, **kwargs):
            super().__init__(*args, **kwargs)
            self.warm_start = warm_start
            self.warm_start_accepted = None

        def callSolver(self, lp):
            if self.warm_start:
                import highspy

                variables = lp.variables()
                values = [v.varValue for v in variables]
                if all(val is not None for val in values):
                    sol = highspy.HighsSolution()
                    col = [0.0] * len(variables)
                    for var, val in zip(variables, values):
                        col[var.index] = float(val)
                    sol.col_value = col
                    sol.value_valid = True
                    status = lp.solverModel.setSolution(sol)
                    self.warm_start_accepted = status == highspy.HighsStatus.kOk
            super().callSolver(lp)

else:  # pragma: no cover - PuLP without the HiGHS API class
    _WarmHiGHS = None


_CBC_RESULT = re.compile(r"^Result - (.+)$", re.MULTILINE)
_CBC_OBJ = re.compile(r"^Objective value:\s+(\S+)", re.MULTILINE)
_CBC_BOUND = re.compile(r"^(?:Lower|Upper) bound:\s+(\S+)", re.MULTILINE)
_CBC_GAP = re.compile(r"^Gap:\s+(\S+)", re.MULTILINE)


def _children_cpu():
    if resource is None:  # pragma: no cover
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _solve_cbc(prob, time_limit, threads, warm_start, gap_abs, tolerance):
    options = []
    if tolerance is not None:
        options += [f"integerTolerance {tolerance}", f"primalTolerance {tolerance}"]
    fd, log_path = tempfile.mkstemp(prefix="odtstudy_cbc_", suffix=".log")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver = pulp.getSolver(
                _cbc_solver_class(),
                timeLimit=time_limit,
                gapRel=0.0,
                gapAbs=gap_abs,
                threads=threads,
                msg=False,
                warmStart=warm_start,
                logPath=log_path,
                options=options,
                # the bundled CBC 2.10 can segfault when it stops on a wall-clock
                # limit during the root node (seen on CP4IM vote with OCT), so
                # the limit counts CBC's CPU time (single-threaded: ~wall time)
                timeMode="cpu",
            )
            start = time.perf_counter()
            cpu_start = _children_cpu()
            try:
                prob.solve(solver)
            except pulp.PulpSolverError as exc:
                elapsed = time.perf_counter() - start
                return SolveInfo(
                    False, False, None, None, None, f"solver error: {exc}", elapsed
                )
            elapsed = time.perf_counter() - start
            cpu = _children_cpu() - cpu_start if cpu_start is not None else None
        with open(log_path) as fh:
            log = fh.read()
        if os.environ.get("ODTSTUDY_CBC_LOG"):
            with open(os.environ["ODTSTUDY_CBC_LOG"], "w") as fh:
                fh.write(log)
    finally:
        os.unlink(log_path)
    result = _CBC_RESULT.search(log)
    if result:
        status_text = result.group(1).strip()
    elif "Problem is stopped" in log:
        status_text = "Stopped on time limit before the search started"
    else:
        status_text = "no result reported"
    # PuLP reports "integer feasible" whenever the .sol file says "Stopped on
    # time - objective value ...", even when CBC stopped before it had any
    # solution; only trust values CBC announced and that satisfy the model
    has_solution = (
        result is not None
        and _CBC_OBJ.search(log) is not None
        and prob.sol_status
        in (
            pulp.LpSolutionOptimal,
            pulp.LpSolutionIntegerFeasible,
        )
    )
    proven = (
        has_solution
        and prob.sol_status == pulp.LpSolutionOptimal
        and status_text.startswith("Optimal")
    )
    if has_solution and not proven:
        has_solution = prob.valid(1e-3)  # catches garbage, not round-off
    objective = pulp.value(prob.objective) if has_solution else None
    bound = None
    match = _CBC_BOUND.search(log)
    if match:
        bound = float(match.group(1))
    elif proven:
        bound = objective
    gap = None
    if proven:
        gap = 0.0
    elif objective is not None and bound is not None:
        gap = _relative_gap(objective, bound)
    return SolveInfo(
        has_solution,
        proven,
        objective,
        bound,
        gap,
        status_text,
        elapsed,
        solver_cpu_time=cpu,
    )


def _relative_gap(objective, bound):
    if objective is None or bound is None:
        return None
    denom = max(abs(objective), 1e-10)
    return max(0.0, (objective - bound) / denom)


def _solve_highs(prob, time_limit, threads, warm_start, gap_abs, tolerance):
    import highspy

    params = {}
    if tolerance is not None:
        params["mip_feasibility_tolerance"] = tolerance
        params["primal_feasibility_tolerance"] = tolerance
    solver = _WarmHiGHS(
        msg=False,
        timeLimit=time_limit,
        gapRel=0.0,
        gapAbs=gap_abs,
        threads=threads,
        warm_start=warm_start,
        **params,
    )
    start = time.perf_counter()
    prob.solve(solver)
    elapsed = time.perf_counter() - start
    model = prob.solverModel
    info = model.getInfo()
    model_status = model.getModelStatus()
    status_text = model.modelStatusToString(model_status)
    has_solution = (
        prob.sol_status
        in (
            pulp.LpSolutionOptimal,
            pulp.LpSolutionIntegerFeasible,
        )
        and info.primal_solution_status == 2  # kSolutionStatusFeasible
    )
    proven = model_status == highspy.HighsModelStatus.kOptimal and has_solution
    objective = info.objective_function_value if has_solution else None
    bound = info.mip_dual_bound
    if bound is None or not math.isfinite(bound):
        bound = objective if proven else None
    gap = info.mip_gap if has_solution and math.isfinite(info.mip_gap) else None
    if proven:
        gap = 0.0 if gap is None else gap
    return SolveInfo(
        has_solution,
        proven,
        objective,
        bound,
        gap,
        status_text,
        elapsed,
        solver.warm_start_accepted,
    )


def solve(
    prob,
    solver,
    *,
    time_limit=None,
    threads=1,
    warm_start=False,
    gap_abs=1e-6,
    tolerance=None,
) -> SolveInfo:
    """Solve ``prob`` (a minimisation) with ``solver`` and report the outcome.

    Parameters
    ----------
    prob : pulp.LpProblem
    solver : {"cbc", "highs"}
    time_limit : float or None
        Seconds given to the solver.
    threads : int
    warm_start : bool
        Use the variables' initial values (``setInitialValue``) as a start.
    gap_abs : float
        Absolute gap at which the solver may stop (set below the objective's
        granularity, so stopping still proves optimality).
    tolerance : float or None
        Feasibility / integrality tolerance (``None``: solver default).

    Returns
    -------
    SolveInfo
    """
    check_solver_available(solver)
    if solver == "cbc":
        return _solve_cbc(prob, time_limit, threads, warm_start, gap_abs, tolerance)
    return _solve_highs(prob, time_limit, threads, warm_start, gap_abs, tolerance)
