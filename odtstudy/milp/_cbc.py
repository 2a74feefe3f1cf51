"""CBC (the binary PuLP runs) on a :class:`MatrixModel`, under a deadline.

The model goes to CBC as an MPS file written here (columns ``X<j>``, rows
``R<i>``), the warm start as a mipstart file; CBC runs in a
:class:`SolverProcess`, so it is stopped at the fit's deadline (SIGINT,
which makes CBC write its incumbent, then SIGKILL) and its files are removed
whatever happens.
"""

from __future__ import annotations

import math
import os
import re
import signal

import numpy as np

from odtstudy._deadline import Deadline
from odtstudy.milp._cbc_log import cbc_progress, wall_per_cpu
from odtstudy.milp._process import SolverProcess
from odtstudy.milp._pulp_api import cbc_command
from odtstudy.milp._solveinfo import SolveInfo, relative_gap

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None

__all__ = ["cbc_executable", "solve_cbc", "write_mps"]

_CBC_RESULT = re.compile(r"^Result - (.+)$", re.MULTILINE)
_CBC_OBJ = re.compile(r"^Objective value:\s+(\S+)", re.MULTILINE)
_CBC_BOUND = re.compile(r"^(?:Lower|Upper) bound:\s+(\S+)", re.MULTILINE)
_CBC_CPU = re.compile(r"^Total time \(CPU seconds\):\s+(\S+)", re.MULTILINE)
_COLUMNS_PER_CHECK = 500
#: CBC writes +-1e+50 where it has no bound (e.g. stopped before the search).
_NO_BOUND = 1e49


def cbc_executable() -> str | None:
    """Path of the CBC binary PuLP would run (bundled, cbcbox, or on the PATH)."""
    solver = cbc_command(msg=False)
    return None if solver is None else solver.path


def _num(value: float) -> str:
    return format(float(value), ".17g")


def write_mps(model, path: str, deadline: Deadline | None = None) -> None:
    """Write ``model`` as an MPS file (raises ``DeadlineReached`` when late).

    Names (``X<j>``, ``R<i>``) sit in the fixed-format fields, which CBC's
    reader requires; at most 10**7 rows and columns.
    """
    if max(model.n_rows, model.n_cols) > 10**7:
        raise ValueError("the MPS writer handles at most 10**7 rows and columns")
    deadline = Deadline.of(deadline)
    lower, upper = model.row_lower, model.row_upper
    lo_fin, up_fin = np.isfinite(lower), np.isfinite(upper)
    if np.any(~lo_fin & ~up_fin):
        raise ValueError("free rows are not supported")
    kind = np.where(lo_fin & up_fin & (lower == upper), "E", np.where(up_fin, "L", "G"))
    csc = model.matrix().tocsc()
    with open(path, "w") as fh:
        fh.write("NAME          odtstudy\nROWS\n N  OBJ\n")
        fh.writelines(f" {k}  R{i}\n" for i, k in enumerate(kind.tolist()))
        fh.write("COLUMNS\n")
        in_int = False
        cost = model.cost.tolist()
        for j in range(model.n_cols):
            if j % _COLUMNS_PER_CHECK == 0:
                deadline.check("while writing the MPS file")
            if bool(model.integer[j]) != in_int:
                in_int = not in_int
                marker = "INTORG" if in_int else "INTEND"
                fh.write(f"    MARKER    'MARKER'                 '{marker}'\n")
            name = f"X{j}"
            lines = [f"    {name:<8}  OBJ       {_num(cost[j])}\n"] if cost[j] else []
            lo, hi = csc.indptr[j], csc.indptr[j + 1]
            rows = csc.indices[lo:hi].tolist()
            vals = csc.data[lo:hi].tolist()
            lines += [f"    {name:<8}  R{i:<7}  {v:.17g}\n" for i, v in zip(rows, vals)]
            if not lines:  # declare the column
                lines = [f"    {name:<8}  OBJ       0\n"]
            fh.writelines(lines)
        if in_int:
            fh.write("    MARKER    'MARKER'                 'INTEND'\n")
        fh.write("RHS\n")
        rhs = np.where(kind == "L", upper, lower)
        for i in np.flatnonzero(rhs != 0).tolist():
            fh.write(f"    RHS       R{i:<7}  {_num(rhs[i])}\n")
        ranged = np.flatnonzero(lo_fin & up_fin & (kind == "L"))
        if len(ranged):
            fh.write("RANGES\n")
            for i in ranged.tolist():
                fh.write(f"    RNG       R{i:<7}  {_num(upper[i] - lower[i])}\n")
        fh.write("BOUNDS\n")
        for j in range(model.n_cols):
            lo, hi = model.col_lower[j], model.col_upper[j]
            if lo == -math.inf and hi == math.inf:
                fh.write(f" FR BND       X{j}\n")
                continue
            if lo == -math.inf:
                fh.write(f" MI BND       X{j}\n")
            elif lo != 0:
                fh.write(f" LO BND       X{j:<7}  {_num(lo)}\n")
            if hi != math.inf:
                fh.write(f" UP BND       X{j:<7}  {_num(hi)}\n")
            elif model.integer[j]:
                fh.write(f" PL BND       X{j}\n")
        fh.write("ENDATA\n")


