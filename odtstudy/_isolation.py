"""Isolating a fit in a child process: its own temp folder, one kill for its group."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import tempfile

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


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
