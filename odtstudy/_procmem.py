"""A process's memory as the kernel reports it, and the solver calls' children.

The readers work on this process (``/proc/self``); :func:`uss_mb` on any.
:class:`SolverCallPeak` measures one solver call the way the study charges
a fit (:mod:`odtstudy.study._memory`): the peak resident memory above the
level when the call begins. :data:`harness_children` records the Python
children that run solver calls (:mod:`odtstudy._child`) so that
the study's sampler charges each only what its call adds.
"""

from __future__ import annotations

import os
import resource
import threading

import psutil

__all__ = [
    "SolverCallPeak",
    "current_rss_mb",
    "harness_children",
    "peak_rss_mb",
    "reset_peak_rss",
    "uss_mb",
]

_MB = 2.0**20


def _status_kb(key: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def current_rss_mb() -> float:
    """Resident memory of this process now."""
    kb = _status_kb("VmRSS")
    return kb / 1024 if kb is not None else psutil.Process().memory_info().rss / _MB


def reset_peak_rss() -> bool:
    """Reset this process's peak-RSS mark to its current RSS (Linux only)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float:
    """Peak resident memory of this process (since the last reset)."""
    kb = _status_kb("VmHWM")
    if kb is None:
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024


def uss_mb(process: psutil.Process | None = None) -> float:
    """Unique memory (USS: pages no other process maps) of ``process``
    (default: this one), in MB."""
    return (process or psutil.Process()).memory_full_info().uss / _MB


class SolverCallPeak:
    """Peak resident memory this process adds during a solver call.

    Create it when the call begins (it records the RSS and resets the peak
    mark); :meth:`added_mb` is then the peak above that level. Pages a
    forked child shares with its parent are resident from the start, so
    only what the call allocates counts.
    """

    def __init__(self):
        self._start = current_rss_mb()
        self._exact = reset_peak_rss()

    def added_mb(self) -> float | None:
        """The peak above the start, or ``None`` where the kernel keeps no
        resettable peak (the sampled figure then stands alone)."""
        if not self._exact:
            return None
        return max(0.0, peak_rss_mb() - self._start)


class _HarnessChildren:
    """The Python children this process started to run solver calls in.

    For each: its USS when its call began (``None`` before: none of its
    memory is the fit's yet), and once it has answered, the peak it
    reported (:class:`SolverCallPeak`).
    """

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Start empty and unlocked (in a forked child: the parent's children
        are not its own, and the parent may have held the lock)."""
        self.lock = threading.Lock()
        self._baselines: dict[int, float | None] = {}
        self._reported: list[float] = []

    def starting(self, pid: int) -> None:
        """Record ``pid`` as a child whose call has not begun (call under
        :attr:`lock`, taken before the child was created, so that no
        sample sees it unrecorded)."""
        self._baselines[pid] = None

    def call_began(self, pid: int, uss: float) -> None:
        """Record the child's USS (MB) when its call began."""
        with self.lock:
            self._baselines[pid] = float(uss)

    def ended(self, pid: int, added_mb: float | None = None) -> None:
        """Forget ``pid`` once reaped (pids are reused), keeping the peak it
        reported, if any."""
        with self.lock:
            self._baselines.pop(pid, None)
            if added_mb is not None:
                self._reported.append(float(added_mb))

    def baseline(self, pid: int) -> tuple[bool, float | None]:
        """``(True, USS at the call's start or None)`` for a harness child,
        ``(False, None)`` for any other process."""
        with_baseline = pid in self._baselines
        return with_baseline, self._baselines.get(pid)

    def take_reported(self) -> list[float]:
        """The peaks reported since the last call, and forget them."""
        with self.lock:
            reported, self._reported = self._reported, []
        return reported


#: The harness children of this process.
harness_children = _HarnessChildren()
os.register_at_fork(after_in_child=harness_children.reset)
