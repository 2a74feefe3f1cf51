"""HiGHS on a :class:`MatrixModel`, in a child process killed at the deadline.

HiGHS checks its ``time_limit`` only at some points: presolve, the MIP setup
(clique table, probing) and the root LP of a large model can run for many
seconds past it, and an in-process solve cannot be interrupted there. So
HiGHS runs in a child process (``_highs_child.py``, through
:class:`SolverProcess`): it gets the time left as its own limit, and is
killed at the hard deadline. The child saves every improving solution, so
the best one found before a kill is kept, and writes a line to its trace
file at each improving solution and each rise of the dual bound.
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

from odtstudy._deadline import Deadline
from odtstudy.milp._process import SolverProcess
from odtstudy.milp._solveinfo import SolveInfo, relative_gap

__all__ = ["solve_highs"]

_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_highs_child.py")
#: Seconds the child needs to start and load the model before HiGHS runs.
_STARTUP_S = 0.2


def _load(path):
    try:
        with np.load(path) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError):
        return None


def _finite(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _read_trace(path, deadline: Deadline, end: float) -> list:
    """The child's trace lines on the fit's clock (bad lines skipped)."""
    try:
        with open(path) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    trace = []
    for line in lines:
        try:
            at, objective, bound, errors = (float(v) for v in line.split())
        except ValueError:  # a line cut by a kill
            continue
        at = min(max(at - deadline.start, 0.0), end)
        trace.append((at, _finite(objective), _finite(bound), _finite(errors)))
    return trace


def solve_highs(
    model, deadline: Deadline, *, kill_at, threads, warm_start, gap_abs, tolerance
) -> SolveInfo:
    """Solve ``model`` with HiGHS; kill it at ``kill_at`` if it is still running.

    The trace's points carry ``model.count`` at each improving solution
    (``None`` when the model has no ``count``).
    """
    clock = Deadline(None)  # the solve's stopwatch, on the fit's clock
    options = {"mip_rel_gap": 0.0, "mip_abs_gap": float(gap_abs)}
    options["threads"] = int(threads)
    if tolerance is not None:
        options["mip_feasibility_tolerance"] = float(tolerance)
        options["primal_feasibility_tolerance"] = float(tolerance)
    with SolverProcess(prefix="odtstudy_highs_") as proc:
        arrays = {
            name: getattr(model, name)
            for name in (
                "cost", "col_lower", "col_upper", "integer", "row_lower",
                "row_upper", "indptr", "indices", "values",
            )
        }  # fmt: skip
        arrays["offset"] = np.float64(model.offset)
        if warm_start and model.has_start:
            arrays["start"] = model.start
        if model.count is not None:
            arrays["count"] = model.count
        np.savez(proc.file("model.npz"), **arrays)
        limit = deadline.remaining(reserve=_STARTUP_S)
        if limit is not None:
            options["time_limit"] = max(limit, 0.01)
        with open(proc.file("options.json"), "w") as fh:
            json.dump({"highs": options}, fh)
        outcome = proc.run(
            [sys.executable, _CHILD, proc.path],
            log=proc.file("log"),
            stop_at=None,
            kill_at=kill_at,
        )
        result = None if outcome.killed else _load(proc.file("result.npz"))
        incumbent = _load(proc.file("incumbent.npz")) if result is None else None
        trace = _read_trace(proc.file("trace.txt"), deadline, deadline.elapsed())
    elapsed = clock.elapsed()

    accepted = None
    if result is not None:
        x = result["x"] if bool(result["feasible"]) else None
        status = str(result["status"])
        proven = bool(result["optimal"]) and x is not None
        bound = _finite(result["bound"])
        gap = _finite(result["gap"]) if x is not None else None
        if int(result["accepted"]) >= 0:
            accepted = bool(result["accepted"])
    else:
        x = incumbent["x"] if incumbent is not None else None
        proven = False
        bound = _finite(incumbent["bound"]) if incumbent is not None else None
        gap = None
        status = (
            "killed at the time limit"
            if outcome.killed
            else f"solver error (exit code {outcome.returncode})"
        )
    has_solution = x is not None and model.is_feasible(x, 1e-3)
    objective = model.objective(x) if has_solution else None
    if has_solution:
        model.assign(x)
    if bound is None and proven:
        bound = objective
    if proven:
        gap = 0.0 if gap is None else gap
    elif gap is None:
        gap = relative_gap(objective, bound)
    return SolveInfo(
        has_solution, proven and has_solution, objective, bound, gap, status,
        elapsed, accepted, killed=outcome.killed, trace=trace,
    )  # fmt: skip
