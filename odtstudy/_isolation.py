"""Isolating a fit in a child process: its own temp folder, one kill for its
group, and :class:`GroupChild`, the one child with a deadline."""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from odtstudy._deadline import now

_PR_SET_PDEATHSIG = 1  # linux/prctl.h

# Lines on stdin: "add <group>", "drop <group>". At end of file (the runner
# exited or was killed) every group still added is SIGKILLed.
_GUARD = r"""
trap '' HUP INT TERM PIPE
groups=" "
while read -r op group; do
    case $op in
        add) groups="$groups$group " ;;
        drop) groups="${groups%% $group *} ${groups#* $group }" ;;
    esac
done
for group in $groups; do
    kill -s KILL -- "-$group" 2>/dev/null
done
"""


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (and ``pid`` itself, in case
    it has not yet made its own group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def use_temp_dir(path: str) -> None:
    """Make ``path`` this process's temp folder, for it and the solvers it starts."""
    for key in ("TMPDIR", "TEMP", "TMP"):
        os.environ[key] = path
    tempfile.tempdir = path


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux), and
    exit now if the parent is already gone (it died before the call)."""
    if sys.platform.startswith("linux"):
        # the running process's own symbols hold libc's prctl (find_library
        # would start a subprocess, whose memory would count as the fit's)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)


class GroupGuard:
    """A ``/bin/sh`` watchdog that SIGKILLs the process groups it holds once
    the process that started it is gone, however it ended (even SIGKILL).

    A worker's parent-death signal kills the worker only; what the run started
    in the worker's group (a learner's solver) would outlive a killed runner.
    The guard reads a pipe only this process writes: at its end of file it
    kills every group still added. Forked children must close
    :attr:`fileno` (else they hold the pipe open).
    """

    def __init__(self):
        self._proc = subprocess.Popen(
            ["/bin/sh", "-c", _GUARD],
            stdin=subprocess.PIPE,
            start_new_session=True,  # a kill of the runner's group spares it
        )
        self.fileno = self._proc.stdin.fileno()

    def _send(self, line: str) -> None:
        try:
            self._proc.stdin.write(line.encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def add(self, group: int) -> None:
        """Kill process group ``group`` if this process dies before :meth:`drop`."""
        self._send(f"add {int(group)}")

    def drop(self, group: int) -> None:
        """Forget ``group`` (it is over: its id may be reused)."""
        self._send(f"drop {int(group)}")

    def close(self) -> None:
        """Stop the guard, killing the groups still added."""
        if self._proc.stdin.closed:
            return
        self._proc.stdin.close()
        self._proc.wait()

    def __enter__(self) -> GroupGuard:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class GroupChild:
    """A child process leading its own process group, with a wall-clock
    deadline: killed as a group, reaped once.

    The one way the package runs work in a child it may have to kill: the
    study's workers, the forked and fresh-interpreter solver calls of
    :mod:`odtstudy._child` and the solver supervisors of
    :mod:`odtstudy.milp._process`. Start one with :meth:`fork` (a Python
    callable) or :meth:`spawn` (a command); read what it writes with
    :meth:`read`, check :meth:`expired`, :meth:`kill` its group at the
    deadline, and :meth:`close` it (reap, kill what is left of its group,
    close the pipe) whatever happened.

    Attributes
    ----------
    pid : int
        The child's pid, also its process group's id.
    deadline_at : float or None
        :func:`odtstudy._deadline.now` value past which the child is due to
        be killed; ``None`` for none. The owner may move it.
    exit_status : int or None
        The raw wait status once the child was reaped (``os.waitpid``'s).
    """

    def __init__(self, pid, read_fd, deadline_at=None, popen=None, guard=None):
        self.pid = pid
        self.deadline_at = deadline_at
        self.exit_status = None
        self._fd = read_fd
        self._popen = popen
        self._guard = guard
        if guard is not None:
            guard.add(pid)

    @classmethod
    def fork(cls, target, *, deadline_at=None, guard=None, lead_group=True):
        """Fork a child that runs ``target(write_fd)`` then exits.

        The child dies with this process (its parent-death signal), closes
        ``guard``'s pipe (the guard must see this process's end only) and
        leads its own process group unless ``lead_group`` is False
        (``target`` then makes its own, e.g. a session). It exits 0 when
        ``target`` returns, 1 when it raised. What it writes on
        ``write_fd`` is read with :meth:`read`.

        Parameters
        ----------
        target : callable
            Takes the write end of the pipe (an ``int``); runs in the child.
        deadline_at : float or None
            See :attr:`deadline_at`.
        guard : GroupGuard, default=None
            Kills the child's group should this process die first; the group
            is dropped from it by :meth:`close`.
        lead_group : bool, default=True

        Returns
        -------
        GroupChild
        """
        read_fd, write_fd = os.pipe()
        parent_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            code = 1
            try:
                die_with_parent(parent_pid)
                os.close(read_fd)
                if guard is not None:
                    os.close(guard.fileno)
                if lead_group:
                    os.setpgid(0, 0)
                target(write_fd)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        return cls(pid, read_fd, deadline_at, guard=guard)

    @classmethod
    def spawn(cls, argv, *, deadline_at=None, guard=None, **popen_kwargs):
        """Start ``argv`` in a new session, its standard output on a pipe.

        ``popen_kwargs`` go to :class:`subprocess.Popen` (``stdin``,
        ``stderr``, ...). The command does not die with this process unless
        it asks for it (:func:`die_with_parent`) or ``guard`` holds it.

        Returns
        -------
        GroupChild
            Its :attr:`stdin` is the command's standard input when
            ``stdin=subprocess.PIPE``.
        """
        popen = subprocess.Popen(
            argv, stdout=subprocess.PIPE, start_new_session=True, **popen_kwargs
        )
        return cls(popen.pid, popen.stdout.fileno(), deadline_at, popen, guard)

    @property
    def stdin(self):
        """The spawned command's standard input (``None`` for a fork)."""
        return None if self._popen is None else self._popen.stdin

    def remaining(self) -> float | None:
        """Seconds to :attr:`deadline_at` (negative once past), or ``None``."""
        if self.deadline_at is None:
            return None
        return self.deadline_at - now()

    def expired(self) -> bool:
        """True once :attr:`deadline_at` has passed."""
        remaining = self.remaining()
        return remaining is not None and remaining < 0

    def read(self, timeout: float | None = 0.0) -> bytes | None:
        """What the child wrote, waiting up to ``timeout`` seconds for it
        (``None``: as long as it takes); ``b""`` once it closed its end,
        ``None`` when nothing came in time."""
        if timeout is not None:
            timeout = max(timeout, 0.0)
        if not select.select([self._fd], [], [], timeout)[0]:
            return None
        return os.read(self._fd, 1 << 20)

    def poll(self) -> bool:
        """True once the child has exited (it is then reaped)."""
        return self._reap(block=False)

    def wait(self, until: float | None = None) -> bool:
        """Wait until the child exits or the clock reaches ``until`` (a
        :func:`odtstudy._deadline.now` value; ``None``: no end); True when it
        exited."""
        while not self.poll():
            if until is not None and now() >= until:
                return False
            pause = 0.01 if until is None else until - now()
            time.sleep(min(0.01, max(pause, 0.0)))
        return True

    def kill(self) -> None:
        """SIGKILL the child's process group (the child too, while it has
        not been reaped; after, its pid may belong to another process)."""
        if self.exit_status is None:
            kill_group(self.pid)
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> int | None:
        """Reap the child (waiting for it to exit: :meth:`kill` it first to
        stop it), kill what is left of its group, drop it from the guard and
        close the pipe. Returns its exit code (``-N`` for signal N)."""
        if self._fd is not None:
            self._reap(block=True)
            self.kill()
            if self._guard is not None:
                self._guard.drop(self.pid)
            if self._popen is not None:
                self._popen.stdout.close()
                if self._popen.stdin is not None:
                    self._popen.stdin.close()
            else:
                os.close(self._fd)
            self._fd = None
        return os.waitstatus_to_exitcode(self.exit_status)

    def _reap(self, block: bool) -> bool:
        if self.exit_status is not None:
            return True
        if self._popen is not None:
            code = self._popen.wait() if block else self._popen.poll()
            if code is not None:
                self.exit_status = _wait_status(code)
        else:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            if pid == self.pid:
                self.exit_status = status
        return self.exit_status is not None


def _wait_status(returncode: int) -> int:
    """The raw wait status of a :attr:`subprocess.Popen.returncode`."""
    if returncode < 0:
        return -returncode  # signalled: the status holds the signal number
    return returncode << 8
