"""Layers import one way: a module never imports one of a higher layer.

datasets / tree / base  <-  learners  <-  study  <-  reproduce  <-  cli

Inside the two largest packages the rooms import one way too:

odtstudy.dl85:   engine  <-  estimators
odtstudy.study:  shared (registry, results, ...)  <-  config  <-  runner  <-  report

Every module of ``odtstudy`` is read (``ast`` for Python, import lines for
Cython) and every import counts, the ones inside functions included, and so
does ``importlib.import_module("...")`` with a literal name.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

import odtstudy

PACKAGE = Path(odtstudy.__file__).resolve().parent

#: Layer of each part of the package, lowest first. A module belongs to the
#: longest prefix listed; every module must have one.
LAYERS = {
    "odtstudy": 0,
    "odtstudy.tree": 0,
    "odtstudy.base": 0,
    "odtstudy.datasets": 0,
    "odtstudy._child": 0,
    "odtstudy._complete_tree": 0,
    "odtstudy._deadline": 0,
    "odtstudy._incumbent": 0,
    "odtstudy._isolation": 0,
    "odtstudy._limits": 0,
    "odtstudy._procmem": 0,
    "odtstudy.cart": 1,
    "odtstudy.cp": 1,
    "odtstudy.dl85": 1,
    "odtstudy.external": 1,
    "odtstudy.memetic": 1,
    "odtstudy.milp": 1,
    "odtstudy.naiveforest": 1,
    "odtstudy.study": 2,
    "odtstudy.reproduce": 3,
    "odtstudy.cli": 4,
}
LAYER_NAMES = ["datasets/tree/base", "learners", "study", "reproduce", "cli"]

#: Rooms inside a package, lowest first, by the same longest-prefix rule; a
#: module of the package in no listed room is in the room of the package
#: itself (listed with the package's name).
ROOMS = {
    "odtstudy.dl85": {
        "odtstudy.dl85": 1,  # the package's re-exports
        "odtstudy.dl85.engine": 0,
        "odtstudy.dl85.estimators": 1,
    },
    "odtstudy.study": {
        "odtstudy.study": 0,  # registry, results, provenance, memory, ...
        "odtstudy.study.config": 1,
        "odtstudy.study.runner": 2,
        "odtstudy.study._worker": 2,
        "odtstudy.study.report": 3,
    },
}
#: Modules that re-export the package's public names sit above its rooms.
_FACADES = {"odtstudy.study": 4}

_CYTHON_IMPORT = re.compile(
    r"^\s*(?:from\s+(?P<from>[\w.]+)\s+c?import\s+(?P<names>[\w, ]+)"
    r"|c?import\s+(?P<plain>[\w.]+))",
    re.MULTILINE,
)
_SUFFIXES = (".py", ".pyx", ".pxd")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=1)
def _modules() -> dict:
    """Module name -> file, for every source file of the package."""
    return {
        _module_name(path): path
        for path in sorted(PACKAGE.rglob("*"))
        if path.suffix in _SUFFIXES and "__pycache__" not in path.parts
    }


def _layer(module: str):
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def _target(base: str, name: str) -> str:
    """``from base import name``: the submodule when ``name`` is one."""
    full = f"{base}.{name}"
    return full if full in _modules() else base


def _python_imports(module: str, path: Path) -> list:
    """(line, imported module) of every import in a Python file."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")
                drop = node.level - (1 if is_package else 0)
                parent = parent[: len(parent) - drop] if drop else parent
                base = ".".join([*parent, *([base] if base else [])])
            found += [(node.lineno, _target(base, alias.name)) for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def _cython_imports(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _CYTHON_IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match["plain"]:
            found.append((line, match["plain"]))
            continue
        for name in match["names"].split(","):
            found.append((line, _target(match["from"], name.strip())))
    return found


@functools.lru_cache(maxsize=None)
def _imports(module: str, path: Path) -> list:
    if path.suffix == ".py":
        return _python_imports(module, path)
    return _cython_imports(path)


def _shown(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent) if PACKAGE in path.parents else path)


def layer_violations(modules: dict) -> list:
    """One line per import of a higher layer (``where: who -> what``)."""
    problems = []
    for module, path in modules.items():
        own = _layer(module)
        for line, imported in _imports(module, path):
            if not imported.startswith("odtstudy"):
                continue
            other = _layer(imported)
            if other is not None and other > own:
                problems.append(
                    f"{_shown(path)}:{line}: {module} "
                    f"({LAYER_NAMES[own]}) imports {imported} ({LAYER_NAMES[other]})"
                )
    return problems


def _room(module: str):
    """(package, room) of a module of a package with rooms, else None."""
    for package, rooms in ROOMS.items():
        if module == package:
            return package, _FACADES.get(package, rooms[package])
        if module.startswith(package + "."):
            parts = module.split(".")
            for end in range(len(parts), 0, -1):
                prefix = ".".join(parts[:end])
                if prefix in rooms:
                    return package, rooms[prefix]
    return None


def room_violations(modules: dict) -> list:
    """One line per import of a higher room of the same package."""
    problems = []
    for module, path in modules.items():
        own = _room(module)
        if own is None:
            continue
        for line, imported in _imports(module, path):
            other = _room(imported)
            if other is not None and other[0] == own[0] and other[1] > own[1]:
                problems.append(f"{_shown(path)}:{line}: {module} imports {imported}")
    return problems


def test_rooms_are_the_subpackages():
    for package, rooms in ROOMS.items():
        for room in rooms:
            if room == package:
                continue
            assert room in _modules(), f"{room} is listed in ROOMS but not a module"


def test_no_room_imports_a_higher_one():
    problems = room_violations(_modules())
    assert not problems, "a room imports a higher one:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "source", "caught"),
    [
        (
            "odtstudy.dl85.engine._door",
            "import odtstudy.dl85.estimators\n",
            True,
        ),
        (
            "odtstudy.dl85.estimators._x",
            "import odtstudy.dl85.engine._door\n",
            False,
        ),
        ("odtstudy.study.config._load", "from odtstudy.study.report import y\n", True),
        ("odtstudy.study.runner", "from odtstudy.study.report._build import y\n", True),
        ("odtstudy.study.report._x", "from odtstudy.study.runner import run\n", False),
        ("odtstudy.study.results", "from odtstudy.study.config import z\n", True),
    ],
)
def test_an_import_of_a_higher_room_is_caught(tmp_path, module, source, caught):
    path = tmp_path / "module.py"
    path.write_text(source)
    problems = room_violations({**_modules(), module: path})
    assert bool([p for p in problems if f"{module} imports" in p]) == caught, problems


