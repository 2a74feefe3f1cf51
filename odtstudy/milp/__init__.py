"""Exact MILP learners: BinOCT (Verwer & Zhang 2019), OCT (Bertsimas & Dunn
2017), FlowOCT and BendersOCT (Aghaei, Gómez & Vayanos 2024).

All are PuLP models solved by CBC (default) or HiGHS (``highspy``) in child
processes held to the fit's time limit, warm-started from CART. BinOCT and
OCT take numeric or 0/1 features; FlowOCT (one max-flow MILP) and BendersOCT
(its Benders decomposition, solved by a cutting-plane loop) take 0/1
features.
"""

from odtstudy.milp._classes import BinOCTClassifier, OCTClassifier
from odtstudy.milp._flow_classes import BendersOCTClassifier, FlowOCTClassifier

__all__ = [
    "BendersOCTClassifier",
    "BinOCTClassifier",
    "FlowOCTClassifier",
    "OCTClassifier",
]
