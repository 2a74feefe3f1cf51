"""A study with tiers: each tier is a grid of its own datasets, depths and
methods; a bad tier is refused before any run, naming the key and the fix."""

import pytest

from odtstudy.study import load_config
from odtstudy.study.runner import expand_runs

TIERED = """\
[study]
name = "tiered"
methods = ["dl85", "cart", "dl85-numeric"]
folds = 1
time_limit = 5

[[study.tiers]]
name = "binary"
datasets = ["zoo-1", "hepatitis"]
depths = [2, 3]
methods = ["dl85", "cart"]

[[study.tiers]]
name = "numeric"
datasets = ["uci/iris"]
depths = [1]
methods = ["dl85-numeric", "cart"]
"""


def _write(tmp_path, text):
    path = tmp_path / "tiered.toml"
    path.write_text(text)
    return str(path)


def test_each_tier_runs_its_own_grid(tmp_path):
    config = load_config(_write(tmp_path, TIERED))
    assert config.datasets == ["zoo-1", "hepatitis", "uci/iris"]
    assert config.depths == [1, 2, 3]
    cells = {(r["dataset"], r["method"], r["depth"]) for r in expand_runs(config)}
    binary = {
        (d, m, k)
        for d in ("zoo-1", "hepatitis")
        for m in ("dl85", "cart")
        for k in (2, 3)
    }
    numeric = {("uci/iris", m, 1) for m in ("dl85-numeric", "cart")}
    assert cells == binary | numeric
    assert len(expand_runs(config)) == len(cells)


def test_a_tier_without_methods_runs_all_of_the_studys(tmp_path):
    text = TIERED.replace('methods = ["dl85-numeric", "cart"]', "")
    cells = {
        (r["dataset"], r["method"])
        for r in expand_runs(load_config(_write(tmp_path, text)))
    }
    assert {m for d, m in cells if d == "uci/iris"} == {"dl85", "cart", "dl85-numeric"}


@pytest.mark.parametrize(
    "old, new, key, fix",
    [
        (
            'methods = ["dl85-numeric", "cart"]',
            'methods = ["dl85-numerc"]',
            "[study] tiers",
            "did you mean 'dl85-numeric'?",
        ),
        (
            'methods = ["dl85", "cart", "dl85-numeric"]',
            'methods = ["dl85", "cart", "dl85-numeric", "dl8"]',
            "[study] methods",
            "'dl8' runs in no tier",
        ),
        ("depths = [1]", "depth = [1]", "[study] tiers", "did you mean 'depths'?"),
        ("depths = [1]", "depths = [0]", "[study] tiers", "tier 'numeric' depths"),
        (
            'name = "numeric"',
            'name = "binary"',
            "[study] tiers",
            "'binary' appears twice",
        ),
        (
            "folds = 1",
            "folds = 1\ndepths = [2]",
            "[study] depths",
            "remove depths or the tiers",
        ),
        (
            'datasets = ["uci/iris"]\n',
            "",
            "[study] tiers",
            "tier 'numeric' needs datasets",
        ),
    ],
)
def test_bad_tiers_name_the_key_and_the_fix(tmp_path, old, new, key, fix):
    assert old in TIERED
    path = _write(tmp_path, TIERED.replace(old, new, 1))
    with pytest.raises(ValueError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{key}:" in message and fix in message and path in message, message


def test_tiers_that_are_not_tables_are_refused(tmp_path):
    text = TIERED.split("[[study.tiers]]")[0].replace("folds = 1", "tiers = 3")
    with pytest.raises(ValueError, match=r"\[study\] tiers: expected a list of tables"):
        load_config(_write(tmp_path, text))


def test_a_scale_replaces_the_tiers(tmp_path):
    text = (
        TIERED
        + '\n[[scales.smoke.tiers]]\nname = "one"\ndatasets = ["zoo-1"]\ndepths = [1]\n'
    )
    smoke = load_config(_write(tmp_path, text), scale="smoke")
    assert smoke.datasets == ["zoo-1"] and smoke.depths == [1]
    assert {r["method"] for r in expand_runs(smoke)} == {"dl85", "cart", "dl85-numeric"}
