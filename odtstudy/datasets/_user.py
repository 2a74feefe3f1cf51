"""The user's own tables (CSV or Parquet), registered by name for this process.

A study file declares them (``[datasets.<name>] path / target /
categorical / task``, and ``test_path`` for a held-out test file);
:func:`register_dataset` checks the files once and records their absolute
paths, so :func:`odtstudy.datasets.load_dataset` finds the table by name in
this process and in the study's workers, which are forked from it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "USER_COLLECTION",
    "held_out_entry",
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
    #: The held-out test file (same columns), or None: no test file.
    test_path: str | None = None

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


def _test_columns(frame, features, y_train, spec):
    """Feature frame (in the training file's column order) and labels of
    the held-out test file, checked against the training file's
    ``features`` and labels ``y_train``."""
    columns = [str(c) for c in frame.columns]
    _check_unique_names(columns, Path(spec.test_path))
    frame = frame.set_axis(columns, axis=1)
    if spec.target not in columns:
        raise ValueError(
            f"it has no target column {spec.target!r} (the training file's); "
            "give it the training file's header"
        )
    _check_same_columns(columns, [*features.columns, spec.target])
    if len(frame) == 0:
        raise ValueError(
            "it has a header but no rows; put the held-out rows in it, or drop "
            "test_path to cross-validate the training file"
        )
    y = frame[spec.target]
    if y.isna().any():
        raise ValueError(
            f"target column {spec.target!r} has {int(y.isna().sum())} missing "
            "values; drop those rows"
        )
    test = frame[list(features.columns)]
    holes = test.columns[test.isna().any()].tolist()
    if holes:
        raise ValueError(
            f"column {holes[0]!r} has missing values; impute or drop them first"
        )
    _check_numeric_like_training(test, features, spec)
    if spec.task == "regression":
        return test, _regression_target(y, spec)
    _check_known_classes(y.to_numpy(), y_train, spec)
    return test, y.to_numpy()


def _check_same_columns(columns, expected) -> None:
    missing = [c for c in expected if c not in columns]
    extra = [c for c in columns if c not in expected]
    if missing or extra:
        parts = [f"missing {', '.join(map(repr, missing))}"] if missing else []
        parts += [f"extra {', '.join(map(repr, extra))}"] if extra else []
        raise ValueError(
            f"its columns differ from the training file's ({'; '.join(parts)}); "
            "give both files the same header"
        )


def _is_numeric(column) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(
        column
    )


def _check_numeric_like_training(test, features, spec) -> None:
    """A column numeric in the training file is numeric in the test file."""
    for name in features.columns:
        if name in spec.categorical or not _is_numeric(features[name]):
            continue
        if not _is_numeric(test[name]):
            values = test[name]
            example = values[pd.to_numeric(values, errors="coerce").isna()].iloc[0]
            raise ValueError(
                f"column {name!r} holds {example!r}, not a number, but it is "
                "numeric in the training file; fix the value, or list the "
                f"column in categorical = [{name!r}]"
            )


def _check_known_classes(y_test, y_train, spec) -> None:
    """Refuse test labels that no training row has: no learner predicts them."""
    unseen = np.unique(y_test[~np.isin(y_test, y_train)])
    if len(unseen):
        shown = ", ".join(repr(v) for v in unseen[:5].tolist())
        raise ValueError(
            f"target column {spec.target!r} holds class(es) {shown} that no row "
            "of the training file has, so no learner can predict them; drop "
            "those rows from the test file, or move some into the training file"
        )


def _matrix(features, categorical):
    """``(X, kind, categorical)`` of a feature frame."""
    if categorical:
        X = features.astype(object).to_numpy()
        for j, name in enumerate(features.columns):
            if name in categorical:
                X[:, j] = features[name].astype(str).to_numpy()
        return X, "categorical", tuple(categorical)
    X = features.to_numpy(dtype=np.float64)
    if np.isin(X, (0.0, 1.0)).all():
        return X.astype(np.uint8), "binary", ()
    return X, "numeric", ()


def _arrays(spec, with_test=False):
    """``(X, y, feature_names, kind, categorical, n_train)`` of a user table.

    With a test file, its kind and encodings are those of the training and
    test rows together; ``with_test`` appends the test rows after the
    ``n_train`` training rows.
    """
    features, y, categorical = _columns(_read_frame(Path(spec.path)), spec)
    n_train = len(y)
    if spec.test_path is not None:
        test, y_test = _test_columns(
            _read_frame(Path(spec.test_path)), features, y, spec
        )
        features = pd.concat([features, test], ignore_index=True)
        y = np.concatenate([y, y_test])
    X, kind, categorical = _matrix(features, categorical)
    if not with_test:
        X, y = X[:n_train], y[:n_train]
    return X, y, list(features.columns), kind, categorical, n_train


def _digest(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def register_dataset(
    name,
    path,
    target,
    categorical=(),
    base_dir=None,
    task="classification",
    test_path=None,
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
        names the problem. A problem of the test file (missing, unreadable,
        empty, other columns, a class the training file lacks, text in a
        numeric column) starts with ``test file``.
    """
    if task not in _TASKS:
        raise ValueError(f"task must be one of {_TASKS}, got {task!r}")
    file = _resolved(path, base_dir)
    spec = UserDataset(str(name), str(file), str(target), tuple(categorical), task)
    X, y, _, kind, _, _ = _checked_arrays(spec, file)
    if test_path is not None:
        try:
            test = _resolved(test_path, base_dir)
            spec = replace(spec, test_path=str(test))
            X, y, _, kind, _, _ = _checked_arrays(spec, test)
        except ValueError as exc:
            raise ValueError(f"test file {Path(test_path).name}: {exc}") from None
    _USER[spec.name] = spec
    return _entry(spec, X, y, kind)


def _resolved(path, base_dir) -> Path:
    """The absolute path of an existing table file (relative to ``base_dir``)."""
    file = Path(path)
    if not file.is_absolute() and base_dir is not None:
        file = Path(base_dir) / file
    file = file.resolve()
    if not file.is_file():
        raise ValueError(
            f"file {file} does not exist; fix the path (a relative path starts "
            "at the study file's folder)"
        )
    _format(file)
    return file


def _checked_arrays(spec, file):
    """:func:`_arrays` of a table being registered; ``file`` is the one read
    last (named when it cannot be read)."""
    try:
        return _arrays(spec)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"cannot read {file}: {exc}") from None


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
    if spec.test_path is not None:
        entry["test_path"] = spec.test_path
    return entry


