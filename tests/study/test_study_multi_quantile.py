"""The multi-quantile study: nine quantiles in one DL8.5 search against one fit
per quantile, its config's rule, its report section and a smoke run."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from report_doubles import protocol, run, write_study

from odtstudy.datasets import list_datasets
from odtstudy.study import (
    ResultsStore,
    expand_runs,
    get_method,
    load_config,
    make_report,
    run_study,
)
from odtstudy.study._regression_scores import (
    family_loss,
    pinball_tau,
    pinball_taus,
    regression_scores,
)
from odtstudy.study._worker import _predictions
from odtstudy.study.report._document import Document
from odtstudy.study.report._quantile_family import (
    family_comparisons,
    family_summary,
    objective_mismatches,
    quantile_family_section,
)
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.report._speed import MIN_UNITS

TAUS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
FAMILY = "dl85-reg-quantiles"


@pytest.fixture(scope="module")
def config():
    return load_config("multi-quantile")


def test_the_study_runs_the_whole_osrt_suite_at_depths_3_and_4(config):
    suite = [
        name for name in list_datasets(task="regression") if name.startswith("osrt/")
    ]
    assert len(suite) == 11
    assert sorted(config.datasets) == sorted(suite)
    assert "11 binarised sets" in config.description
    assert config.depths == [3, 4] and config.task == "regression"
    assert (config.folds, config.seeds, config.repeats, config.workers) == (
        1,
        [0],
        3,
        1,
    )
    runs = expand_runs(config)
    assert len(runs) == 220 and "220 fits" in config.description
    assert {r["time_limit"] for r in runs} == {60.0}


def test_every_single_quantile_variant_fits_one_tau_of_the_family(config):
    specs = {spec.label: spec for spec in config.methods}
    family = specs.pop(FAMILY)
    assert family.method == "dl85-reg-quantile" and family.params["quantile"] == TAUS
    assert all(spec.method == "dl85-reg-quantile" for spec in specs.values())
    assert sorted(spec.params["quantile"] for spec in specs.values()) == TAUS
    method = get_method("dl85-reg-quantile")
    family_taus = method.objective_family(family.params).removeprefix("pinball@")
    singles = [method.objective_family(s.params) for s in specs.values()]
    assert sorted(singles) == [f"pinball@{tau}" for tau in family_taus.split(",")]


def test_the_smoke_scale_is_one_small_set_at_depth_3():
    smoke = load_config("multi-quantile", scale="smoke")
    assert smoke.datasets == ["osrt/servo"] and smoke.depths == [3]
    assert smoke.time_limit == 10 and smoke.repeats == 1
    assert len(expand_runs(smoke)) == 10


def test_a_fit_of_several_quantiles_is_scored_on_its_columns():
    assert pinball_taus("pinball@0.25,0.75") == (0.25, 0.75)
    assert pinball_tau("pinball@0.25,0.75") is None
    assert pinball_tau("pinball@0.5") == 0.5
    y = np.array([0.0, 1.0])
    pred = np.array([[0.0, 1.0], [0.0, 1.0]])  # tau 0.25: 0, tau 0.75: 1
    # tau 0.25 misses row 1 by 1 (0.25); tau 0.75 overshoots row 0 by 1 (0.25)
    assert family_loss("pinball@0.25,0.75", y, pred) == pytest.approx(0.5)
    scores = regression_scores("pinball@0.25,0.75", y, pred, y, pred)
    assert scores["train_pinball"] == scores["test_pinball"] == pytest.approx(0.25)
    assert scores["train_mse"] is scores["test_r2"] is None
    fitted = _Columns(pred)
    assert _predictions(fitted, pred, "test", "regression", columns=2).shape == (2, 2)
    with pytest.raises(ValueError, match="must return 3 values per row"):
        _predictions(fitted, pred, "training", "regression", columns=3)


class _Columns:
    """A fitted regressor of several quantiles: one column per tau."""

    def __init__(self, pred):
        self.pred = pred

    def predict(self, X):
        return self.pred


# ----------------------------------------------------------- synthetic records
#: a family of three taus and its single fits
SMALL = {"fam": [0.25, 0.5, 0.75], "q25": 0.25, "q50": 0.5, "q75": 0.75}


def _proto():
    proto = protocol(folds=1, methods=dict.fromkeys(SMALL, "dl85-reg-quantile"))
    for label, tau in SMALL.items():
        proto["methods"][label]["params"] = {"criterion": "quantile", "quantile": tau}
    proto["task"] = "regression"
    return proto


def _family(tau) -> str:
    return "pinball@" + ",".join(
        f"{t:g}" for t in (tau if isinstance(tau, list) else [tau])
    )


def _runs(dataset, times, objectives=(1.0, 2.0, 3.0), proven=(True,) * 4, depth=3):
    """The family's run and its three single fits on one dataset: ``times``
    and ``proven`` (family first); ``objectives`` of the singles, which the
    family's per-tau objectives repeat."""
    proto = _proto()
    records = []
    for k, (label, tau) in enumerate(SMALL.items()):
        if k == 0:
            stats = {
                "objective_per_quantile": list(objectives),
                "optimal_per_quantile": [proven[0]] * 3,
            }
            objective = sum(objectives)
        else:
            stats, objective = {}, objectives[k - 1]
        records.append(
            run(
                dataset,
                depth,
                label,
                proto=proto,
                task="regression",
                objective_family=_family(tau),
                fit_time_s=times[k],
                optimal=proven[k],
                claimed_optimal=proven[k],
                objective=objective,
                stats=stats,
                provenance={"workers": 1},
            )
        )
    return records


