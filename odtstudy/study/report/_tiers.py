"""The tiers of a study's records: which grid of its config each run is of.

A tiered study (``[[study.tiers]]``, see :mod:`odtstudy.study.config`) runs
grids that answer different questions (the headline's 0/1 suite, the
ConTree suite, ConTree's training splits); their numbers are reported tier
by tier, since pooling them per depth would count the same data set twice
(a ConTree set and its training split) and mix suites chosen by different
rules. The records name their study and scale; the tiers come from the
study's built-in config, the one place they are written.
"""

from __future__ import annotations

import pandas as pd

from odtstudy.study.config._files import read_toml

__all__ = ["TIER_RULE", "tier_groups"]

TIER_RULE = (
    "The study runs tiers, grids of their own (its config's "
    "`[[study.tiers]]`): proofs and speed are given per tier and depth, "
    "never pooled over tiers, so a data set counts once in a table and each "
    "table's data sets were chosen by one rule."
)


def _config_tiers(study: str, scale: str) -> list:
    """The tiers of built-in study ``study`` at ``scale`` (a scale's tiers
    replace the study's), ``[]`` for a study without tiers or not built in."""
    try:
        data = read_toml(study)[0]
    except (KeyError, ValueError):
        return []
    scaled = data.get("scales", {}).get(scale, {})
    return list(scaled.get("tiers", data.get("study", {}).get("tiers", [])))


def tier_groups(frame: pd.DataFrame) -> list:
    """The records of each tier and depth, in the config's order.

    Parameters
    ----------
    frame : DataFrame
        Records of one protocol (columns ``study``, ``scale``, ``dataset``,
        ``depth``, ``method``).

    Returns
    -------
    list of (str, DataFrame)
        ``("<tier>, depth <d>", records)`` for every tier and depth with
        records (each part keeps a ``tier`` column); ``[]`` when the study
        has fewer than two tiers (then the report's per-depth tables are
        the tiers').
    """
    if frame.empty or "study" not in frame:
        return []
    tiers = _config_tiers(str(frame["study"].iloc[0]), str(frame["scale"].iloc[0]))
    if len(tiers) < 2:
        return []
    groups = []
    for tier in tiers:
        in_tier = frame["dataset"].isin(tier["datasets"])
        if "methods" in tier:
            in_tier &= frame["method"].isin(tier["methods"])
        for depth in sorted(tier["depths"]):
            part = frame[in_tier & (frame["depth"] == depth)]
            if not part.empty:
                label = f"{tier['name']}, depth {depth}"
                groups.append((label, part.assign(tier=tier["name"])))
    return groups
