"""Load a script of ``benchmarks/`` as a module (for the tests of its arithmetic)."""

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name):
    """The module of ``benchmarks/<name>.py`` (its folder on sys.path while
    it loads, for its imports of the other benchmarks)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def rebuilt_region(update_readme, record, tmp_path, region):
    """The text of a README with one figures region, after ``update_readme(
    readme, record)``; asserts that only the region changed."""
    readme = tmp_path / "README.md"
    readme.write_text(
        f"x\n<!-- figures:{region} -->\nold\n<!-- /figures:{region} -->\ny\n"
    )
    assert update_readme(readme, record) == 0
    text = readme.read_text()
    assert "old" not in text and text.startswith("x\n") and text.endswith("y\n")
    return text
