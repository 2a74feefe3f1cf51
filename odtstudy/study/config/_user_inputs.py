"""A study file's own datasets and learners: ``[datasets.<name>]`` and
``[methods.<label>] target = "module:Class"`` tables.

Both are checked and registered in this process when the study is loaded,
before any run: a user table under ``user/<name>`` (see
:func:`odtstudy.datasets.register_dataset`), a user learner under its import
path (so the protocol id names it). The study's workers are forked from this
process and inherit both registrations.
"""

from __future__ import annotations

import importlib
import re
import sys

from odtstudy.datasets import register_dataset
from odtstudy.datasets._loaders import _catalog
from odtstudy.study.registry import (
    DATA_KINDS,
    TASKS,
    check_tasks,
    register_user_method,
)

__all__ = ["USER_METHOD_KEYS", "register_user_datasets", "register_user_methods"]

_DATASET_KEYS = ("path", "target", "categorical", "task", "test_path")
#: Keys of a ``[methods.<label>]`` table that define a user learner (the
#: others are its constructor parameters).
USER_METHOD_KEYS = ("target", "data", "exact", "objective_family", "tasks")


def _builtin_names() -> set:
    catalog = _catalog()
    return set(catalog) | {entry["name"] for entry in catalog.values()}


def _dataset_problem(name, table) -> tuple[str, str] | None:
    """``(key, problem)`` for a malformed ``[datasets.<name>]`` table."""
    for key in table:
        if key not in _DATASET_KEYS:
            return key, (f"unknown key; a dataset table has {', '.join(_DATASET_KEYS)}")
    examples = {
        "path": 'path = "data/my.csv"',
        "target": 'target = "label"',
        "test_path": 'test_path = "data/my-test.csv"',
    }
    for key, example in examples.items():
        if key == "test_path" and key not in table:
            continue  # optional
        value = table.get(key)
        if not isinstance(value, str) or not value:
            return key, f"expected a non-empty string, got {value!r}; e.g. {example}"
    categorical = table.get("categorical", [])
    if not isinstance(categorical, list) or not all(
        isinstance(c, str) for c in categorical
    ):
        return "categorical", (
            f"expected a list of column names, got {categorical!r}; e.g. "
            'categorical = ["colour"]'
        )
    if table.get("task", TASKS[0]) not in TASKS:
        return "task", (
            f"expected one of {', '.join(TASKS)}, got {table['task']!r}; e.g. "
            'task = "regression" (default: the study\'s task)'
        )
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return "", "a dataset name has letters, digits, '-', '_' and '.' only"
    if name in _builtin_names():
        return "", (f"{name!r} is a built-in dataset; give your table another name")
    return None


def register_user_datasets(
    tables, used, where, base_dir, task="classification"
) -> None:
    """Check and register every ``[datasets.<name>]`` table.

    Parameters
    ----------
    tables : dict
        ``name -> {path, target, categorical, task, test_path}``.
    used : set of str
        Dataset names in some ``datasets`` list of the study.
    where : odtstudy.study.config._values.Where
        Words the errors (file, table and key).
    base_dir : Path
        Relative paths are taken from here (the study file's folder).
    task : {"classification", "regression"}, default="classification"
        The study's task: that of a table without a ``task`` key.
    """
    for name, table in tables.items():
        head = f"[datasets.{name}]"
        problem = _dataset_problem(name, table)
        if problem:
            key, message = problem
            raise where.error(f"{head} {key}".strip(), message)
        if name not in used:
            raise where.error(
                head,
                f"defined but not used: {name!r} is in no datasets list "
                "([study] or [scales.*]); add it to a datasets list or remove "
                "the table",
            )
        try:
            register_dataset(
                name,
                table["path"],
                table["target"],
                table.get("categorical", []),
                base_dir=base_dir,
                task=table.get("task", task),
                test_path=table.get("test_path"),
            )
        except ValueError as exc:
            message = str(exc)
            key = "path"
            if message.startswith("test file"):
                key = "test_path"
            elif message.startswith(("target", "the target")):
                key = "target"
            elif message.startswith("categorical"):
                key = "categorical"
            raise where.error(f"{head} {key}", message) from None


def _import(target, base_dir):
    """The class ``"module:Class"`` names, importing ``module`` from the
    study file's folder too."""
    module_name, _, attr = target.partition(":")
    folder = str(base_dir)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if added:
            sys.path.remove(folder)
        raise ValueError(f"cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # the user's module failed while it ran
        if added:
            sys.path.remove(folder)
        where = ""
        if isinstance(exc, SyntaxError) and exc.filename:
            where = f" ({exc.filename}, line {exc.lineno})"
        raise ValueError(
            f"importing {module_name!r} raised {type(exc).__name__}: {exc}{where}; "
            "fix the module so that it imports"
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None


def _method_problem(table) -> tuple[str, str] | None:
    target = table["target"]
    if not isinstance(target, str) or target.count(":") != 1 or target[0] == ":":
        return "target", (
            f'expected "module:Class", got {target!r}; e.g. target = '
            '"mypkg.trees:MyTree"'
        )
    if "method" in table:
        return "method", "a table with target = ... defines its own learner; drop one"
    data = table.get("data", "numeric")
    if data not in DATA_KINDS:
        return "data", (
            f'expected "numeric" or "binary", got {data!r} ("binary": the '
            "runner binarises the data for it)"
        )
    if not isinstance(table.get("exact", False), bool):
        return "exact", f"expected true or false, got {table['exact']!r}"
    family = table.get("objective_family", "misclassification")
    if not isinstance(family, str) or not family:
        return "objective_family", f"expected a non-empty string, got {family!r}"
    if "tasks" in table:
        try:
            check_tasks(table["target"], table["tasks"])
        except ValueError:
            return "tasks", (
                f"expected a non-empty list of {', '.join(TASKS)}, got "
                f'{table["tasks"]!r}; e.g. tasks = ["regression"]'
            )
    return None


def register_user_methods(tables, where, base_dir) -> dict:
    """Check and register every ``[methods.<label>]`` table with a ``target``.

    Returns
    -------
    dict
        ``label -> registered method name`` (its import path), for the
        tables that define a learner; their ``method`` is set to it.
    """
    names = {}
    for label, table in tables.items():
        if "target" not in table:
            for key in USER_METHOD_KEYS[1:]:
                if key in table:
                    raise where.error(
                        f"[methods.{label}] {key}",
                        'only a learner defined by target = "module:Class" '
                        f"takes {key}",
                    )
            continue
        head = f"[methods.{label}]"
        problem = _method_problem(table)
        if problem:
            raise where.error(f"{head} {problem[0]}", problem[1])
        try:
            cls = _import(table["target"], base_dir)
        except ValueError as exc:
            raise where.error(f"{head} target", str(exc)) from None
        if not (callable(getattr(cls, "fit", None)) and callable(cls)):
            raise where.error(
                f"{head} target",
                f"{table['target']} is not a scikit-learn estimator class "
                "(it has no fit method)",
            )
        try:
            register_user_method(
                table["target"],
                cls,
                table.get("data", "numeric"),
                table.get("exact", False),
                table.get("objective_family"),
                table.get("tasks"),
            )
        except ValueError as exc:
            raise where.error(f"{head} target", str(exc)) from None
        names[label] = table["target"]
    return names
