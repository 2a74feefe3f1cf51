"""One deadline per fit: the clock every learner's time limit is measured on.

A learner creates a :class:`Deadline` when it enters ``fit`` and hands it (or
what :meth:`Deadline.remaining` says) to every stage: model building, warm
starts, solver calls, generations, the trees of a forest. All of them read
the same monotonic clock, :func:`time.perf_counter`.
"""

from __future__ import annotations

import time

__all__ = ["Deadline", "DeadlineReached", "FitClockMixin", "allowed_fit_time", "now"]


def now() -> float:
    """The clock every :class:`Deadline` reads (:func:`time.perf_counter`),
    for code that compares with :attr:`Deadline.at` (a solver process's
    supervisor)."""
    return time.perf_counter()


def allowed_fit_time(time_limit: float) -> float:
    """Wall-clock seconds a learner may take on ``time_limit``: T × 1.1 + 1 s.

    Every learner returns its best tree within this time; a study counts a
    claim of optimality only when the fit returned within it.
    """
    return float(time_limit) * 1.1 + 1.0


class DeadlineReached(Exception):
    """Raised by :meth:`Deadline.check` once the deadline has passed."""


class Deadline:
    """A point in time ``time_limit`` seconds after construction.

    Parameters
    ----------
    time_limit : float or None
        Seconds from now; ``None`` means no limit (the deadline never
        expires and :meth:`remaining` is ``None``).

    Attributes
    ----------
    time_limit : float or None
    start : float
        :func:`time.perf_counter` value at construction.
    at : float or None
        :func:`time.perf_counter` value of the deadline.

    Examples
    --------
    >>> deadline = Deadline(60)
    >>> deadline.expired(), 59 < deadline.remaining() <= 60
    (False, True)
    >>> Deadline(None).remaining() is None
    True
    """

    __slots__ = ("at", "start", "time_limit")

    def __init__(self, time_limit: float | None, start: float | None = None):
        self.start = time.perf_counter() if start is None else float(start)
        self.time_limit = None if time_limit is None else float(time_limit)
        self.at = None if time_limit is None else self.start + self.time_limit

    @classmethod
    def of(cls, deadline: Deadline | float | None) -> Deadline:
        """``deadline`` itself, or a new :class:`Deadline` from a time limit."""
        return deadline if isinstance(deadline, Deadline) else cls(deadline)

    @property
    def limited(self) -> bool:
        """True when there is a limit."""
        return self.at is not None

    def elapsed(self) -> float:
        """Seconds since construction."""
        return time.perf_counter() - self.start

    def remaining(self, reserve: float = 0.0) -> float | None:
        """Seconds left (never negative) minus ``reserve``; ``None`` if unlimited."""
        if self.at is None:
            return None
        return max(self.at - time.perf_counter() - reserve, 0.0)

    def expired(self, reserve: float = 0.0) -> bool:
        """True once fewer than ``reserve`` seconds are left."""
        return self.at is not None and time.perf_counter() >= self.at - reserve

    def check(self, what: str = "") -> None:
        """Raise :class:`DeadlineReached` when the deadline has passed."""
        if self.expired():
            raise DeadlineReached(f"time limit reached{' ' + what if what else ''}")

    def fraction(self, share: float) -> Deadline:
        """A deadline ``share`` of the remaining time from now (same if unlimited)."""
        remaining = self.remaining()
        return Deadline(None if remaining is None else share * remaining)

    def __repr__(self) -> str:
        if self.at is None:
            return "Deadline(None)"
        return f"Deadline({self.time_limit:g}, remaining={self.remaining():.3f})"


class FitClockMixin:
    """The clock of an estimator's fit: started by :meth:`_enter_fit`, first
    thing in ``fit``; every deadline of the fit counts from there."""

    def _enter_fit(self) -> None:
        """Start the fit's clock: called first in ``fit``, so that validation,
        threshold selection and conversions count against ``time_limit`` and
        in ``fit_time_``."""
        self._fit_entered = now()

    def _fit_deadline(self) -> Deadline:
        """This fit's deadline: ``time_limit`` from entering ``fit``."""
        return Deadline(
            getattr(self, "time_limit", None),
            start=getattr(self, "_fit_entered", None),
        )

    def _time_left(self) -> float | None:
        """Seconds left of ``time_limit`` (``None``: no limit); never 0, which
        the solvers would read as no limit."""
        left = self._fit_deadline().remaining()
        return None if left is None else max(left, 1e-3)
