"""Study runner: cross-validated comparisons of learners, with reports."""

from odtstudy.study.config import MethodSpec, StudyConfig, list_studies, load_config
from odtstudy.study.registry import (
    Method,
    get_method,
    list_methods,
    register_method,
)
from odtstudy.study.report import make_report
from odtstudy.study.results import ResultsStore
from odtstudy.study.runner import (
    StudyInterrupted,
    expand_runs,
    protocol_of,
    run_study,
    study_folder,
)

__all__ = [
    "Method",
    "MethodSpec",
    "ResultsStore",
    "StudyConfig",
    "StudyInterrupted",
    "expand_runs",
    "get_method",
    "list_methods",
    "list_studies",
    "load_config",
    "make_report",
    "protocol_of",
    "register_method",
    "run_study",
    "study_folder",
]
