"""The reproduction framework: ``odtstudy reproduce``, the "Paper vs odtstudy"
section, its completeness check and its resilience to a failing claims module.

A fake reproduction ``fakerepro`` (a tiny study, a data file, a claims module)
is installed by monkeypatching the folders of the built-in studies and data
files, and ``sys.modules`` for the claims module.
"""

import logging
import sys
import tokenize
import types
from pathlib import Path

import pytest

from odtstudy import cli
from odtstudy.reproduce import (
    PAPER_HEADING,
    VERDICTS,
    ClaimResult,
    claims_module,
    list_reproductions,
    load_published,
    paper_preface,
    papers_dir,
    verdict_table_complete,
    verdict_table_problems,
)
from odtstudy.reproduce._claims import legend_text
from odtstudy.reproduce._evidence import claim_result, judge_claims
from odtstudy.reproduce._report import module_name
from odtstudy.study import (
    add_config_dir,
    list_studies,
    make_report,
    remove_config_dir,
    study_file,
)

NAME = "fakerepro"
MODULE = module_name(NAME)

STUDY = """
[study]
name = "fakerepro"
description = "A fake paper: DL8.5 against CART on zoo-1."
datasets = ["zoo-1"]
methods = ["dl85", "cart"]
depths = [2]
folds = 1
seeds = [0]
time_limit = 5
grace_s = 5
workers = 1

[scales.smoke]
depths = [1, 2]
"""

PUBLISHED = """
[paper]
citation = "Doe (2020). A fake paper. Proceedings of Tests."
source = "fake.txt"
protocol = "zoo-1, depth 2, fitted on all rows"
hardware = "a fake machine"
time_limit = 600

[rules]
prose = "reproduced: DL8.5's training accuracy ≥ CART's."

[[values]]
where = "Table 1"
dataset = "zoo-1"
method = "dl85"
paper_method = "DL8.5"
depth = 2
metric = "train_acc"
value = 0.99

[[values]]
where = "Table 1"
dataset = "zoo-1"
method = "cart"
depth = 4
metric = "fit_time_s"
timeout = true

[[claims]]
id = "dl85-beats-cart"
statement = "DL8.5 is at least as accurate as CART on training data"
where = "Table 1"

[[claims]]
id = "cart-is-fast"
statement = "CART is fast"
where = "Figure 2"
figure_only = true
"""


def _evaluate_ok(records, published):
    cells = records.cells.set_index(["method", "depth"])
    results = []
    for claim in published.claims:
        if claim["id"] == "dl85-beats-cart":
            dl85 = cells.loc[("dl85", 2), "train_acc"]
            cart = cells.loc[("cart", 2), "train_acc"]
            holds = dl85 >= cart
            results.append(
                ClaimResult(
                    claim["id"],
                    claim["statement"],
                    claim["where"],
                    "DL8.5 ≥ CART",
                    f"{dl85:.3f} vs {cart:.3f}",
                    "reproduced" if holds else "not reproduced",
                    "training accuracy compared at depth 2",
                )
            )
        else:
            results.append(
                ClaimResult(
                    claim["id"],
                    claim["statement"],
                    claim["where"],
                    "figure only",
                    "—",
                    "not comparable",
                    "no number in the paper",
                )
            )
    return results


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """Install the fake reproduction; yields the claims module to tweak."""
    papers = tmp_path / "papers"
    (papers / NAME).mkdir(parents=True)
    (papers / NAME / "study.toml").write_text(STUDY)
    (papers / NAME / "published.toml").write_text(PUBLISHED)
    monkeypatch.setattr("odtstudy.reproduce._published.papers_dir", lambda: papers)
    monkeypatch.setattr("odtstudy.reproduce._report.papers_dir", lambda: papers)
    module = types.ModuleType(MODULE)
    module.evaluate = _evaluate_ok
    monkeypatch.setitem(sys.modules, MODULE, module)
    add_config_dir(papers)
    yield module
    remove_config_dir(papers)


def _run(tmp_path, *extra):
    out = tmp_path / "out"
    argv = ["reproduce", NAME, "--scale", "smoke", "--output", str(out), "--quiet"]
    code = cli.main([*argv, *extra])
    return code, out / f"{NAME}-smoke"


def _sections(text):
    return [line for line in text.splitlines() if line.startswith("## ")]


