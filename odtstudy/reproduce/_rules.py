"""The thresholds of a reproduction's verdict rules and a verdict's sensitivity
to them.

Every number a claims module compares with (a share, a factor, a test's
alpha, a fewest count) is a named entry of the ``[thresholds]`` table of its
data file ``papers/<name>/published.toml`` (``[history]`` says when they were
set; the report says whether that was before the runs)::

    [sensitivity]
    margin = 0.1                 # each threshold moved by ± 10 % of its value

    [thresholds]
    partly = 0.5                 # the same in every data file (or say why)
    alpha = 0.05                 # paired tests
    min_cells = 3                # an int: a count, never moved
    reproduced = {value = 0.75, why = "the paper's 3 of 4"}
    tie = {value = 0.1, margin = 0.5, why = "..."}   # its own margin
    wipe = {value = 0.4, margin = 0, why = "..."}    # a setting: never moved

A rule reads them through :class:`Rules`, which remembers the names it read,
so :func:`sensitivity` can judge the claim again with each of them moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

__all__ = ["Rules", "Threshold", "parse_thresholds", "sensitivity"]


@dataclass(frozen=True)
class Threshold:
    """One named threshold of a data file.

    Attributes
    ----------
    name : str
    value : int or float
        An int is a count (never moved by the sensitivity).
    why : str
        Why the value departs from the usual one (empty when it does not).
    margin : float or None
        Its own relative sensitivity margin (0: a setting of the paper that
        runs are matched on, never moved); None: the file's.
    """

    name: str
    value: float
    why: str = ""
    margin: float | None = None

    @property
    def moves(self) -> bool:
        """Whether the sensitivity moves it (counts and settings do not)."""
        return not isinstance(self.value, int) and self.margin != 0


def parse_thresholds(table: dict, where: str) -> dict:
    """``[thresholds]`` of a data file as name -> :class:`Threshold`.

    Raises
    ------
    ValueError
        For an entry that is not a number or ``{value, why, margin}``
        (``where`` names the file).
    """
    out = {}
    for name, entry in table.items():
        spec = entry if isinstance(entry, dict) else {"value": entry}
        unknown = set(spec) - {"value", "why", "margin"}
        value = spec.get("value")
        if unknown or isinstance(value, bool) or not isinstance(value, Real):
            raise ValueError(
                f"{where} [thresholds] {name}: give a number or "
                f'{{value = <number>, why = "...", margin = <fraction>}}'
                + (f" (unknown {sorted(unknown)})" if unknown else "")
            )
        margin = spec.get("margin")
        if margin is not None and not (isinstance(margin, Real) and margin >= 0):
            raise ValueError(f"{where} [thresholds] {name}: margin must be >= 0")
        out[name] = Threshold(name, value, str(spec.get("why", "")), margin)
    return out


class Rules:
    """The thresholds a rule reads, by name: ``rules["partly"]``.

    Parameters
    ----------
    thresholds : dict
        Name -> :class:`Threshold` (``Published.thresholds``).
    source : str, default="the data file"
        Named in the error for an unknown threshold.
    moved : dict, default=None
        Name -> value replacing the threshold's own (the sensitivity).

    Attributes
    ----------
    read : list of str
        The names read so far, in first-read order.
    """

    def __init__(self, thresholds: dict, source: str = "the data file", moved=None):
        self._thresholds = thresholds
        self._source = source
        self._moved = dict(moved or {})
        self.read: list = []

    def __getitem__(self, name: str):
        if name not in self._thresholds:
            raise KeyError(
                f"no threshold {name!r} in [thresholds] of {self._source} "
                f"(known: {', '.join(sorted(self._thresholds)) or 'none'})"
            )
        if name not in self.read:
            self.read.append(name)
        return self._moved.get(name, self._thresholds[name].value)

    def threshold(self, name: str) -> Threshold:
        """The :class:`Threshold` of ``name`` (its value as in the file)."""
        return self._thresholds[name]

    def moved(self, name: str, value) -> Rules:
        """A copy reading ``value`` for ``name``, with nothing read yet."""
        return Rules(self._thresholds, self._source, {**self._moved, name: value})


def _number(value: float) -> str:
    return f"{value:.3g}"


def sensitivity(judge, rules: Rules, margin: float | None) -> str:
    """The verdict of ``judge`` with each threshold it read moved by ± margin.

    Parameters
    ----------
    judge : callable
        ``judge(rules) -> ClaimResult``; already called with ``rules``, so
        ``rules.read`` names the thresholds its verdict depends on.
    rules : Rules
    margin : float or None
        The file's relative margin (a threshold's own margin wins); None: no
        sensitivity.

    Returns
    -------
    str
        ``"partly 0.45 → partly, 0.55 → not reproduced; alpha ..."`` when a
        move changes the verdict; ``"partly with each of partly, alpha moved
        by ± 10%"`` when none does; or why there is nothing to move.
    """
    if margin is None:
        return "no margin in the data file"
    parts, verdicts, steps = [], set(), set()
    for name in list(rules.read):
        threshold = rules.threshold(name)
        if not threshold.moves:
            continue
        step = threshold.margin if threshold.margin is not None else margin
        steps.add(step)
        value = threshold.value
        shown = []
        for moved in (value * (1 - step), value * (1 + step)):
            verdict = judge(rules.moved(name, moved)).verdict
            verdicts.add(verdict)
            shown.append(f"{_number(moved)} → {verdict}")
        parts.append(f"{name} {', '.join(shown)}")
    if not parts:
        return "no threshold decides this verdict"
    if len(verdicts) == 1:
        names = ", ".join(p.split(" ", 1)[0] for p in parts)
        step = f"± {min(steps):.0%}" if len(steps) == 1 else "± its margin"
        return f"{verdicts.pop()} with each of {names} moved by {step}"
    return "; ".join(parts)
