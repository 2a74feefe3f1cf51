"""DL8.5: caching branch-and-bound search for optimal decision trees."""

from odtstudy.dl85._classes import DL85Classifier

__all__ = ["DL85Classifier"]
