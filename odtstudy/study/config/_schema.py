"""The schema of a study file: its tables, the keys of ``[study]`` and of a
tier, the scales, and :class:`MethodSpec` (see :mod:`odtstudy.study.config`)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SCALES", "STUDY_KEYS", "TABLES", "TIER_KEYS", "MethodSpec"]

SCALES = ("smoke", "default", "paper")
STUDY_KEYS = {
    "name",
    "description",
    "datasets",
    "methods",
    "depths",
    "folds",
    "seeds",
    "time_limit",
    "memory_limit_mb",
    "max_thresholds",
    "grace_s",
    "workers",
    "repeats",
    "tiers",
    "task",
    "optional_methods",
}
#: Keys of one tier of a study (``tiers = [{name = ..., ...}]``).
TIER_KEYS = ("name", "datasets", "depths", "methods")
TABLES = ("study", "methods", "scales", "datasets")


@dataclass(frozen=True)
class MethodSpec:
    """A labelled learner: a registered method plus constructor parameters.

    Parameters
    ----------
    label : str
        The name of the learner in the results (e.g. ``"dl85-asc"``).
    method : str
        A registered method (see :func:`odtstudy.study.list_methods`).
    params : dict
        Constructor parameters, on top of the method's defaults.
    time_limit : float, default=None
        Seconds per run for this learner; ``None``: the study's.
    tune : dict, default=None
        Grids to tune over by inner cross-validation on each run's training
        fold (see :mod:`odtstudy.study._tuning`); ``None``: no tuning.
    """

    label: str
    method: str
    params: dict = field(default_factory=dict)
    time_limit: float | None = None
    tune: dict | None = None
