"""Checks of a built study config against the registry and the data: every
field's value, the tiers' methods, dataset names, tasks and their folds, and
each method spec (registered, of the study's task, installed, known
parameters), then the preflight."""

from __future__ import annotations

import difflib
import warnings
from functools import lru_cache

from odtstudy.datasets._class_counts import smallest_class
from odtstudy.datasets._loaders import (
    _resolve,
    dataset_info,
    list_datasets,
    load_dataset,
)
from odtstudy.datasets._user import user_dataset
from odtstudy.study._tuning import tune_problem
from odtstudy.study.config._layout import check_params, unknown_method
from odtstudy.study.config._preflight import preflight_check
from odtstudy.study.config._schema import SCALES, STUDY_KEYS, MethodSpec
from odtstudy.study.config._values import close, nonempty_str, shown, value_problem
from odtstudy.study.registry import get_method, list_methods

__all__ = ["check_config"]


def check_config(config, where, preflight):
    """All checks of a built config; ``where`` words the messages."""
    _check_fields(config, where)
    _drop_missing_optional(config, where)
    _check_datasets(config, where)
    _check_specs(config, where)
    if preflight:
        preflight_check(config, where)
    return config


def _check_fields(config, where):
    for key in sorted(STUDY_KEYS - {"methods"}):
        problem = value_problem(key, getattr(config, key))
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
                f"expected MethodSpec items, got {shown(spec)}; e.g. "
                'MethodSpec("dl85", "dl85")',
            )
    if config.tiers:
        _check_tier_methods(config, where)


def _drop_missing_optional(config, where):
    """Remove the ``optional_methods`` that are not installed from the study
    (and its tiers) into ``skipped_methods``, with a warning naming what is
    missing."""
    optional = config.optional_methods or []
    specs = {spec.label: spec for spec in config.methods}
    missing = {}
    for label in optional:
        if label not in specs:
            raise where.error(
                where.key("optional_methods"),
                f"{label!r} is not in the study's methods{close(label, specs)}; "
                "list only methods the study runs",
            )
        try:
            get_method(specs[label].method).estimator_class()
        except KeyError as exc:
            missing[label] = exc.args[0]
    if not missing:
        return
    config.methods = [spec for spec in config.methods if spec.label not in missing]
    if not config.methods:
        raise where.error(
            where.key("methods"),
            f"no method is installed: {'; '.join(missing.values())}",
        )
    tiers = []
    for tier in config.tiers:
        if "methods" in tier:
            tier = {**tier, "methods": [m for m in tier["methods"] if m not in missing]}
            if not tier["methods"]:
                continue
        tiers.append(tier)
    config.tiers = tiers
    config.optional_methods = [label for label in optional if label not in missing]
    config.skipped_methods = {**config.skipped_methods, **missing}
    for label, reason in missing.items():
        warnings.warn(
            f"{where.origin}: optional method {label!r} skipped: {reason}",
            stacklevel=4,  # the caller of load_config or validate
        )


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
                    f"study's methods{close(label, labels)}; add it to methods "
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
    """Rows, smallest class count and that class of a dataset: from the
    catalogue for a vendored set (``smallest_class``, kept equal to the data
    by the tests), else from its data."""
    info = dataset_info(name)
    if "smallest_class" in info and "rows" in info:
        label, count = info["smallest_class"]
        return int(info["rows"]), int(count), label
    y = load_dataset(name).y
    label, count = smallest_class(y)
    return len(y), count, label


def _rows(name) -> int:
    info = dataset_info(name)
    return int(info["rows"]) if "rows" in info else len(load_dataset(name).y)


def _has_test_file(name) -> bool:
    """Whether ``name`` is a user table with a held-out test file (no folds)."""
    spec = user_dataset(name)
    return spec is not None and spec.test_path is not None


def _check_datasets(config, where):
    """Names resolve, every dataset is of the study's task, and every dataset
    without a held-out test file can be split into ``folds`` folds."""
    for name in config.datasets:
        try:
            _resolve(name)
        except KeyError as exc:
            raise where.error(where.key("datasets"), exc.args[0]) from None
        task = dataset_info(name).get("task", "classification")
        if task != config.task:
            others = list_datasets(task=config.task)
            raise where.error(
                where.key("datasets"),
                f"dataset {name!r} is a {task} dataset, study {config.name!r} is "
                f"a {config.task} study: remove it, or use a {config.task} "
                f"dataset (e.g. {', '.join(others[:4])}, ...)",
            )
    folded = [name for name in config.datasets if not _has_test_file(name)]
    if config.folds == 1 or not folded:
        return
    if config.task != "classification":
        rows = {name: _rows(name) for name in folded}
        bound = min(rows.values())
        for name, n in rows.items():
            if config.folds > n:
                raise where.error(
                    where.key("folds"),
                    f"{config.folds} folds, but dataset {name!r} has only {n} "
                    f"rows; use folds <= {bound}",
                )
        return
    sizes = {name: _class_sizes(name) for name in folded}
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
            if not nonempty_str(value):
                raise where.error(
                    "methods", f"labels and methods are strings, got {shown(value)}"
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
            raise where.error(key, unknown_method(exc, named_in_table)) from None
        if config.task not in method.tasks:
            key = where.method(label) if label != spec.method else where.key("methods")
            raise where.error(key, _task_problem(method, config))
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
                where.method(label), f"params must be a dict, got {shown(spec.params)}"
            )
        check_params(method, label, spec.params, where)
        if spec.tune is not None:
            _check_tune(method, label, spec.tune, where)
        if spec.time_limit is not None:
            problem = value_problem("time_limit", spec.time_limit)
            if problem:
                raise where.error(where.method(label, "time_limit"), problem)


def _check_tune(method, label, tune, where) -> None:
    """A method's tune table: grids of constructor parameters, inner folds."""
    problem = tune_problem(
        tune, lambda name: method._unknown_parameter({name: 0}) is None
    )
    if problem:
        key, message = problem
        raise where.error(where.method(label, f"tune {key}".strip()), message)


def _task_problem(method, config) -> str:
    """Why ``method`` cannot run in the study, and which method to use."""
    task = config.task
    choices = list_methods(available_only=False, task=task)
    match = difflib.get_close_matches(method.name, choices, n=1, cutoff=0.5)
    fix = f"use {match[0]}" if match else f"use one of {', '.join(choices)}"
    return (
        f"method {method.name!r} supports {' and '.join(method.tasks)} only, "
        f"study {config.name!r} is a {task} study: remove it or {fix}"
    )