def test_list_prints_name_and_citation(fake, capsys):
    assert cli.main(["reproduce", "list"]) == 0
    out = capsys.readouterr().out
    assert NAME in out and "Doe (2020). A fake paper." in out
    assert list_reproductions() == [NAME]


def test_unknown_name_lists_the_reproductions(fake, capsys):
    assert cli.main(["reproduce", "no-such-paper", "--scale", "smoke"]) == 2
    err = capsys.readouterr().err
    assert "no reproduction named 'no-such-paper'" in err and NAME in err


def test_missing_claims_module_or_study_is_a_clear_error(
    fake, tmp_path, monkeypatch, capsys
):
    monkeypatch.delitem(sys.modules, MODULE)
    assert _run(tmp_path)[0] == 2
    assert "has no claims module" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, MODULE, fake)
    (tmp_path / "papers" / NAME / "study.toml").unlink()
    assert _run(tmp_path)[0] == 2
    assert "has no study configuration" in capsys.readouterr().err


def test_dry_run_runs_nothing(fake, tmp_path, capsys):
    code, folder = _run(tmp_path, "--dry-run")
    assert code == 0
    out = capsys.readouterr().out
    assert "4 runs in the grid" in out and "4 to run" in out
    assert not (folder / "results.jsonl").exists()


def test_report_opens_with_the_paper_section(fake, tmp_path):
    code, folder = _run(tmp_path)
    assert code == 0
    text = (folder / "report.md").read_text()
    # the paper's section comes first, before any protocol section
    assert _sections(text)[0] == f"## {PAPER_HEADING}"
    assert text.index(PAPER_HEADING) < text.index("## Summary")
    head = text[: text.index("## Summary")]
    assert "Doe (2020). A fake paper." in head
    for row in ("| protocol |", "| hardware |", "| time limit per fit |", "| scale |"):
        assert row in head
    assert "600 s" in head and "120× shorter" in head  # 5 s here vs 600 s
    assert "The study `fakerepro`: A fake paper: DL8.5 against CART" in head
    assert "reproduced: DL8.5's training accuracy ≥ CART's." in head
    assert "| claim | where | published | odtstudy | verdict | reason |" in head
    assert "**dl85-beats-cart**" in head and "**cart-is-fast**" in head
    assert "Verdicts over 2 claims: 1 reproduced, 0 partly" in head
    # the five verdicts' legend sits under the verdict table
    legend = head.index(legend_text())
    assert head.index("| claim | where |") < legend < head.index("Verdicts over")
    assert "INCOMPLETE" not in text
    assert verdict_table_complete(text)
    assert verdict_table_complete(folder / "report.md")
    # values beside ours: depth 2 was run (a mean), depth 4 was not
    assert "Published values beside ours" in head
    assert "— (not run at this scale)" in head
    assert "| 0.99 |" in head and "| timeout |" in head
    # `odtstudy report` gives the same report (through make_report)
    again = make_report(
        NAME, output_dir=tmp_path / "out", scale="smoke", preface=paper_preface(NAME)
    )
    assert again.read_text() == text
    assert PAPER_HEADING in (folder / "report.html").read_text()


def test_incomplete_claims_module_raises_an_alert(fake, tmp_path, capsys):
    def evaluate(records, published):
        first = _evaluate_ok(records, published)[0]
        extra = ClaimResult("made-up", "x", "y", "", "", "reproduced", "")
        return [first, extra]

    fake.evaluate = evaluate
    code, folder = _run(tmp_path)
    assert code == 1
    assert "incomplete" in capsys.readouterr().err
    text = (folder / "report.md").read_text()
    assert "VERDICT TABLE INCOMPLETE" in text
    problems = verdict_table_problems(text)
    assert any("cart-is-fast" in p for p in problems)
    assert any("made-up" in p for p in problems)
    assert not verdict_table_complete(text)
    published = load_published(NAME)
    assert not verdict_table_complete([], published)


def test_exception_in_evaluate_shows_not_comparable_rows(fake, tmp_path, caplog):
    def evaluate(records, published):
        raise RuntimeError("boom in the claims")

    fake.evaluate = evaluate
    with caplog.at_level(logging.ERROR, logger="odtstudy.reproduce"):
        code, folder = _run(tmp_path)
    assert code == 0  # the report is produced and complete
    assert "boom in the claims" in caplog.text
    text = (folder / "report.md").read_text()
    assert _sections(text)[0] == f"## {PAPER_HEADING}"
    assert (
        "Verdicts over 2 claims: 0 reproduced, 0 partly, 0 inconclusive, 0 not "
        "reproduced, 2 not comparable" in text
    )
    assert text.count("RuntimeError: boom in the claims") >= 2
    assert verdict_table_complete(text)
    assert "## Summary" in text  # the rest of the report is there


