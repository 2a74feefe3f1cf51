"""What a study key may hold, and how a problem is worded: the origin and key
it names (:class:`Where`), the value shown with its kind, a close match."""

from __future__ import annotations

import difflib
import json
import math
import numbers
import re
from dataclasses import dataclass

from odtstudy.study.config._schema import TIER_KEYS
from odtstudy.study.registry import TASKS

__all__ = ["LISTS", "Where", "close", "nonempty_str", "shown", "value_problem"]


@dataclass
class Where:
    """How errors name their origin and keys.

    ``sections`` maps a study key to the table that set its value
    (``"[study]"``, ``"[scales.smoke]"`` or ``"override"``); ``None`` for a
    config built in Python, whose keys are named bare.
    """

    origin: str
    sections: dict | None = None
    tables: frozenset = frozenset()

    def key(self, key, section=None) -> str:
        if self.sections is None:
            return key
        section = section or self.sections.get(key, "[study]")
        return f"{key} (override)" if section == "override" else f"{section} {key}"

    def method(self, label, key=None) -> str:
        if self.sections is None:
            head = f"method {label!r}"
        elif label in self.tables:
            head = f"[methods.{label}]"
        else:
            head = f"{self.key('methods')} {label!r}"
        return f"{head} {key}" if key else head

    def error(self, label, problem) -> ValueError:
        return ValueError(f"{self.origin}: {label}: {problem}")


def _kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, numbers.Integral):
        return "an integer"
    if isinstance(value, numbers.Real):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def shown(value) -> str:
    return f"{value!r} ({_kind(value)})"


def _toml(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def close(name, choices) -> str:
    match = difflib.get_close_matches(str(name), sorted(choices), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


# ------------------------------------------------------------ value types
def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _plain_name(value) -> bool:
    return (
        isinstance(value, str)
        and re.fullmatch(r"[A-Za-z0-9._-]+", value) is not None
        and value not in (".", "..")
    )


def nonempty_str(value) -> bool:
    return isinstance(value, str) and value != ""


# key -> (what is expected, an example, test of a value)
_SCALARS = {
    "name": (
        "a plain name (letters, digits, '-', '_', '.'; no path: results go "
        "to <output>/<name>)",
        'name = "my-study"',
        _plain_name,
    ),
    "description": ("a string", 'description = "..."', lambda v: isinstance(v, str)),
    "folds": (
        "an integer >= 1 (1: fit and score on all the rows)",
        "folds = 5",
        lambda v: _is_int(v) and v >= 1,
    ),
    "workers": ("an integer >= 1", "workers = 2", lambda v: _is_int(v) and v >= 1),
    "repeats": (
        "an integer >= 1 (fits per run, each in a fresh process)",
        "repeats = 3",
        lambda v: _is_int(v) and v >= 1,
    ),
    "max_thresholds": (
        'an integer >= 1, or "all" for every midpoint (no max_thresholds key: 8)',
        "max_thresholds = 8",
        lambda v: v is None or v == "all" or (_is_int(v) and v >= 1),
    ),
    "time_limit": (
        "a number of seconds > 0",
        "time_limit = 60",
        lambda v: _is_number(v) and v > 0,
    ),
    "grace_s": (
        "a number of seconds >= 0",
        "grace_s = 10",
        lambda v: _is_number(v) and v >= 0,
    ),
    "memory_limit_mb": (
        "a number of MB > 0 (or no memory_limit_mb key: no limit)",
        "memory_limit_mb = 4096",
        lambda v: v is None or (_is_number(v) and v > 0),
    ),
    "optional_methods": (
        "a list of the study's method labels, run when installed and skipped "
        "with a note otherwise",
        'optional_methods = ["osrt"]',
        lambda v: (
            v is None
            or (isinstance(v, (list, tuple)) and all(nonempty_str(x) for x in v))
        ),
    ),
    "task": (
        " or ".join(f'"{task}"' for task in TASKS) + ' (no task key: "classification")',
        'task = "regression"',
        lambda v: v in TASKS,
    ),
}
# key -> (what the items are, an example list, test of an item)
LISTS = {
    "datasets": ("dataset names", '["zoo-1", "uci/iris"]', nonempty_str),
    "methods": ("method labels", '["cart", "dl85"]', nonempty_str),
    "depths": ("integers >= 1", "[2, 3, 4]", lambda v: _is_int(v) and v >= 1),
    "seeds": (
        "integers >= 0",
        "[0, 1, 2]",
        lambda v: _is_int(v) and 0 <= v < 2**32,
    ),
}


_TIER_EXAMPLE = '[[study.tiers]] name = "binary" datasets = ["vehicle"] depths = [5, 6]'


def _tiers_problem(value) -> str | None:
    """Why ``value`` is not a valid ``tiers`` list, or None."""
    if not isinstance(value, (list, tuple)):
        return f"expected a list of tables, got {shown(value)}; e.g. {_TIER_EXAMPLE}"
    names = []
    for i, tier in enumerate(value):
        if not isinstance(tier, dict):
            return f"item {i} is {shown(tier)}, not a table; e.g. {_TIER_EXAMPLE}"
        name = tier.get("name")
        head = f"tier {name!r}" if _plain_name(name) else f"item {i}"
        unknown = sorted(set(tier) - set(TIER_KEYS))
        if unknown:
            return (
                f"{head} has the unknown key {unknown[0]!r}"
                f"{close(unknown[0], TIER_KEYS)}; a tier has the keys "
                f"{', '.join(TIER_KEYS)}"
            )
        if not _plain_name(name):
            return f"{head} needs a plain name, got {shown(name)}; e.g. {_TIER_EXAMPLE}"
        if name in names:
            return f"tier {name!r} appears twice; name each tier once"
        names.append(name)
        for key in ("datasets", "depths"):
            if key not in tier:
                return f"{head} needs {key}; e.g. {_TIER_EXAMPLE}"
        for key in ("datasets", "depths", "methods"):
            if key in tier and tier[key] != "all":
                problem = value_problem(key, tier[key])
                if problem:
                    return f"{head} {key}: {problem}"
        if tier.get("methods") == "all":
            return f"{head} methods: leave methods out to run all the study's"
    return None


def value_problem(key, value) -> str | None:
    """Why ``value`` is not a valid value of the study key ``key``, or None."""
    if key == "tiers":
        return _tiers_problem(value)
    if key in _SCALARS:
        expected, example, ok = _SCALARS[key]
        if ok(value):
            return None
        return f"expected {expected}, got {shown(value)}; e.g. {example}"
    if key == "methods" and value == "all":
        return None
    noun, example, ok = LISTS[key]
    alternative = ' (or methods = "all")' if key == "methods" else ""
    if not isinstance(value, (list, tuple)):
        fix = f"{key} = [{_toml(value)}]" if ok(value) else f"{key} = {example}"
        return (
            f"expected a list of {noun}, got {shown(value)}; write {fix}{alternative}"
        )
    if not value:
        return f"expected a non-empty list of {noun}; e.g. {key} = {example}"
    bad = [item for item in value if not ok(item)]
    if bad:
        return (
            f"expected a list of {noun}, but it holds {shown(bad[0])}; e.g. "
            f"{key} = {example}{alternative}"
        )
    twice = [item for i, item in enumerate(value) if item in value[:i]]
    if twice:
        return f"lists {twice[0]!r} twice; name each entry once"
    if key == "methods" and "all" in value and len(value) > 1:
        return 'methods = "all" runs every method; it cannot be mixed with labels'
    return None
