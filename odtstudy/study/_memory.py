"""Memory of a fit: the worker's own peak above its start, plus its solver children.

The worker resets the kernel's peak-RSS mark (``VmHWM``) before ``fit`` and
reads it after, so its own peak during the fit is exact even when a Cython
loop holds the interpreter. Solver processes it starts (CBC) are sampled by a
thread while the fit waits on them, and their kernel-recorded peak is read
once they are reaped.
"""

from __future__ import annotations

import resource
import threading

import psutil

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


def mapped_mb() -> float:
    """Address space of this process now (what ``RLIMIT_AS`` limits)."""
    return psutil.Process().memory_info().vms / _MB


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


def reaped_children_peak_mb() -> float:
    """Largest peak RSS among the child processes this process has reaped."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def tree_rss_mb(process: psutil.Process, include_self: bool = True) -> float:
    """Resident memory of ``process`` and all its descendants now."""
    members = process.children(recursive=True)
    if include_self:
        members.append(process)
    total = 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total / _MB


class ChildrenSampler:
    """Background thread sampling the RSS of this process's descendants."""

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._process = psutil.Process()

    def _loop(self):
        while not self._stop.wait(self.interval):
            try:
                rss = tree_rss_mb(self._process, include_self=False)
            except psutil.Error:
                continue
            self.peak_mb = max(self.peak_mb, rss)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
