"""``--require-idle``: start a study only on a machine that is not busy.

Timings taken beside other work measure the machine, not the learners. The
runner's workers need cores of their own; the rest of the machine is *free*
when the 1-minute load average is at most the logical cores minus the
workers (the same rule the report's protocol line warns by).
"""

from __future__ import annotations

import os
import time

__all__ = ["free_cores", "wait_until_idle"]

#: Seconds between two looks at the load average while waiting.
POLL_S = 5.0


def free_cores(workers: int) -> int:
    """The logical cores the study's ``workers`` leave to other processes."""
    return max(0, (os.cpu_count() or 1) - int(workers))


def wait_until_idle(
    workers: int,
    wait_s: float,
    *,
    load=None,
    sleep=None,
    clock=None,
    say=None,
) -> float:
    """Return the 1-minute load once it is at most :func:`free_cores`.

    Parameters
    ----------
    workers : int
        Runs the study executes at once.
    wait_s : float
        How long to wait for the load to fall (0: look once).
    load, sleep, clock : callables, optional
        ``os.getloadavg``, ``time.sleep`` and ``time.monotonic`` by default
        (tests pass their own).
    say : callable, optional
        Called with a line while waiting.

    Raises
    ------
    RuntimeError
        When the load is still above the free cores after ``wait_s``
        seconds, naming both and the way out.
    """
    load = load or os.getloadavg
    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    free = free_cores(workers)
    deadline = clock() + max(0.0, float(wait_s))
    while True:
        now = load()[0]
        if now <= free:
            return now
        if clock() >= deadline:
            raise RuntimeError(
                f"--require-idle: the machine is busy: load average {now:.2f} "
                f"over the last minute, above the {free} of {os.cpu_count()} "
                f"cores the study's {workers} worker(s) leave free, after "
                f"waiting {wait_s:g} s. Stop the other work, wait longer "
                "(--require-idle SECONDS), or run without --require-idle (the "
                "report then warns that the timings shared the CPUs)"
            )
        if say is not None:
            say(f"odtstudy: waiting for the load ({now:.2f}) to fall to {free}")
        sleep(min(POLL_S, max(0.0, deadline - clock())))