def test_every_module_has_a_layer():
    missing = [m for m in _modules() if _layer(m) is None]
    assert not missing, f"add these modules to LAYERS: {missing}"


def test_no_module_imports_a_higher_layer():
    problems = layer_violations(_modules())
    assert not problems, "lower layer imports a higher one:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("def f():\n    from odtstudy.reproduce import VERDICTS\n", True),
        ("import odtstudy.cli\n", True),
        ("from odtstudy import cli\n", True),
        ("import importlib\nimportlib.import_module('odtstudy.reproduce')\n", True),
        ("from odtstudy.datasets import load_dataset\n", False),
        ("from odtstudy.study import registry\n", False),
    ],
)
def test_a_deferred_or_indirect_import_upwards_is_caught(tmp_path, source, caught):
    path = tmp_path / "report.py"
    path.write_text(source)
    modules = {**_modules(), "odtstudy.study.report": path}
    problems = [p for p in layer_violations(modules) if "odtstudy.study.report " in p]
    assert bool(problems) == caught, problems


def import_cycles(modules: dict) -> list:
    """Every cycle of imports between modules (deferred imports included),
    as the sorted names of each strongly connected set of two or more.

    A package's ``__init__`` re-exports its modules, so edges from and to a
    package are left out: a module that imports its own package's
    re-export is not a loop in the code.
    """
    packages = {m for m, p in modules.items() if p.name == "__init__.py"}
    graph = {
        module: {
            imported
            for _, imported in _imports(module, path)
            if imported in modules and imported not in packages and imported != module
        }
        for module, path in modules.items()
        if module not in packages
    }
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                cycles.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_loop():
    cycles = import_cycles(_modules())
    assert not cycles, "modules that import each other: " + "; ".join(
        " <-> ".join(members) for members in cycles
    )


def test_a_deferred_loop_is_caught(tmp_path):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("from odtstudy.two import g\n")
    two.write_text("def g():\n    from odtstudy.one import f\n")
    modules = {"odtstudy.one": one, "odtstudy.two": two}
    assert import_cycles(modules) == [["odtstudy.one", "odtstudy.two"]]
