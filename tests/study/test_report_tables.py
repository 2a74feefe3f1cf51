"""Report tables: incomplete cells are marked, never bolded, never ranked."""

import pandas as pd
from report_doubles import grid, protocol, run, write_study

from odtstudy.study import make_report
from odtstudy.study.report import _tables as tables
from odtstudy.study.report import consistency_violations, heuristic_gaps
from odtstudy.study.report._build import _rank_tests as rank_tests
from odtstudy.study.report._records import StudyRecords


def _records(tmp_path, records):
    return StudyRecords.from_frame(write_study(tmp_path / "s", records).load())


def _best_but_incomplete(tmp_path):
    """cpsat has the best test accuracy everywhere, but on dataset "a" at
    depth 2 one of its runs has no tree (its cell is incomplete)."""
    records = []
    for record in grid():
        if record["method"] == "cpsat":
            record.update(test_acc=0.95)
            if (record["dataset"], record["depth"], record["fold"]) == ("a", 2, 1):
                record = run("a", 2, "cpsat", fold=1, has_tree=False)
        records.append(record)
    return _records(tmp_path, records)


def test_incomplete_cell_is_bracketed_and_never_bold(tmp_path):
    records = _best_but_incomplete(tmp_path)
    table = tables.accuracy_table(records, 2).set_index("dataset")
    assert (
        table.loc["a", "cpsat"].startswith("(") and "**" not in table.loc["a", "cpsat"]
    )
    assert table.loc["a", "dl85"].startswith("**") and table.loc[
        "a", "cart"
    ].startswith("**")
    assert table.loc["b", "cpsat"] == "**0.950 ± 0.000**"
    assert "**" not in table.loc["b", "dl85"]
    objectives = tables.objective_table(records, 2).set_index("dataset")
    assert objectives.loc["a", "cpsat"].startswith("(")


def test_incomplete_cell_is_never_ranked(tmp_path):
    records = _best_but_incomplete(tmp_path)
    tests = rank_tests(records)
    assert tests[2].dropped == ["a"] and "a" not in tests[2].scores.index
    assert tests[3].dropped == [] and len(tests[3].scores) == 4
    assert tests[2].ranks.index[0] == "cpsat"


def test_method_incomplete_on_most_datasets_is_left_out(tmp_path):
    records = [
        run(r["dataset"], r["depth"], "cpsat", fold=r["fold"], has_tree=False)
        if r["method"] == "cpsat" and r["dataset"] != "a"
        else r
        for r in grid()
    ]
    tests = rank_tests(_records(tmp_path, records))
    assert "cpsat" in tests[2].left_out and "cpsat" not in tests[2].ranks
    assert tests[2].dropped == []


def test_summary_counts_proofs_and_complete_cells(tmp_path):
    records = _best_but_incomplete(tmp_path)
    summary = tables.summary_table(records, rank_tests(records))
    row = summary[(summary["depth"] == 2) & (summary["method"] == "cpsat")].iloc[0]
    assert row["cells complete"] == "3/4" and row["runs proven"] == "7/8"
    assert row["runs with a tree of its own"] == "7/8"
    cart = summary[(summary["depth"] == 2) & (summary["method"] == "cart")].iloc[0]
    assert cart["runs proven"] == ""
    # 4 datasets: no rank test, so no average rank column
    assert not any(column.startswith("avg rank") for column in summary)
    assert "test acc (mean over 2 folds), mean over complete cells" in summary


def _frame(rows):
    base = dict(
        status="ok",
        fold=0,
        seed=0,
        n_features=4,
        depth=2,
        dataset="d",
        stats="{}",
        n_train=10,
    )
    return pd.DataFrame([{**base, **row} for row in rows])


def test_consistency_within_a_family_and_other_tools_first():
    frame = _frame(
        [
            dict(method="a", objective=3.0, optimal=True, dataset="d1"),
            dict(method="b", objective=4.0, optimal=True, dataset="d1"),
            dict(method="a", objective=3.0, optimal=True, dataset="d2"),
            dict(
                method="pub", objective=5.0, optimal=True, dataset="d2", tool="pystreed"
            ),
            dict(
                method="pen",
                objective=9.0,
                optimal=True,
                dataset="d1",
                objective_family="misclassification+leaf-penalty",
            ),
        ]
    )
    violations = consistency_violations(frame)
    assert list(violations["dataset"]) == ["d2", "d1"]
    assert list(violations["tools"]) == [2, 1]
    assert "pen" not in violations.iloc[1]["objectives"]
    gaps = heuristic_gaps(
        _frame(
            [
                dict(method="a", objective=3.0, optimal=True),
                dict(method="h", objective=4.0, optimal=False),
            ]
        )
    )
    assert gaps["gap"].tolist() == [1.0] and gaps["gap_points"].tolist() == [10.0]