def _write_start(model, path: str) -> None:
    """CBC's mipstart format: ``index name value`` (unlisted columns are 0)."""
    start = np.nan_to_num(model.start, nan=0.0)
    with open(path, "w") as fh:
        fh.write("warm start\n")
        fh.writelines(
            f"{j} X{j} {_num(start[j])}\n" for j in np.flatnonzero(start).tolist()
        )


def _read_solution(path: str, n_cols: int):
    """``(status line, values)`` from CBC's ``-solution`` file (``None`` if absent)."""
    try:
        with open(path) as fh:
            status = fh.readline().strip()
            x = np.zeros(n_cols)
            for line in fh:
                parts = line.split()
                if parts and parts[0] == "**":  # an infeasible row or column
                    parts = parts[1:]
                if len(parts) >= 3 and parts[1].startswith("X"):
                    x[int(parts[1][1:])] = float(parts[2])
    except (OSError, ValueError):
        return None, None
    return status, x


def _children_cpu():
    if resource is None:  # pragma: no cover
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: Seconds a retry after a crash needs at least (CBC reads the model again).
_RETRY_MIN_SECONDS = 0.5


def _crash_signal(outcome) -> str | None:
    """Name of the signal that ended CBC on its own (``None``: no crash).

    ``sh`` reports death by signal ``k`` as exit code ``128 + k``; our own
    SIGKILL, and a SIGINT we sent that CBC did not handle, are not crashes.
    """
    code = outcome.returncode
    if outcome.killed or code is None:
        return None
    number = -code if code < 0 else code - 128  # no supervisor: Popen's -k
    if not 0 < number < 65:
        return None
    if outcome.interrupted and number == signal.SIGINT:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _trace(text, model, started, elapsed, cpu):
    """The progress points of CBC's log on the fit's clock (CBC started
    ``started`` seconds into the fit and ran ``elapsed`` seconds)."""
    ratio = wall_per_cpu(text, elapsed, cpu)
    end = started + elapsed

    def shift(value):
        return None if value is None else value + model.offset

    return [
        (min(started + seconds * ratio, end), shift(obj), shift(bound), None)
        for seconds, obj, bound in cbc_progress(text)
    ]


def _bound_passes_incumbent(text: str) -> bool:
    """Whether CBC's own bound ("best possible") lies above its incumbent.

    No valid lower bound of a minimisation exceeds a feasible value, so the
    solve's bound and any claim of a proof are then void. CBC prints its
    summary "Lower bound" clipped to the incumbent (with a gap of 0), which
    hides this: seen on a BendersOCT master whose root cuts moved the LP
    from -812 to 6.1e9 and which then stopped on time, its incumbent being
    37 errors worse than the optimum.
    """
    objective = _CBC_OBJ.search(text)
    bounds = [bound for _, _, bound in cbc_progress(text) if bound is not None]
    if objective is None or not bounds:
        return False
    best = float(objective.group(1))
    return bounds[-1] > best + 1e-6 * max(1.0, abs(best))


def solve_cbc(
    model, deadline: Deadline, *, kill_at, threads, warm_start, gap_abs, tolerance
) -> SolveInfo:
    """Solve ``model`` with CBC; stop it at ``deadline``, kill it at ``kill_at``.

    CBC's own limit (``-sec``) is the time left when it starts. It counts
    CBC's CPU seconds (the bundled CBC 2.10 can crash when it stops on a
    wall-clock limit during the root node, seen on CP4IM vote with OCT), so
    this process also stops it at the deadline: SIGINT (CBC then writes its
    incumbent), and SIGKILL at ``kill_at``.

    When CBC dies of a signal (a crash, e.g. SIGSEGV while stopping with a
    mipstart), it runs again without the warm start if time is left; the
    returned :class:`SolveInfo` names the signal in ``crashed`` either way.

    The trace comes from CBC's log (:mod:`odtstudy.milp._cbc_log`): it gives
    objective values only, so ``model.count`` is not used.
    """
    info = _solve_once(
        model, deadline, kill_at, threads, warm_start, gap_abs, tolerance
    )
    if info.crashed is None or not warm_start:
        return info
    if deadline.expired(reserve=_RETRY_MIN_SECONDS):
        return info
    retry = _solve_once(model, deadline, kill_at, threads, False, gap_abs, tolerance)
    retry.crashed = info.crashed if retry.crashed is None else retry.crashed
    retry.retried_without_warm_start = True
    retry.solve_time += info.solve_time
    return retry


