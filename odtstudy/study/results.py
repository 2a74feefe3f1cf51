"""Append-only, resumable results table (CSV, one flat row per run)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pandas as pd

__all__ = ["COLUMNS", "ResultsStore"]

#: Columns copied from the run's definition (its identity and limit).
IDENTITY_COLUMNS = [
    "run_id", "study", "dataset", "method", "params", "depth", "fold",
    "n_folds", "seed", "time_limit",
]  # fmt: skip
#: Numeric outcome columns (parsed as numbers when the table is read).
NUMERIC_COLUMNS = [
    "train_acc", "test_acc", "objective", "lower_bound", "n_leaves",
    "tree_depth", "fit_time_s", "predict_time_s", "wall_time_s", "peak_rss_mb",
    "fit_rss_mb", "n_train", "n_test", "n_features",
]  # fmt: skip
COLUMNS = [
    *IDENTITY_COLUMNS, "status", "learner_status", "optimal", *NUMERIC_COLUMNS,
    "stats", "error", "versions", "host", "utc", "config_hash",
]  # fmt: skip
_JSON_COLUMNS = ("params", "stats", "versions")


class ResultsStore:
    """Records of a study in ``<folder>/results.csv``.

    Each record is written with a single ``write`` on a file opened in append
    mode and flushed to disk, so a study killed at any point leaves a valid
    table (a torn last line, if any, is ignored when reading).
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        self.path = self.folder / "results.csv"

    def _encode(self, record: dict) -> bytes:
        row = []
        for column in COLUMNS:
            value = record.get(column)
            if column in _JSON_COLUMNS and value is not None:
                value = json.dumps(value, sort_keys=True, default=str)
            row.append("" if value is None else value)
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(row)
        return buffer.getvalue().encode()

    def _drop_torn_tail(self) -> None:
        """Cut an incomplete last record left by a kill in the middle of a write."""
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()
        new = not self.path.exists() or self.path.stat().st_size == 0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if new:
                header = io.StringIO()
                csv.writer(header, lineterminator="\n").writerow(COLUMNS)
                os.write(fd, header.getvalue().encode())
            os.write(fd, self._encode(record))
            os.fsync(fd)
        finally:
            os.close(fd)

    def _rows(self):
        if not self.path.exists():
            return []
        with open(self.path, newline="") as fh:
            text = fh.read()
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]  # drop a torn last record
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is None:
            return []
        return [dict(zip(header, row)) for row in reader if len(row) == len(header)]

    def run_ids(self) -> set:
        """Ids of the runs already recorded."""
        return {row["run_id"] for row in self._rows()}

    def load(self) -> pd.DataFrame:
        """All records as a DataFrame (latest record per run id)."""
        rows = self._rows()
        if not rows:
            return pd.DataFrame(columns=COLUMNS)
        frame = pd.DataFrame(rows).replace("", None)
        frame = frame.drop_duplicates("run_id", keep="last").reset_index(drop=True)
        numeric = ["depth", "fold", "n_folds", "seed", "time_limit", *NUMERIC_COLUMNS]
        for column in numeric:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
        frame["optimal"] = frame["optimal"].map({"True": True, "False": False})
        frame["optimal"] = frame["optimal"].fillna(False).astype(bool)
        return frame
