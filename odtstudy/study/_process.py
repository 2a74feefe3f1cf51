"""Killing a worker together with every process it started."""

from __future__ import annotations

import os
import signal


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (and ``pid`` itself, in case
    it has not yet made its own group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
