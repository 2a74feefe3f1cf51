"""CBC's progress, read from its log: incumbents and bounds over time.

CBC prints a line each time it finds an integer solution and, every few
hundred nodes, the incumbent and the best possible value::

    Cbc0012I Integer solution of 11 found by heuristic after 15798 iterations and 41 nodes (2.33 seconds)
    Cbc0004I Integer solution of 10 found after 16271 iterations and 54 nodes (2.36 seconds)
    Cbc0010I After 251 nodes, 1 on tree, 10 best solution, best possible 0 (2.84 seconds)
    Cbc0005I Partial search - best objective 0.9 (best possible 0), took 84504 iterations and 3805 nodes (3.42 seconds)
    Cbc0001I Search completed - best objective 10, took 51109 iterations and 1223 nodes (4.35 seconds)

The seconds are CBC's own clock: CPU seconds with ``-timeMode cpu``, which
:mod:`odtstudy.milp._cbc` uses; :func:`wall_per_cpu` gives the factor that
maps them to wall-clock seconds. Values are in the units of the MPS file's
objective (without the model's constant).
"""  # noqa: E501

from __future__ import annotations

import math
import re

__all__ = ["cbc_progress", "wall_per_cpu"]


def _num(name):
    return rf"(?P<{name}>[-+0-9.eE]+|[-+]?inf)"


_TIME = r".*\(" + _num("seconds") + r" seconds\)$"
_PROGRESS = [
    re.compile(pattern)
    for pattern in (
        r"^Cbc\d{4}I Integer solution of " + _num("incumbent") + r" found\b" + _TIME,
        r"^Cbc0010I After \d+ nodes, \d+ on tree, " + _num("incumbent")
        + r" best solution, best possible " + _num("bound") + _TIME,
        r"^Cbc0005I Partial search - best objective " + _num("incumbent")
        + r" \(best possible " + _num("bound") + r"\)," + _TIME,
        r"^Cbc0001I Search completed - best objective " + _num("incumbent")
        + r"," + _TIME,
    )
]  # fmt: skip
_TOTALS = re.compile(
    r"^Total time \(CPU seconds\):\s+" + _num("cpu")
    + r"\s+\(Wallclock seconds\):\s+" + _num("wall"),
    re.MULTILINE,
)  # fmt: skip
#: CBC writes 1e+50 for "no incumbent yet" (and -1e+50 for no bound).
_NONE_ABOVE = 1e49


def _value(text):
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) < _NONE_ABOVE else None


def cbc_progress(text: str) -> list[tuple[float, float | None, float | None]]:
    """``(seconds, incumbent, bound)`` for each progress line of a CBC log.

    ``incumbent`` or ``bound`` is ``None`` where the line gives none (CBC
    has no solution yet, or the line only announces a solution). Lines that
    do not parse are skipped: a truncated log gives the points it holds.

    Parameters
    ----------
    text : str
        CBC's log (stdout).

    Returns
    -------
    list of tuple
        In log order; seconds on CBC's clock.
    """
    points = []
    for line in text.splitlines():
        for pattern in _PROGRESS:
            match = pattern.match(line.strip())
            if match is None:
                continue
            found = match.groupdict()
            seconds = _value(found["seconds"])
            objective = _value(found["incumbent"])
            bound = _value(found.get("bound"))
            if seconds is not None and (objective is not None or bound is not None):
                points.append((seconds, objective, bound))
            break
    return points


def wall_per_cpu(text: str, elapsed: float | None, cpu: float | None) -> float:
    """Wall-clock seconds per CBC CPU second, to place the log's times.

    From CBC's closing ``Total time`` line when it wrote one, else from
    ``elapsed`` (the process's wall-clock time) over ``cpu`` (its CPU time);
    1 when neither is known.
    """
    match = _TOTALS.search(text)
    if match:
        cpu_s, wall_s = _value(match["cpu"]), _value(match["wall"])
    else:
        cpu_s, wall_s = cpu, elapsed
    if cpu_s and wall_s and cpu_s > 0 and wall_s > 0:
        return wall_s / cpu_s
    return 1.0
