"""Checks of a study file's shape, before a config is built: its tables and
scales, the keys of ``[study]`` / a scale / the overrides, and the
``[methods.<label>]`` tables (used, registered, known parameters)."""

from __future__ import annotations

from odtstudy.study.config import _cache_fraction
from odtstudy.study.config._schema import SCALES, STUDY_KEYS, TABLES
from odtstudy.study.config._values import close, nonempty_str, shown, value_problem
from odtstudy.study.registry import RUNNER_PARAMS, get_method

__all__ = [
    "check_keys",
    "check_layout",
    "check_method_tables",
    "check_params",
    "unknown_method",
]


def check_layout(data, where):
    """Top-level tables, scale names and the shape of [methods.*] tables."""
    for name, value in data.items():
        if name in TABLES and isinstance(value, dict):
            continue
        if name in STUDY_KEYS:
            raise where.error(
                name, f"a top-level key; study keys go under [study]: {name} = ..."
            )
        if name in TABLES:
            raise where.error(name, f"expected a table [{name}], got {shown(value)}")
        kind = "table" if isinstance(value, dict) else "top-level key"
        raise where.error(
            f"[{name}]" if isinstance(value, dict) else name,
            f"unknown {kind}{close(name, TABLES)}; a study has the tables "
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
                f"unknown scale{close(scale, SCALES)}; the scales are "
                f"{', '.join(SCALES)}",
            )
        if not isinstance(table, dict):
            raise where.error(
                f"[scales] {scale}", f"expected a table, got {shown(table)}"
            )
    for kind, content in (("methods", "of parameters"), ("datasets", "with path")):
        for label, table in data.get(kind, {}).items():
            if not isinstance(table, dict):
                raise where.error(
                    f"[{kind}] {label}",
                    f"expected a table [{kind}.{label}] {content}, got {shown(table)}",
                )


def check_keys(table, section, where):
    """Every key of ``[study]``, a scale or the overrides: known, well typed."""
    for key, value in table.items():
        label = where.key(key, section)
        if key not in STUDY_KEYS:
            raise where.error(
                label,
                f"unknown key{close(key, STUDY_KEYS)}; the keys are "
                f"{', '.join(sorted(STUDY_KEYS))}",
            )
        problem = value_problem(key, value)
        if problem:
            raise where.error(label, problem)


def check_method_tables(tables, method_lists, where):
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
        if not nonempty_str(name):
            raise where.error(
                f"{head} method",
                f"expected a registered method name, got {shown(name)}; e.g. "
                'method = "dl85"',
            )
        try:
            method = get_method(name)
        except KeyError as exc:
            key = f"{head} method" if "method" in table else head
            raise where.error(key, unknown_method(exc, "method" in table)) from None
        if "time_limit" in table:
            problem = value_problem("time_limit", table["time_limit"])
            if problem:
                raise where.error(f"{head} time_limit", problem)
        params = {
            k: v for k, v in table.items() if k not in ("method", "time_limit", "tune")
        }
        if method.available():
            check_params(method, label, params, where)


def unknown_method(exc, has_method_key) -> str:
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


def check_params(method, label, params, where):
    """Parameter names of a method spec: constructor parameters, not runner's."""
    for key in params:
        if key in RUNNER_PARAMS:
            raise where.error(where.method(label, key), _RUNNER_SET[key])
    relative = _cache_fraction.check_fraction(method, params)
    if relative:
        raise where.error(where.method(label, _cache_fraction.KEY), relative)
    unknown = method._unknown_parameter(_cache_fraction.split(params)[1])
    if unknown:
        name, message = unknown
        if name in STUDY_KEYS and where.sections is not None:
            message += (
                f"; if {name} is meant for the study, it belongs in [study], "
                "above the first [methods.*] table"
            )
        raise where.error(where.method(label, name), message)
