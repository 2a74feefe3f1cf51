"""Study configurations: which datasets, methods, depths, folds and limits to run.

A study is a TOML file (the built-in ones live in ``odtstudy/study/configs``)::

    [study]
    name = "quick"               # results go to <output>/<name>/
    datasets = ["zoo-1", "uci/iris"]
    methods = "all"              # every registered method that imports
    depths = [2, 3, 4]
    folds = 5
    seeds = [0]
    time_limit = 10              # seconds per run, given to the learner
    memory_limit_mb = 4096
    max_thresholds = 8           # Binarizer setting for 0/1-only learners
    workers = 2                  # runs at the same time (one process each)
    repeats = 1                  # fits per run, each in a fresh process

    [methods.dl85-asc]           # a labelled variant with its own parameters
    method = "dl85"
    branching = "asc"

    [datasets.mydata]            # the user's table: datasets = ["mydata", ...]
    path = "data/my.csv"         # CSV or Parquet, relative to this file
    target = "label"
    categorical = ["colour"]     # optional (non-numeric columns always are)

    [methods.mine]               # the user's learner: methods = ["mine", ...]
    target = "mypkg.trees:MyTree"  # any scikit-learn classifier
    data = "numeric"             # or "binary": the runner binarises for it
    exact = false                # true: it proves optimality
    objective_family = "misclassification"  # what its objective_ measures

    [scales.smoke]               # overrides selected by --scale smoke
    depths = [2]

A study whose datasets need their own depths and methods lists **tiers**
instead of ``datasets`` and ``depths``; each tier is a grid of its own::

    [study]
    methods = ["dl85", "pystreed", "pycontree", "dl85-numeric"]

    [[study.tiers]]
    name = "binary"
    datasets = ["vehicle"]
    depths = [5, 6]
    methods = ["dl85", "pystreed"]   # optional: all the study's

    [[study.tiers]]
    name = "numeric"
    datasets = ["contree/bank"]
    depths = [3, 4]
    methods = ["pycontree", "dl85-numeric"]

A scale replaces the tiers as a whole (``[[scales.smoke.tiers]]``).

Checks
------
:func:`load_config` checks a study before any run starts. Every problem is a
``ValueError`` whose message names the file, the key (``[study] folds``,
``[scales.smoke] depths``, ``[methods.dl85-asc] branching``, ``folds
(override)``) and the fix:

* layout: the only tables are ``[study]``, ``[methods.<label>]``,
  ``[datasets.<name>]`` and ``[scales.<scale>]`` with the scales ``smoke``,
  ``default`` and ``paper``; an unknown key in ``[study]`` or in a scale is
  an error;
* types, in ``[study]``, in every scale (used or not) and in the keyword
  overrides of :func:`load_config`:

  ==================  ===================================================
  ``name``            a plain name: letters, digits, ``-``, ``_``, ``.``
                      (not ``.`` or ``..``, no path); default: the file name
  ``description``     a string
  ``datasets``        a non-empty list of dataset names (see
                      :func:`odtstudy.datasets.list_datasets`)
  ``methods``         a non-empty list of method labels, or ``"all"``
  ``depths``          a non-empty list of integers >= 1
  ``seeds``           a non-empty list of integers >= 0
  ``folds``           an integer >= 1 (1: fit and score on all the rows)
  ``workers``         an integer >= 1
  ``repeats``         an integer >= 1: fits per run, each in a fresh
                      process, the methods of a (dataset, depth, fold,
                      seed) interleaved; the record holds every repeat's
                      times and their median; absent: 1
  ``max_thresholds``  an integer >= 1, or ``"all"`` (every midpoint);
                      absent: 8
  ``time_limit``      seconds, a number > 0
  ``grace_s``         seconds, a number >= 0
  ``memory_limit_mb`` a number > 0 (absent: no limit)
  ``tiers``           a list of tables ``{name, datasets, depths,
                      methods}`` (``methods`` optional: all the study's);
                      replaces ``datasets`` and ``depths``; every method
                      of the study runs in some tier
  ==================  ===================================================

  a single value where a list is expected is an error (never iterated), a
  boolean is not a number, and a list may not name an entry twice;
* ``[methods.<label>]``: ``method`` is a registered method (default: the
  label), ``time_limit`` a number > 0, every other key a constructor
  parameter of the learner; ``max_depth`` and ``random_state`` are set by the
  runner from ``depths`` and ``seeds``. A table whose label is in no
  ``methods`` list (of ``[study]`` or of a scale) is an error, unless the
  study runs ``"all"`` methods;
* ``[datasets.<name>]`` (the user's data): ``path`` (CSV or Parquet,
  relative to the study file) exists and reads, ``target`` is one of its
  columns, ``categorical`` lists columns of it, no value is missing, there
  are two classes or more, and the name is not a built-in dataset's; the
  table is registered as ``user/<name>`` for this process and its workers
  (forked from it). A table in no ``datasets`` list is an error;
* ``[methods.<label>] target = "module:Class"`` (the user's learner,
  imported with the study file's folder on ``sys.path``): it imports and
  has ``fit``; ``data`` is ``"numeric"`` or ``"binary"`` (the runner
  binarises for it), ``exact`` a boolean, ``objective_family`` a string
  (default ``"misclassification"``); the learner is registered under its
  import path, which the protocol id then names. Such a learner runs with
  the local runner (``--scheduler`` is refused: Dask workers would not know
  it, nor a user table);
* ``folds`` fits every dataset: at most its number of rows, and at most the
  size of its smallest class (stratified folds);
* preflight: every method is built and fitted once on a tiny synthetic 0/1
  dataset at the largest depth, with its time limit capped at one second
  (about a second in all for the ``quick`` study). A ``ValueError`` or
  ``TypeError`` raised there, such as a bad parameter value or a depth the
  learner does not support (e.g. ``pricing="exhaustive"`` beyond depth 3, or
  a DL8.5 ``max_cache_size`` too small for the depth), is reported before
  any run, naming the parameter or ``depths``. Each fit runs in a forked
  process, so a learner that crashes or ignores its time limit cannot take
  the caller down; such failures are left to the runs, which record them.

:meth:`StudyConfig.validate` runs the same checks on a config built in Python
(messages then name ``study '<name>'``); it skips the preflight fit unless
asked (``validate(preflight=True)``).
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from odtstudy.datasets._loaders import _resolve, load_dataset
from odtstudy.study._preflight import preflight_check
from odtstudy.study._user_inputs import (
    USER_METHOD_KEYS,
    register_user_datasets,
    register_user_methods,
)
from odtstudy.study.registry import RUNNER_PARAMS, get_method, list_methods

__all__ = [
    "MethodSpec",
    "StudyConfig",
    "add_config_dir",
    "config_dirs",
    "list_studies",
    "load_config",
    "remove_config_dir",
    "study_file",
]

SCALES = ("smoke", "default", "paper")
_STUDY_KEYS = {
    "name",
    "description",
    "datasets",
    "methods",
    "depths",
    "folds",
    "seeds",
    "time_limit",
    "memory_limit_mb",
    "max_thresholds",
    "grace_s",
    "workers",
    "repeats",
    "tiers",
}
#: Keys of one tier of a study (``tiers = [{name = ..., ...}]``).
_TIER_KEYS = ("name", "datasets", "depths", "methods")
_TABLES = ("study", "methods", "scales", "datasets")


@dataclass(frozen=True)
class MethodSpec:
    """A labelled learner: a registered method plus constructor parameters.

    Parameters
    ----------
    label : str
        The name of the learner in the results (e.g. ``"dl85-asc"``).
    method : str
        A registered method (see :func:`odtstudy.study.list_methods`).
    params : dict
        Constructor parameters, on top of the method's defaults.
    time_limit : float, default=None
        Seconds per run for this learner; ``None``: the study's.
    """

    label: str
    method: str
    params: dict = field(default_factory=dict)
    time_limit: float | None = None


@dataclass
class StudyConfig:
    """Everything that defines a study's grid of runs (see the module doc)."""

    name: str
    datasets: list
    methods: list  # of MethodSpec
    depths: list = field(default_factory=lambda: [2, 3, 4])
    folds: int = 5
    seeds: list = field(default_factory=lambda: [0])
    time_limit: float = 60.0
    memory_limit_mb: float | None = None
    max_thresholds: int | None = 8
    grace_s: float = 10.0
    workers: int = 1
    repeats: int = 1
    description: str = ""
    scale: str = "default"
    tiers: list = field(default_factory=list)

    def __post_init__(self):
        if self.max_thresholds == "all":
            self.max_thresholds = None

    def grids(self) -> list:
        """The study's grids: ``(datasets, method labels, depths)`` per tier,
        or one grid of all the datasets, methods and depths."""
        if not self.tiers:
            return [(self.datasets, [s.label for s in self.methods], self.depths)]
        labels = [s.label for s in self.methods]
        return [
            (tier["datasets"], tier.get("methods", labels), tier["depths"])
            for tier in self.tiers
        ]

    def validate(self, preflight: bool = False):
        """Raise one clear error for anything that would fail a run later.

        Parameters
        ----------
        preflight : bool, default=False
            Also fit every method once on a tiny synthetic dataset at the
            largest depth (:meth:`odtstudy.study.registry.Method.preflight`),
            so that a bad parameter value or an unsupported depth is reported
            now. :func:`load_config` always does.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Naming ``study '<name>'``, the field and the fix.
        """
        return _check_config(self, _Where(f"study {self.name!r}"), preflight)


