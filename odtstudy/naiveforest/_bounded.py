"""Master solves that return by their time limit, whatever the solver does.

HiGHS's QP solver does not stop at its ``time_limit`` option (a QP on
20,000 rows ran 5 s past a 0.5 s limit) and highspy has no QP interrupt;
PuLP spends time of its own around HiGHS, building and reading its model.
A :class:`BoundedSolves` therefore runs a time-limited solve in a forked
child (:func:`odtstudy._child.call_in_fork`) that is killed at the
limit, and raises ``RuntimeError`` then, as a solver stopped by its limit
does.

A fork costs 30-80 ms (measured on a loaded 2-core machine), more than a
whole solve on a few hundred rows, so short solves stay in this process:
below :data:`CHILD_MIN_ROWS` rows, while the previous solve took less than
:data:`CHILD_MIN_SECONDS`. One in-process solve can then overrun the limit
by little more than that. Without a time limit every solve runs here.
"""

from __future__ import annotations

from odtstudy._deadline import now

__all__ = ["CHILD_MIN_ROWS", "CHILD_MIN_SECONDS", "BoundedSolves"]

#: From this many rows a master solve runs in a child (MDBoost's QP takes
#: 0.15-0.5 s on 1,000 rows, 0.01-0.09 s on 200-500)
CHILD_MIN_ROWS = 1000
#: A solve that took this long sends the next ones to a child (many columns)
CHILD_MIN_SECONDS = 0.1


class BoundedSolves:
    """Runs the successive solves of one master within their time limits.

    Parameters
    ----------
    n_rows : int
        Rows of the master (training rows of the forest).
    """

    def __init__(self, n_rows: int):
        self.n_rows = int(n_rows)
        self._last_seconds = 0.0

    def in_child(self, time_limit) -> bool:
        """Whether a solve limited to ``time_limit`` seconds runs in a child."""
        if time_limit is None:
            return False
        return self.n_rows >= CHILD_MIN_ROWS or self._last_seconds >= CHILD_MIN_SECONDS

    def run(self, task, time_limit, what: str):
        """Return ``task()``, computed within ``time_limit`` seconds.

        Parameters
        ----------
        task : callable
            Takes no argument; returns a picklable value. In a child, what
            it changes in its objects is lost: it must only return.
        time_limit : float or None
            Seconds; ``None``: no limit (the task runs here).
        what : str
            The problem, for the error message.

        Raises
        ------
        RuntimeError
            When the child was killed at the limit, and whatever ``task``
            raised.
        """
        if not self.in_child(time_limit):
            start = now()
            value = task()
            self._last_seconds = now() - start
            return value
        from odtstudy._child import call_in_fork

        call = call_in_fork(task, max(float(time_limit), 0.01))
        self._last_seconds = call.solver_time_s
        if not call.finished:
            raise RuntimeError(
                f"the {what} was stopped at its time limit ({time_limit:.3g} s)"
            )
        return call.value
