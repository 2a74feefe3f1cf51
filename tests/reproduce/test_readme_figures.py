"""The README's figures, and those of the guide pages its sections moved to,
equal what the committed reference records give."""

import re
from pathlib import Path

from odtstudy.reproduce.readme_figures import main
from odtstudy.study.readme_figures import READMES, update

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


def test_readme_figures_equal_the_committed_records(capsys):
    rc = main(
        [
            "--check",
            "--readme",
            *(str(ROOT / path) for path in READMES),
            "--reports",
            str(ROOT / "docs" / "reference-reports"),
        ]
    )
    assert rc == 0, capsys.readouterr().out


def test_update_replaces_a_region_and_keeps_its_indent():
    text = "a\n  <!-- figures:x -->\n  old\n  <!-- /figures:x -->\nb\n"
    new, changed = update(text, {"x": "one\ntwo"})
    assert new == "a\n  <!-- figures:x -->\n  one\n  two\n  <!-- /figures:x -->\nb\n"
    assert changed == ["x"]
    assert update(new, {"x": "one\ntwo"}) == (new, [])
    assert update(text, {}) == (text, [])
