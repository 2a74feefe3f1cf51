"""One protocol's records, ready for the report: cells, exactness, method order.

A *cell* is (dataset, depth, method). It expects one run per fold and seed;
a cell where some expected run has no tree of its own is *incomplete*
(:data:`CELL_RULE`, :mod:`~odtstudy.study._solver_tree`) and is never
bolded, ranked nor used in a statistic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from odtstudy.study._folds import ALL_ROWS, CROSS_VALIDATION, TEST_FILE
from odtstudy.study._solver_tree import solver_tree_column
from odtstudy.study.registry import get_method
from odtstudy.study.results import split_column

__all__ = [
    "CELL_KEYS",
    "CELL_RULE",
    "RUN_KEYS",
    "StudyRecords",
    "complete_cells",
    "own_trees",
    "tuned_choice",
]

#: A run is identified by these within a method (same data, same fold).
RUN_KEYS = ["dataset", "depth", "fold", "seed"]
CELL_KEYS = ["dataset", "depth", "method"]
DEFAULT_FAMILY = "misclassification"
DEFAULT_TOOL = "odtstudy"
DEFAULT_TASK = "classification"

#: A cell of a dataset with a held-out test file: printed after
#: :data:`CELL_RULE` when the records hold one.
TEST_FILE_CELL_RULE = (
    "A dataset with a held-out test file has no folds: its cells expect one "
    "run per seed, fitted on every row of its training file and tested on "
    "its test file."
)
#: How a cell (dataset x method x depth) is summarised; printed in the report.
CELL_RULE = (
    "Each cell (dataset × method × depth) expects one run per fold and seed. "
    "`runs ok` counts the runs whose fit returned (`k/n ok`); `own tree` the "
    "runs that returned, within the allowed time (time limit × 1.1 + 1 s), a "
    "tree of their own: not a fallback leaf standing in for a solver that gave "
    "none, not a warm start (CART) returned unchanged because the solver "
    "produced no solution, not a tree the runner kept from a run it killed at "
    "its hard deadline. Means are over the runs with a tree of their own; a "
    "cell where some run has none (also: error, out of memory) is "
    "**incomplete**: its values are shown in brackets, it is never bolded, "
    "never ranked and never used in a statistic or a gap table. `proven` "
    "counts runs whose learner proved optimality within its allowed time."
)


def _stat(stats, key):
    try:
        return json.loads(stats or "{}").get(key)
    except (TypeError, ValueError):
        return None


def _n_trees(stats) -> float:
    value = _stat(stats, "n_trees")
    return np.nan if value is None else float(value)


def _choice_text(stats) -> str:
    chosen = _stat(stats, "tuned")
    if not isinstance(chosen, dict):
        return ""
    return ", ".join(f"{key} {value:g}" for key, value in sorted(chosen.items()))


def tuned_choice(frame: pd.DataFrame) -> pd.Series:
    """What inner cross-validation chose for each run of a tuned learner
    (``"max_depth 2"``, ``"ccp_alpha 0.001, max_depth 3"``); ``""`` for an
    untuned run. A tuned run's tree solves the problem of its chosen
    parameters, not the nominal depth's."""
    if "stats" not in frame:
        return pd.Series("", index=frame.index, dtype=object)
    return frame["stats"].map(_choice_text).astype(object)


def with_defaults(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``n_trees``, ``objective_family``, ``tool``, ``task`` and
    ``has_solver_tree`` where records lack them.

    Older records have no family, tool or task: a single tree's objective is
    then ``"misclassification"``, the tool ``"odtstudy"`` and the task
    ``"classification"``; a forest's family is ``"forest"`` (its objective is
    not a count of errors). A missing
    ``has_solver_tree`` is derived from the run's stats
    (:func:`~odtstudy.study._solver_tree.solver_tree_column`).
    """
    frame = frame.copy()
    frame["has_solver_tree"] = solver_tree_column(frame)
    stats = frame["stats"] if "stats" in frame else pd.Series(None, index=frame.index)
    frame["n_trees"] = stats.map(_n_trees)
    if "objective_family" not in frame:
        frame["objective_family"] = None
    default = np.where(frame["n_trees"].isna(), DEFAULT_FAMILY, "forest")
    family = frame["objective_family"].astype(object)
    frame["objective_family"] = family.where(family.notna(), default)
    if "tool" not in frame:
        frame["tool"] = None
    tool = frame["tool"].astype(object)
    frame["tool"] = tool.where(tool.notna(), DEFAULT_TOOL)
    if "task" not in frame:
        frame["task"] = None
    task = frame["task"].astype(object)
    frame["task"] = task.where(task.notna(), DEFAULT_TASK)
    return frame


def single_tree_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs of single-tree learners (forests optimise other objectives)."""
    stats = frame["stats"] if "stats" in frame else pd.Series(None, index=frame.index)
    return frame[stats.map(_n_trees).isna()]


