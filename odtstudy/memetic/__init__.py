"""Heuristic baselines: TAO refinement and TMO memetic search (on DEAP).

- :class:`TAOClassifier` refines an initial tree (CART by default) by Tree
  Alternating Optimization of the 0/1 loss.
- :class:`TMOClassifier` evolves a population of trees (a random forest
  refined by TAO) with node-wise crossover and TAO as local search.
"""

from odtstudy.memetic._tao import TAOClassifier
from odtstudy.memetic._tmo import TMOClassifier

__all__ = ["TAOClassifier", "TMOClassifier"]