# --------------------------------------------------------------- messages
@dataclass
class _Where:
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


def _shown(value) -> str:
    return f"{value!r} ({_kind(value)})"


def _toml(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _close(name, choices) -> str:
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


def _nonempty_str(value) -> bool:
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
}
# key -> (what the items are, an example list, test of an item)
_LISTS = {
    "datasets": ("dataset names", '["zoo-1", "uci/iris"]', _nonempty_str),
    "methods": ("method labels", '["cart", "dl85"]', _nonempty_str),
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
        return f"expected a list of tables, got {_shown(value)}; e.g. {_TIER_EXAMPLE}"
    names = []
    for i, tier in enumerate(value):
        if not isinstance(tier, dict):
            return f"item {i} is {_shown(tier)}, not a table; e.g. {_TIER_EXAMPLE}"
        name = tier.get("name")
        head = f"tier {name!r}" if _plain_name(name) else f"item {i}"
        unknown = sorted(set(tier) - set(_TIER_KEYS))
        if unknown:
            return (
                f"{head} has the unknown key {unknown[0]!r}"
                f"{_close(unknown[0], _TIER_KEYS)}; a tier has the keys "
                f"{', '.join(_TIER_KEYS)}"
            )
        if not _plain_name(name):
            return (
                f"{head} needs a plain name, got {_shown(name)}; e.g. {_TIER_EXAMPLE}"
            )
        if name in names:
            return f"tier {name!r} appears twice; name each tier once"
        names.append(name)
        for key in ("datasets", "depths"):
            if key not in tier:
                return f"{head} needs {key}; e.g. {_TIER_EXAMPLE}"
        for key in ("datasets", "depths", "methods"):
            if key in tier and tier[key] != "all":
                problem = _value_problem(key, tier[key])
                if problem:
                    return f"{head} {key}: {problem}"
        if tier.get("methods") == "all":
            return f"{head} methods: leave methods out to run all the study's"
    return None


def _value_problem(key, value) -> str | None:
    """Why ``value`` is not a valid value of the study key ``key``, or None."""
    if key == "tiers":
        return _tiers_problem(value)
    if key in _SCALARS:
        expected, example, ok = _SCALARS[key]
        if ok(value):
            return None
        return f"expected {expected}, got {_shown(value)}; e.g. {example}"
    if key == "methods" and value == "all":
        return None
    noun, example, ok = _LISTS[key]
    alternative = ' (or methods = "all")' if key == "methods" else ""
    if not isinstance(value, (list, tuple)):
        fix = f"{key} = [{_toml(value)}]" if ok(value) else f"{key} = {example}"
        return (
            f"expected a list of {noun}, got {_shown(value)}; write {fix}{alternative}"
        )
    if not value:
        return f"expected a non-empty list of {noun}; e.g. {key} = {example}"
    bad = [item for item in value if not ok(item)]
    if bad:
        return (
            f"expected a list of {noun}, but it holds {_shown(bad[0])}; e.g. "
            f"{key} = {example}{alternative}"
        )
    twice = [item for i, item in enumerate(value) if item in value[:i]]
    if twice:
        return f"lists {twice[0]!r} twice; name each entry once"
    if key == "methods" and "all" in value and len(value) > 1:
        return 'methods = "all" runs every method; it cannot be mixed with labels'
    return None


# ----------------------------------------------------------------- layout
def _check_layout(data, where):
    """Top-level tables, scale names and the shape of [methods.*] tables."""
    for name, value in data.items():
        if name in _TABLES and isinstance(value, dict):
            continue
        if name in _STUDY_KEYS:
            raise where.error(
                name, f"a top-level key; study keys go under [study]: {name} = ..."
            )
        if name in _TABLES:
            raise where.error(name, f"expected a table [{name}], got {_shown(value)}")
        kind = "table" if isinstance(value, dict) else "top-level key"
        raise where.error(
            f"[{name}]" if isinstance(value, dict) else name,
            f"unknown {kind}{_close(name, _TABLES)}; a study has the tables "
            "[study], [methods.<label>], [datasets.<name>] and "
            "[scales.<smoke|default|paper>]",
        )
    if "study" not in data:
        raise where.error(
            "[study]", 'missing; a study needs e.g. [study] datasets = ["zoo-1"]'
        )
    for scale, table in data.get("scales", {}).items():
        if scale not in SCALES:
            raise where.error(
                f"[scales.{scale}]",
                f"unknown scale{_close(scale, SCALES)}; the scales are "
                f"{', '.join(SCALES)}",
            )
        if not isinstance(table, dict):
            raise where.error(
                f"[scales] {scale}", f"expected a table, got {_shown(table)}"
            )
    for kind, content in (("methods", "of parameters"), ("datasets", "with path")):
        for label, table in data.get(kind, {}).items():
            if not isinstance(table, dict):
                raise where.error(
                    f"[{kind}] {label}",
                    f"expected a table [{kind}.{label}] {content}, got {_shown(table)}",
                )


def _check_keys(table, section, where):
    """Every key of ``[study]``, a scale or the overrides: known, well typed."""
    for key, value in table.items():
        label = where.key(key, section)
        if key not in _STUDY_KEYS:
            raise where.error(
                label,
                f"unknown key{_close(key, _STUDY_KEYS)}; the keys are "
                f"{', '.join(sorted(_STUDY_KEYS))}",
            )
        problem = _value_problem(key, value)
        if problem:
            raise where.error(label, problem)


def _check_method_tables(tables, method_lists, where):
    """[methods.<label>] tables: used, ``method`` registered, known params."""
    runs_all = any(m == "all" or m == ["all"] for m in method_lists)
    used = {label for m in method_lists if isinstance(m, list) for label in m}
    for label, table in tables.items():
        head = f"[methods.{label}]"
        if not runs_all and label not in used:
            raise where.error(
                head,
                f"defined but not used: {label!r} is in no methods list "
                "([study] or [scales.*]); add it to a methods list or remove "
                "the table",
            )
        name = table.get("method", label)
        if not _nonempty_str(name):
            raise where.error(
                f"{head} method",
                f"expected a registered method name, got {_shown(name)}; e.g. "
                'method = "dl85"',
            )
        try:
            method = get_method(name)
        except KeyError as exc:
            key = f"{head} method" if "method" in table else head
            raise where.error(key, _unknown_method(exc, "method" in table)) from None
        if "time_limit" in table:
            problem = _value_problem("time_limit", table["time_limit"])
            if problem:
                raise where.error(f"{head} time_limit", problem)
        params = {k: v for k, v in table.items() if k not in ("method", "time_limit")}
        if method.available():
            _check_params(method, label, params, where)


def _unknown_method(exc, has_method_key) -> str:
    hint = (
        ""
        if has_method_key
        else '; a variant needs a [methods.<label>] table with method = "<one of '
        'those>"'
    )
    return f"{exc.args[0]}{hint}"


_RUNNER_SET = {
    "max_depth": "is set by the runner from the study's depths; remove it and "
    "list the depths in depths = [...]",
    "random_state": "is set by the runner from the study's seeds; remove it and "
    "list the seeds in seeds = [...]",
    "time_limit": "is set by the runner; give it as MethodSpec(time_limit=...) "
    "or as the study's time_limit",
}


def _check_params(method, label, params, where):
    """Parameter names of a method spec: constructor parameters, not runner's."""
    for key in params:
        if key in RUNNER_PARAMS:
            raise where.error(where.method(label, key), _RUNNER_SET[key])
    unknown = method._unknown_parameter(params)
    if unknown:
        name, message = unknown
        if name in _STUDY_KEYS and where.sections is not None:
            message += (
                f"; if {name} is meant for the study, it belongs in [study], "
                "above the first [methods.*] table"
            )
        raise where.error(where.method(label, name), message)


# ------------------------------------------------------------ full checks
def _check_config(config, where, preflight):
    """All checks of a built config; ``where`` words the messages."""
    _check_fields(config, where)
    _check_datasets(config, where)
    _check_specs(config, where)
    if preflight:
        preflight_check(config, where)
    return config


def _check_fields(config, where):
    for key in sorted(_STUDY_KEYS - {"methods"}):
        problem = _value_problem(key, getattr(config, key))
        if problem:
            raise where.error(where.key(key), problem)
    if config.scale not in SCALES:
        raise where.error("scale", f"expected one of {SCALES}, got {config.scale!r}")
    if not isinstance(config.methods, (list, tuple)) or not config.methods:
        example = '["cart", "dl85"]' if where.sections is not None else "[MethodSpec]"
        raise where.error(
            where.key("methods"), f"lists no (installed) methods; e.g. {example}"
        )
    for spec in config.methods:
        if not isinstance(spec, MethodSpec):
            raise where.error(
                "methods",
                f"expected MethodSpec items, got {_shown(spec)}; e.g. "
                'MethodSpec("dl85", "dl85")',
            )
    if config.tiers:
        _check_tier_methods(config, where)


def _check_tier_methods(config, where):
    """Each tier runs methods of the study, and each method runs in a tier."""
    labels = [spec.label for spec in config.methods]
    placed = set()
    for tier in config.tiers:
        for label in tier.get("methods", labels):
            if label not in labels:
                raise where.error(
                    where.key("tiers"),
                    f"tier {tier['name']!r} runs {label!r}, which is not in the "
                    f"study's methods{_close(label, labels)}; add it to methods "
                    "or remove it from the tier",
                )
            placed.add(label)
    idle = [label for label in labels if label not in placed]
    if idle:
        raise where.error(
            where.key("methods"),
            f"{idle[0]!r} runs in no tier; add it to a tier's methods or remove "
            "it from the study's methods",
        )


@lru_cache(maxsize=None)
def _class_sizes(name) -> tuple:
    """Rows, smallest class count and that class of a dataset."""
    y = load_dataset(name).y
    labels, counts = np.unique(y, return_counts=True)
    smallest = int(np.argmin(counts))
    return len(y), int(counts[smallest]), labels.tolist()[smallest]


def _check_datasets(config, where):
    """Names resolve, and every dataset can be split into ``folds`` folds."""
    for name in config.datasets:
        try:
            _resolve(name)
        except KeyError as exc:
            raise where.error(where.key("datasets"), exc.args[0]) from None
    if config.folds == 1:
        return
    sizes = {name: _class_sizes(name) for name in config.datasets}
    bound = min(min(rows, smallest) for rows, smallest, _ in sizes.values())
    for name, (rows, smallest, label) in sizes.items():
        if config.folds > rows:
            raise where.error(
                where.key("folds"),
                f"{config.folds} folds, but dataset {name!r} has only {rows} "
                f"rows; use folds <= {bound}",
            )
        if config.folds > smallest:
            raise where.error(
                where.key("folds"),
                f"{config.folds} folds, but the smallest class of dataset "
                f"{name!r} (class {label!r}) has {smallest} rows, too few for "
                f"stratified folds; use folds <= {bound}",
            )


def _check_specs(config, where):
    """Each method spec: unique label, registered, installed, known params."""
    seen = set()
    for spec in config.methods:
        label = spec.label
        for value in (label, spec.method):
            if not _nonempty_str(value):
                raise where.error(
                    "methods", f"labels and methods are strings, got {_shown(value)}"
                )
        if label in seen:
            raise where.error(
                where.key("methods"), f"label {label!r} appears twice; label each once"
            )
        seen.add(label)
        named_in_table = where.sections is not None and spec.method != label
        try:
            method = get_method(spec.method)
        except KeyError as exc:
            key = where.method(label, "method" if named_in_table else None)
            raise where.error(key, _unknown_method(exc, named_in_table)) from None
        try:
            method.estimator_class()
        except KeyError as exc:
            raise where.error(
                where.method(label),
                f"{exc.args[0]}; install its dependencies or remove it from "
                "the methods list",
            ) from None
        if not isinstance(spec.params, dict):
            raise where.error(
                where.method(label), f"params must be a dict, got {_shown(spec.params)}"
            )
        _check_params(method, label, spec.params, where)
        if spec.time_limit is not None:
            problem = _value_problem("time_limit", spec.time_limit)
            if problem:
                raise where.error(where.method(label, "time_limit"), problem)


# ----------------------------------------------------------------- files
_EXTRA_DIRS: list = []


def add_config_dir(folder) -> None:
    """Also find studies by name in ``folder`` (searched after the built-in ones).

    A study ``<name>`` there is the file ``<name>.toml`` or ``<name>/study.toml``.
    A higher layer registers its own studies this way (the reproductions do).

    Parameters
    ----------
    folder : path or importlib.resources.abc.Traversable
    """
    folder = Path(folder) if isinstance(folder, str) else folder
    if folder not in _EXTRA_DIRS:
        _EXTRA_DIRS.append(folder)


def remove_config_dir(folder) -> None:
    """Undo :func:`add_config_dir` (nothing happens for a folder not added)."""
    folder = Path(folder) if isinstance(folder, str) else folder
    if folder in _EXTRA_DIRS:
        _EXTRA_DIRS.remove(folder)


def config_dirs() -> list:
    """The folders searched for a study by name, in order: the built-in studies
    of ``odtstudy/study/configs``, then those given to :func:`add_config_dir`."""
    return [resources.files("odtstudy.study").joinpath("configs"), *_EXTRA_DIRS]


def _files_in(folder) -> dict:
    """Study name -> file of the studies in one folder."""
    files = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".toml") and entry.is_file():
            files[entry.name[: -len(".toml")]] = entry
        elif entry.is_dir() and entry.joinpath("study.toml").is_file():
            files[entry.name] = entry.joinpath("study.toml")
    return files


