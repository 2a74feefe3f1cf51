"""Study configurations: which datasets, methods, depths, folds and limits to run.

A study is a TOML file (the built-in ones live in ``odtstudy/study/configs``)::

    [study]
    name = "quick"               # results go to <output>/<name>/
    task = "classification"      # or "regression" (default: classification)
    optional_methods = ["osrt"]  # skipped with a note when not installed
    datasets = ["zoo-1", "uci/iris"]
    methods = "all"              # every registered method that imports
    depths = [2, 3, 4]
    folds = 5
    seeds = [0]
    time_limit = 10              # seconds per run, given to the learner
    memory_limit_mb = 4096
    max_thresholds = 8           # Binarizer setting for 0/1-only learners
    workers = 2                  # runs at the same time (one process each)
    repeats = 1                  # fits per short run, each in a fresh process

    [methods.dl85-asc]           # a labelled variant with its own parameters
    method = "dl85"
    branching = "asc"

    [methods.cart-tuned]         # tuned by inner CV on each training fold
    method = "cart"              # (see odtstudy.study._tuning)
    tune = {max_depth = "up-to-depth", ccp_alpha = [0.0, 0.01]}

    [datasets.mydata]            # the user's table: datasets = ["mydata", ...]
    path = "data/my.csv"         # CSV or Parquet, relative to this file
    target = "label"
    categorical = ["colour"]     # optional (non-numeric columns always are)
    task = "regression"          # optional: the study's task
    test_path = "data/my-test.csv"  # optional: held-out rows, no folds

    [methods.mine]               # the user's learner: methods = ["mine", ...]
    target = "mypkg.trees:MyTree"  # any scikit-learn classifier
    data = "numeric"             # or "binary": the runner binarises for it
    exact = false                # true: it proves optimality
    objective_family = "misclassification"  # what its objective_ measures
    tasks = ["classification"]   # the study tasks it serves

    [scales.smoke]               # overrides selected by --scale smoke
    depths = [2]

A study whose datasets need their own depths and methods lists **tiers**
instead of ``datasets`` and ``depths``; each tier is a grid of its own::

    [study]
    methods = ["dl85", "pystreed", "pycontree", "dl85-numeric"]

    [[study.tiers]]
    name = "binary"
    datasets = ["vehicle"]
    depths = [5, 6]
    methods = ["dl85", "pystreed"]   # optional: all the study's

    [[study.tiers]]
    name = "numeric"
    datasets = ["contree/bank"]
    depths = [3, 4]
    methods = ["pycontree", "dl85-numeric"]

A scale replaces the tiers as a whole (``[[scales.smoke.tiers]]``).

Checks
------
:func:`load_config` checks a study before any run starts. Every problem is a
``ValueError`` whose message names the file, the key (``[study] folds``,
``[scales.smoke] depths``, ``[methods.dl85-asc] branching``, ``folds
(override)``) and the fix:

* layout: the only tables are ``[study]``, ``[methods.<label>]``,
  ``[datasets.<name>]`` and ``[scales.<scale>]`` with the scales ``smoke``,
  ``default`` and ``paper``; an unknown key in ``[study]`` or in a scale is
  an error;
* types, in ``[study]``, in every scale (used or not) and in the keyword
  overrides of :func:`load_config`:

  ==================  ===================================================
  ``name``            a plain name: letters, digits, ``-``, ``_``, ``.``
                      (not ``.`` or ``..``, no path); default: the file name
  ``description``     a string
  ``task``            ``"classification"`` (absent) or ``"regression"``:
                      every method must serve it (its ``tasks``) and every
                      dataset be of it; ``methods = "all"`` runs the
                      methods of this task
  ``datasets``        a non-empty list of dataset names (see
                      :func:`odtstudy.datasets.list_datasets`)
  ``methods``         a non-empty list of method labels, or ``"all"``
  ``depths``          a non-empty list of integers >= 1
  ``seeds``           a non-empty list of integers >= 0
  ``folds``           an integer >= 1 (1: fit and score on all the rows)
  ``workers``         an integer >= 1
  ``repeats``         an integer >= 1: fits per run, each in a fresh
                      process, the methods of a (dataset, depth, fold,
                      seed) interleaved; only fits that end before their
                      limit in under 60 s are repeated; the record holds
                      every repeat's times and their median; absent: 1
  ``max_thresholds``  an integer >= 1, or ``"all"`` (every midpoint);
                      absent: 8
  ``time_limit``      seconds, a number > 0
  ``grace_s``         seconds, a number >= 0
  ``memory_limit_mb`` a number > 0 (absent: no limit)
  ``optional_methods`` method labels of the study that are skipped, with
                      a warning naming what is missing, when not installed
                      (another method that is not installed is an error)
  ``tiers``           a list of tables ``{name, datasets, depths,
                      methods}`` (``methods`` optional: all the study's);
                      replaces ``datasets`` and ``depths``; every method
                      of the study runs in some tier
  ==================  ===================================================

  a single value where a list is expected is an error (never iterated), a
  boolean is not a number, and a list may not name an entry twice;
* ``[methods.<label>]``: ``method`` is a registered method (default: the
  label), ``time_limit`` a number > 0, every other key a constructor
  parameter of the learner; ``max_depth`` and ``random_state`` are set by the
  runner from ``depths`` and ``seeds``; ``max_cache_fraction`` (in (0, 1],
  for a learner with ``max_cache_size``) is the study's: a bound of that share
  of an unbounded probe fit's peak entries, raised to the smallest bound
  the learner's cache accepts (recorded as ``max_cache_size_clamped``;
  :mod:`._cache_fraction`). A table whose label is in no ``methods`` list
  (of ``[study]`` or of a scale) is an error, unless the study runs
  ``"all"`` methods;
* ``[datasets.<name>]`` (the user's data): ``path`` (CSV or Parquet,
  relative to the study file) exists and reads, ``target`` is one of its
  columns, ``categorical`` lists columns of it, no value is missing, there
  are two classes or more, and the name is not a built-in dataset's; the
  table is registered as ``user/<name>`` for this process and its workers
  (forked from it). A table in no ``datasets`` list is an error. ``task``
  (default: the study's) is ``"regression"`` for a numeric target, which is
  then refused when not numeric; a classification table whose target holds
  many non-integer numbers is refused (a regression target). ``test_path``
  (optional, relative like ``path``) is a held-out test file: it reads, has
  rows and the training file's columns, no missing value, no text in a
  column numeric in the training file, and (classification) no class the
  training file lacks; its runs fit on every training row and test on its
  rows, with no folds (``folds`` is not checked against it);
* ``[methods.<label>] target = "module:Class"`` (the user's learner,
  imported with the study file's folder on ``sys.path``): it imports and
  has ``fit``; ``data`` is ``"numeric"`` or ``"binary"`` (the runner
  binarises for it), ``exact`` a boolean, ``objective_family`` a string
  (default ``"misclassification"``, ``"squared-error"`` for a regressor),
  ``tasks`` a list of study tasks (default: the class's ``_study_tasks``,
  else ``["classification"]``); the learner is registered under its
  import path, which the protocol id then names. Such a learner runs with
  the local runner (``--scheduler`` is refused: Dask workers would not know
  it, nor a user table);
* every method serves the study's ``task`` and every dataset is of it (a
  classification method in a regression study is refused, naming the
  method, the task and a method of the task to use instead);
* ``folds`` fits every dataset: at most its number of rows, and (for
  classification) at most the size of its smallest class (stratified folds;
  a regression study uses shuffled k-fold);
* preflight: every method is built and fitted once on a tiny synthetic 0/1
  dataset (a numeric target for a regressor) at the largest depth, with its
  time limit capped at one second
  (about a second in all for the ``quick`` study). A ``ValueError`` or
  ``TypeError`` raised there, such as a bad parameter value or a depth the
  learner does not support (e.g. ``pricing="exhaustive"`` beyond depth 3, or
  a DL8.5 ``max_cache_size`` too small for the depth), is reported before
  any run, naming the parameter or ``depths``. Each fit runs in a forked
  process, so a learner that crashes or ignores its time limit cannot take
  the caller down; such failures are left to the runs, which record them.

:meth:`StudyConfig.validate` runs the same checks on a config built in Python
(messages then name ``study '<name>'``); it skips the preflight fit unless
asked (``validate(preflight=True)``).

This module is the public face; the jobs live in private modules: the
schema (``_config_schema``), value rules and wording (``_config_values``),
layout checks (``_config_layout``), registry and dataset checks
(``_config_checks``), file finding (``_config_files``) and the merging of
scales and user tables (``_config_merge``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from odtstudy.study.config._checks import check_config
from odtstudy.study.config._files import (
    add_config_dir,
    config_dirs,
    list_studies,
    read_toml,
    remove_config_dir,
    study_file,
)
from odtstudy.study.config._layout import check_layout, check_method_tables
from odtstudy.study.config._merge import (
    merged_study,
    method_specs,
    method_tables,
    used_datasets,
)
from odtstudy.study.config._schema import SCALES, MethodSpec
from odtstudy.study.config._user_inputs import register_user_datasets
from odtstudy.study.config._values import Where

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


@dataclass
class StudyConfig:
    """Everything that defines a study's grid of runs (see the module doc)."""

    name: str
    datasets: list
    methods: list  # of MethodSpec
    depths: list = field(default_factory=lambda: [2, 3, 4])
    folds: int = 5
    seeds: list = field(default_factory=lambda: [0])
    time_limit: float = 60.0
    memory_limit_mb: float | None = None
    max_thresholds: int | None = 8
    grace_s: float = 10.0
    workers: int = 1
    repeats: int = 1
    description: str = ""
    scale: str = "default"
    tiers: list = field(default_factory=list)
    task: str = "classification"
    optional_methods: list | None = None
    #: label -> why: the optional methods the checks removed (not installed)
    skipped_methods: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.max_thresholds == "all":
            self.max_thresholds = None

    def grids(self) -> list:
        """The study's grids: ``(datasets, method labels, depths)`` per tier,
        or one grid of all the datasets, methods and depths."""
        if not self.tiers:
            return [(self.datasets, [s.label for s in self.methods], self.depths)]
        labels = [s.label for s in self.methods]
        return [
            (tier["datasets"], tier.get("methods", labels), tier["depths"])
            for tier in self.tiers
        ]

    def validate(self, preflight: bool = False):
        """Raise one clear error for anything that would fail a run later.

        Parameters
        ----------
        preflight : bool, default=False
            Also fit every method once on a tiny synthetic dataset at the
            largest depth (:meth:`odtstudy.study.registry.Method.preflight`),
            so that a bad parameter value or an unsupported depth is reported
            now. :func:`load_config` always does.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Naming ``study '<name>'``, the field and the fix.
        """
        return check_config(self, Where(f"study {self.name!r}"), preflight)


