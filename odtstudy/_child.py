"""Run a call in this process, in a forked child or in a fresh interpreter.

A child with a deadline, at the base layer. Its users: the adapters of
published solvers that do not stop at their own time limit (GOSDT checks its
clock only every 10,000 iterations) or have none (LicketySPLIT), the
bounded forests' pricing, and the study's preflight fits and cache-fraction
probes. The call runs in a child killed at a deadline, and the pickled
answer comes back through a pipe. The child is a
:class:`odtstudy._isolation.GroupChild`: it leads its own process group, so
a kill takes the solver's threads and processes with it.

Every call returns a :class:`SolverCall` whose timings keep the harness
apart from the solver: ``startup_s`` is a fresh interpreter's start-up, its
imports and the data it receives (0 in this process and in a fork, which
starts with everything loaded), ``solver_time_s`` the task itself, timed
where it runs.

Memory (the rule is :data:`odtstudy.study._memory.MEMORY_RULE`): before
its task starts, a child writes a header on the pipe, the time (on the
system-wide monotonic clock of :func:`odtstudy._deadline.now`) and its
unique memory (USS); with its answer it sends the peak resident memory its
task added (:class:`odtstudy._procmem.SolverCallPeak`). The parent records
both in :data:`odtstudy._procmem.harness_children`, so the fit's memory
measure charges the child only what its task adds, whether it is a fork
(whose pages are its parent's until written) or a fresh interpreter (whose
start-up is not the fit's).
"""

from __future__ import annotations

import gc
import importlib
import os
import pickle
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from odtstudy._deadline import Deadline, now
from odtstudy._isolation import GroupChild, die_with_parent
from odtstudy._procmem import SolverCallPeak, harness_children, uss_mb

__all__ = [
    "SolverCall",
    "call_in_fork",
    "call_in_fresh_interpreter",
    "call_in_process",
    "call_with_deadline",
]

# the task's start on the shared monotonic clock, the child's USS then (MB)
_HEADER = struct.Struct("!dd")
_SERVE = "from odtstudy._child import _serve; _serve({})"


@dataclass
class SolverCall:
    """What a solver call gave back, and where its time went.

    Attributes
    ----------
    finished : bool
        False when the call was killed at its timeout (``value`` is then
        ``None``).
    value : object
        What the task returned.
    startup_s : float
        Seconds from the call to the task's start in a fresh interpreter:
        pickling the data, starting the interpreter, imports, unpickling.
        0 in this process and in a fork.
    solver_time_s : float
        Seconds the task ran (until the kill, when it was killed).
    """

    finished: bool
    value: object = None
    startup_s: float = 0.0
    solver_time_s: float = 0.0

    def timings(self) -> dict:
        """``startup_s`` and ``solver_time_s``, as an adapter's ``stats_``
        entries."""
        return {"startup_s": self.startup_s, "solver_time_s": self.solver_time_s}


def call_in_process(task) -> SolverCall:
    """Run ``task()`` here and time it (an adapter whose solver stops itself)."""
    start = now()
    value = task()
    return SolverCall(True, value, 0.0, now() - start)


def _run_task(answer, task, fresh) -> None:
    """In the child: write the header, run ``task``, write its pickled
    ``(status, value or exception, seconds, peak MB added)``. A fork's
    unique memory is taken as 0 (its pages are its parent's until written;
    reading it would take as long as a small solver call)."""
    uss = uss_mb() if fresh else 0.0
    peak = SolverCallPeak()
    start = now()
    answer.write(_HEADER.pack(start, uss))
    answer.flush()
    try:
        outcome = ("ok", task())
    except BaseException as exc:  # handed back and re-raised by the parent
        outcome = ("error", exc)
    measured = (now() - start, peak.added_mb())
    try:
        payload = pickle.dumps((*outcome, *measured))
    except Exception as exc:
        payload = pickle.dumps(
            ("error", RuntimeError(f"unpicklable: {exc}"), *measured)
        )
    answer.write(payload)
    answer.flush()


