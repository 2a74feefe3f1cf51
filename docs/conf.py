"""Sphinx configuration of odtstudy's documentation.

Build it from the clone root (``pip install ".[docs]"`` first;
``".[docs,external]"`` also runs the published-solver example)::

    sphinx-build -W -b html docs docs/_build

(``python -m sphinx`` would put the clone first on ``sys.path`` and import
its uncompiled sources instead of the installed package.)

The gallery (``docs/examples/plot_*.py``) is executed on every build, so a
broken example fails it, as a broken reference does under ``-W``.
"""

from __future__ import annotations

import os
from importlib.metadata import version as _version

os.environ.setdefault("MPLBACKEND", "Agg")

project = "odtstudy"
author = "odtstudy contributors"
copyright = "odtstudy contributors"
release = _version("odtstudy")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# The reference reports are 86 MB of generated Markdown and HTML: the guide
# links to them; they are not part of the Sphinx source.
exclude_patterns = [
    "_build",
    "reference-reports",
    "examples/README.txt",
    "**.ipynb_checkpoints",
]
templates_path = ["_templates"]

# -- API reference -------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()


# -- Markdown (the user guide) --------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# -- Gallery --------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    # "Examples using X" on each API page
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("odtstudy",),
}

# -- HTML -----------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "odtstudy"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_show_sourcelink = False
