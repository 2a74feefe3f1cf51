"""Append-only, resumable results of a study: one JSON line per run.

``<folder>/results.jsonl`` starts with a header line naming the format, then
holds one JSON object per finished run. A record is written with a single
``write`` on a file opened in append mode and flushed to disk. JSON escapes
newlines inside strings, so a record is exactly one line: a write torn by a
kill leaves one line that does not parse (or lacks its newline), which is
detected whatever the record contained, skipped, and its run re-run. A
damaged header is an error, never a silent re-run of everything.

One runner at a time: :class:`StudyLock` holds an exclusive lock on the study
folder while a study runs.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
from pathlib import Path

import pandas as pd

from odtstudy.study._folds import split_of
from odtstudy.study._regression_scores import REGRESSION_COLUMNS
from odtstudy.study._solver_tree import solver_tree_column

__all__ = [
    "COLUMNS",
    "ResultsStore",
    "StudyLock",
    "StudyLockedError",
    "split_column",
    "typed",
]

#: Columns copied from the run's definition (its identity and limit).
IDENTITY_COLUMNS = [
    "run_id", "protocol_id", "study", "scale", "dataset", "method", "params",
    "depth", "fold", "n_folds", "split", "seed", "time_limit",
]  # fmt: skip
#: How a run's test rows were chosen (:data:`odtstudy.study._folds.SPLITS`):
#: ``"cross-validation"``, ``"all-rows"`` or ``"test-file"`` (a user
#: table's held-out test file); older records lack it and are read from
#: ``n_folds``.
SPLIT_COLUMN = "split"
#: Set by adapters of published solvers; missing in older records.
TOOL_COLUMNS = ["tool", "objective_family"]
#: ``"classification"`` or ``"regression"``; older records lack it and are
#: read as classification.
TASK_COLUMN = "task"
DEFAULT_TASK = "classification"
#: Numeric outcome columns (parsed as numbers when the table is read).
NUMERIC_COLUMNS = [
    "train_acc", "test_acc", "objective", "lower_bound", "n_leaves",
    "tree_depth", "fit_time_s", "predict_time_s", "wall_time_s", "fit_mem_mb",
    "peak_rss_mb", "n_train", "n_test", "n_features", "cpu_time_s",
    "solver_time_s", *REGRESSION_COLUMNS,
]  # fmt: skip
#: Per-repeat lists of a run fitted ``repeats`` times (missing in older
#: records): its scalar ``fit_time_s`` / ``cpu_time_s`` are their medians.
REPEAT_COLUMNS = ["fit_times_s", "cpu_times_s", "repeat_statuses"]
COLUMNS = [
    *IDENTITY_COLUMNS, *TOOL_COLUMNS, TASK_COLUMN, "status", "learner_status",
    "optimal",
    "claimed_optimal", "has_tree", "has_solver_tree", *NUMERIC_COLUMNS,
    *REPEAT_COLUMNS, "stats", "error", "protocol", "versions", "provenance",
    "host", "utc",
]  # fmt: skip
_JSON_COLUMNS = ("params", "stats", "protocol", "versions", "provenance",
                 *REPEAT_COLUMNS)  # fmt: skip
_BOOL_COLUMNS = ("optimal", "claimed_optimal", "has_tree", "has_solver_tree")
_INT_COLUMNS = ("depth", "fold", "n_folds", "seed")
_HEADER = {"format": "odtstudy-results", "version": 2}
_HEADER_LINE = json.dumps(_HEADER, sort_keys=True) + "\n"


class StudyLockedError(ValueError):
    """Another runner holds the study folder."""


class StudyLock:
    """Exclusive lock on a study folder (``<folder>/.lock``), held by one runner.

    A second runner on the same folder gets a :class:`StudyLockedError` at
    once naming the process that holds it. The lock is released when the
    holder exits, however it ends.
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        self.path = self.folder / ".lock"
        self._fd = None

    def acquire(self) -> StudyLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise StudyLockedError(
                f"study folder {self.folder} is in use by another runner "
                f"(process {holder}); wait for it to finish, or pass another "
                "--output folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


class ResultsStore:
    """Records of a study in ``<folder>/results.jsonl``.

    Attributes
    ----------
    damaged_lines : list of int
        Line numbers of torn records found by the last read (their runs are
        missing, so a resumed study runs them again).
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        self.path = self.folder / "results.jsonl"
        self.damaged_lines: list[int] = []

    def _check_header(self, first: bytes) -> None:
        try:
            header = json.loads(first)
        except ValueError:
            header = None
        if header != _HEADER:
            raise ValueError(
                f"{self.path} does not start with the odtstudy results header "
                f"({_HEADER_LINE.strip()}); its first line is "
                f"{first[:80].decode(errors='replace')!r}. The file is damaged "
                "or not a results file: restore it, or move it aside to start "
                "the study afresh"
            )

    def _repair_tail(self) -> None:
        """Cut an incomplete last line left by a kill in the middle of a write."""
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict) -> None:
        """Write one record (one line, one ``write``, flushed to disk)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                self._check_header(fh.readline())
            self._repair_tail()
        line = json.dumps(record, sort_keys=True, default=_plain) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size == 0:
                os.write(fd, _HEADER_LINE.encode())
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[dict]:
        """Every intact record, in the order written."""
        self.damaged_lines = []
        if not self.path.exists() or self.path.stat().st_size == 0:
            return []
        with open(self.path, "rb") as fh:
            lines = fh.read().split(b"\n")
        self._check_header(lines[0])
        torn_tail = lines[-1] != b""
        rows = []
        for number, line in enumerate(lines[1:-1], start=2):
            record = _parse(line)
            if record is None:
                self.damaged_lines.append(number)
            else:
                rows.append(record)
        if torn_tail:
            self.damaged_lines.append(len(lines))
        return rows

    def run_ids(self) -> set:
        """Ids of the runs already recorded."""
        return {row["run_id"] for row in self.records()}

    def load(self) -> pd.DataFrame:
        """All records as a DataFrame (the latest record per run id); a
        record without ``task`` is a classification run's, one without
        ``split`` is read from its ``n_folds``, and the
        regression columns of classification records are null."""
        rows = self.records()
        if not rows:
            return pd.DataFrame(columns=COLUMNS)
        frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
        frame = frame.drop_duplicates("run_id", keep="last").reset_index(drop=True)
        numeric = [*_INT_COLUMNS, "time_limit", *NUMERIC_COLUMNS]
        for column in numeric:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
        task = frame[TASK_COLUMN].astype(object)
        frame[TASK_COLUMN] = task.where(task.notna(), DEFAULT_TASK)
        frame[SPLIT_COLUMN] = split_column(frame)
        written = frame["has_solver_tree"]  # missing in older records: derived
        for column in _BOOL_COLUMNS:
            frame[column] = [value is True for value in frame[column]]
        frame["has_solver_tree"] = solver_tree_column(
            frame.assign(has_solver_tree=written)
        )
        for column in _JSON_COLUMNS:
            frame[column] = frame[column].map(_to_json, na_action="ignore")
        return frame

    def export_csv(self, path=None) -> Path:
        """Write the records as a flat CSV (JSON-encoded nested fields)."""
        path = Path(path or self.folder / "results.csv")
        self.load().to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
        return path

    def export_parquet(self, path=None) -> Path:
        """Write the records as Parquet with typed columns.

        Integers (``depth``, ``fold``, ``n_folds``, ``seed``) are nullable
        ``Int64``, outcomes ``float64``, flags ``bool``, ``utc`` a UTC
        timestamp, text and the JSON-encoded nested fields strings.
        """
        path = Path(path or self.folder / "results.parquet")
        typed(self.load()).to_parquet(path, index=False, engine="pyarrow")
        return path


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The records with one dtype per column (see ``ResultsStore.export_parquet``)."""
    frame = frame.copy()
    for column in frame.columns:
        if column in _INT_COLUMNS:
            frame[column] = frame[column].round().astype("Int64")
        elif column in _BOOL_COLUMNS:
            frame[column] = frame[column].astype(bool)
        elif column == "utc":
            frame[column] = pd.to_datetime(frame[column], utc=True, errors="coerce")
        elif column in NUMERIC_COLUMNS or column == "time_limit":
            frame[column] = frame[column].astype("float64")
        else:
            frame[column] = frame[column].astype("string")
    return frame


def split_column(frame: pd.DataFrame) -> pd.Series:
    """The records' ``split``, derived from ``n_folds`` where it is missing
    (records written before the column existed; a frame of cells without
    ``n_folds`` reads as cross-validated)."""
    folds = frame["n_folds"].fillna(1) if "n_folds" in frame else [2] * len(frame)
    derived = pd.Series([split_of(n) for n in folds], index=frame.index, dtype=object)
    if SPLIT_COLUMN not in frame:
        return derived
    split = frame[SPLIT_COLUMN].astype(object)
    return split.where(split.notna(), derived)


def _parse(line: bytes) -> dict | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or "run_id" not in record:
        return None
    return record


def _to_json(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _plain(value):
    """JSON encoding of NumPy scalars and other stragglers."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)