def test_contree_and_dl85_at_every_midpoint_are_checked_against_each_other():
    import json

    import pandas as pd

    from odtstudy.study.report import consistency_violations

    def run(method, data, n_features, objective, max_thresholds):
        protocol = {
            "max_thresholds": max_thresholds,
            "methods": {method: {"method": method, "data": data}},
        }
        return dict(
            dataset="uci/iris", depth=2, fold=0, seed=0, status="ok", optimal=True,
            method=method, n_features=n_features, objective=objective,
            stats="{}", protocol=json.dumps(protocol), tool=method,
            objective_family="misclassification",
        )  # fmt: skip

    agree = pd.DataFrame(
        [
            run("pycontree", "numeric", 4, 5.0, None),
            run("dl85", "binary", 119, 5.0, None),
        ]
    )
    assert consistency_violations(agree).empty
    differ = pd.DataFrame(
        [
            run("pycontree", "numeric", 4, 5.0, None),
            run("dl85", "binary", 119, 6.0, None),
        ]
    )
    found = consistency_violations(differ)
    assert len(found) == 1 and found["tools"].iloc[0] == 2
    restricted = pd.DataFrame(
        [run("pycontree", "numeric", 4, 5.0, 8), run("dl85", "binary", 30, 6.0, 8)]
    )
    assert consistency_violations(restricted).empty  # a restricted problem


def test_numeric_dl85_is_checked_against_contree_unless_its_thresholds_are_capped():
    import json

    import pandas as pd

    from odtstudy.study.report import consistency_violations

    def run(label, method, params, objective):
        protocol = {
            "max_thresholds": 8,
            "methods": {label: {"method": method, "data": "numeric", "params": params}},
        }
        return dict(
            dataset="uci/iris", depth=2, fold=0, seed=0, status="ok", optimal=True,
            method=label, n_features=4, objective=objective, stats="{}",
            protocol=json.dumps(protocol), tool=label.split("-")[0],
            objective_family="misclassification",
        )  # fmt: skip

    contree = run("pycontree", "pycontree", {}, 6.0)
    every = run("dl85-numeric", "dl85-numeric", {"thresholds": "all"}, 7.0)
    found = consistency_violations(pd.DataFrame([contree, every]))
    assert len(found) == 1 and found["tools"].iloc[0] == 2
    capped = run("dl85-k", "dl85", {"thresholds": 2}, 7.0)
    assert consistency_violations(pd.DataFrame([contree, capped])).empty


def test_objective_note_only_where_exact_methods_solve_different_problems(tmp_path):
    methods = {"dl85": "dl85", "dl85-numeric": "dl85-numeric"}
    for max_thresholds, noted in ((None, False), (8, True)):
        proto = protocol(folds=1, methods=methods)
        proto["max_thresholds"] = max_thresholds
        width = 119 if max_thresholds is None else 30  # binarised uci/iris
        records = [
            run("uci/iris", 2, "dl85", proto=proto, n_features=width),
            run("uci/iris", 2, "dl85-numeric", proto=proto, n_features=4),
        ]
        folder = tmp_path / str(max_thresholds)
        write_study(folder / "s", records)
        text = make_report("s", output_dir=folder).read_text()
        assert ("their optima differ" in text) is noted


def test_a_tuned_refit_is_checked_only_against_runs_tuned_to_the_same_choice():
    import json

    from odtstudy.study.report._anytime import anytime_curves, primal_integrals

    def run(label, objective, chosen=None, tool="odtstudy"):
        spec = {"method": label.split("-")[0], "data": "binary"}
        stats = {"anytime": [[0.01, objective]]}
        if chosen is not None:
            spec["tune"] = {"folds": 5, "max_depth": "up-to-depth"}
            stats["tuned"] = {"max_depth": chosen}
        return dict(
            method=label, objective=objective, optimal=True, depth=3, tool=tool,
            protocol=json.dumps({"methods": {label: spec}}), stats=json.dumps(stats),
            has_tree=True, n_trees=float("nan"), fit_time_s=0.02, lower_bound=objective,
            objective_family="misclassification",
        )  # fmt: skip

    # untuned at depth 3: 4 errors; tuned refits at the depth their inner
    # cross-validation chose: 7 at depth 2, never a disagreement with 4
    frame = _frame(
        [
            run("dl85", 4.0),
            run("dl85-tuned", 7.0, chosen=2),
            run("pystreed-tuned", 7.0, chosen=2, tool="pystreed"),
        ]
    )
    assert consistency_violations(frame).empty
    # the same choice, another objective: two tools disagree
    frame.loc[2, "objective"] = 6.0
    found = consistency_violations(frame)
    assert len(found) == 1 and found["tools"].iloc[0] == 2
    assert found["problem"].iloc[0] == "4 features; tuned to max_depth 2"
    # a tuned refit's primal integral is measured against its own choice's best
    frame.loc[2, "objective"] = 7.0
    curves = anytime_curves(frame, ["dl85", "dl85-tuned"])
    integrals = primal_integrals(frame, curves, {"dl85": 1.0, "dl85-tuned": 1.0})
    assert integrals["primal_integral"].tolist() == [0.01, 0.01]
