"""Isolating a fit in a child process: its own temp folder, one kill for its group."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile

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
