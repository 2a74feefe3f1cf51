"""What a MILP solve produced, whichever solver ran it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SolveInfo", "relative_gap"]


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
        The solver's own status text (or why it gave none: "killed at the
        time limit", "not run: ...").
    solve_time : float
        Wall-clock seconds of the solver process (writing its input files
        and reading its output included).
    warm_start_accepted : bool or None
        HiGHS only: whether ``setSolution`` accepted the warm start.
    solver_cpu_time : float or None
        CBC only: CPU seconds used by the CBC process.
    killed : bool
        The solver overran the fit's deadline and was killed.
    crashed : str or None
        Name of the signal the solver died of on its own (e.g.
        ``"SIGSEGV"``); ``None`` when it did not crash.
    retried_without_warm_start : bool
        CBC crashed with the warm start and was run again without it.
    trace : list of tuple
        The solver's progress, ``(seconds since fit started, incumbent,
        bound, errors)`` in the MILP's objective units (offset included);
        ``None`` where a point gives no value. ``errors`` is the incumbent's
        value of the ``count`` variables (HiGHS only). CBC's points come
        from its log (its CPU clock, scaled to wall-clock seconds), HiGHS's
        from its callbacks.
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
    killed: bool = False
    crashed: str | None = None
    retried_without_warm_start: bool = False
    trace: list = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        """True when the time limit (the solver's or the fit's) stopped it."""
        text = self.solver_status.lower()
        return self.killed or "time" in text or "interrupt" in text or "ctrl" in text


def relative_gap(objective, bound):
    """``(objective - bound) / |objective|`` (``None`` when either is missing)."""
    if objective is None or bound is None:
        return None
    return max(0.0, (objective - bound) / max(abs(objective), 1e-10))
