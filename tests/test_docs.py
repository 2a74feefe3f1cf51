"""The README is a landing page, its examples and the user guide's run, and
the API reference lists every public name."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest
from subproc import run_snippet

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted((DOCS / "guide").glob("*.md"))]
#: The packages whose ``__all__`` the API reference covers, name for name.
PUBLIC = [
    "odtstudy",
    "odtstudy.cart",
    "odtstudy.cp",
    "odtstudy.datasets",
    "odtstudy.dl85",
    "odtstudy.external",
    "odtstudy.memetic",
    "odtstudy.milp",
    "odtstudy.naiveforest",
    "odtstudy.reproduce",
    "odtstudy.study",
    "odtstudy.tree",
]


def _python_blocks() -> list:
    """Every ```python block of the README and the guide, named page:index."""
    params = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
        params += [
            pytest.param(code, id=f"{page.name}:{index}")
            for index, code in enumerate(blocks)
        ]
    return params


def _documented_names() -> set:
    """Qualified names of the API reference's autosummary entries."""
    module, names = None, set()
    for line in (DOCS / "api.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
        elif re.fullmatch(r"   [A-Za-z_][\w.]*", line) and module:
            names.add(f"{module}.{line.strip()}")
    return names


def test_readme_is_a_landing_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    for heading in ("## Set up", "## Quick example", "## Documentation"):
        assert heading in text
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to missing {target}"


def test_every_guide_page_is_in_the_guide_and_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    toctree = (DOCS / "guide" / "index.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        if page.name == "index.md":
            continue
        assert f"\n{page.stem}\n" in toctree, f"{page.name} not in the guide's toctree"
        assert f"(docs/guide/{page.name})" in readme, f"README has no link to {page}"


def _resolve(qualified: str):
    """The object a documented ``package.module.Name`` stands for."""
    module, _, name = qualified.rpartition(".")
    while module not in sys.modules:
        try:
            importlib.import_module(module)
        except ImportError:
            module, _, outer = module.rpartition(".")
            name = f"{outer}.{name}"
    value = sys.modules[module]
    for part in name.split("."):
        value = getattr(value, part)
    return value


def test_api_reference_lists_every_public_class_and_function():
    documented = {id(_resolve(name)) for name in _documented_names()}
    for name in PUBLIC:
        module = importlib.import_module(name)
        for public in module.__all__:
            value = getattr(module, public)
            # a name re-exported by several packages is documented once
            if callable(value):
                assert id(value) in documented, f"docs/api.rst lacks {name}.{public}"


def test_api_reference_lists_every_learner_with_its_parameters():
    from sklearn.base import BaseEstimator

    documented = _documented_names()
    for name in PUBLIC:
        module = importlib.import_module(name)
        for public in module.__all__:
            value = getattr(module, public)
            if isinstance(value, type) and issubclass(value, BaseEstimator):
                assert f"{name}.{public}" in documented, f"{name}.{public}"
                # cleandoc: Python 3.13 dedents __doc__ itself, 3.10-3.12 do not
                doc = inspect.cleandoc(value.__doc__ or "")
                assert "\nParameters\n---" in doc, (
                    f"{name}.{public}: no numpydoc Parameters section"
                )


@pytest.mark.parametrize("code", _python_blocks())
def test_readme_and_guide_examples_run(code):
    returncode, out, err = run_snippet(code, timeout=120)
    assert returncode == 0, f"exit {returncode}\nstdout:\n{out}\nstderr:\n{err[-2000:]}"