def own_trees(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs that returned a tree of their own in time (``has_solver_tree``)."""
    own = frame["has_solver_tree"] if "has_solver_tree" in frame else True
    return frame[frame["has_tree"] & own]


def complete_cells(frame: pd.DataFrame, expected: int | None = None) -> pd.DataFrame:
    """Runs with a tree of their own, restricted to cells where every expected
    run has one."""
    if expected is None:
        expected = expected_runs(frame)
    trees = own_trees(frame)
    size = trees.groupby(CELL_KEYS)["run_id"].transform("size")
    return trees[size >= expected]


def expected_runs(frame: pd.DataFrame) -> int:
    """Runs per cell under the frame's protocol (folds × seeds)."""
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    return int(protocol["folds"]) * len(protocol["seeds"])


def _base_exact(name: str) -> bool | None:
    try:
        return get_method(name).exact
    except KeyError:
        return None


@dataclass
class StudyRecords:
    """The records of one protocol (or of a side-by-side comparison).

    Parameters
    ----------
    frame : DataFrame
        Records as :meth:`ResultsStore.load` gives them.
    expected : int
        Runs per cell (folds × seeds) of a cross-validated dataset (see
        :meth:`expected_for`).
    methods : dict
        Method label -> ``{"method": base name, "time_limit": seconds, ...}``
        (the protocol's ``methods``).
    """

    frame: pd.DataFrame
    expected: int
    methods: dict

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> StudyRecords:
        """Records of a single protocol."""
        protocol = json.loads(frame["protocol"].dropna().iloc[0])
        return cls(with_defaults(frame), expected_runs(frame), protocol["methods"])

    def subset(self, frame: pd.DataFrame) -> StudyRecords:
        """The same protocol's records restricted to ``frame`` (rows of
        ``self.frame``): a tier of a study, say."""
        return type(self)(frame, self.expected, self.methods)

    def is_exact(self, label: str) -> bool:
        """True for a method that can prove optimality (registry, else records)."""
        exact = _base_exact(self._base(label))
        if exact is None:
            runs = self.frame[self.frame["method"] == label]
            exact = bool(runs["claimed_optimal"].any() or runs["optimal"].any())
        return bool(exact)

    def is_forest(self, label: str) -> bool:
        runs = self.frame[self.frame["method"] == label]
        return bool(runs["n_trees"].notna().any())

    @cached_property
    def method_order(self) -> list:
        """Exact methods first, then other single trees, then forests."""
        labels = sorted(self.frame["method"].unique())
        group = {
            m: 0 if self.is_exact(m) else 2 if self.is_forest(m) else 1 for m in labels
        }
        return sorted(labels, key=lambda m: (group[m], m))

    @cached_property
    def exact_methods(self) -> list:
        return [m for m in self.method_order if self.is_exact(m)]

    #: base method of the main speed reference (``dl85-reg`` for regression)
    reference_base = "dl85"

    @cached_property
    def speed_references(self) -> list:
        """The exact methods that run odtstudy's DL8.5 (base name ``dl85...``),
        the references of the speed tables, those of base
        :attr:`reference_base` first."""
        dl85 = [m for m in self.exact_methods if self._base(m).startswith("dl85")]
        return sorted(dl85, key=lambda m: self._base(m) != self.reference_base)

    def _base(self, label: str) -> str:
        return str(self.methods.get(label, {}).get("method", label))

    @cached_property
    def tuned_methods(self) -> list:
        """Methods tuned by inner cross-validation (``[methods.X.tune]``)."""
        return [m for m in self.method_order if self.methods.get(m, {}).get("tune")]

    @cached_property
    def heuristic_methods(self) -> list:
        """Single-tree methods that cannot prove optimality."""
        return [
            m
            for m in self.method_order
            if not self.is_exact(m) and not self.is_forest(m)
        ]

    @cached_property
    def _splits(self) -> pd.Series:
        return split_column(self.frame)

    @cached_property
    def test_file_datasets(self) -> list:
        """Datasets tested on a held-out test file (fitted on every row of
        their training file, no folds)."""
        return sorted(self.frame.loc[self._splits == TEST_FILE, "dataset"].unique())

    @cached_property
    def seeds(self) -> int:
        """Seeds of the protocol (else those recorded)."""
        protocols = self.frame["protocol"].dropna() if "protocol" in self.frame else ()
        if len(protocols):
            return len(json.loads(protocols.iloc[0])["seeds"])
        return max(1, int(self.frame["seed"].nunique()))

    def expected_for(self, dataset) -> int:
        """Runs per cell of ``dataset``: one per seed with a held-out test
        file, else :attr:`expected`."""
        return self.seeds if dataset in self.test_file_datasets else self.expected

    @cached_property
    def held_out(self) -> bool:
        """True when accuracy is measured on held-out rows (folds or a test
        file) for every dataset, never on the training rows."""
        return bool((self._splits != ALL_ROWS).all())

    @cached_property
    def accuracy_heading(self) -> str:
        """What a cell's accuracy is, e.g. ``test acc (mean over 5 folds)``."""
        files = self.test_file_datasets
        seeds = self.seeds
        over = f" × {seeds} seeds" if seeds > 1 else ""
        runs = f", mean over {seeds} seeds" if seeds > 1 else ""
        on_file = f"{', '.join(files)}: on the held-out test file"
        if not self.held_out:
            if files:
                return (
                    f"training acc (fitted on all rows; test acc for {on_file}{runs})"
                )
            return f"training acc (fitted on all rows{runs})"
        cv = self.frame.loc[self._splits == CROSS_VALIDATION, "n_folds"]
        if cv.empty:
            return f"test acc (on the held-out test file{runs})"
        tail = f"; {on_file}" if files else ""
        return f"test acc (mean over {int(cv.max())} folds{over}{tail})"

    def per_depth_heading(self, measure: str) -> str:
        """The heading of the per-depth tables of ``measure`` (``accuracy``,
        ``MSE``): test, training (all rows), or both in a study that fits
        some datasets on all rows and tests others on a held-out file."""
        if self.held_out:
            return f"Test {measure} per depth"
        files = self.test_file_datasets
        if files:
            return (
                f"{measure[0].upper()}{measure[1:]} per depth (training "
                f"{measure}, fitted on all rows; test {measure} for "
                f"{', '.join(files)}, on the held-out test file)"
            )
        return f"Training {measure} per depth (fitted on all rows)"

    def figure_label(self, measure: str) -> str | None:
        """The y label of a per-depth figure of ``measure`` when it is not
        all test scores (None: the figure's own)."""
        if self.held_out:
            return None
        if self.test_file_datasets:
            return f"{measure} (training on all rows; test on held-out files)"
        return f"training {measure} (all rows)"

    @cached_property
    def depths(self) -> list:
        return sorted(int(d) for d in self.frame["depth"].unique())

    @cached_property
    def datasets(self) -> list:
        return sorted(self.frame["dataset"].unique())

    def time_limit(self, label: str) -> float:
        spec = self.methods.get(label)
        if spec and spec.get("time_limit"):
            return float(spec["time_limit"])
        return float(self.frame.loc[self.frame["method"] == label, "time_limit"].max())

    @cached_property
    def cells(self) -> pd.DataFrame:
        """One row per cell: counts, completeness and means over the runs
        with a tree of their own.

        Columns: ``expected`` (runs the cell expects), ``n_ok``, ``n_trees``
        (runs with a tree of their own), ``n_not_own`` (runs with a tree not
        their own), ``complete``, ``test_acc``, ``test_std``, ``train_acc``,
        ``objective``, ``proven``, ``all_proven``, ``fit_time`` (mean),
        ``fit_mem`` (max), ``n_train``.
        """
        frame = self.frame
        index = frame.groupby(CELL_KEYS).size().index
        trees = own_trees(frame).groupby(CELL_KEYS)
        ok = frame[frame["status"] == "ok"].groupby(CELL_KEYS).size()
        not_own = frame[frame["has_tree"] & ~frame["has_solver_tree"]]
        table = pd.DataFrame(index=index)
        table["n_ok"] = ok.reindex(index, fill_value=0)
        table["n_trees"] = trees.size().reindex(index, fill_value=0)
        table["n_not_own"] = (
            not_own.groupby(CELL_KEYS).size().reindex(index, fill_value=0)
        )
        datasets = table.index.get_level_values("dataset")
        table["expected"] = [self.expected_for(d) for d in datasets]
        table["complete"] = table["n_trees"] >= table["expected"]
        table["test_acc"] = trees["test_acc"].mean()
        table["test_std"] = trees["test_acc"].std()
        table["train_acc"] = trees["train_acc"].mean()
        table["objective"] = trees["objective"].mean()
        table["n_train"] = trees["n_train"].mean()
        proven = frame[frame["optimal"] & frame["has_tree"]].groupby(CELL_KEYS).size()
        table["proven"] = proven.reindex(index, fill_value=0)
        table["all_proven"] = table["proven"] >= table["expected"]
        table["fit_time"] = trees["fit_time_s"].mean()
        table["fit_mem"] = trees["fit_mem_mb"].max()
        return table.reset_index()
