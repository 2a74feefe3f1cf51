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
