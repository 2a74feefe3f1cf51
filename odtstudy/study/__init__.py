"""Study runner: cross-validated comparisons of learners, with reports."""

from odtstudy.study.config import (
    MethodSpec,
    StudyConfig,
    add_config_dir,
    config_dirs,
    list_studies,
    load_config,
    remove_config_dir,
    study_file,
)
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
    "add_config_dir",
    "config_dirs",
    "expand_runs",
    "get_method",
    "list_methods",
    "list_studies",
    "load_config",
    "make_report",
    "protocol_of",
    "register_method",
    "remove_config_dir",
    "run_study",
    "study_file",
    "study_folder",
]