def test_check_on_results(fake):
    published = load_published(NAME)
    good = [
        ClaimResult(c["id"], "", "", "", "", VERDICTS[0], "") for c in published.claims
    ]
    assert verdict_table_complete(good, published)
    assert (
        "not in the data file's order"
        in verdict_table_problems(good[::-1], published)[0]
    )
    assert not verdict_table_complete(good[:1], published)
    assert not verdict_table_complete(good + good[:1], published)
    with pytest.raises(ValueError, match="verdict"):
        ClaimResult("x", "", "", "", "", "maybe", "")


# -- thresholds, sensitivity and checks ---------------------------------------

CHECKED = """
[sensitivity]
margin = 0.1

[thresholds]
partly = 0.5
least_gain = { value = 0.02, why = "a made-up rule" }

[[checks]]
id = "cart-tree-valid"
statement = "CART's tree predicts its own training rows"
where = "—"
"""


def _evaluate_checked(records, published):
    """A claim decided by a threshold of the data file, and a failing check."""
    cells = records.cells.set_index(["method", "depth"])
    gain = cells.loc[("dl85", 2), "train_acc"] - cells.loc[("cart", 2), "train_acc"]

    def beats(claim, rules):
        verdict = "reproduced" if gain >= rules["least_gain"] else "partly"
        return claim_result(claim, "—", f"{gain:.3f}", verdict, "gain")

    judges = {
        "dl85-beats-cart": beats,
        "cart-is-fast": lambda c, r: claim_result(c, "—", "—", "not comparable", ""),
        "cart-tree-valid": lambda c, r: claim_result(c, "—", "—", "fail", "broken"),
    }
    return judge_claims(published, judges)


def test_checks_are_apart_and_verdicts_have_a_sensitivity(fake, tmp_path):
    prose = "reproduced: a gain of at least {least_gain:.0%}."
    text = PUBLISHED.replace("reproduced: DL8.5's training accuracy ≥ CART's.", prose)
    (tmp_path / "papers" / NAME / "published.toml").write_text(text + CHECKED)
    fake.evaluate = _evaluate_checked
    published = load_published(NAME)
    assert [c["id"] for c in published.checks] == ["cart-tree-valid"]
    assert published.thresholds["least_gain"].why == "a made-up rule"
    code, folder = _run(tmp_path)
    assert code == 0
    text = (folder / "report.md").read_text()
    head = text[: text.index("## Summary")]
    assert "reproduced: a gain of at least 2%." in head  # the prose filled in
    assert "| `least_gain` | 0.02 | a made-up rule |" in head
    assert "| sensitivity |" in head
    # the failing check is shown as such and not counted among the claims
    assert "### Checks of the implementation" in head
    check = next(x for x in head.splitlines() if x.startswith("| **cart-tree-valid"))
    assert check.split(" | ")[4] == "fail"
    assert "Verdicts over 2 claims:" in head
    assert "(not counted as claims): 1 fail." in head
    assert verdict_table_complete(text)
    row = next(x for x in head.splitlines() if x.startswith("| **dl85-beats-cart"))
    verdict, sensitivity = row.split(" | ")[4], row.split(" | ")[6].rstrip(" |")
    # the verdict with least_gain at 0.018 and 0.022 (one line when unchanged)
    assert "least_gain" in sensitivity and verdict in sensitivity
    assert sensitivity.endswith("± 10%") or "0.018 → " in sensitivity


def test_a_check_row_missing_is_a_problem(fake):
    published = load_published(NAME)
    data_file(fake).write_text(PUBLISHED + CHECKED)
    published = load_published(NAME)
    claims = [
        ClaimResult(c["id"], "", "", "", "", "partly", "") for c in published.claims
    ]
    assert verdict_table_problems(claims, published) == [
        "no row for check(s) cart-tree-valid"
    ]
    check = ClaimResult("cart-tree-valid", "", "", "", "", "pass", "", check=True)
    assert verdict_table_complete([*claims, check], published)
    with pytest.raises(ValueError, match=r"check 'x'.*not one of pass, fail"):
        ClaimResult("x", "", "", "", "", "reproduced", "", check=True)


