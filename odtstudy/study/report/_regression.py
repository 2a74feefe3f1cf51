"""What a regression study's report measures, and the task of a set of records.

A record carries ``task`` (``"classification"`` or ``"regression"``; a
record without it is classification). A regression record carries train /
test MSE, MAE and R² (and the pinball loss for a method whose objective
family is ``pinball@tau``, at that τ); its ``objective`` is the training
loss summed over rows (SSE, sum of absolute errors, sum of pinball losses,
plus the leaf penalty of a penalised family), a float: two exact methods
agree on it within :data:`RELATIVE_TOLERANCE`, not to the last bit.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from odtstudy.study._regression_scores import REGRESSION_COLUMNS
from odtstudy.study.report._records import CELL_KEYS, StudyRecords, own_trees

__all__ = [
    "CLASSIFICATION",
    "ERROR_COLUMNS",
    "REGRESSION",
    "RELATIVE_TOLERANCE",
    "RegressionRecords",
    "objective_tolerance",
    "record_tasks",
    "relative_gap",
    "study_task",
]

CLASSIFICATION = "classification"
REGRESSION = "regression"
#: Two regression objectives agree when they differ by at most this times
#: ``max(1, |objective|)`` (sums of squares computed in another order).
RELATIVE_TOLERANCE = 1e-9
#: Per-run error columns of a regression record, averaged per cell.
ERROR_COLUMNS = tuple(REGRESSION_COLUMNS)


def record_tasks(frame: pd.DataFrame) -> pd.Series:
    """The task of each record (``"classification"`` where none is recorded)."""
    if "task" not in frame:
        return pd.Series(CLASSIFICATION, index=frame.index, dtype=object)
    tasks = frame["task"].astype(object)
    return tasks.where(tasks.notna(), CLASSIFICATION)


def study_task(frame: pd.DataFrame) -> str:
    """The one task of a set of records.

    Raises
    ------
    ValueError
        When the records mix classification and regression runs: their
        measures (accuracy, squared error) cannot share a report.
    """
    counts = record_tasks(frame).value_counts()
    unknown = [t for t in counts.index if t not in (CLASSIFICATION, REGRESSION)]
    if unknown:
        raise ValueError(
            f"records have task {unknown[0]!r}; a record's task must be "
            f"{CLASSIFICATION!r} or {REGRESSION!r}"
        )
    if len(counts) > 1:
        mix = ", ".join(f"{n} {task}" for task, n in counts.items())
        raise ValueError(
            f"the records mix classification and regression runs ({mix}); a "
            "report covers one task: write each task's runs to its own study "
            "folder (a study declares one task)"
        )
    return str(counts.index[0]) if len(counts) else CLASSIFICATION


def objective_tolerance(objectives) -> np.ndarray:
    """How far two regression objectives may differ and still agree."""
    scale = np.maximum(1.0, np.abs(np.asarray(objectives, dtype=float)))
    return RELATIVE_TOLERANCE * scale


def relative_gap(gap, optimum) -> np.ndarray:
    """``100 × gap / optimum`` in percent (NaN where the optimum is 0)."""
    optimum = np.abs(np.asarray(optimum, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(optimum > 0, 100.0 * np.asarray(gap, float) / optimum, np.nan)


class RegressionRecords(StudyRecords):
    """The records of a regression protocol: cells also carry mean errors.

    Cells gain the mean of every :data:`ERROR_COLUMNS` column the records
    have (over the runs with a tree of their own) and ``test_mse_std``.
    """

    reference_base = "dl85-reg"

    @cached_property
    def cells(self) -> pd.DataFrame:
        table = StudyRecords.cells.func(self)
        frame = self.frame
        trees = own_trees(frame).groupby(CELL_KEYS)
        means = {c: trees[c].mean() for c in ERROR_COLUMNS if c in frame}
        if "test_mse" in frame:
            means["test_mse_std"] = trees["test_mse"].std()
        if not means:
            return table
        extra = pd.DataFrame(means).reset_index()
        return table.merge(extra, on=CELL_KEYS, how="left")

    @cached_property
    def error_heading(self) -> str:
        """What a cell's error is, e.g. ``test MSE (mean over 5 folds)``."""
        return self.accuracy_heading.replace("training acc", "training MSE").replace(
            "test acc", "test MSE"
        )

    @cached_property
    def families(self) -> dict:
        """Method -> its objective family (the most frequent one recorded)."""
        frame = self.frame
        return {
            m: str(frame.loc[frame["method"] == m, "objective_family"].mode().iloc[0])
            for m in self.method_order
        }
