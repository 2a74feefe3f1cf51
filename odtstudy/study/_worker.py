"""One run of a study (one method, dataset, depth, fold, seed), in a worker process.

The worker talks to the runner over a pipe in frames (:func:`send_frame`):
``("fit_start", {...})`` when ``fit`` begins, ``("incumbent", {...})`` each
time the learner reports a better tree, and ``("outcome", {...})`` at the end.
A run killed at its hard deadline is recorded from the last incumbent.
"""

from __future__ import annotations

import faulthandler
import math
import os
import pickle
import resource
import signal
import struct
import time
import traceback

import numpy as np
import pandas as pd

from odtstudy._deadline import allowed_fit_time
from odtstudy._incumbent import listening
from odtstudy._isolation import use_temp_dir
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.study import _memory, _tuning
from odtstudy.study._folds import TEST_FILE, kfold_splits
from odtstudy.study._regression_scores import (
    family_loss,
    pinball_taus,
    regression_scores,
)
from odtstudy.study._solver_tree import has_solver_tree
from odtstudy.study.config import _cache_fraction
from odtstudy.study.registry import get_method

__all__ = ["allowed_fit_time", "execute_run", "fold_indices", "prepare_data"]

_FRAME = struct.Struct("!I")


def send_frame(fd: int, kind: str, payload: dict) -> None:
    """Write one length-prefixed pickled ``(kind, payload)`` frame to ``fd``."""
    data = pickle.dumps((kind, payload))
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frames(buffer: bytearray) -> list:
    """Remove and return the complete frames at the start of ``buffer``."""
    frames = []
    while len(buffer) >= _FRAME.size:
        (size,) = _FRAME.unpack_from(buffer)
        if len(buffer) < _FRAME.size + size:
            break
        data = bytes(buffer[_FRAME.size : _FRAME.size + size])
        del buffer[: _FRAME.size + size]
        try:
            frames.append(pickle.loads(data))
        except Exception:  # a frame cut by a kill: nothing to use
            continue
    return frames


def fold_indices(y, n_folds, fold, seed, task="classification"):
    """Train/test row indices of one stratified fold (plain shuffled k-fold
    for regression, or if a class is too small to be stratified). With one
    fold, both are all the rows: the papers' training-objective comparisons."""
    if n_folds == 1:
        rows = np.arange(len(y))
        return rows, rows
    splits = kfold_splits(y, n_folds, seed, task)
    if not 0 <= fold < len(splits):
        raise ValueError(f"fold {fold} out of range for {n_folds} folds")
    return splits[fold]


def _run_rows(run):
    """The run's dataset and its training and test row indices: a fold of
    the rows, or (``split = "test-file"``) the training file's rows and the
    held-out test file's."""
    if run.get("split") == TEST_FILE:
        dataset = load_dataset(run["dataset"], test_file=True)
        rows = np.arange(len(dataset.y))
        return dataset, rows[: dataset.n_train], rows[dataset.n_train :]
    dataset = load_dataset(run["dataset"])
    train, test = fold_indices(
        dataset.y, run["n_folds"], run["fold"], run["seed"], dataset.task
    )
    return dataset, train, test


def prepare_data(dataset, method, train, test, max_thresholds, params=None):
    """Train/test matrices in the form the method accepts with ``params``.

    0/1-only methods get binarised data (thresholds fitted on the training
    rows only); other methods get numeric data, with categorical columns
    one-hot encoded (the categories of the training rows: a category seen
    only in the test rows is all zeros).
    """
    binary = method.data_for(params) == "binary"
    if dataset.categorical:
        return _prepare_user_table(dataset, binary, train, test, max_thresholds)
    X = dataset.X
    needs_binary = binary and dataset.kind != "binary"
    if needs_binary or dataset.kind == "categorical":
        frame = pd.DataFrame(X, columns=dataset.feature_names)
        if dataset.kind != "categorical":
            frame = frame.astype(float)
        binarizer = Binarizer(max_thresholds=max_thresholds if needs_binary else None)
        binarizer.fit(frame.iloc[train])
        Xb = binarizer.transform(frame)
        return Xb[train], Xb[test], list(binarizer.get_feature_names_out())
    return X[train], X[test], list(dataset.feature_names)


