"""A tiered study's records are reported tier by tier, the tiers read from
the study's config at the records' scale."""

import pandas as pd

from odtstudy.study.report._tiers import tier_groups


def _frame(study, scale, rows):
    return pd.DataFrame(
        [
            {"study": study, "scale": scale, "dataset": d, "depth": k, "method": m}
            for d, k, m in rows
        ]
    )


def test_each_tier_and_depth_is_a_group_in_the_configs_order():
    frame = _frame(
        "headline",
        "default",
        [
            ("contree-train/bank", 3, "dl85-numeric"),
            ("contree/bank", 3, "dl85-numeric"),
            ("hepatitis", 6, "dl85"),
            ("hepatitis", 5, "pystreed"),
            ("contree/bank", 4, "pycontree"),
        ],
    )
    groups = tier_groups(frame)
    assert [label for label, _ in groups] == [
        "binary, depth 5",
        "binary, depth 6",
        "numeric-d3, depth 3",
        "numeric-d4, depth 4",
        "published-d3, depth 3",
    ]
    assert [part["tier"].unique().tolist() for _, part in groups][:2] == [
        ["binary"],
        ["binary"],
    ]
    # a ConTree set and its training split never share a group
    assert [list(part["dataset"]) for _, part in groups][2:] == [
        ["contree/bank"],
        ["contree/bank"],
        ["contree-train/bank"],
    ]


def test_a_scale_replaces_the_tiers():
    frame = _frame("headline", "smoke", [("hepatitis", 5, "dl85")])
    assert [label for label, _ in tier_groups(frame)] == ["binary, depth 5"]


def test_no_groups_without_tiers_or_a_built_in_config():
    assert tier_groups(_frame("versus", "default", [("vote", 3, "dl85")])) == []
    assert tier_groups(_frame("my-own", "default", [("vote", 3, "dl85")])) == []
    assert tier_groups(pd.DataFrame()) == []