def _solve_once(
    model, deadline, kill_at, threads, warm_start, gap_abs, tolerance
) -> SolveInfo:
    clock = Deadline(None)  # the solve's stopwatch, on the fit's clock
    cpu_start = _children_cpu()
    with SolverProcess(prefix="odtstudy_cbc_") as proc:
        mps, sol, log = proc.file("model.mps"), proc.file("sol.txt"), proc.file("log")
        write_mps(model, mps, deadline)
        argv = [cbc_executable(), mps]
        if warm_start and model.has_start:
            _write_start(model, proc.file("start.txt"))
            argv += ["-mips", proc.file("start.txt")]
        limit = deadline.remaining()
        if limit is not None:
            argv += ["-sec", f"{max(limit, 0.01):.3f}", "-timeMode", "cpu"]
        argv += ["-ratio", "0", "-allow", repr(float(gap_abs)), "-threads", threads]
        if tolerance is not None:
            argv += ["-integerTolerance", tolerance, "-primalTolerance", tolerance]
        argv += ["-solve", "-solution", sol]
        started = deadline.elapsed()
        outcome = proc.run(argv, log=log, stop_at=deadline.at, kill_at=kill_at)
        status_line, x = (
            (None, None) if outcome.killed else _read_solution(sol, model.n_cols)
        )
        try:
            with open(log) as fh:
                text = fh.read()
        except OSError:
            text = ""
        if os.environ.get("ODTSTUDY_CBC_LOG"):
            with open(os.environ["ODTSTUDY_CBC_LOG"], "w") as fh:
                fh.write(text)
    elapsed = clock.elapsed()
    cpu = _children_cpu() - cpu_start if cpu_start is not None else None
    match = _CBC_CPU.search(text)
    if match:
        cpu = float(match.group(1))
    trace = _trace(text, model, started, outcome.elapsed, cpu)
    if outcome.killed:
        return SolveInfo(
            False, False, None, None, None, "killed at the time limit", elapsed,
            solver_cpu_time=cpu, killed=True, trace=trace,
        )  # fmt: skip
    crashed = _crash_signal(outcome)
    result = _CBC_RESULT.search(text)
    if crashed is not None:
        status_text = f"solver crashed ({crashed})"
        result = None  # whatever it wrote before dying is not trusted
    elif result:
        status_text = result.group(1).strip()
    elif "Problem is stopped" in text:
        status_text = "Stopped on time limit before the search started"
    elif outcome.returncode not in (0, None):
        status_text = f"solver error (exit code {outcome.returncode})"
    else:
        status_text = "no result reported"
    # CBC writes "Stopped on time - objective value ..." even when it stopped
    # before finding any solution: only trust values it announced in its log
    # and that satisfy the model
    has_solution = (
        result is not None
        and _CBC_OBJ.search(text) is not None
        and x is not None
        and model.is_feasible(x, 1e-3)
    )
    # interrupted early (reading, preprocessing), CBC can still report
    # "Optimal solution found" (seen on a BendersOCT master with a
    # mipstart): a solve we interrupted proves nothing
    proven = (
        has_solution
        and not outcome.interrupted
        and status_text.startswith("Optimal")
        and (status_line or "").startswith("Optimal")
    )
    objective = model.objective(x) if has_solution else None
    if has_solution:
        model.assign(x)
    void_bound = _bound_passes_incumbent(text)
    proven = proven and not void_bound
    if void_bound:
        trace = [(at, obj, None, count) for at, obj, _, count in trace]
    bound = None
    match = None if crashed or void_bound else _CBC_BOUND.search(text)
    if match and abs(float(match.group(1))) < _NO_BOUND:
        bound = float(match.group(1)) + model.offset
    elif proven:
        bound = objective
    gap = 0.0 if proven else relative_gap(objective, bound)
    return SolveInfo(
        has_solution, proven, objective, bound, gap, status_text, elapsed,
        solver_cpu_time=cpu, crashed=crashed, trace=trace,
    )  # fmt: skip
