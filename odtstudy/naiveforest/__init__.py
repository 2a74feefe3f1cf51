"""Forests of optimal trees: DL8-forests and LPBoost / MDBoost by column generation.

- :class:`DL8ForestClassifier`: bagging of DL8.5 trees with the sample and
  attribute selection variants of Bosch's MSc thesis (ch. 3), majority vote.
- :class:`OptimalBoostClassifier`: LPBoost / MDBoost forests by column
  generation, with weighted DL8.5 (exact: OptiLPBoost / OptiMDBoost) or
  weighted CART (heuristic) as pricing oracle (Aglin's thesis, ch. 6).
- Baselines for the study runner: :class:`RandomForestBaseline`,
  :class:`GradientBoostingBaseline`, :class:`AdaBoostBaseline`.
"""

from odtstudy.naiveforest._baselines import (
    AdaBoostBaseline,
    GradientBoostingBaseline,
    RandomForestBaseline,
)
from odtstudy.naiveforest._boost import OptimalBoostClassifier
from odtstudy.naiveforest._forest import DL8ForestClassifier

__all__ = [
    "AdaBoostBaseline",
    "DL8ForestClassifier",
    "GradientBoostingBaseline",
    "OptimalBoostClassifier",
    "RandomForestBaseline",
]
