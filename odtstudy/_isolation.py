"""Isolating a fit in a child process: its own temp folder, one kill for its group."""

from __future__ import annotations

import os
import signal
import tempfile


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
