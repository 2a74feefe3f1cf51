"""Speed of exact methods against a reference: paired proofs, geometric-mean
ratio with a bootstrap interval, Wilcoxon p, and what is not paired."""

import math

import numpy as np
import pytest
from report_doubles import METHODS, grid, protocol, write_study
from scipy import stats

from odtstudy.study import make_report
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.report._speed import (
    MIN_UNITS,
    N_RESAMPLES,
    NOT_SAME_PROBLEM,
    OTHER_FAMILY,
    SEED,
    assign_references,
    bootstrap_mean,
    geometric_ratio,
    paired_wilcoxon,
    speed_table,
    startup_methods,
)


def test_constant_ratio_has_a_point_interval_from_six_units():
    estimate = geometric_ratio([2.0, 4.0, 0.2, 10.0, 1.0, 6.0], [1, 2, 0.1, 5, 0.5, 3])
    assert (estimate.ratio, estimate.low, estimate.high) == pytest.approx((2, 2, 2))
    assert estimate.n == MIN_UNITS == 6 and estimate.text() == "2× [2, 2]"


def test_below_six_units_no_interval_and_no_p_value():
    estimate = geometric_ratio([2.0, 4.0, 0.2, 10.0, 1.0], [1, 2, 0.1, 5, 0.5])
    assert estimate.ratio == pytest.approx(2) and estimate.n == 5
    assert math.isnan(estimate.low) and math.isnan(estimate.high)
    assert estimate.text() == "2× (n = 5: too few for a test)"
    assert math.isnan(paired_wilcoxon([2.0, 4.0, 0.2, 10.0, 1.0], [1, 2, 0.1, 5, 0.5]))


def test_units_average_their_pairs_before_the_bootstrap():
    # dataset a: 30 folds twice as slow; b..f: one fold each, as fast. Over
    # pairs the ratio would be near 2 with a tight interval; over datasets
    # it is 2 ** (1 / 6), from six units.
    a = np.array([2.0] * 30 + [1.0] * 5)
    b = np.ones(35)
    units = ["a"] * 30 + ["b", "c", "d", "e", "f"]
    estimate = geometric_ratio(a, b, units=units)
    assert estimate.n == 6 and estimate.ratio == pytest.approx(2 ** (1 / 6))
    assert estimate.low == pytest.approx(1.0)
    per_pair = geometric_ratio(a, b)
    assert per_pair.n == 35 and per_pair.low > 1.5
    logs = np.array([np.log(2)] + [0.0] * 5)
    assert paired_wilcoxon(a, b, units=units) == pytest.approx(
        stats.wilcoxon(logs).pvalue
    )
    with pytest.raises(ValueError, match="units must label each pair"):
        geometric_ratio(a, b, units=units[:-1])


def test_ratio_and_interval_match_a_plain_bootstrap():
    a = np.array([0.5, 1.2, 3.0, 0.7, 2.2, 9.0, 0.05])
    b = np.array([0.4, 2.0, 1.0, 0.7, 1.1, 3.0, 0.10])
    logs = np.log(a / b)
    draws = np.random.default_rng(SEED).integers(0, 7, size=(N_RESAMPLES, 7))
    means = logs[draws].mean(axis=1)
    low, high = np.exp(np.percentile(means, [2.5, 97.5]))
    estimate = geometric_ratio(a, b)
    assert estimate.ratio == pytest.approx(np.exp(logs.mean()))
    assert (estimate.low, estimate.high) == pytest.approx((low, high))
    assert estimate.low < estimate.ratio < estimate.high
    assert geometric_ratio(a, b) == estimate  # seeded: the same every time


def test_bootstrap_mean_of_differences():
    values = np.array([0.02, -0.01, 0.03, 0.0, 0.05, 0.01, 0.02])
    draws = np.random.default_rng(SEED).integers(0, 7, size=(N_RESAMPLES, 7))
    low, high = np.percentile(values[draws].mean(axis=1), [2.5, 97.5])
    assert bootstrap_mean(values) == pytest.approx((values.mean(), low, high))
    mean, low, high = bootstrap_mean(values[:5])  # too few units: no interval
    assert mean == pytest.approx(0.018) and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in bootstrap_mean([]))


