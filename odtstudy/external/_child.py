"""Run a solver call in a forked child that is killed at a deadline.

For published solvers that do not stop at their own time limit (GOSDT checks
its clock only every 10,000 iterations) or have none (LicketySPLIT), the
adapter forks, solves in the child, and reads the pickled answer back through
a pipe. The child leads its own process group, so a kill takes the solver's
threads and processes with it.
"""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys

from odtstudy._deadline import Deadline
from odtstudy._isolation import kill_group

__all__ = ["call_in_fresh_process", "call_with_deadline"]


def _child(write_fd, task, setup):
    """In the forked child: run ``task``, write its pickled outcome, exit."""
    try:
        os.setpgid(0, 0)
        if setup is not None:
            setup()
        try:
            outcome = ("ok", task())
        except BaseException as exc:  # handed back and re-raised by the parent
            outcome = ("error", exc)
        try:
            payload = pickle.dumps(outcome)
        except Exception as exc:
            payload = pickle.dumps(("error", RuntimeError(f"unpicklable: {exc}")))
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)


def call_with_deadline(task, timeout, setup=None):
    """Return ``(True, task())`` computed in a forked child, or ``(False, None)``
    when the child has not answered within ``timeout`` seconds (it is then
    killed with its process group).

    Parameters
    ----------
    task : callable
        Takes no argument; returns a picklable value.
    timeout : float or None
        Seconds; ``None`` waits as long as the task runs.
    setup : callable, default=None
        Called first in the child (e.g. to silence its output).

    Raises
    ------
    Exception
        What ``task`` raised, re-raised here; a ``RuntimeError`` when the
        child died without answering (e.g. a crash of the solver).
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        os.close(read_fd)
        _child(write_fd, task, setup)
    os.close(write_fd)
    payload = bytearray()
    deadline = Deadline(timeout)
    finished = False
    try:
        while True:
            remaining = deadline.remaining()
            if remaining is not None and remaining <= 0:
                break
            if select.select([read_fd], [], [], remaining)[0]:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    finished = True
                    break
                payload += chunk
    finally:
        os.close(read_fd)
        kill_group(pid)
        os.waitpid(pid, 0)
    if not finished:
        return False, None
    if not payload:
        raise RuntimeError("the solver process died without an answer")
    status, value = pickle.loads(bytes(payload))
    if status == "error":
        raise value
    return True, value


def _serve() -> None:
    """In a fresh interpreter: read a pickled task on stdin, write its outcome.

    The task's own output goes to ``/dev/null``; the answer is written on the
    original standard output.
    """
    answer = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    task = pickle.loads(sys.stdin.buffer.read())
    try:
        outcome = ("ok", task())
    except BaseException as exc:
        outcome = ("error", exc)
    answer.write(pickle.dumps(outcome))
    answer.close()


def call_in_fresh_process(task, timeout):
    """:func:`call_with_deadline` in a new interpreter instead of a fork.

    For solvers that crash when other native libraries share their process
    (GOSDT segfaults in a process that has imported PuLP). ``task`` must be
    picklable (a module-level function or a ``functools.partial`` of one); the
    interpreter's start-up counts against ``timeout``.
    """
    child = subprocess.Popen(
        [sys.executable, "-c", "from odtstudy.external._child import _serve; _serve()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        payload, _ = child.communicate(pickle.dumps(task), timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, None
    finally:
        kill_group(child.pid)
        child.wait()
    if not payload:
        raise RuntimeError(
            f"the solver process died without an answer (exit code {child.returncode})"
        )
    status, value = pickle.loads(payload)
    if status == "error":
        raise value
    return True, value
