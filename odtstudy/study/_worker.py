"""One run of a study (one method, dataset, depth, fold, seed), in a worker process."""

from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import time
import traceback

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold

from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.study.registry import get_method

__all__ = ["execute_run", "fold_indices", "prepare_data"]


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fold_indices(y, n_folds, fold, seed):
    """Train/test row indices of one stratified fold (plain k-fold if a class
    is too small to be stratified). With one fold, both are all the rows: the
    papers' training-objective comparisons."""
    if n_folds == 1:
        rows = np.arange(len(y))
        return rows, rows
    _, counts = np.unique(y, return_counts=True)
    if counts.min() >= n_folds:
        splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    else:
        splitter = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for k, (train, test) in enumerate(splitter.split(np.zeros(len(y)), y)):
        if k == fold:
            return train, test
    raise ValueError(f"fold {fold} out of range for {n_folds} folds")


def prepare_data(dataset, method, train, test, max_thresholds):
    """Train/test matrices in the form the method accepts.

    0/1-only methods get binarised data (thresholds fitted on the training
    fold only); other methods get numeric data, with categorical columns
    one-hot encoded.
    """
    X = dataset.X
    needs_binary = method.data == "binary" and dataset.kind != "binary"
    if needs_binary or dataset.kind == "categorical":
        frame = pd.DataFrame(X, columns=dataset.feature_names)
        if dataset.kind != "categorical":
            frame = frame.astype(float)
        binarizer = Binarizer(max_thresholds=max_thresholds if needs_binary else None)
        binarizer.fit(frame.iloc[train])
        Xb = binarizer.transform(frame)
        return Xb[train], Xb[test], list(binarizer.get_feature_names_out())
    return X[train], X[test], list(dataset.feature_names)


def execute_run(run: dict) -> dict:
    """Load, split, fit and evaluate one run; return the outcome fields."""
    started = time.perf_counter()
    dataset = load_dataset(run["dataset"])
    train, test = fold_indices(dataset.y, run["n_folds"], run["fold"], run["seed"])
    method = get_method(run["method"])
    X_train, X_test, _ = prepare_data(
        dataset, method, train, test, run.get("max_thresholds")
    )
    y_train, y_test = dataset.y[train], dataset.y[test]
    estimator = method.make(
        max_depth=run["depth"],
        time_limit=run["time_limit"],
        random_state=run["seed"],
        **run["params"],
    )
    rss_before = _maxrss_mb()
    t0 = time.perf_counter()
    estimator.fit(X_train, y_train)
    fit_time = time.perf_counter() - t0
    rss_after = _maxrss_mb()
    t0 = time.perf_counter()
    train_pred = estimator.predict(X_train)
    test_pred = estimator.predict(X_test)
    predict_time = time.perf_counter() - t0
    tree = getattr(estimator, "tree_", None)
    stats = dict(getattr(estimator, "stats_", {}) or {})
    forest = getattr(estimator, "estimators_", None)
    if forest is not None:
        stats["n_trees"] = len(forest)
    objective = getattr(estimator, "objective_", None)
    lower_bound = getattr(estimator, "lower_bound_", None)
    return {
        "status": "ok",
        "learner_status": getattr(estimator, "status_", None),
        "train_acc": float(np.mean(train_pred == y_train)),
        "test_acc": float(np.mean(test_pred == y_test)),
        "objective": None if objective is None else float(objective),
        "lower_bound": None if lower_bound is None else float(lower_bound),
        "optimal": bool(getattr(estimator, "optimal_", False)),
        "n_leaves": None if tree is None else int(tree.n_leaves),
        "tree_depth": None if tree is None else int(tree.depth),
        "fit_time_s": fit_time,
        "predict_time_s": predict_time,
        "wall_time_s": time.perf_counter() - started,
        "peak_rss_mb": rss_after,
        "fit_rss_mb": max(0.0, rss_after - rss_before),
        "n_train": len(train),
        "n_test": len(test),
        "n_features": X_train.shape[1],
        "stats": {k: v for k, v in stats.items() if _is_plain(v)},
        "error": None,
    }


def _is_plain(value) -> bool:
    return isinstance(value, (int, float, str, bool, type(None), list, tuple, dict))


def child_main(fd: int, run: dict) -> None:
    """Entry point of a worker process: run, send the outcome, exit."""
    faulthandler.disable()  # a crash is recorded from the exit signal instead
    limit = run.get("memory_limit_mb")
    if limit:
        nbytes = int(float(limit) * 1024 * 1024)
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    try:
        outcome = execute_run(run)
    except MemoryError:
        outcome = {"status": "memout", "error": "MemoryError: memory limit reached"}
    except BaseException as exc:  # the run's failure is the record, not a crash
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        outcome = {"status": "error", "error": last[:2000]}
    payload = pickle.dumps(outcome)
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(payload)
