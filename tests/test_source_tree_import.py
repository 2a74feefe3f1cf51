"""Importing odtstudy from a source tree without the compiled extensions says so."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import odtstudy
import odtstudy.dl85

PACKAGE = Path(odtstudy.__file__).resolve().parent


def _source_tree(root: Path) -> Path:
    """A copy of the package as in a fresh clone: sources, no built modules."""
    for path in PACKAGE.rglob("*"):
        if path.suffix in (".py", ".pyx", ".pxd") and "__pycache__" not in path.parts:
            target = root / "odtstudy" / path.relative_to(PACKAGE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    assert not list((root / "odtstudy").rglob("*.so"))
    return root / "odtstudy"


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_pyx_is_a_known_extension():
    pyx = sorted(p.stem for p in (PACKAGE / "dl85" / "engine").glob("*.pyx"))
    assert pyx == sorted(odtstudy.dl85._EXTENSIONS)
    assert not [p for p in PACKAGE.rglob("*.pyx") if p.parent.name != "engine"]


def test_missing_extensions_are_explained(tmp_path):
    copy = _source_tree(tmp_path)
    for code in (
        "import odtstudy.dl85",
        "from odtstudy.dl85 import DL85Classifier",
        # a README example, from the clone root
        "from odtstudy.datasets import load_dataset\n"
        "from odtstudy.dl85 import DL85Classifier\n"
        "ds = load_dataset('zoo-1')\n"
        "DL85Classifier(max_depth=2).fit(ds.X, ds.y)",
    ):
        result = _python(code, tmp_path)
        assert result.returncode == 1
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("ImportError: odtstudy's compiled extensions are "), last
        assert f"missing from {copy.resolve()}" in last
        assert "_bitset" in last and "source tree" in last
        assert "pip install ." in last and "pip install -e ." in last


def test_the_registry_reports_the_reason(tmp_path):
    _source_tree(tmp_path)
    code = (
        "from odtstudy.study.registry import get_method\n"
        "try:\n"
        "    get_method('dl85').estimator_class()\n"
        "except KeyError as exc:\n"
        "    print(exc.args[0])\n"
    )
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "method 'dl85' is not installed" in result.stdout
    assert "compiled extensions are missing" in result.stdout


def test_other_import_errors_are_unchanged(tmp_path):
    copy = _source_tree(tmp_path)
    classes = copy / "dl85" / "estimators" / "_classes.py"
    text = classes.read_text()
    head = "from __future__ import annotations\n"
    classes.write_text(text.replace(head, head + "import no_such_module_xyz\n", 1))
    result = _python("import odtstudy.dl85", tmp_path)
    last = result.stderr.strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: No module named 'no_such_module_xyz'"
