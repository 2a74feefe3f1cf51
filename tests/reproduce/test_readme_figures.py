"""The README's figures, and those of the guide pages its sections moved to,
equal what the committed reference records give."""

import contextlib
import io
import re
from pathlib import Path

import pytest
from tool_module import TOOLS, load_tool

_script = load_tool("readme_figures")
figures, READMES, update = _script.figures, _script.READMES, _script.update
study_main = _script.main

ROOT = Path(__file__).resolve().parents[2]
OPENING = re.compile(r"^[ \t]*<!-- figures:[\w-]+ -->[ \t]*$", re.M)


def _files_with_regions() -> set:
    """The README and every Markdown file under docs/ (not a build) with a
    figures region (an opening marker on a line of its own), relative to the
    clone root."""
    candidates = [ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")]
    return {
        path.relative_to(ROOT)
        for path in candidates
        if "_build" not in path.parts
        and OPENING.search(path.read_text(encoding="utf-8"))
    }


def test_every_file_with_regions_is_rewritten_by_default():
    found = _files_with_regions()
    assert Path("README.md") in found
    assert found == set(READMES)


@pytest.fixture(scope="module")
def values():
    """Every region's value from the committed records, computed once."""
    return figures(ROOT / "docs" / "reference-reports")


def _check(values, *readmes) -> tuple:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = study_main(
            ["--check", "--readme", *map(str, readmes)],
            make_figures=lambda _: values,
        )
    return rc, out.getvalue()


def test_readme_figures_equal_the_committed_records(values):
    rc, out = _check(values, *(ROOT / path for path in READMES))
    assert rc == 0, out


def test_update_replaces_a_region_and_keeps_its_indent():
    text = "a\n  <!-- figures:x -->\n  old\n  <!-- /figures:x -->\nb\n"
    new, changed = update(text, {"x": "one\ntwo"})
    assert new == "a\n  <!-- figures:x -->\n  one\n  two\n  <!-- /figures:x -->\nb\n"
    assert changed == ["x"]
    assert update(new, {"x": "one\ntwo"}) == (new, [])
    assert update(text, {}) == (text, [])


def _one_number_changed(text: str) -> str:
    """``text`` with the first digit of its headline-table region changed."""
    start = text.index("<!-- figures:headline-table -->")
    at = next(i for i in range(start, len(text)) if text[i].isdigit())
    return text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]


def test_check_fails_on_one_changed_number(values, tmp_path):
    readme = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    readme.write_text(_one_number_changed(text), encoding="utf-8")
    rc, out = _check(values, readme)
    assert rc == 1 and "region 'headline-table' differs" in out
    readme.write_text(text, encoding="utf-8")
    assert _check(values, readme)[0] == 0


def test_check_fails_on_a_region_without_a_generator(values, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "a\n<!-- figures:made-by-hand -->\n1.5×\n<!-- /figures:made-by-hand -->\n"
    )
    rc, out = _check(values, readme)
    assert rc == 1 and "region 'made-by-hand' has no generator" in out


#: The report folders :func:`figures` reads by name. Without the other
#: reproductions' folders (the slow part of their verdicts) it computes in
#: about half the time; only the README's ``reproductions`` region, their
#: table, then differs from what the committed records give.
BY_NAME = ("versus", "headline", "threads", "quick", "optimal-or-greedy")


def test_the_script_checks_from_the_command_line(tmp_path):
    import subprocess
    import sys

    reports = tmp_path / "reports"
    reports.mkdir()
    for name in BY_NAME:
        (reports / name).symlink_to(ROOT / "docs" / "reference-reports" / name)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text, dropped = re.subn(
        r"<!-- figures:reproductions -->.*?<!-- /figures:reproductions -->\n",
        "",
        text,
        flags=re.S,
    )
    assert dropped == 1
    readme = tmp_path / "README.md"
    # the README's other regions agree with the records; one changed number
    # and a region nobody writes fail the check, each named
    readme.write_text(
        _one_number_changed(text) + "<!-- figures:x -->\n<!-- /figures:x -->\n",
        encoding="utf-8",
    )
    command = [
        sys.executable,
        str(TOOLS / "readme_figures.py"),
        "--check",
        "--readme",
        str(readme),
        "--reports",
        str(reports),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"{readme}: region 'x' has no generator in readme_figures",
        f"{readme}: region 'headline-table' differs from its records",
    ]


#: A measured number in prose (``2.0×``, ``3 %``, ``1.3 s``) outside a
#: generated region would be copied by hand. These are not measurements but
#: settings of a protocol or a rule, each with where it is set.
NOT_MEASURED = {
    (
        "docs/guide/benchmarks.md",
        "60 s",
    ): "headline's and threads' per-fit limit (their configs)",
    ("README.md", "60 s"): "headline's per-fit limit (its config)",
    ("docs/guide/learners.md", "75 %"): "an example value of max_cache_fraction",
    (
        "docs/guide/learners.md",
        "2 s",
    ): "time-limits' per-fit limit (odtstudy/study/configs/time-limits.toml)",
    (
        "docs/guide/published-solvers.md",
        "1 s",
    ): "LicketySPLIT's whole-second limit (odtstudy/external/_licketysplit.py)",
    (
        "docs/guide/published-solvers.md",
        "95 %",
    ): "the interval's level (odtstudy/study/report/_speed.py LEVEL)",
    (
        "docs/guide/published-solvers.md",
        "60 s",
    ): "versus's per-fit limit (odtstudy/study/configs/versus.toml)",
    (
        "docs/guide/studies.md",
        "60 s",
    ): "headline's per-fit limit (odtstudy/study/configs/headline.toml)",
    (
        "docs/guide/studies.md",
        "2 s",
    ): "time-limits' per-fit limit (odtstudy/study/configs/time-limits.toml)",
    (
        "docs/guide/studies.md",
        "300 s",
    ): "contree-depth4's per-fit limit (odtstudy/study/configs/contree-depth4.toml)",
    (
        "docs/guide/reports.md",
        "95 %",
    ): "the interval's level (odtstudy/study/report/_speed.py LEVEL)",
    (
        "docs/guide/studies.md",
        "30 s",
    ): "the preflight's deadline (odtstudy/study/config/_preflight.py)",
    (
        "docs/guide/studies.md",
        "1 s",
    ): "the contract's slack and the CPU-share rule's floor (BUSY_FIT_S)",
}
FIGURE = re.compile(r"\d[\d.,]*\s?(?:×|%|s\b)")
REGION_OR_CODE = re.compile(
    r"<!-- figures:([\w-]+) -->.*?<!-- /figures:\1 -->|```.*?```", re.S
)


def test_no_measured_figure_in_prose_outside_a_generated_region():
    pages = [ROOT / "README.md", ROOT / "docs" / "index.md"]
    pages += sorted((ROOT / "docs" / "guide").glob("*.md"))
    found = set()
    for page in pages:
        prose = REGION_OR_CODE.sub("", page.read_text(encoding="utf-8"))
        name = page.relative_to(ROOT).as_posix()
        found |= {(name, match.group(0)) for match in FIGURE.finditer(prose)}
    unexplained = found - set(NOT_MEASURED)
    assert not unexplained, f"figures copied into prose: {sorted(unexplained)}"