def _await_answer(child, deadline, fresh) -> SolverCall:
    """Read the child's header and answer until EOF or ``deadline``; kill its
    group and reap it either way."""
    payload = bytearray()
    task_start = None
    finished = False
    try:
        while not child.expired():
            chunk = child.read(child.remaining())
            if chunk is None:
                continue
            if not chunk:
                finished = True
                break
            payload += chunk
            if task_start is None and len(payload) >= _HEADER.size:
                task_start, uss = _HEADER.unpack_from(payload)
                harness_children.call_began(child.pid, uss)
    finally:
        child.kill()
        code = child.close()
    ended = now()
    startup = 0.0
    if fresh:
        startup = (ended if task_start is None else task_start) - deadline.start
    ran = 0.0 if task_start is None else ended - task_start
    answer = None
    try:
        if finished and len(payload) > _HEADER.size:
            answer = pickle.loads(bytes(payload[_HEADER.size :]))
    finally:
        harness_children.ended(child.pid, None if answer is None else answer[3])
    if not finished:
        return SolverCall(False, None, startup, ran)
    if answer is None:
        raise RuntimeError(
            f"the solver process died without an answer (exit code {code})"
        )
    status, value, ran, _ = answer
    if status == "error":
        raise value
    return SolverCall(True, value, startup, ran)


def _forked_child(write_fd, task, setup):
    """In the forked child (its own process group, dying with its parent): run
    ``task``, write its outcome."""
    if setup is not None:
        setup()
    with os.fdopen(write_fd, "wb") as answer:
        _run_task(answer, task, fresh=False)


def call_in_fork(task, timeout, setup=None, guard=None) -> SolverCall:
    """Run ``task()`` in a forked child killed after ``timeout`` seconds.

    Parameters
    ----------
    task : callable
        Takes no argument; returns a picklable value.
    timeout : float or None
        Seconds; ``None`` waits as long as the task runs.
    setup : callable, default=None
        Called first in the child (e.g. to silence its output).
    guard : odtstudy._isolation.GroupGuard, default=None
        Kills the child's process group, with what the task started in it,
        should this process die first (the child itself always dies with
        this process).

    Returns
    -------
    SolverCall
        ``finished`` is False when the child had not answered in time (it
        is then killed with its process group).

    Raises
    ------
    Exception
        What ``task`` raised, re-raised here; a ``RuntimeError`` when the
        child died without answering (e.g. a crash of the solver).
    """
    deadline = Deadline(timeout)
    # the child's collector then leaves the parent's objects (and their
    # shared pages) alone; the lock keeps the memory sampler off meanwhile
    gc.freeze()
    try:
        with harness_children.lock:
            child = GroupChild.fork(
                lambda write_fd: _forked_child(write_fd, task, setup),
                deadline_at=deadline.at,
                guard=guard,
            )
            harness_children.starting(child.pid)
    finally:
        gc.unfreeze()
    return _await_answer(child, deadline, fresh=False)


def call_with_deadline(task, timeout, setup=None, guard=None):
    """:func:`call_in_fork`, as ``(finished, value)``."""
    call = call_in_fork(task, timeout, setup, guard)
    return call.finished, call.value


def _serve(parent_pid: int) -> None:
    """In a fresh interpreter started by ``parent_pid``: read the pickled
    ``(preload, task)`` on stdin, import the ``preload`` modules, run the task
    (its own output goes to ``/dev/null``) and write the header and outcome
    on the original standard output. It dies with its parent (it leads its
    own session, which a kill of its parent's group misses)."""
    die_with_parent(parent_pid)
    answer = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    preload, task = pickle.load(sys.stdin.buffer)
    for module in preload:
        importlib.import_module(module)
    _run_task(answer, task, fresh=True)
    answer.close()


def call_in_fresh_interpreter(task, timeout, preload=()) -> SolverCall:
    """:func:`call_in_fork` in a new interpreter instead of a fork.

    For solvers that crash when other native libraries share their process
    (GOSDT segfaults in a process that has imported PuLP). ``task`` must be
    picklable (a module-level function or a ``functools.partial`` of one).
    The interpreter's start-up counts against ``timeout`` and is reported as
    ``startup_s``.

    Parameters
    ----------
    task : callable
    timeout : float or None
    preload : sequence of str, default=()
        Modules the interpreter imports before the task starts (the
        solver's package): their import is start-up, as it is for a solver
        run in this process, whose package is imported before ``fit``.

    Returns
    -------
    SolverCall
    """
    deadline = Deadline(timeout)
    with tempfile.TemporaryFile() as request:
        pickle.dump((tuple(preload), task), request)
        request.seek(0)
        with harness_children.lock:
            child = GroupChild.spawn(
                [sys.executable, "-c", _SERVE.format(os.getpid())],
                deadline_at=deadline.at,
                stdin=request,
                stderr=subprocess.DEVNULL,
            )
            harness_children.starting(child.pid)
    return _await_answer(child, deadline, fresh=True)