def _thresholds(value):
    return None if value == "all" else value


def load_config(name_or_path, scale: str = "default", **overrides) -> StudyConfig:
    """Load a built-in study by name (or a TOML file by path) at a scale.

    The study is checked, including a preflight fit of every method (see the
    module documentation), before it is returned.

    Parameters
    ----------
    name_or_path : str
        A name from :func:`list_studies` or a path to a ``.toml`` file.
    scale : {"smoke", "default", "paper"}
        Applies the ``[scales.<scale>]`` overrides of the file.
    **overrides
        Final overrides of study keys (e.g. ``folds=2``); ``None`` values are
        ignored.

    Returns
    -------
    StudyConfig

    Raises
    ------
    ValueError
        For anything that would fail the study's runs, naming the file, the
        key and the fix.
    KeyError
        For an unknown built-in study name.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    data, origin, stem, folder = read_toml(name_or_path)
    where = Where(origin, sections={})
    check_layout(data, where)
    study, layers = merged_study(data, scale, overrides, where)
    used = used_datasets(layers)
    task = study.get("task", "classification")
    register_user_datasets(data.get("datasets", {}), used, where, folder, task)
    tables = method_tables(data.get("methods", {}), where, folder)
    where.tables = frozenset(tables)
    lists = [table["methods"] for _, table in layers if "methods" in table]
    check_method_tables(tables, lists, where)
    config = StudyConfig(
        name=study.get("name", stem),
        datasets=list(study["datasets"]),
        methods=method_specs(study["methods"], tables, task),
        depths=list(study.get("depths", [2, 3, 4])),
        folds=study.get("folds", 5),
        seeds=list(study.get("seeds", [0])),
        time_limit=float(study.get("time_limit", 60.0)),
        memory_limit_mb=study.get("memory_limit_mb"),
        max_thresholds=_thresholds(study.get("max_thresholds", 8)),
        grace_s=float(study.get("grace_s", 10.0)),
        workers=study.get("workers", 1),
        repeats=study.get("repeats", 1),
        description=study.get("description", ""),
        scale=scale,
        tiers=list(study.get("tiers", [])),
        task=task,
        optional_methods=study.get("optional_methods"),
    )
    return check_config(config, where, preflight=True)
