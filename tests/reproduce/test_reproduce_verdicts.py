"""The five verdicts and the rules that give them: the tested share over
independent units, the floor of MIN_UNITS units, the aggregation of folds per
data set, a claim of several parts, a comparator decided by its time limit,
the legend under every verdict table and the date of the thresholds against
the first runs (and against git history, in a clone)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from odtstudy.reproduce import VERDICTS, _evidence, list_reproductions, load_published
from odtstudy.reproduce._claims import VERDICT_LEGEND, legend_text
from odtstudy.reproduce._evidence import (
    combine_verdicts,
    limit_decided,
    too_few,
    unit_signs,
)
from odtstudy.reproduce._report import paper_section, thresholds_history
from odtstudy.reproduce._rules import Rules, parse_thresholds
from odtstudy.study.report import newest_records
from odtstudy.study.report._document import Document
from odtstudy.study.report._speed import MIN_UNITS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "reference-reports"
RULES = Rules(parse_thresholds({"reproduced": 0.5, "partly": 0.5, "alpha": 0.05}, "t"))


def _share(hits, total, **kwargs):
    return _evidence.tested_share(hits, total, RULES, minimum=3, **kwargs)


# -- the five labels ----------------------------------------------------------


def test_the_five_labels_are_defined_once():
    assert VERDICTS == (
        "reproduced", "partly", "inconclusive", "not reproduced", "not comparable"
    )  # fmt: skip
    assert tuple(VERDICT_LEGEND) == VERDICTS
    text = legend_text()
    assert all(f"*{verdict}*" in text for verdict in VERDICTS)
    assert "two non-significant results that agree are not a reproduction" in text


@pytest.mark.parametrize(
    ("hits", "total", "verdict", "evidence"),
    [
        (8, 8, "reproduced", "8/8 = 100%, sign test p = 0.0039"),
        (5, 7, "partly", "a majority, not significant"),
        (4, 8, "inconclusive", "no significant difference either way"),
        (2, 7, "inconclusive", "no significant difference either way"),
        (0, 8, "not reproduced", "the other way p = 0.0039"),
        (3, 3, "inconclusive", "n = 3: too few for a test"),
        (0, 0, "not comparable", "no comparison measured"),
    ],
)
def test_each_label_is_reachable_by_the_tested_share(hits, total, verdict, evidence):
    got, text = _share(hits, total)
    assert got == verdict
    assert evidence in text


def test_the_floor_is_min_units_whatever_the_data_file_asks():
    below = MIN_UNITS - 1
    verdict, text = _evidence.tested_share(below, below, RULES, minimum=1)
    assert verdict == "inconclusive"
    assert text.endswith(too_few(below))
    assert too_few(3).startswith("n = 3: too few for a test")
    assert f"at least {MIN_UNITS}" in too_few(3)
    full = _evidence.tested_share(MIN_UNITS, MIN_UNITS, RULES, minimum=1)
    assert full[0] == "reproduced"


def test_all_units_tied_is_no_difference_not_nothing_measured():
    verdict, text = _share(0, 0, tied=7)
    assert verdict == "inconclusive" and "tied on all 7 units" in text


def test_a_claims_own_share_and_chance():
    # significant, but below the share the claim states: partly
    verdict, text = _share(8, 9, least=0.9)  # p = 0.02, 89 %
    assert verdict == "partly" and "significant, but below 90%" in text
    # "the best of three" on 4 of 8 sets: chance is one in three
    assert _share(4, 8, chance=1 / 3)[0] == "inconclusive"
    assert _share(7, 8, chance=1 / 3)[0] == "reproduced"


@pytest.mark.parametrize(
    ("parts", "verdict"),
    [
        (["reproduced", "reproduced"], "reproduced"),
        (["reproduced", "inconclusive"], "partly"),
        (["reproduced", "not reproduced"], "partly"),
        (["partly", "partly"], "partly"),
        (["partly", "not reproduced"], "not reproduced"),
        (["inconclusive", "not reproduced"], "not reproduced"),
        (["inconclusive", "not comparable"], "inconclusive"),
        (["not comparable", "not comparable"], "not comparable"),
        ([], "not comparable"),
    ],
)
def test_combine_verdicts(parts, verdict):
    assert combine_verdicts(parts) == verdict


def test_folds_are_averaged_per_data_set_before_the_test():
    """Ten folds of one set and one fold of each of two others: three units,
    each counted once by its mean."""
    rows = [("a", d) for d in [0.1] * 9 + [-2.0]]  # a: many folds, mean < 0
    rows += [("b", 0.3), ("c", 0.0)]
    frame = pd.DataFrame(rows, columns=["dataset", "diff"])
    assert unit_signs(frame, "dataset", "diff") == (1, 1, 1)
    assert unit_signs(frame.iloc[:0], "dataset", "diff") == (0, 0, 0)


def _runs(statuses, optimal=False, kept=True):
    stats = {"warm_start_objective": 3.0, "milp_objective": 3.0 if kept else 2.0}
    return pd.DataFrame(
        {
            "method": "oct",
            "status": statuses,
            "learner_status": statuses,
            "optimal": optimal,
            "time_limit": 5.0,
            "stats": json.dumps(stats),
        }
    )


def test_limit_decided_makes_a_comparator_not_comparable():
    why = limit_decided(_runs(["timeout"] * 4), "oct")
    assert "4 of 4 runs" in why and "(5 s)" in why
    assert "warm start unimproved in 4" in why
    assert "0" in limit_decided(_runs(["timeout"] * 2, kept=False), "oct")
    # one run that finished, or a proof: its trees measure the method
    assert limit_decided(_runs(["timeout", "ok"]), "oct") is None
    assert limit_decided(_runs(["timeout"], optimal=True), "oct") is None
    assert limit_decided(_runs(["timeout"]), "cart") is None


# -- the thresholds' dates -----------------------------------------------------


def _published(history):
    published = load_published("tmo")
    return type(published)(**{**published.__dict__, "history": history})


class _Records:
    def __init__(self, utc):
        self.frame = pd.DataFrame({"utc": [utc]})


SET = {"commit": "aaaaaaa", "date": "2026-11-20"}


def test_fixed_before_the_runs_only_when_the_thresholds_came_first():
    first = {"commit": "bbbbbbb", "date": "2026-11-23"}
    before = _published({"thresholds_set": SET, "first_records": first})
    text = thresholds_history(before, _Records("2026-11-27T10:00:00+00:00"))
    assert text.endswith("fixed before the runs.")
    assert "aaaaaaa (2026-11-20)" in text and "bbbbbbb (2026-11-23)" in text
    assert "the runs shown here began 2026-11-27" in text
    # a run older than every commit decides too
    text = thresholds_history(before, _Records("2026-11-19T10:00:00+00:00"))
    assert "fixed before" not in text and "set after the first runs" in text
    later = _published({"thresholds_set": {**SET, "date": "2026-11-26"},
                        "first_records": first})  # fmt: skip
    text = thresholds_history(later, _Records("2026-11-27T10:00:00+00:00"))
    assert "fixed before" not in text and "set after the first runs" in text
    same = _published({"thresholds_set": {**SET, "date": "2026-11-23"},
                       "first_records": first})  # fmt: skip
    assert "not shown to precede them" in thresholds_history(same)
    assert "may postdate the runs" in thresholds_history(_published({}))


def test_no_reproduction_claims_thresholds_fixed_before_its_runs():
    for name in list_reproductions():
        published = load_published(name)
        records = ROOT / "docs/reference-reports" / name / "results.jsonl"
        # first_records exactly when reference records are committed
        expected = {"thresholds_set", "first_records"} - (
            set() if records.exists() else {"first_records"}
        )
        assert set(published.history) == expected, name
        text = thresholds_history(published)
        assert "fixed before the runs" not in text, (name, text)
        raw = (ROOT / "odtstudy/reproduce/papers" / name / "published.toml").read_text()
        assert "fixed\n# before the runs" not in raw, name


def _git(*args) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def _in_a_full_clone() -> bool:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    try:
        return _git("rev-parse", "--is-shallow-repository").strip() == "false"
    except (subprocess.CalledProcessError, OSError):
        return False


def _first(lines: str) -> tuple:
    """(commit, date) of the oldest line of ``git log --format='%h %ad'``."""
    commit, date = lines.strip().splitlines()[-1].split()
    return commit, date


@pytest.mark.skipif(not _in_a_full_clone(), reason="needs a full git clone")
@pytest.mark.parametrize("name", list_reproductions())
def test_history_dates_match_git(name):
    history = load_published(name).history
    data_file = f"odtstudy/reproduce/papers/{name}/published.toml"
    log = ["log", "--follow", "--format=%h %ad", "--date=short"]
    # the first commit with a [thresholds] table in the data file (renames
    # followed), and the first commit of the committed records
    commit, date = _first(_git(*log, "-G^\\[thresholds\\]", "--", data_file))
    assert history["thresholds_set"]["date"] == date, name
    assert commit.startswith(history["thresholds_set"]["commit"][:7])
    records = f"docs/reference-reports/{name}/results.jsonl"
    added = _git(*log, "--diff-filter=A", "--", records)
    if added.strip():  # no reference records yet: no first_records to date
        commit, date = _first(added)
        assert history["first_records"]["date"] == date, name
        assert commit.startswith(history["first_records"]["commit"][:7])
    # no threshold changed since: else [history] would date the last change
    at_setting = history["thresholds_set"]["commit"]
    names = _git("show", "--name-only", "--format=", at_setting).splitlines()
    old = next(p for p in names if p.endswith(f"/{name}.toml") or p == data_file)
    then = tomllib.loads(_git("show", f"{at_setting}:{old}"))["thresholds"]
    now = tomllib.loads((ROOT / data_file).read_text())["thresholds"]
    assert {k: _value(v) for k, v in then.items()} == {
        k: _value(v) for k, v in now.items()
    }, name


def _value(entry):
    return entry["value"] if isinstance(entry, dict) else entry


# -- the reports ----------------------------------------------------------------


@pytest.mark.ci_slow
@pytest.mark.parametrize("name", list_reproductions())
def test_every_verdict_table_has_the_legend_under_it(name, tmp_path):
    folder = REPORTS / name
    if not (folder / "results.jsonl").exists():
        pytest.skip(f"no committed records of {name}")
    doc = Document(f"Study {name}", tmp_path)
    results = paper_section(doc, name, newest_records(folder))
    text = doc.markdown()
    table = text.index("| claim | where | published | odtstudy | verdict |")
    legend = text.index(legend_text())
    assert table < legend < text.index("Verdicts over")
    assert "fixed before the runs" not in text
    assert {r.verdict for r in results} <= {*VERDICTS, "pass", "fail"}
