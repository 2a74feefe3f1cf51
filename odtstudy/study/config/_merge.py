"""How a study file's layers become one study: ``[study]``, then the chosen
``[scales.<scale>]``, then the keyword overrides; the tiers' datasets and
depths; the user's tables; and the method specs."""

from __future__ import annotations

from odtstudy.study.config._layout import check_keys
from odtstudy.study.config._schema import MethodSpec
from odtstudy.study.config._user_inputs import USER_METHOD_KEYS, register_user_methods
from odtstudy.study.config._values import LISTS
from odtstudy.study.registry import get_method, list_methods

__all__ = ["merged_study", "method_specs", "method_tables", "used_datasets"]


def merged_study(data, scale, overrides, where) -> tuple[dict, list]:
    """The study's keys at ``scale``, and the layers they were merged from.

    Every layer (``[study]``, each scale used or not, the overrides) is
    checked; ``where.sections`` records which table set each key.

    Returns
    -------
    study : dict
        The merged keys; with tiers, ``datasets`` and ``depths`` are theirs.
    layers : list of (str, dict)
        ``(section, table)``: ``[study]``, every ``[scales.<name>]``, then
        ``override``.
    """
    scales = data.get("scales", {})
    overrides = {k: v for k, v in overrides.items() if v is not None}
    layers = [
        ("[study]", data["study"]),
        *((f"[scales.{name}]", table) for name, table in scales.items()),
        ("override", overrides),
    ]
    for section, table in layers:
        check_keys(table, section, where)
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
            raise where.error("[study]", f"needs {key!r}; e.g. {key} = {LISTS[key][1]}")
    return study, layers


def used_datasets(layers) -> set:
    """Every dataset name a layer lists (in ``datasets`` or in a tier)."""
    return {
        name
        for _, table in layers
        for lists in (
            [table.get("datasets")]
            + [t.get("datasets") for t in table.get("tiers", [])]
        )
        if isinstance(lists, list)
        for name in lists
    }


def method_tables(tables, where, folder) -> dict:
    """The ``[methods.<label>]`` tables, a user learner's (registered now) as a
    variant of its registered method."""
    user = register_user_methods(tables, where, folder)
    return {
        label: _user_table(table, user[label]) if label in user else table
        for label, table in tables.items()
    }


def method_specs(names, tables, task="classification") -> list:
    """The :class:`MethodSpec` of each label (``"all"``: every available
    method of the study's ``task`` without defaults, and every table's label
    whose method serves the task)."""
    if names in (["all"], "all"):
        registered = list_methods(available_only=True, task=task)
        names = [n for n in registered if not get_method(n).defaults]
        names += [
            label
            for label, table in tables.items()
            if label not in names
            and get_method(table.get("method", label)).available()
            and task in get_method(table.get("method", label)).tasks
        ]
    specs = []
    for label in names:
        table = dict(tables.get(label, {}))
        method = table.pop("method", label)
        time_limit = table.pop("time_limit", None)
        tune = table.pop("tune", None)
        specs.append(MethodSpec(label, method, table, time_limit, tune))
    return specs


def _user_table(table, method) -> dict:
    """A user learner's table as a variant of its registered method."""
    params = {k: v for k, v in table.items() if k not in USER_METHOD_KEYS}
    return {"method": method, **params}


def _union(lists) -> list:
    """The items of several lists, each once, in order of first appearance."""
    return list(dict.fromkeys(item for items in lists for item in items))