def _prepare_user_table(dataset, binary, train, test, max_thresholds):
    """:func:`prepare_data` for a user table with named categorical columns:
    those are one-hot encoded; numeric columns are binarised for 0/1-only
    methods and kept as they are for the others."""
    frame = pd.DataFrame(dataset.X, columns=dataset.feature_names)
    categorical = list(dataset.categorical)
    numeric = [c for c in frame.columns if c not in categorical]
    frame[numeric] = frame[numeric].astype(float)
    frame[categorical] = frame[categorical].astype(str)
    columns = list(frame.columns) if binary else categorical
    binarizer = Binarizer(
        max_thresholds=max_thresholds, categorical_features=categorical
    ).fit(frame.iloc[train][columns])
    X = np.asarray(binarizer.transform(frame[columns]), dtype=np.uint8)
    names = list(binarizer.get_feature_names_out())
    if not binary:
        X = np.hstack([frame[numeric].to_numpy(dtype=np.float64), X])
        names = numeric + names
    return X[train], X[test], names


def _predictions(
    estimator, X, rows: str, task="classification", columns=1
) -> np.ndarray:
    """``estimator.predict(X)``, checked to be one label (a regressor: one
    finite number, or ``columns`` of them for a family of several quantiles)
    per row (a user's learner may return anything; NumPy would broadcast a
    column)."""
    pred = estimator.predict(X)
    shape = np.shape(pred)
    learner = type(estimator).__name__
    regression = task == "regression"
    expected = (len(X),) if columns == 1 else (len(X), columns)
    if shape != expected:
        what = "a regressor's predict must return one value"
        if columns > 1:
            what = f"a regressor of {columns} quantiles must return {columns} values"
        if not regression:
            what = "a classifier's predict must return one label"
        raise ValueError(
            f"{learner}.predict returned {type(pred).__name__} of shape {shape} "
            f"on the {len(X)} {rows} rows; {what} per row, shape {expected}"
        )
    if not regression:
        return np.asarray(pred)
    try:
        values = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or not np.isfinite(values).all():
        raise ValueError(
            f"{learner}.predict returned a value that is not a finite number on "
            f"the {rows} rows; a regressor's predict must return one number per row"
        )
    return values


def _fitted_outcome(estimator, train_pred, y_train, family=None) -> dict:
    """What a fitted learner says about its fit, as outcome fields.

    odtstudy's learners (and subclasses of their bases) expose the common
    contract (:mod:`odtstudy.base`): ``tree_`` (``None`` for a forest; a
    single-tree learner that found no tree has already failed in
    ``predict``), ``n_trees_``, ``objective_``, ``lower_bound_``,
    ``optimal_``, ``status_``, ``stats_``. A user's plain scikit-learn
    classifier has none of them: its objective is its training
    misclassifications (a regressor, given its objective ``family``: the
    training loss of the family) and nothing is claimed.
    """
    if not hasattr(estimator, "n_trees_"):
        shape, stats = (None, None), {}
        if hasattr(estimator, "get_n_leaves") and hasattr(estimator, "get_depth"):
            shape = (int(estimator.get_n_leaves()), int(estimator.get_depth()))
        if hasattr(estimator, "estimators_"):  # a scikit-learn ensemble
            stats["n_trees"] = len(estimator.estimators_)
        if family is None:
            objective = float(np.sum(train_pred != y_train))
        else:
            objective = family_loss(family, y_train, train_pred)
        return {
            "learner_status": None,
            "objective": objective,
            "lower_bound": None,
            "claimed_optimal": False,
            "n_leaves": shape[0],
            "tree_depth": shape[1],
            "stats": stats,
        }
    tree = estimator.tree_
    stats = dict(estimator.stats_)
    if tree is None:  # a forest: the records tell forests by this entry
        stats["n_trees"] = estimator.n_trees_
    objective, lower_bound = estimator.objective_, estimator.lower_bound_
    if np.ndim(objective):
        objective, lower_bound = _per_quantile(stats, objective, lower_bound)
    return {
        "learner_status": estimator.status_,
        "objective": None if objective is None else float(objective),
        "lower_bound": None if lower_bound is None else float(lower_bound),
        "claimed_optimal": bool(estimator.optimal_),
        "n_leaves": None if tree is None else int(tree.n_leaves),
        "tree_depth": None if tree is None else int(tree.depth),
        "stats": stats,
    }


