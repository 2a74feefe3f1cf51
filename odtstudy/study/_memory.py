"""Memory of a fit: what the fit itself adds, one rule for every learner.

A learner may run its solver in the worker process, in a forked child or in
a fresh interpreter (:mod:`odtstudy._child`), and may start native
solver programs (CBC). :data:`MEMORY_RULE` charges them alike:

- each process that runs the solver in Python is charged its peak resident
  memory (RSS) above its level when the call begins. The process resets
  the kernel's peak-RSS mark (``VmHWM``) at the start and reads it at the
  end, so the peak is exact even when a Cython loop holds the interpreter.
  For the worker the call is ``fit``. A forked child's RSS at its start
  already holds the pages it shares with the worker (its data, modules and
  heap), and a fresh interpreter's holds its start-up, imports and the data
  it received: neither is the fit's. The child reports its peak with its
  answer (:class:`odtstudy._procmem.SolverCallPeak`);
- every process the fit starts is also sampled by a thread while the fit
  runs: its unique memory (USS: pages no other process maps, from
  ``/proc/<pid>/smaps_rollup``), for a harness child above its USS when its
  call began (:data:`odtstudy._procmem.harness_children`; nothing before).
  A harness child is charged the larger of the two figures: the sample sees
  pages a fork copies on writing to them, which its RSS does not count; its
  report sees a peak between two samples, and is all there is for a child
  that ran less than one interval (:data:`SCAN_S`, 100 ms). A solver
  program (CBC), or a child killed before answering, is charged its
  sampled peak.

The worker's peak and its children's are added (the children's: the larger
of the sampled peak of all of them and the largest peak a harness child
reported), so the figure is an upper bound when they peak at different
times. The runner, which samples a
worker it kills, has no registry of the worker's children: there a fresh
interpreter's start-up counts (:func:`tree_rss_mb`).
"""

from __future__ import annotations

import os
import threading
import time

import psutil

from odtstudy._procmem import (
    current_rss_mb,
    harness_children,
    peak_rss_mb,
    reset_peak_rss,
    uss_mb,
)

__all__ = [
    "MEMORY_RULE",
    "ChildrenSampler",
    "FitMemory",
    "current_rss_mb",
    "descendants_mb",
    "has_children",
    "mapped_mb",
    "peak_rss_mb",
    "reset_peak_rss",
    "tree_rss_mb",
]

#: The rule, in one sentence a report can print under its memory figures.
MEMORY_RULE = (
    "Fit memory is what the fit adds: each process that runs the solver (the "
    "fitting process, or the fork or fresh interpreter the adapter runs it in) "
    "is charged its peak resident memory above its level when the solver call "
    "begins, and any other process the fit starts its peak unique memory (USS), "
    "so a forked solver is not charged the pages it shares with its parent nor "
    "a fresh interpreter its start-up."
)
_MB = 2.0**20


def mapped_mb() -> float:
    """Address space of this process now (what ``RLIMIT_AS`` limits)."""
    return psutil.Process().memory_info().vms / _MB


def _added_mb(member: psutil.Process) -> float:
    """Unique memory of a descendant above what the rule does not charge."""
    is_harness, baseline = harness_children.baseline(member.pid)
    if is_harness and baseline is None:  # its solver call has not begun
        return 0.0
    return max(0.0, uss_mb(member) - (baseline or 0.0))


def descendants_mb(process: psutil.Process) -> float:
    """What the descendants of ``process`` add now, by :data:`MEMORY_RULE`."""
    total = 0.0
    with harness_children.lock:
        for member in process.children(recursive=True):
            try:
                total += _added_mb(member)
            except psutil.Error:  # ended meanwhile
                pass
    return total


def tree_rss_mb(process: psutil.Process, include_self: bool = True) -> float:
    """Resident memory of ``process`` now (if ``include_self``) plus what its
    descendants add (:func:`descendants_mb`): each page they share with it
    is counted once."""
    total = descendants_mb(process)
    if include_self:
        try:
            total += process.memory_info().rss / _MB
        except psutil.Error:
            pass
    return total


#: Seconds between two listings of the descendants while there are some:
#: a listing reads every process's /proc entry, and a solver child may
#: share the sampler's core.
SCAN_S = 0.1


def has_children() -> bool:
    """Whether this process has a child, running or not yet reaped.

    One system call, where listing the descendants reads every process's
    ``/proc`` entry: a sampler that polls every 10 ms asks this first, so a
    fit that starts no process does not share its core with the sampling.
    """
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


class ChildrenSampler:
    """Background thread sampling what this process's descendants add: every
    ``interval`` it asks whether there is a child (one system call), and
    lists the descendants at most every :data:`SCAN_S`."""

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._process = psutil.Process()

    def _loop(self):
        next_scan = 0.0
        while not self._stop.wait(self.interval):
            if not has_children() or time.perf_counter() < next_scan:
                continue
            next_scan = time.perf_counter() + SCAN_S
            try:
                added = descendants_mb(self._process)
            except psutil.Error:
                continue
            self.peak_mb = max(self.peak_mb, added)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class FitMemory:
    """The memory one fit adds, by :data:`MEMORY_RULE`.

    Create it right before ``fit`` (it records the process's RSS and resets
    its peak mark) and run ``fit`` inside it as a context manager.

    Parameters
    ----------
    interval : float, default=0.01
        Seconds between two samples of the descendants.

    Attributes
    ----------
    rss_before_mb : float
        This process's RSS when the fit starts.
    fit_mb : float
        What the fit added (set on exit).
    peak_rss_mb : float
        This process's peak RSS (since its start, or the last reset) plus
        what its descendants added at their peak (set on exit).

    Examples
    --------
    >>> memory = FitMemory()
    >>> with memory:
    ...     block = b"x" * (64 * 2**20)
    >>> memory.fit_mb > 50
    True
    """

    def __init__(self, interval: float = 0.01):
        self.rss_before_mb = current_rss_mb()
        self._peak_before = peak_rss_mb()
        self._exact = reset_peak_rss()
        self._children = ChildrenSampler(interval)
        harness_children.take_reported()  # another fit's
        self.fit_mb = None
        self.peak_rss_mb = None

    def __enter__(self):
        self._children.__enter__()
        return self

    def __exit__(self, *exc):
        self._children.__exit__(*exc)
        own_peak = peak_rss_mb() if self._exact else current_rss_mb()
        children = max([self._children.peak_mb, *harness_children.take_reported()])
        self.fit_mb = max(0.0, own_peak - self.rss_before_mb) + children
        self.peak_rss_mb = max(self._peak_before, own_peak) + children
