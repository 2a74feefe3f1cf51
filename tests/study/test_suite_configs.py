"""The studies that replace the benchmarks (headline, threads, milp) run the
instances their configs' rules name: whole suites, never a pick by outcome."""

from pathlib import Path

import pytest
from no_preflight import preflight_off

from odtstudy.datasets import dataset_info, list_datasets
from odtstudy.datasets._published import CONTREE_OPTIMA
from odtstudy.study import expand_runs, get_method, load_config

# These tests read what a config resolves to (tiers, methods, the grid). Its
# learners' preflight fits (up to 15 s for time-limits) are left out: they
# run, at the same scale, in test_study_configs.py.


@pytest.fixture(scope="module")
def tiers():
    with preflight_off():
        config = load_config("headline")
    return config, {tier["name"]: tier for tier in config.tiers}


def test_numeric_tiers_are_the_contree_suite_and_its_8_smallest(tiers):
    _, by_name = tiers
    suite = list_datasets("contree")
    assert sorted(by_name["numeric-d3"]["datasets"]) == sorted(suite)
    smallest = sorted(suite, key=lambda name: dataset_info(name)["rows"])[:8]
    assert sorted(by_name["numeric-d4"]["datasets"]) == sorted(smallest)
    assert by_name["numeric-d3"]["depths"] == [3]
    assert by_name["numeric-d4"]["depths"] == [4]


@pytest.mark.parametrize("depth", [3, 4])
def test_published_tiers_are_every_split_with_a_published_optimum(tiers, depth):
    _, by_name = tiers
    tier = by_name[f"published-d{depth}"]
    assert tier["depths"] == [depth]
    expected = sorted(f"contree-train/{name}" for name in CONTREE_OPTIMA[depth])
    assert sorted(tier["datasets"]) == expected
    if depth == 3:  # every vendored split has a depth-3 optimum
        assert expected == sorted(list_datasets("contree-train"))


def test_binary_tier_is_15_cp4im_sets_at_depths_5_and_6(tiers):
    _, by_name = tiers
    tier = by_name["binary"]
    assert tier["depths"] == [5, 6]
    assert len(set(tier["datasets"])) == 15
    assert set(tier["datasets"]) <= {
        name.split("/")[-1] for name in list_datasets("cp4im")
    }


def test_the_budget_arithmetic_counts_the_grid(tiers):
    config, _ = tiers
    runs = expand_runs(config)
    assert len(runs) == 252  # the count the config's description budgets
    assert "252 fits" in config.description
    assert {run["time_limit"] for run in runs} == {60.0}
    assert config.workers == 1 and config.folds == 1 and config.repeats == 3


def test_threads_study_runs_the_headline_suites_with_one_parameter_changed(
    tiers, no_preflight
):
    _, headline = tiers
    config = load_config("threads")
    by_name = {tier["name"]: tier for tier in config.tiers}
    assert by_name["binary-d6"]["datasets"] == headline["binary"]["datasets"]
    assert by_name["numeric-d3"]["datasets"] == headline["numeric-d3"]["datasets"]
    specs = {spec.label: spec for spec in config.methods}
    for base in ("dl85", "dl85-numeric"):
        variant = specs[f"{base}-2threads"]
        assert variant.method == base and variant.params == {"n_jobs": 2}
    assert config.workers == 1  # a two-thread fit takes both cores


def test_milp_runs_the_8_cp4im_sets_of_fewest_cells(no_preflight):
    config = load_config("milp")
    cells = {
        name.split("/")[-1]: dataset_info(name)["rows"] * dataset_info(name)["features"]
        for name in list_datasets("cp4im")
    }
    fewest = sorted(cells, key=cells.get)[:8]
    assert sorted(config.datasets) == sorted(fewest)
    assert config.depths == [2, 3] and config.folds == 1
    assert config.methods[0].label == "dl85"  # the reference optimum


def test_time_limits_fits_every_installed_learner_and_the_big_models(no_preflight):
    from odtstudy.study.registry import get_method, list_methods

    config = load_config("time-limits")
    by_name = {tier["name"]: tier for tier in config.tiers}
    every = by_name["every-learner"]
    labels = {spec.label for spec in config.methods}
    # every installed classifier that is not a variant (registered defaults)
    installed = {
        name
        for name in list_methods(task="classification")
        if not get_method(name).defaults
    }
    assert installed <= labels and set(every.get("methods") or labels) == labels
    # registered with defaults, which "all" leaves out: named in the config
    assert {"dl8", "optiboost-lp", "optiboost-md", "lpboost-cart", "mdboost-cart"} <= (
        labels
    )
    assert sorted(every["datasets"]) == ["anneal", "german-credit", "uci/iris", "vote"]
    assert every["depths"] == [4, 5]
    big = {
        (dataset, depth, method)
        for name, tier in by_name.items()
        if name.startswith("big-")
        for dataset in tier["datasets"]
        for depth in tier["depths"]
        for method in tier["methods"]
    }
    for instance in [
        ("uci/spambase", 4, "binoct"),
        ("uci/letter", 4, "binoct"),
        ("uci/spambase", 4, "oct"),
        ("uci/diabetes", 3, "oct"),
        ("pendigits", 8, "cpsat"),
        ("uci/spambase", 5, "tmo-500"),
    ]:
        assert instance in big
    specs = {spec.label: spec for spec in config.methods}
    assert specs["tmo-500"].params == {"population_size": 500}
    assert {specs[m].params["solver"] for m in ("binoct", "binoct-cbc")} == {
        "cbc",
        "highs",
    }
    assert config.time_limit == 2 and config.repeats == 1 and config.folds == 1


def test_costs_runs_the_cp4im_suite_whole_with_one_matrix_for_both_tools(
    no_preflight,
):
    config = load_config("costs")
    suite = sorted(name.split("/")[-1] for name in list_datasets("cp4im"))
    assert sorted(config.datasets) == suite and len(suite) == 23
    assert config.depths == [3, 4] and config.folds == 1 and config.workers == 1
    specs = {spec.label: spec for spec in config.methods}
    assert specs["dl85-cost"].method == "dl85"
    assert specs["pystreed-cost"].method == "pystreed-cost"
    matrices = {str(spec.params["cost_matrix"]) for spec in specs.values()}
    assert matrices == {"[[0, 5], [1, 0]]"}
    runs = expand_runs(config)
    assert len(runs) == 92 and "92 fits" in config.description
    families = {
        spec.label: get_method(spec.method).objective_family(spec.params)
        for spec in specs.values()
    }
    assert set(families.values()) == {"cost@0,5;1,0"}


def test_engine_numeric_check_runs_the_headline_numeric_tier_whole(tiers):
    """benchmarks/engine-numeric.toml (today's numeric search against the
    engine of the headline's revision) runs the headline's numeric-d3 tier
    as it is; read as TOML, since its old engine is built on demand."""
    from odtstudy.study.config._files import read_toml

    path = Path(__file__).parents[2] / "benchmarks" / "engine-numeric.toml"
    study = read_toml(path)[0]
    _, headline = tiers
    assert study["study"]["datasets"] == headline["numeric-d3"]["datasets"]
    assert study["study"]["depths"] == headline["numeric-d3"]["depths"] == [3]
    old = study["methods"]["dl85-numeric-44bcab6"]
    assert old["target"] == "odtstudy_old.dl85:DL85Classifier"
    assert old["thresholds"] == "all" and study["study"]["workers"] == 1
    assert get_method("dl85-numeric").defaults == {"thresholds": "all"}