def _per_quantile(stats, objectives, lower_bounds) -> tuple:
    """The objective and lower bound of a fit of several quantiles (one
    each per tau): their sums, the family's loss; ``stats`` gets each tau's
    (``objective_per_quantile``, ``lower_bound_per_quantile``) and loses
    ``anytime``, the first tau's trace alone (``anytime_per_quantile`` has
    every tau's)."""
    stats["objective_per_quantile"] = [float(v) for v in objectives]
    stats.pop("anytime", None)
    if lower_bounds is None:
        return math.fsum(objectives), None
    stats["lower_bound_per_quantile"] = [float(v) for v in lower_bounds]
    return math.fsum(objectives), math.fsum(lower_bounds)


def _scores(task, family, y_train, train_pred, y_test, test_pred) -> dict:
    """A run's accuracy (classification) or regression errors, and its task."""
    if task == "regression":
        scores = regression_scores(family, y_train, train_pred, y_test, test_pred)
        return {"task": task, "train_acc": None, "test_acc": None, **scores}
    return {
        "task": task,
        "train_acc": float(np.mean(train_pred == y_train)),
        "test_acc": float(np.mean(test_pred == y_test)),
    }


class _TreeScorer:
    """Scores of an incumbent tree: accuracy of a tree given as class indices
    into the sorted training labels, or the errors of a regression tree (its
    leaf values)."""

    def __init__(self, X_train, y_train, X_test, y_test, labels, task):
        self.data = (X_train, y_train, X_test, y_test)
        self.task = task
        self.classes = None if task == "regression" else np.unique(y_train)
        self.labels = labels  # the run's tool and objective family

    def __call__(self, tree, objective, lower_bound) -> dict:
        X_train, y_train, X_test, y_test = self.data
        train_pred, test_pred = tree.predict(X_train), tree.predict(X_test)
        if self.classes is not None:
            train_pred, test_pred = self.classes[train_pred], self.classes[test_pred]
        family = self.labels["objective_family"]
        return {
            **_scores(self.task, family, y_train, train_pred, y_test, test_pred),
            "objective": None if objective is None else float(objective),
            "lower_bound": None if lower_bound is None else float(lower_bound),
            "n_leaves": int(tree.n_leaves),
            "tree_depth": int(tree.depth),
            **self.labels,
        }


