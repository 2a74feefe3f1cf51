"""Load the vendored benchmark sets and scikit-learn's built-in tables by name."""

from __future__ import annotations

import gzip
import json
import lzma
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from odtstudy.datasets._user import (
    load_user,
    user_dataset,
    user_datasets,
    user_info,
    user_source,
)

__all__ = ["Dataset", "dataset_info", "list_datasets", "load_dataset"]

# Unqualified names shared by several collections resolve in this order.
_PREFERENCE = ("cp4im", "sklearn", "uci", "contree", "contree-train", "osrt", "other")
_SKLEARN = {
    "iris": "load_iris",
    "wine": "load_wine",
    "breast_cancer": "load_breast_cancer",
    "digits": "load_digits",
    "diabetes": "load_diabetes",
}
#: scikit-learn tables whose target is a number.
_SKLEARN_REGRESSION = {"diabetes"}


@dataclass(frozen=True)
class Dataset:
    """A table: features and a target (class labels, or numbers).

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        ``uint8`` for 0/1 sets, ``float64`` for numeric sets, ``object`` when
        some columns are categorical (strings).
    y : ndarray of shape (n_samples,)
        Labels as in the source (``task="classification"``), or the numeric
        target (``task="regression"``).
    feature_names : list of str
    kind : {"binary", "numeric", "categorical"}
    source : str
        Where the data comes from (repository, commit and path, or library).
    name : str
        The qualified name (``collection/name``).
    categorical : tuple of str
        For a user table: its categorical columns (one-hot encoded for the
        learners).
    task : {"classification", "regression"}
    n_train : int or None
        For a user table loaded with its held-out test file
        (``load_dataset(name, test_file=True)``): the rows before this index
        are the training file's, the others the test file's; else None.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list
    kind: str
    source: str
    name: str = ""
    categorical: tuple = ()
    task: str = "classification"
    n_train: int | None = None

    @property
    def shape(self):
        return self.X.shape

    @property
    def n_classes(self) -> int:
        """Number of distinct labels (a classification table)."""
        if self.task != "classification":
            raise AttributeError(
                f"{self.name or 'this table'} is a {self.task} table: its target "
                "has no classes"
            )
        return len(np.unique(self.y))


@lru_cache(maxsize=1)
def _catalog() -> dict:
    with (
        resources.files("odtstudy.datasets").joinpath("data/catalog.json").open() as fh
    ):
        entries = json.load(fh)
    catalog = {f"{e['collection']}/{e['name']}": e for e in entries}
    for name, loader in _SKLEARN.items():
        catalog[f"sklearn/{name}"] = {
            "name": name,
            "collection": "sklearn",
            "loader": loader,
            "kind": "numeric",
            "task": "regression" if name in _SKLEARN_REGRESSION else "classification",
            "source": f"scikit-learn sklearn.datasets.{loader}",
        }
    return catalog


def list_datasets(
    collection: str | None = None, kind: str | None = None, task: str | None = None
) -> list:
    """Qualified names (``collection/name``) of every loadable dataset.

    Parameters
    ----------
    collection : {"cp4im", "uci", "contree", "contree-train", "osrt", "sklearn", \
"other", "user"}, default=None
        ``"contree-train"``: the training splits on which ConTree's
        published optima were measured. ``"user"``: the tables registered by
        a study file in this process.
    kind : {"binary", "numeric", "categorical"}, default=None
    task : {"classification", "regression"}, default=None
    """
    names = [
        key
        for key, entry in _catalog().items()
        if (collection is None or entry["collection"] == collection)
        and (kind is None or entry["kind"] == kind)
        and (task is None or _task(entry) == task)
    ]
    if collection in (None, "user"):
        names += [
            spec.key
            for spec in user_datasets()
            if (kind is None or user_info(spec)["kind"] == kind)
            and (task is None or spec.task == task)
        ]
    return sorted(names)


def _task(entry: dict) -> str:
    return entry.get("task", "classification")


def _resolve(name: str) -> str:
    catalog = _catalog()
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    if name in catalog:
        return name
    user = user_dataset(name)
    if user is not None:
        return user.key
    for collection in _PREFERENCE:
        key = f"{collection}/{name}"
        if key in catalog:
            return key
    raise KeyError(
        f"unknown dataset {name!r}; see odtstudy.datasets.list_datasets() "
        f"(e.g. {', '.join(list_datasets()[:5])}, ...)"
    )


def dataset_info(name: str) -> dict:
    """The provenance entry (rows, features, classes, source, ...) of a dataset."""
    key = _resolve(name)
    user = user_dataset(key)
    if key not in _catalog() and user is not None:
        return user_info(user)
    return dict(_catalog()[key])


#: Collections stored as space-separated text, the label first, no header.
_LABEL_FIRST = {
    "cp4im": np.uint8,
    "contree": np.float64,
    "contree-train": np.float64,
}


def _read_vendored(entry):
    path = resources.files("odtstudy.datasets").joinpath("data", entry["file"])
    unpack = lzma.open if entry["file"].endswith(".xz") else gzip.open
    with path.open("rb") as raw, unpack(raw, "rt") as fh:
        if entry["collection"] in _LABEL_FIRST:
            table = np.loadtxt(fh, ndmin=2)
            y = table[:, 0].astype(np.int64)
            X = table[:, 1:].astype(_LABEL_FIRST[entry["collection"]])
            names = [f"f{j}" for j in range(X.shape[1])]
            return X, y, names
        frame = pd.read_csv(fh)
    label = frame.columns[-1]
    y = frame[label].to_numpy()
    features = frame.drop(columns=[label])
    names = [str(c) for c in features.columns]
    if entry["kind"] == "categorical":
        return features.astype(object).to_numpy(), y, names
    X = features.to_numpy(dtype=np.float64)
    if entry["kind"] == "binary":
        X = X.astype(np.uint8)
    return X, y, names


def _read_sklearn(entry):
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, entry["loader"])()
    return (
        np.asarray(bunch.data, dtype=np.float64),
        np.asarray(bunch.target),
        [str(n) for n in bunch.feature_names],
    )


def load_dataset(name: str, test_file: bool = False) -> Dataset:
    """Load a dataset by name.

    Parameters
    ----------
    name : str
        A qualified name from :func:`list_datasets` (``"cp4im/anneal"``,
        ``"uci/iris"``, ``"contree/avila"``, ``"osrt/servo"``, ``"sklearn/iris"``)
        or an unqualified one (``"anneal"``). An unqualified name found in
        several collections resolves to the first of CP4IM, scikit-learn, UCI,
        ConTree's suite, ConTree's training splits, OSRT's regression sets:
        ``"diabetes"`` is the CP4IM (binarised) set (``"sklearn/diabetes"`` is
        scikit-learn's regression table), ``"iris"`` is scikit-learn's,
        ``"segment"`` CP4IM's (``"contree/segment"`` is the numeric one,
        ``"contree-train/segment"`` its training split), ``"bean"`` is
        ``"contree-train/bean"``.
    test_file : bool, default=False
        For a user table registered with a ``test_path``: append the test
        file's rows after the training rows and set ``Dataset.n_train``.
        Without it (and for every other table) only the training rows.

    Returns
    -------
    Dataset

    Raises
    ------
    KeyError
        For an unknown name.

    Examples
    --------
    >>> ds = load_dataset("anneal")
    >>> ds.X.shape, ds.kind
    ((812, 93), 'binary')
    """
    key = _resolve(name)
    user = user_dataset(key)
    if key not in _catalog() and user is not None:
        X, y, names, kind, categorical, n_train = load_user(user, test_file)
        held_out = n_train if test_file and user.test_path is not None else None
        source = user_source(user)
        return Dataset(X, y, names, kind, source, key, categorical, user.task, held_out)
    entry = _catalog()[key]
    reader = _read_sklearn if entry["collection"] == "sklearn" else _read_vendored
    X, y, names = reader(entry)
    if "rows" in entry and X.shape != (entry["rows"], entry["features"]):
        raise RuntimeError(
            f"dataset {key} loaded with shape {X.shape}, but its provenance table "
            f"says ({entry['rows']}, {entry['features']}): the vendored file is "
            "corrupt; reinstall odtstudy"
        )
    if _task(entry) == "regression":
        y = np.asarray(y, dtype=np.float64)
    return Dataset(X, y, names, entry["kind"], entry["source"], key, task=_task(entry))
