"""DL8.5: caching branch-and-bound search for optimal decision trees."""

from odtstudy.base import export_graphviz, export_text
from odtstudy.dl85._classes import DL85Classifier
from odtstudy.dl85._helpers import shallowest_perfect_tree
from odtstudy.dl85._predictor import (
    DL85Cluster,
    DL85Predictor,
    DL85Regressor,
)

__all__ = [
    "DL85Classifier",
    "DL85Cluster",
    "DL85Predictor",
    "DL85Regressor",
    "export_graphviz",
    "export_text",
    "shallowest_perfect_tree",
]
