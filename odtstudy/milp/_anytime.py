"""A MILP learner's anytime trace, from what its solver reported.

The solvers report raw progress points (:attr:`SolveInfo.trace`): seconds
since ``fit`` started, the incumbent and the bound in the MILP's objective
units, and (HiGHS) the incumbent's number of errors. The learner maps them
to the units of ``objective_`` and :func:`anytime_trace` makes the trace the
study reads (``stats_["anytime"]``): one point per improvement of the
incumbent or of the bound, incumbents never increasing, bounds never
decreasing and never above the incumbent.
"""

from __future__ import annotations

import math

__all__ = ["anytime_trace", "integral"]

#: Objectives within this of each other are one value.
_TOL = 1e-9


def integral(value: float | None, tol: float = 1e-4) -> float | None:
    """``value`` rounded to the nearest integer when within ``tol`` of it
    (relative to ``max(1, |value|)``): a solver's count of errors carries its
    tolerance (``10.999999``)."""
    if value is None or not math.isfinite(value):
        return None
    nearest = round(value)
    if abs(value - nearest) <= tol * max(1.0, abs(value)):
        return float(nearest)
    return float(value)


def anytime_trace(points, *, objective: float, bound: float | None, end: float):
    """The learner's trace from progress points in ``objective_`` units.

    Parameters
    ----------
    points : iterable of (float, float or None, float or None)
        ``(seconds since fit started, incumbent, bound)``, in any order;
        ``None`` where a point gives no incumbent or no bound.
    objective : float
        The fit's ``objective_``. Incumbents below it (the solver reported
        them but the learner could not read them back, e.g. a solver killed
        at the limit) are left out: the trace shows what the learner had.
    bound : float or None
        The fit's ``lower_bound_``.
    end : float
        Seconds since ``fit`` started when the solve ended: no point is
        later, and the final objective and bound are placed there when they
        improve on the last point.

    Returns
    -------
    list of list
        ``[time, objective]`` or ``[time, objective, bound]`` points.
    """
    trace = []
    best, lower = math.inf, -math.inf
    final = (end, float(objective), bound)
    for time, obj, low in [*sorted(points, key=lambda p: p[0]), final]:
        improved = False
        if obj is not None and objective - _TOL <= obj < best - _TOL:
            best, improved = float(obj), True
        if low is not None and low > lower + _TOL:
            lower, improved = float(low), True
        if improved and best < math.inf:
            point = [min(max(float(time), 0.0), end), best]
            if lower > -math.inf:
                point.append(min(lower, best))
            trace.append(point)
    return trace