def data_file(fake) -> Path:
    """The fake reproduction's ``published.toml``."""
    from odtstudy.reproduce import _published

    return Path(_published.papers_dir()) / NAME / "published.toml"


@pytest.mark.parametrize(
    "entry",
    [
        'x = "high"',
        "x = { value = 0.5, because = 'y' }",
        "x = { value = 0.5, margin = -1 }",
    ],
)
def test_bad_threshold_is_a_clear_error(fake, entry):
    path = data_file(fake)
    path.write_text(PUBLISHED + f"\n[thresholds]\n{entry}\n")
    with pytest.raises(ValueError, match=r"\[thresholds\] x"):
        load_published(NAME)


OK_RULES = """[rules]
prose = "reproduced: DL8.5's training accuracy ≥ CART's."
"""


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("", r"\[rules\]: needs exactly prose"),
        ('[rules]\nprose = "x"\nextra = 1\n', r"\[rules\]: needs exactly prose"),
        ('[rules]\nprose = "{missing:.0%}"\n', r"\[rules\] prose: .*'missing'"),
    ],
)
def test_bad_rules_prose_is_a_clear_error(fake, rules, message):
    assert OK_RULES in PUBLISHED
    data_file(fake).write_text(PUBLISHED.replace(OK_RULES, rules))
    with pytest.raises(ValueError, match=message):
        load_published(NAME)


def test_an_unknown_threshold_names_the_file_and_the_known_ones(fake):
    path = data_file(fake)
    path.write_text(PUBLISHED + CHECKED)
    rules = load_published(NAME).rules()
    assert rules["partly"] == 0.5 and rules.read == ["partly"]
    with pytest.raises(KeyError, match=r"no threshold 'parly'.*least_gain, partly"):
        rules["parly"]
    assert rules.moved("partly", 0.6)["partly"] == 0.6


def test_each_reproduction_is_one_folder():
    """study.toml, published.toml and claims.py side by side, found by name."""
    assert list_reproductions()
    for name in list_reproductions():
        folder = Path(str(papers_dir())) / name
        assert Path(str(study_file(name))) == folder / "study.toml"
        assert Path(claims_module(name).__file__) == folder / "claims.py"
        assert load_published(name).name == name
        assert name in list_studies()


def test_every_reproduction_shares_partly_or_says_why():
    """One "partly" threshold across the papers unless the data file says why."""
    values = {}
    for name in list_reproductions():
        published = load_published(name)
        assert published.margin is not None, name
        threshold = published.thresholds["partly"]
        if not threshold.why:
            values[name] = threshold.value
        assert published.thresholds["alpha"].value == 0.05 or (
            published.thresholds["alpha"].why
        ), name
    assert len(set(values.values())) == 1, values


def _float_literals(path: Path) -> list:
    """(line, text) of every float literal in the code of ``path`` (strings,
    docstrings and comments are not code)."""
    with path.open("rb") as handle:
        tokens = tokenize.tokenize(handle.readline)
        return [
            (t.start[0], t.string)
            for t in tokens
            if t.type == tokenize.NUMBER
            and any(c in t.string.lower() for c in ".e")
            and not t.string.lower().startswith("0x")
        ]


def test_claims_modules_state_no_threshold():
    """Every number a verdict rule compares with is a threshold of the data
    file: the claims modules hold no float literal (ints such as 0, 1, 2 for
    counting and indexing stay)."""
    papers = Path(str(papers_dir()))
    found = {
        p.parent.name: _float_literals(p) for p in sorted(papers.glob("*/claims.py"))
    }
    assert len(found) >= 5
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_literal_check_finds_a_float(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('TIE = 1e-9\nX = 0.35  # a threshold\nS = "0.5 in text"\nN = 3\n')
    assert _float_literals(path) == [(1, "1e-9"), (2, "0.35")]


def test_hardware_comes_from_the_records_not_the_reporting_machine():
    import json as _json

    import pandas as pd

    from odtstudy.reproduce._report import _our_hardware

    frame = pd.DataFrame({"host": ["vm", "vm"]})
    assert _our_hardware(frame) == "host vm (CPU not in the records)"
    record = _json.dumps({"cpu_model": "Intel Xeon", "logical_cores": 2})
    frame["provenance"] = [record, record]
    assert _our_hardware(frame) == "host vm (Intel Xeon, 2 logical CPUs)"
