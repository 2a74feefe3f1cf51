"""CP-SAT model (OR-Tools) of a depth-limited optimal decision tree on 0/1 data."""

from odtstudy.cp._classes import CPSATClassifier

__all__ = ["CPSATClassifier"]