def _records(tmp_path, records) -> StudyRecords:
    write_study(tmp_path, records)
    return StudyRecords.from_frame(ResultsStore(tmp_path).load())


def _section(records) -> str:
    doc = Document("t", Path("."))
    quantile_family_section(doc, records)
    return doc.markdown()


def test_ratios_and_their_geometric_means_per_depth(tmp_path):
    records = _records(
        tmp_path,
        [
            *_runs("a", [1.0, 0.5, 1.0, 2.0]),  # / sum 1 / 3.5, / slowest 1 / 2
            *_runs("b", [2.0, 1.0, 1.0, 2.0]),  # / sum 1 / 2, / slowest 1
            *_runs("c", [1.0, 1.0, 1.0, 1.0], proven=(True, True, False, True)),
        ],
    )
    runs, taus = family_comparisons(records.frame)
    by_dataset = runs.set_index("dataset")
    assert by_dataset.loc["a", ["family_s", "sum_s", "slowest_s"]].tolist() == [
        1.0,
        3.5,
        2.0,
    ]
    assert by_dataset.loc["a", "per_sum"] == pytest.approx(1 / 3.5)
    assert by_dataset.loc["a", "per_slowest"] == pytest.approx(0.5)
    assert by_dataset.loc["b", "per_sum"] == pytest.approx(0.5)
    assert by_dataset.loc["b", "per_slowest"] == pytest.approx(1.0)
    assert by_dataset["all_proven"].to_dict() == {"a": True, "b": True, "c": False}
    assert len(taus) == 9 and set(taus["single"]) == {"q25", "q50", "q75"}

    summary = family_summary(runs).iloc[0]
    assert (summary["datasets"], summary["datasets_proven"]) == (3, 2)
    # c is not averaged: one of its single fits is not proven
    assert summary["per_sum"] == pytest.approx(math.sqrt(1 / 3.5 * 0.5))
    assert summary["per_slowest"] == pytest.approx(math.sqrt(0.5 * 1.0))
    assert math.isnan(summary["per_sum_low"]) and math.isnan(summary["per_sum_high"])

    text = _section(records)
    assert "## Quantile family against one fit per quantile" in text
    assert "0.378× (n = 2: too few for a test)" in text
    assert "0.707× (n = 2: too few for a test)" in text and "× [" not in text
    assert "Objective check: OK, the 8 τ proven by both fits" in text
    assert "1 τ not checked" in text  # c's single fit of 0.5 is not proven


def test_an_interval_from_six_datasets(tmp_path):
    records = [
        record
        for name in "abcdef"
        for record in _runs(name, [1.0, 1.0, 2.0, 1.0])  # / sum 1/4, / max 1/2
    ]
    summary = family_summary(family_comparisons(_records(tmp_path, records).frame)[0])
    row = summary.iloc[0]
    assert row["datasets_proven"] == MIN_UNITS
    assert (row["per_sum"], row["per_sum_low"], row["per_sum_high"]) == pytest.approx(
        (0.25, 0.25, 0.25)
    )
    assert row["per_slowest_low"] == pytest.approx(0.5)


def test_a_planted_objective_mismatch_is_listed(tmp_path):
    good = _runs("a", [1.0] * 4)
    bad = _runs("b", [1.0] * 4, depth=4)
    bad[0]["stats"]["objective_per_quantile"] = [1.0, 2.0 * (1 + 1e-6), 3.0]
    close = _runs("c", [1.0] * 4)
    close[0]["stats"]["objective_per_quantile"] = [1.0, 2.0 * (1 + 1e-12), 3.0]
    records = _records(tmp_path, [*good, *bad, *close])
    mismatches, compared = objective_mismatches(family_comparisons(records.frame)[1])
    assert compared == 9
    assert mismatches[["dataset", "depth", "tau", "single"]].values.tolist() == [
        ["b", 4, 0.5, "q50"]
    ]
    assert mismatches["difference"].iloc[0] == pytest.approx(2e-6)
    text = _section(records)
    assert "Objective check: MISMATCH at 1 of the 9 τ" in text
    assert "| fam | b | 4 | 0 | 0 | 0.5 | q50 |" in text


def test_no_section_without_single_fits_of_every_tau(tmp_path):
    records = _runs("a", [1.0] * 4)
    records = [r for r in records if r["method"] != "q75"]
    assert "Quantile family" not in _section(_records(tmp_path, records))


# ------------------------------------------------------------------ smoke run
@pytest.mark.ci_slow
def test_smoke_run_reports_finite_ratios_and_the_same_objectives(tmp_path):
    config = load_config("multi-quantile", scale="smoke")
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == 10 and frame["optimal"].all(), frame[["method", "error"]]
    family = frame.set_index("method").loc[FAMILY]
    stats = json.loads(family["stats"])
    assert len(stats["objective_per_quantile"]) == 9
    assert family["objective"] == pytest.approx(sum(stats["objective_per_quantile"]))
    assert family["objective_family"] == "pinball@" + ",".join(map(str, TAUS))
    assert math.isnan(family["train_mse"]) and family["train_pinball"] > 0

    records = StudyRecords.from_frame(frame)
    runs, taus = family_comparisons(records.frame)
    assert len(runs) == 1 and runs["all_proven"].all()
    assert math.isfinite(runs["per_sum"].iloc[0])
    assert math.isfinite(runs["per_slowest"].iloc[0])
    mismatches, compared = objective_mismatches(taus)
    assert mismatches.empty and compared == 9
    text = make_report(config.name, output_dir=tmp_path, scale="smoke").read_text()
    assert "## Quantile family against one fit per quantile" in text
    assert "Objective check: OK, the 9 τ proven by both fits" in text
    assert "MISMATCH" not in text and "could not be built" not in text