def study_file(name: str):
    """The file of the study ``name`` (the first folder of :func:`config_dirs`
    that holds it), or None when no folder does."""
    for folder in config_dirs():
        found = _files_in(folder).get(name)
        if found is not None:
            return found
    return None


def list_studies() -> list:
    """Names of the studies found by name (see :func:`config_dirs`)."""
    return sorted({name for folder in config_dirs() for name in _files_in(folder)})


def _decoded(data: bytes, origin: str) -> str:
    """A TOML file's text: UTF-8, as TOML requires (a leading byte-order mark
    is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{origin} is not UTF-8 text (byte {exc.start} is "
            f"{data[exc.start : exc.start + 1]!r}): TOML files are UTF-8; "
            "save it as UTF-8"
        ) from None


def _read_toml(name_or_path) -> tuple[dict, str, str, Path]:
    """The parsed file, how messages name it, its default study name and the
    folder its relative paths start from."""
    path = Path(str(name_or_path))
    if path.suffix == ".toml":
        if not path.is_file():
            raise ValueError(f"study config {path} does not exist")
        origin = f"study config {path}"
        text = _decoded(path.read_bytes(), origin)
        folder = path.resolve().parent
    else:
        resource = study_file(str(name_or_path))
        if resource is None:
            raise KeyError(
                f"unknown study {name_or_path!r}; built-in studies: "
                f"{list_studies()} (or pass a path to a .toml file)"
            )
        text, origin = resource.read_text(), f"study config {resource}"
        folder = Path(str(resource)).parent
    try:
        return tomllib.loads(text), origin, path.stem, folder
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"malformed {origin}: {exc}") from None


def _method_specs(names, tables) -> list:
    if names in (["all"], "all"):
        names = list(list_methods(available_only=True))
        names = [n for n in names if not get_method(n).defaults] + [
            label
            for label, table in tables.items()
            if label not in names and get_method(table.get("method", label)).available()
        ]
    specs = []
    for label in names:
        table = dict(tables.get(label, {}))
        method = table.pop("method", label)
        time_limit = table.pop("time_limit", None)
        specs.append(MethodSpec(label, method, table, time_limit))
    return specs


def _user_table(table, method) -> dict:
    """A user learner's table as a variant of its registered method."""
    params = {k: v for k, v in table.items() if k not in USER_METHOD_KEYS}
    return {"method": method, **params}


