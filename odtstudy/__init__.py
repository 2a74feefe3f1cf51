"""odtstudy: compare optimal decision tree learners on one interface."""

from odtstudy.base import export_graphviz, export_text
from odtstudy.tree import Tree

__version__ = "0.1.0"

__all__ = ["Tree", "__version__", "export_graphviz", "export_text"]
