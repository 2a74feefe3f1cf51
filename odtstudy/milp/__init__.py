"""Exact MILP baselines: BinOCT (Verwer & Zhang 2019) and OCT (Bertsimas & Dunn 2017).

Both are PuLP models solved by CBC (default, bundled with PuLP) or HiGHS
(``highspy``), warm-started from CART.
"""

from odtstudy.milp._classes import BinOCTClassifier, OCTClassifier

__all__ = ["BinOCTClassifier", "OCTClassifier"]
