"""Study configurations: the TOML schema, its checks and the loader.

:func:`load_config` (in ``_load``) reads a study file and returns a checked
:class:`StudyConfig`; the other modules hold one concern each: the schema
(``_schema``), value checks (``_values``), the layout of tables and tiers
(``_layout``), merging scales and user tables (``_merge``, ``_user_inputs``),
the checks across keys (``_checks``), the learners' pre-flight
(``_preflight``), the cache fraction parameter (``_cache_fraction``) and
where study files live (``_files``).
"""

from odtstudy.study.config._load import (
    MethodSpec,
    StudyConfig,
    add_config_dir,
    config_dirs,
    list_studies,
    load_config,
    remove_config_dir,
    study_file,
)

__all__ = [
    "MethodSpec",
    "StudyConfig",
    "add_config_dir",
    "config_dirs",
    "list_studies",
    "load_config",
    "remove_config_dir",
    "study_file",
]