def _thresholds(value):
    return None if value == "all" else value


def load_config(name_or_path, scale: str = "default", **overrides) -> StudyConfig:
    """Load a built-in study by name (or a TOML file by path) at a scale.

    The study is checked, including a preflight fit of every method (see the
    module documentation), before it is returned.

    Parameters
    ----------
    name_or_path : str
        A name from :func:`list_studies` or a path to a ``.toml`` file.
    scale : {"smoke", "default", "paper"}
        Applies the ``[scales.<scale>]`` overrides of the file.
    **overrides
        Final overrides of study keys (e.g. ``folds=2``); ``None`` values are
        ignored.

    Returns
    -------
    StudyConfig

    Raises
    ------
    ValueError
        For anything that would fail the study's runs, naming the file, the
        key and the fix.
    KeyError
        For an unknown built-in study name.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    data, origin, stem, folder = _read_toml(name_or_path)
    where = _Where(origin, sections={})
    _check_layout(data, where)
    scales = data.get("scales", {})
    overrides = {k: v for k, v in overrides.items() if v is not None}
    layers = [
        ("[study]", data["study"]),
        *((f"[scales.{name}]", table) for name, table in scales.items()),
        ("override", overrides),
    ]
    for section, table in layers:
        _check_keys(table, section, where)
    study = {}
    for section, table in (
        layers[0],
        (f"[scales.{scale}]", scales.get(scale, {})),
        layers[-1],
    ):
        study.update(table)
        where.sections.update(dict.fromkeys(table, section))
    tiers = list(study.get("tiers", []))
    if tiers:
        for key in ("datasets", "depths"):
            if key in study:
                raise where.error(
                    where.key(key),
                    f"the study has tiers, and each tier lists its own {key}; "
                    f"remove {key} or the tiers",
                )
        study["datasets"] = _union(tier["datasets"] for tier in tiers)
        study["depths"] = sorted(_union(tier["depths"] for tier in tiers))
    for key in ("datasets", "methods"):
        if key not in study:
            raise where.error(
                "[study]", f"needs {key!r}; e.g. {key} = {_LISTS[key][1]}"
            )
    used = {
        name
        for _, table in layers
        for lists in (
            [table.get("datasets")]
            + [t.get("datasets") for t in table.get("tiers", [])]
        )
        if isinstance(lists, list)
        for name in lists
    }
    register_user_datasets(data.get("datasets", {}), used, where, folder)
    tables = data.get("methods", {})
    user = register_user_methods(tables, where, folder)
    tables = {
        label: _user_table(table, user[label]) if label in user else table
        for label, table in tables.items()
    }
    where.tables = frozenset(tables)
    lists = [table["methods"] for _, table in layers if "methods" in table]
    _check_method_tables(tables, lists, where)
    config = StudyConfig(
        name=study.get("name", stem),
        datasets=list(study["datasets"]),
        methods=_method_specs(study["methods"], tables),
        depths=list(study.get("depths", [2, 3, 4])),
        folds=study.get("folds", 5),
        seeds=list(study.get("seeds", [0])),
        time_limit=float(study.get("time_limit", 60.0)),
        memory_limit_mb=study.get("memory_limit_mb"),
        max_thresholds=_thresholds(study.get("max_thresholds", 8)),
        grace_s=float(study.get("grace_s", 10.0)),
        workers=study.get("workers", 1),
        repeats=study.get("repeats", 1),
        description=study.get("description", ""),
        scale=scale,
        tiers=tiers,
    )
    return _check_config(config, where, preflight=True)


def _union(lists) -> list:
    """The items of several lists, each once, in order of first appearance."""
    return list(dict.fromkeys(item for items in lists for item in items))
