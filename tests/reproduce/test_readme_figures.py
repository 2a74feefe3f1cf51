"""The README's figures equal what the committed reference records give."""

from pathlib import Path

from odtstudy.reproduce.readme_figures import main
from odtstudy.study.readme_figures import update

ROOT = Path(__file__).resolve().parents[2]


def test_readme_figures_equal_the_committed_records(capsys):
    rc = main(
        [
            "--check",
            "--readme",
            str(ROOT / "README.md"),
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
