"""Study runner: cross-validated comparisons of learners, with reports."""

from odtstudy.study.config import MethodSpec, StudyConfig, list_studies, load_config
from odtstudy.study.registry import (
    Method,
    get_method,
    list_methods,
    register_method,
)
from odtstudy.study.report import make_report
from odtstudy.study.runner import expand_runs, run_study

__all__ = [
    "Method",
    "MethodSpec",
    "StudyConfig",
    "expand_runs",
    "get_method",
    "list_methods",
    "list_studies",
    "load_config",
    "make_report",
    "register_method",
    "run_study",
]
