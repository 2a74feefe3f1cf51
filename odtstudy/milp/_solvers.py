"""Solver plumbing shared by the MILP learners: pick, export, solve under a deadline.

The learners build their models with PuLP; :func:`solve` exports one to
arrays (:mod:`odtstudy.milp._export`) and runs the solver in a child process
that cannot outlive the fit's deadline (:mod:`odtstudy.milp._process`):

- ``"cbc"``: the CBC binary PuLP runs (bundled with PuLP 3, the ``cbcbox``
  wheel of ``pulp[cbc]`` with PuLP 4, or a ``cbc`` on the ``PATH``), on an
  MPS file; warm start as a mipstart
  file; bound and gap from CBC's log (:mod:`odtstudy.milp._cbc`).
- ``"highs"``: HiGHS (``highspy``) in a Python child process reading the
  arrays; warm start through ``Highs.setSolution``; bound and gap from
  ``Highs.getInfo()`` (:mod:`odtstudy.milp._highs`).

Either way the solver gets the time left as its own limit, is stopped at
the deadline and killed shortly after, and the solution is written back into
the PuLP variables (``varValue``).
"""

from __future__ import annotations

import pulp

from odtstudy._deadline import Deadline
from odtstudy.milp._cbc import cbc_executable, solve_cbc
from odtstudy.milp._export import export_model
from odtstudy.milp._highs import solve_highs
from odtstudy.milp._solveinfo import SolveInfo

__all__ = ["SOLVERS", "SolveInfo", "check_solver_available", "kill_time", "solve"]

SOLVERS = ("cbc", "highs")

_INSTALL_HINT = {
    "cbc": "CBC comes with PuLP's cbc extra: install it with "
    '`pip install "pulp[cbc]"` (or put a `cbc` binary on the PATH)',
    "highs": "install highspy with `pip install highspy`",
}


def _highs_available() -> bool:
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


def check_solver_available(name: str) -> None:
    """Raise a clear error when solver ``name`` is unknown or not installed."""
    if name not in SOLVERS:
        raise ValueError(
            f"unknown solver {name!r}; choose one of {', '.join(map(repr, SOLVERS))}"
        )
    ok = cbc_executable() is not None if name == "cbc" else _highs_available()
    if not ok:
        raise ImportError(
            f"the MILP solver {name!r} is not available: {_INSTALL_HINT[name]}"
        )


def kill_time(deadline: Deadline) -> float | None:
    """When a solver still running past ``deadline`` is killed (on its clock).

    Half of the contract's slack (``0.1 T + 1`` s), at most 5 s: the other
    half is left for reading the solution back and building the tree.
    """
    if deadline.at is None:
        return None
    return deadline.at + min(0.05 * deadline.time_limit + 0.5, 5.0)


def solve(
    prob: pulp.LpProblem,
    solver: str,
    *,
    deadline: Deadline | None = None,
    threads: int = 1,
    warm_start: bool = False,
    gap_abs: float = 1e-6,
    tolerance: float | None = None,
    count=None,
) -> SolveInfo:
    """Solve ``prob`` (a minimisation) with ``solver`` by ``deadline``.

    Parameters
    ----------
    prob : pulp.LpProblem
    solver : {"cbc", "highs"}
    deadline : Deadline or None
        The fit's deadline: the solver gets the time left, is stopped at the
        deadline and killed at :func:`kill_time`. ``None``: no limit.
    threads : int
    warm_start : bool
        Use the variables' initial values (``setInitialValue``) as a start.
    gap_abs : float
        Absolute gap at which the solver may stop (set below the objective's
        granularity, so stopping still proves optimality).
    tolerance : float or None
        Feasibility / integrality tolerance (``None``: solver default).
    count : list of pulp.LpVariable or None
        Variables whose sum at each incumbent the trace records (HiGHS only:
        CBC's log gives objective values only).

    Returns
    -------
    SolveInfo
        The variables' ``varValue`` hold the solution when ``has_solution``;
        ``trace`` holds the solver's progress on the fit's clock.

    Raises
    ------
    odtstudy._deadline.DeadlineReached
        When the deadline passes while the model is exported or written.
    """
    check_solver_available(solver)
    deadline = Deadline.of(deadline)
    model = export_model(prob, deadline, count)
    run = solve_cbc if solver == "cbc" else solve_highs
    return run(
        model,
        deadline,
        kill_at=kill_time(deadline),
        threads=threads,
        warm_start=warm_start,
        gap_abs=gap_abs,
        tolerance=tolerance,
    )
