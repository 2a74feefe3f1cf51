"""The exact-methods section: PAR-2 and the published optima beside proofs."""

import pytest
from report_doubles import grid, protocol, run, write_study

from odtstudy.datasets._published import CONTREE_OPTIMA, published_optimum
from odtstudy.study.report import make_report
from odtstudy.study.report._build import _study_records
from odtstudy.study.report._proofs import proof_table, published_table


def _records(records, tmp_path):
    return _study_records(write_study(tmp_path / "study", records).load())


def test_par2_counts_a_run_not_proven_at_twice_its_limit(tmp_path):
    proto = protocol(folds=1, time_limit=10.0)
    records = grid(datasets=("a", "b", "c", "d"), depths=(3,), proto=proto)
    for record in records:
        if record["method"] == "cpsat" and record["dataset"] in ("a", "b"):
            record.update(optimal=False, learner_status="timeout", fit_time_s=10.0)
        if record["method"] == "dl85":
            record.update(
                fit_time_s={"a": 1.0, "b": 2.0, "c": 3.0, "d": 6.0}[record["dataset"]]
            )
    table = proof_table(_records(records, tmp_path)).set_index("method")
    assert table.loc["dl85", "PAR-2 (s)"] == "3"  # (1 + 2 + 3 + 6) / 4
    assert table.loc["cpsat", "PAR-2 (s)"] == "10.2"  # (0.5 + 0.5 + 20 + 20) / 4


def test_published_value_beside_each_exact_method(tmp_path):
    proto = protocol(folds=1)
    records = [
        run("contree-train/raisin", 3, "dl85", proto=proto, objective=76.0),
        run(
            "contree-train/raisin",
            3,
            "cpsat",
            proto=proto,
            objective=80.0,
            optimal=False,
            learner_status="timeout",
        ),
        run("contree-train/bank", 4, "dl85", proto=proto, objective=1.0),
        run("contree-train/bank", 4, "cpsat", proto=proto, objective=0.0),
        run("contree/raisin", 3, "dl85", proto=proto, objective=74.0),
    ]
    table, sources = published_table(_records(records, tmp_path))
    assert sources == [published_optimum("contree-train/raisin", 3)[1]]
    rows = table.set_index(["dataset", "depth"])
    assert len(rows) == 2  # contree/raisin (the whole set) has no published optimum
    raisin = rows.loc[("contree-train/raisin", 3)]
    assert raisin["published"] == str(CONTREE_OPTIMA[3]["raisin"])
    assert raisin["dl85"] == "76 proven" and raisin["cpsat"] == "80 not proven"
    bank = rows.loc[("contree-train/bank", 4)]
    assert bank["dl85"] == "**1 proven: contradicts**" and bank["cpsat"] == "0 proven"


def test_a_method_that_ran_no_published_instance_gets_no_column(tmp_path):
    proto = protocol(folds=1)
    records = [
        run("contree-train/raisin", 3, "dl85", proto=proto, objective=76.0),
        run("contree/raisin", 3, "cpsat", proto=proto, objective=74.0),
    ]
    table, _ = published_table(_records(records, tmp_path))
    assert list(table.columns) == ["dataset", "depth", "published", "dl85"]


def test_no_published_column_for_cross_validated_fits(tmp_path):
    records = [
        run("contree-train/raisin", 3, m, fold=f)
        for m in ("dl85", "cpsat")
        for f in (0, 1)
    ]
    table, _ = published_table(_records(records, tmp_path))
    assert table.empty
    write_study(tmp_path / "cv", records)
    assert "Published optima" not in make_report("cv", tmp_path).read_text()


def test_the_report_prints_the_published_section(tmp_path):
    proto = protocol(folds=1)
    records = [
        run("contree-train/wilt", 4, m, proto=proto, objective=2.0)
        for m in ("dl85", "cpsat")
    ]
    write_study(tmp_path / "pub", records)
    text = make_report("pub", tmp_path).read_text()
    assert (
        "### Published optima" in text
        and "| contree-train/wilt | 4 | 2 | 2 proven | 2 proven |" in text
    )
    assert "ConSol-Lab/contree@61ebd49" in text


@pytest.mark.parametrize(
    "name", ["contree/wilt", "wilt", "cp4im/wilt", "contree-train/skin"]
)
def test_only_the_published_splits_have_an_optimum(name):
    assert published_optimum(name, 3) is None


def test_status_counts_fits_over_the_allowed_time(tmp_path):
    from odtstudy._deadline import allowed_fit_time
    from odtstudy.study.report._status import status_table

    proto = protocol(folds=1, time_limit=10.0)
    allowed = allowed_fit_time(10.0)  # 12 s
    records = [
        run("a", 2, "dl85", proto=proto, fit_time_s=allowed - 0.5),
        run("b", 2, "dl85", proto=proto, fit_time_s=allowed + 0.6),
        run("a", 2, "cart", proto=proto, fit_time_s=1.2),
        run(
            "b",
            2,
            "cart",
            proto=proto,
            fit_time_s=None,
            status="timeout",
            has_tree=True,
        ),
    ]
    frame = write_study(tmp_path / "limits", records).load()
    table = status_table(frame).set_index("method")
    assert table.loc["dl85", "over the allowed time"] == 1
    assert (
        table.loc["dl85", "slowest fit / allowed"] == f"{(allowed + 0.6) / allowed:.2f}"
    )
    assert table.loc["cart", "over the allowed time"] == 1  # the killed run
    assert table.loc["cart", "slowest fit / allowed"] == "0.10"