def execute_run(run: dict, fd: int | None = None) -> dict:
    """Load, split, fit and evaluate one run; return the outcome fields.

    With ``fd``, the fit's start and the learner's incumbents are sent as
    frames on it while the fit runs.
    """
    started = time.perf_counter()
    dataset, train, test = _run_rows(run)
    task = dataset.task
    method = get_method(run["method"])
    X_train, X_test, _ = prepare_data(
        dataset, method, train, test, run.get("max_thresholds"), run["params"]
    )
    y_train, y_test = dataset.y[train], dataset.y[test]
    fraction, params = _cache_fraction.split(run["params"])

    def make(params, depth=run["depth"]):
        return method.make(
            max_depth=depth,
            time_limit=run["time_limit"],
            random_state=run["seed"],
            **params,
        )

    bound = {}
    if fraction is not None:
        if fd is not None:
            send_frame(fd, "probe_start", {})
        unbounded = dict(params)
        bound = _cache_fraction.resolve(
            fraction,
            lambda: make(unbounded),
            X_train,
            y_train,
            allowed_fit_time(run["time_limit"]),
        )
        params = {**params, _cache_fraction.BOUND: bound[_cache_fraction.BOUND]}
    tuning = {}
    if run.get("tune"):

        def tune_fit_start():
            if fd is not None:
                send_frame(fd, "tune_fit_start", {})

        def candidate(max_depth, **tuned):
            return make({**params, **tuned}, max_depth)

        best, tuning = _tuning.select(
            candidate, X_train, y_train, run["tune"], run["depth"], run["seed"],
            task, tune_fit_start,
        )  # fmt: skip
        estimator = candidate(**best)
    else:
        estimator = make(params)
    labels = {
        "tool": method.tool(),
        "objective_family": method.objective_family(run["params"]),
    }
    scorer = _TreeScorer(X_train, y_train, X_test, y_test, labels, task)
    memory = _memory.FitMemory()
    if fd is not None:
        send_frame(fd, "fit_start", {"rss_mb": memory.rss_before_mb})
    cpu0, steal0 = _cpu_seconds(), _steal_seconds()
    t0 = time.perf_counter()

    def on_incumbent(tree, objective, lower_bound):
        if fd is not None:
            fields = scorer(tree, objective, lower_bound)
            send_frame(fd, "incumbent", dict(fields, time_s=time.perf_counter() - t0))

    with memory, listening(estimator, on_incumbent):
        estimator.fit(X_train, y_train)
    fit_time = time.perf_counter() - t0
    cpu_time = _cpu_seconds() - cpu0
    steal = None if steal0 is None else _steal_seconds() - steal0
    # an adapter may refine its family at fit time (a penalty scaled to n)
    family = getattr(estimator, "objective_family_", labels["objective_family"])
    taus = pinball_taus(family) if task == "regression" else None
    columns = len(taus) if taus else 1
    t0 = time.perf_counter()
    train_pred = _predictions(estimator, X_train, "training", task, columns)
    test_pred = _predictions(estimator, X_test, "test", task, columns)
    predict_time = time.perf_counter() - t0
    recount = family if task == "regression" else None
    fitted = _fitted_outcome(estimator, train_pred, y_train, recount)
    claimed = fitted["claimed_optimal"]
    optimal = claimed and fit_time <= allowed_fit_time(run["time_limit"])
    return {
        "status": "ok",
        "tool": labels["tool"],
        "objective_family": family,
        "has_tree": True,
        **_scores(task, family, y_train, train_pred, y_test, test_pred),
        **fitted,
        "optimal": optimal,
        "has_solver_tree": has_solver_tree(
            fitted["stats"], "ok", fit_time, run["time_limit"], optimal
        ),
        "fit_time_s": fit_time,
        "cpu_time_s": cpu_time,
        "predict_time_s": predict_time,
        "wall_time_s": time.perf_counter() - started,
        "solver_time_s": fitted["stats"].get("solver_time_s", fit_time),
        "fit_mem_mb": memory.fit_mb,
        "peak_rss_mb": memory.peak_rss_mb,
        "n_train": len(train),
        "n_test": len(test),
        "n_features": X_train.shape[1],
        "stats": {
            **{k: v for k, v in fitted["stats"].items() if _is_plain(v)},
            **bound,
            **tuning,
            **({} if steal is None else {"machine_steal_s": round(steal, 3)}),
        },
        "error": None,
    }


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and of
    its children reaped so far (a solver the learner forked or spawned)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _steal_seconds() -> float | None:
    """The machine's steal time so far (seconds over all CPUs: time the
    hypervisor gave to others), ``None`` where the OS does not report it."""
    import psutil

    steal = getattr(psutil.cpu_times(), "steal", None)
    return None if steal is None else float(steal)


def _is_plain(value) -> bool:
    return isinstance(value, (int, float, str, bool, type(None), list, tuple, dict))


def _limit_memory(limit_mb) -> str | None:
    """Apply ``RLIMIT_AS``; return an error message if the limit cannot hold."""
    mapped = _memory.mapped_mb()
    if float(limit_mb) <= mapped:
        return (
            f"memory_limit_mb = {limit_mb} is below the {mapped:.0f} MB of address "
            f"space a worker maps before loading data; raise memory_limit_mb to "
            f"at least {mapped + 512:.0f} or remove it"
        )
    nbytes = int(float(limit_mb) * 2**20)
    resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return None


def child_main(fd: int, run: dict, tmpdir: str | None = None) -> None:
    """Entry point of a worker process: run, send the outcome, exit.

    The worker leads its own session, so the runner can kill it together with
    every solver process it started; solvers' temporary files go to
    ``tmpdir``, which the runner removes.
    """
    os.setsid()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    faulthandler.disable()  # a crash is recorded from the exit signal instead
    if tmpdir is not None:
        use_temp_dir(tmpdir)
    problem = (
        _limit_memory(run["memory_limit_mb"]) if run.get("memory_limit_mb") else None
    )
    if problem:
        outcome = {"status": "error", "error": problem}
    else:
        try:
            outcome = execute_run(run, fd)
        except MemoryError:
            outcome = {"status": "memout", "error": "MemoryError: memory limit reached"}
        except BaseException as exc:  # the run's failure is the record, not a crash
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            outcome = {"status": "error", "error": last[:2000]}
    send_frame(fd, "outcome", outcome)
    os.close(fd)