def test_no_pair_and_bad_times():
    empty = geometric_ratio([], [])
    assert empty.n == 0 and math.isnan(empty.ratio) and empty.text() == ""
    with pytest.raises(ValueError, match="positive"):
        geometric_ratio([1.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="paired"):
        geometric_ratio([1.0, 2.0], [1.0])


def test_wilcoxon_is_scipys_on_the_log_ratios():
    a = np.array([0.5, 1.2, 3.0, 0.8, 2.2, 9.0, 0.05, 4.0])
    b = np.array([0.4, 2.0, 1.0, 0.7, 1.1, 3.0, 0.10, 1.0])
    expected = stats.wilcoxon(np.log(a) - np.log(b)).pvalue
    assert paired_wilcoxon(a, b) == pytest.approx(expected)
    assert paired_wilcoxon([1.0, 2.0] * 3, [1.0, 2.0] * 3) == 1.0
    assert math.isnan(paired_wilcoxon([1.0], [2.0]))


EIGHT = tuple("abcdefgh")


def _study(cpu=False, startup=False, datasets=EIGHT, **extra_methods):
    """dl85 proves every run in 0.1 s; cpsat proves all but fold 1 of
    datasets a and b, each in 0.2 s (twice dl85's time)."""
    proto = protocol(methods={**METHODS, **extra_methods})
    records = []
    for record in grid(datasets=datasets, depths=(2,), proto=proto):
        method = record["method"]
        record["fit_time_s"] = {"dl85": 0.1, "cpsat": 0.2}.get(method, 0.3)
        if cpu:
            record["cpu_time_s"] = 3 * record["fit_time_s"]
        if method == "cpsat" and record["fold"] == 1 and record["dataset"] in "ab":
            record.update(optimal=False, claimed_optimal=False, fit_time_s=10.5)
            record.update(learner_status="timeout", lower_bound=8.0)
        if method == "penalised":
            record["objective_family"] = "misclassification+leaf-penalty"
            if startup:
                record["stats"] = {"startup_s": 1.3}
        records.append(record)
    return records


def _records(tmp_path, records):
    return StudyRecords.from_frame(write_study(tmp_path / "s", records).load())


RATIO = "time to proof / dl85's (geo-mean over datasets [95 % CI])"


def test_speed_table_pairs_proofs_and_counts_the_rest(tmp_path):
    records = _records(tmp_path, _study())
    table, not_compared = speed_table(records.frame, records.exact_methods, "dl85", [2])
    assert not_compared == {}
    row = table.set_index("method").loc["cpsat"]
    assert row["datasets both proved"] == 8 and row["runs"] == 16 and row["both"] == 14
    assert row["proven by method"] == 14 and row["proven by dl85"] == 16
    assert row["only method"] == 0 and row["only dl85"] == 2
    assert row[RATIO] == "2× [2, 2]"
    assert float(row["Wilcoxon p (datasets)"]) < 0.05  # 8 datasets, all slower
    assert not any(column.startswith("CPU time") for column in table)


def test_folds_of_few_datasets_give_no_interval_and_no_p_value(tmp_path):
    # 4 datasets x 2 folds: 6 runs both prove, but 4 independent units
    records = _records(tmp_path, _study(datasets=("a", "b", "c", "d")))
    table, _ = speed_table(records.frame, records.exact_methods, "dl85", [2])
    row = table.set_index("method").loc["cpsat"]
    assert row["datasets both proved"] == 4 and row["both"] == 6
    assert row[RATIO] == "2× (n = 4: too few for a test)"
    assert row["Wilcoxon p (datasets)"] == ""


def test_cpu_ratio_beside_wall_and_other_family_not_compared(tmp_path):
    records = _records(tmp_path, _study(cpu=True, penalised="dl85"))
    table, not_compared = speed_table(records.frame, records.exact_methods, "dl85", [2])
    assert not_compared == {OTHER_FAMILY: ["penalised"]}
    assert "penalised" not in set(table["method"])
    row = table.set_index("method").loc["cpsat"]
    assert row["CPU time / dl85's (geo-mean over datasets [95 % CI])"] == "2× [2, 2]"


def test_another_problem_is_named_never_timed(tmp_path):
    # the same datasets, but cpsat saw 10 columns where dl85 saw 70 (a
    # numeric learner against a binarised one): not the same problem
    records = _study()
    for record in records:
        record["n_features"] = 10 if record["method"] == "cpsat" else 70
    frame = _records(tmp_path, records).frame
    table, not_compared = speed_table(frame, ["dl85", "cpsat"], "dl85", [2])
    assert table.empty and not_compared == {NOT_SAME_PROBLEM: ["cpsat"]}
    assigned, unpaired = assign_references(frame, ["dl85", "cpsat"], ["dl85"])
    assert assigned == {} and unpaired == ["cpsat"]
    write_study(tmp_path / "other", records)
    text = make_report("other", output_dir=tmp_path).read_text()
    assert "### Speed against dl85" not in text
    assert (
        "Not timed against a reference: cpsat (no run of the same problem in " in text
    )


def test_report_shows_speed_startup_footnote_and_gap_at_the_limit(tmp_path):
    write_study(tmp_path / "synthetic", _study(startup=True, penalised="dl85"))
    text = make_report("synthetic", output_dir=tmp_path).read_text()
    assert "### Speed against dl85" in text
    assert f"{N_RESAMPLES} resamples of the datasets, NumPy seed {SEED}" in text
    assert "| 2 | cpsat | 8 | 16 | 14 | 16 | 14 | 0 | 2 | 2× [2, 2] |" in text
    assert "Not compared (another objective family than dl85's): penalised." in text
    assert "| 2 | penalised † |" not in text  # not in the speed table
    assert "† penalised: its fit time includes an interpreter start-up" in text
    proofs = text.split("## Exact methods", 1)[1].split("###", 1)[0]
    # cpsat: 2 runs not proven, objective 10 over a bound of 8: gap 20 %;
    # PAR-2 (14 x 0.2 s + 2 x 2 x 10 s) / 16 = 2.67 s
    assert (
        "| 2 | cpsat | misclassification | 14/16 | 0.2 | 0.2 | 2.67 | 2 | 20 % | 20 % |"
        in (proofs)
    )


def test_startup_methods_reads_the_stats(tmp_path):
    frame = _records(tmp_path, _study(startup=True, penalised="dl85")).frame
    assert startup_methods(frame) == {"penalised": pytest.approx(1.3)}


def _tiers():
    """Two tiers of one study: dl85 and cpsat on datasets a and b, the
    numeric DL8.5 and a numeric tool (twice its time) on c and d, and cart
    on every dataset."""
    methods = {"dl85": "dl85", "cpsat": "cpsat", "num": "dl85-numeric"}
    proto = protocol(methods={**methods, "tool": "contree", "cart": "cart"})
    records = []
    for record in grid(depths=(3,), proto=proto):
        binary = record["dataset"] in ("a", "b")
        if record["method"] in ("dl85", "cpsat") and not binary:
            continue
        if record["method"] in ("num", "tool") and binary:
            continue
        record["fit_time_s"] = {"dl85": 0.1, "num": 0.4}.get(record["method"], 0.8)
        records.append(record)
    return records


def test_a_tool_of_another_tier_is_timed_against_its_tiers_dl85(tmp_path):
    records = _records(tmp_path, _tiers())
    exact = records.exact_methods
    assert set(exact) == {"cpsat", "dl85", "num", "tool"}
    assert records.speed_references == ["dl85", "num"]  # the base name leads
    assigned, unpaired = assign_references(records.frame, exact, ["dl85", "num"])
    assert assigned == {"dl85": ["cpsat"], "num": ["tool"]}
    assert unpaired == []
    # with dl85 as the only reference, the numeric tier is named, not dropped
    assigned, unpaired = assign_references(records.frame, exact, ["dl85"])
    assert assigned == {"dl85": ["cpsat"]} and unpaired == ["num", "tool"]

    write_study(tmp_path / "tiers", _tiers())
    text = make_report("tiers", output_dir=tmp_path).read_text()
    assert "### Speed against dl85\n" in text and "### Speed against num\n" in text
    against_num = text.split("### Speed against num", 1)[1].split("##", 1)[0]
    two = "(n = 2: too few for a test) |  |"
    assert f"| 3 | tool | 2 | 4 | 4 | 4 | 4 | 0 | 0 | 2× {two}" in against_num
    against_dl85 = text.split("### Speed against dl85", 1)[1].split("##", 1)[0]
    assert f"| 3 | cpsat | 2 | 4 | 4 | 4 | 4 | 0 | 0 | 8× {two}" in against_dl85
    assert "tool" not in against_dl85 and "Not timed against" not in text


def test_a_variant_and_its_base_get_one_table_per_tier(tmp_path):
    # the threads study: dl85 and its 2-thread variant on a and b, the
    # numeric DL8.5 and its variant on c and d, all four references
    methods = {"dl85": "dl85", "dl85-2": "dl85", "num": "dl85-numeric"}
    proto = protocol(methods={**methods, "num-2": "dl85-numeric"})
    records = [
        r
        for r in grid(depths=(3,), proto=proto)
        if (r["dataset"] in ("a", "b")) == (r["method"] in ("dl85", "dl85-2"))
    ]
    frame = _records(tmp_path, records).frame
    references = ["dl85", "dl85-2", "num", "num-2"]
    assigned, unpaired = assign_references(frame, references, references)
    assert assigned == {"dl85": ["dl85-2"], "num": ["num-2"]} and unpaired == []


def test_a_study_on_shared_instances_keeps_one_reference(tmp_path):
    records = _records(tmp_path, _study())
    assigned, unpaired = assign_references(
        records.frame, records.exact_methods, ["dl85", "cpsat"]
    )
    assert assigned == {"dl85": ["cpsat"]} and unpaired == []


def test_the_speed_references_are_the_dl85_methods_those_of_the_main_base_first(
    tmp_path,
):
    methods = {"a-num": "dl85-numeric", "b-main": "dl85", "cpsat": "cpsat"}
    records = _records(
        tmp_path, list(grid(depths=(2,), proto=protocol(methods=methods)))
    )
    assert records.speed_references == ["b-main", "a-num"]
    numeric_first = StudyRecords.from_frame(records.frame)
    numeric_first.reference_base = "dl85-numeric"  # as dl85-reg in regression
    assert numeric_first.speed_references == ["a-num", "b-main"]
    plain = _records(tmp_path / "plain", list(grid(depths=(2,))))
    assert plain.speed_references == ["dl85"]


def test_a_numeric_tool_is_timed_against_dl85_numeric_where_dl85_binarised(tmp_path):
    # dataset a: dl85 saw 70 binarised columns, the numeric DL8.5 and the
    # tool the 10 raw ones; dataset b is 0/1 (48 columns for all three)
    methods = {"dl85": "dl85", "num": "dl85-numeric", "tool": "contree"}
    records = []
    for record in grid(
        datasets=("a", "b"), depths=(3,), proto=protocol(methods=methods)
    ):
        binarised = record["dataset"] == "a" and record["method"] == "dl85"
        record["n_features"] = (
            70 if binarised else (10 if record["dataset"] == "a" else 48)
        )
        record["fit_time_s"] = {"dl85": 0.1, "num": 0.2}.get(record["method"], 0.4)
        records.append(record)
    frame = _records(tmp_path, records).frame
    exact = ["dl85", "num", "tool"]
    assigned, unpaired = assign_references(frame, exact, ["dl85", "num"])
    assert assigned == {"dl85": ["num", "tool"], "num": ["tool"]} and unpaired == []
    table, not_compared = speed_table(frame, ["dl85", "num", "tool"], "dl85", [3])
    assert not_compared == {NOT_SAME_PROBLEM: ["num on a", "tool on a"]}
    row = table.set_index("method").loc["tool"]
    assert row["datasets both proved"] == 1 and row["runs"] == 2  # b only
    table, _ = speed_table(frame, ["num", "tool"], "num", [3])
    row = table.set_index("method").loc["tool"]
    assert row["datasets both proved"] == 2 and row[RATIO.replace("dl85", "num")] == (
        "2× (n = 2: too few for a test)"
    )
