"""The user's own tables (CSV or Parquet), registered by name for this process.

A study file declares them (``[datasets.<name>] path / target /
categorical / task``); :func:`register_dataset` checks the file once and records
its absolute path, so :func:`odtstudy.datasets.load_dataset` finds it by name
in this process and in the study's workers, which are forked from it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "USER_COLLECTION",
    "load_user",
    "register_dataset",
    "user_dataset",
    "user_datasets",
    "user_info",
    "user_source",
]

USER_COLLECTION = "user"
_FORMATS = {".csv": "csv", ".gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
_TASKS = ("classification", "regression")
#: A classification target of non-integer numbers with more distinct values
#: than this is refused as a regression target.
_MAX_FLOAT_CLASSES = 20


@dataclass(frozen=True)
class UserDataset:
    """A registered user table: where it is and how to read it."""

    name: str
    path: str
    target: str
    categorical: tuple = ()
    task: str = "classification"

    @property
    def key(self) -> str:
        return f"{USER_COLLECTION}/{self.name}"


_USER: dict[str, UserDataset] = {}


def _format(path: Path) -> str:
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None or (path.suffix.lower() == ".gz" and ".csv" not in path.suffixes):
        raise ValueError(
            f"{path.name}: unknown table format; use a .csv (or .csv.gz) or a "
            ".parquet file"
        )
    return fmt


def _check_unique_names(names, path: Path) -> None:
    """Refuse a header that repeats a column name (after stripping spaces):
    pandas would rename the copy (``label.1``) and a repeated target would
    leak into the features."""
    counts = Counter(str(name).strip() for name in names)
    repeated = sorted(name for name, n in counts.items() if n > 1)
    if repeated:
        raise ValueError(
            f"{path.name}: the header repeats column name(s) "
            f"{', '.join(repr(r) for r in repeated)}; give every column a "
            "distinct name (or drop the copies) and load it again"
        )


def _read_frame(path: Path) -> pd.DataFrame:
    if _format(path) == "csv":
        header = pd.read_csv(path, header=None, nrows=1, dtype=str)
        _check_unique_names(header.iloc[0].fillna("").tolist(), path)
        return pd.read_csv(path)
    try:
        import pyarrow.parquet as pq

        _check_unique_names(pq.read_schema(path).names, path)
        return pd.read_parquet(path)
    except ImportError as exc:
        raise ValueError(
            f"{path.name}: reading Parquet needs pyarrow (pip install pyarrow): {exc}"
        ) from None


def _columns(frame, spec):
    """Feature frame, labels and the categorical columns of a user table."""
    columns = [str(c) for c in frame.columns]
    _check_unique_names(columns, Path(spec.path))
    frame = frame.set_axis(columns, axis=1)
    if spec.target not in columns:
        more = ", ..." if len(columns) > 12 else ""
        raise ValueError(
            f"target column {spec.target!r} is not in {Path(spec.path).name} "
            f"(columns: {', '.join(columns[:12])}{more})"
        )
    missing = [c for c in spec.categorical if c not in columns]
    if missing:
        raise ValueError(
            f"categorical column {missing[0]!r} is not in {Path(spec.path).name}"
        )
    if spec.target in spec.categorical:
        raise ValueError(f"the target {spec.target!r} cannot also be categorical")
    y = frame[spec.target]
    if y.isna().any():
        raise ValueError(
            f"target column {spec.target!r} has {int(y.isna().sum())} missing "
            "values; drop those rows"
        )
    features = frame.drop(columns=[spec.target])
    if features.shape[1] == 0:
        raise ValueError("the table has no feature column besides the target")
    holes = features.columns[features.isna().any()].tolist()
    if holes:
        raise ValueError(
            f"column {holes[0]!r} has missing values; impute or drop them first"
        )
    categorical = [
        c
        for c in features.columns
        if c in spec.categorical
        or not pd.api.types.is_numeric_dtype(features[c])
        or pd.api.types.is_bool_dtype(features[c])
    ]
    if spec.task == "regression":
        return features, _regression_target(y, spec), categorical
    if y.nunique() < 2:
        raise ValueError(f"target column {spec.target!r} has a single class")
    _check_labels(y, spec)
    return features, y.to_numpy(), categorical


def _regression_target(y, spec) -> np.ndarray:
    """The numeric target of a regression table, as float64."""
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        example = y[pd.to_numeric(y, errors="coerce").isna()].iloc[0]
        raise ValueError(
            f"target column {spec.target!r} holds {example!r}, not a number: a "
            "regression table needs a numeric target; give a numeric column as "
            'target, or use task = "classification" for class labels'
        )
    values = y.to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(
            f"target column {spec.target!r} holds an infinite value; drop those rows"
        )
    if len(np.unique(values)) < 2:
        raise ValueError(
            f"target column {spec.target!r} has a single value: nothing to predict"
        )
    return values


def _check_labels(y, spec) -> None:
    """Refuse a classification target that reads as a regression target."""
    if not pd.api.types.is_float_dtype(y):
        return
    values = y.to_numpy(dtype=np.float64)
    distinct = len(np.unique(values))
    if distinct > _MAX_FLOAT_CLASSES and not np.all(values == np.round(values)):
        raise ValueError(
            f"target column {spec.target!r} holds {distinct} distinct non-integer "
            "numbers, a regression target, not class labels; run it in a "
            'regression study (task = "regression" in [study]) or give a '
            "column of class labels as target"
        )


def _arrays(spec):
    """``(X, y, feature_names, kind, categorical)`` of a user table."""
    features, y, categorical = _columns(_read_frame(Path(spec.path)), spec)
    names = list(features.columns)
    if categorical:
        X = features.astype(object).to_numpy()
        for j, name in enumerate(names):
            if name in categorical:
                X[:, j] = features[name].astype(str).to_numpy()
        return X, y, names, "categorical", tuple(categorical)
    X = features.to_numpy(dtype=np.float64)
    if np.isin(X, (0.0, 1.0)).all():
        return X.astype(np.uint8), y, names, "binary", ()
    return X, y, names, "numeric", ()


def _digest(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def register_dataset(
    name, path, target, categorical=(), base_dir=None, task="classification"
) -> dict:
    """Check a user table and register it under ``name`` (``user/<name>``).

    Parameters
    ----------
    name : str
    path : str or Path
        A ``.csv`` (``.csv.gz``) or ``.parquet`` file; relative paths are
        taken from ``base_dir`` (the study file's folder).
    target : str
        The label column (a number per row for regression).
    categorical : list of str, default=()
        Columns to one-hot encode besides the non-numeric ones.
    base_dir : str or Path, default=None
    task : {"classification", "regression"}, default="classification"
        What the target is: class labels (at least two; a float column with
        many non-integer values is refused), or numbers (refused when not
        numeric).

    Returns
    -------
    dict
        Its provenance entry (see :func:`odtstudy.datasets.dataset_info`).

    Raises
    ------
    ValueError
        For a missing or unreadable file, an unknown column, missing values,
        a single class or a target that does not fit ``task``; the message
        names the problem.
    """
    if task not in _TASKS:
        raise ValueError(f"task must be one of {_TASKS}, got {task!r}")
    file = Path(path)
    if not file.is_absolute() and base_dir is not None:
        file = Path(base_dir) / file
    file = file.resolve()
    if not file.is_file():
        raise ValueError(f"file {file} does not exist")
    _format(file)
    spec = UserDataset(str(name), str(file), str(target), tuple(categorical), task)
    try:
        X, y, _, kind, _ = _arrays(spec)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"cannot read {file}: {exc}") from None
    _USER[spec.name] = spec
    return _entry(spec, X, y, kind)


def _entry(spec, X, y, kind) -> dict:
    entry = {
        "name": spec.name,
        "collection": USER_COLLECTION,
        "kind": kind,
        "rows": int(X.shape[0]),
        "features": int(X.shape[1]),
        "task": spec.task,
        "source": user_source(spec),
    }
    if spec.task == "classification":
        entry["classes"] = len(np.unique(y))
    return entry


def user_source(spec: UserDataset) -> str:
    """Where a user table comes from: its path, content hash and target."""
    return f"{spec.path} (sha256 {_digest(spec.path)}, target {spec.target!r})"


def user_dataset(name: str) -> UserDataset | None:
    """The registered user table called ``name`` or ``user/<name>``."""
    prefix = f"{USER_COLLECTION}/"
    return _USER.get(name[len(prefix) :] if name.startswith(prefix) else name)


def user_datasets() -> list:
    """Every registered user table."""
    return list(_USER.values())


def load_user(spec: UserDataset):
    """``(X, y, feature_names, kind, categorical)`` of a registered table."""
    return _arrays(spec)


def user_info(spec: UserDataset) -> dict:
    """Provenance of a registered table (reads it to count rows)."""
    X, y, _, kind, _ = _arrays(spec)
    return _entry(spec, X, y, kind)