def user_source(spec: UserDataset) -> str:
    """Where a user table comes from: its path, content hash and target (and
    its test file's path and hash)."""
    source = f"{spec.path} (sha256 {_digest(spec.path)}, target {spec.target!r})"
    if spec.test_path is None:
        return source
    return f"{source}; test file {spec.test_path} (sha256 {_digest(spec.test_path)})"


def user_dataset(name: str) -> UserDataset | None:
    """The registered user table called ``name`` or ``user/<name>``."""
    prefix = f"{USER_COLLECTION}/"
    return _USER.get(name[len(prefix) :] if name.startswith(prefix) else name)


def user_datasets() -> list:
    """Every registered user table."""
    return list(_USER.values())


def load_user(spec: UserDataset, with_test: bool = False):
    """``(X, y, feature_names, kind, categorical, n_train)`` of a registered
    table: its training rows, and with ``with_test`` its test file's rows
    after them."""
    return _arrays(spec, with_test)


def user_info(spec: UserDataset) -> dict:
    """Provenance of a registered table (reads it to count rows)."""
    X, y, _, kind, _, _ = _arrays(spec)
    return _entry(spec, X, y, kind)


def held_out_entry(spec: UserDataset) -> dict | None:
    """The files and row counts of a table with a test file, else None."""
    if spec.test_path is None:
        return None
    _, y, _, _, _, n_train = _arrays(spec, with_test=True)
    return {
        "train": spec.path,
        "test": spec.test_path,
        "train_rows": n_train,
        "test_rows": len(y) - n_train,
    }
