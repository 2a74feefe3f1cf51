"""Run a study: every (dataset, method, depth, fold, seed) in its own process.

Each run gets a hard wall-clock deadline (the learner's time limit plus a
grace period) and its peak RSS measured; a crash, a kill or a memory-out is
recorded as such and the study goes on. Records are appended to
``<output>/<study>/results.csv`` keyed by a hash of the run's identity, so
running the same study again only runs what is missing.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import platform
import signal
import socket
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import psutil

from odtstudy.study._worker import child_main
from odtstudy.study.config import StudyConfig
from odtstudy.study.results import ResultsStore

__all__ = ["expand_runs", "run_study"]

_VERSIONED = (
    "odtstudy",
    "numpy",
    "scikit-learn",
    "pandas",
    "pulp",
    "highspy",
    "ortools",
    "deap",
)


def package_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _run_id(run: dict) -> str:
    identity = {
        k: run[k]
        for k in (
            "study",
            "dataset",
            "method",
            "base_method",
            "params",
            "depth",
            "fold",
            "n_folds",
            "seed",
            "time_limit",
            "max_thresholds",
        )
    }
    text = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand_runs(config: StudyConfig) -> list:
    """The study's grid as a list of run dicts (each with its ``run_id``)."""
    runs = []
    for dataset in config.datasets:
        for spec in config.methods:
            for depth in config.depths:
                for seed in config.seeds:
                    for fold in range(config.folds):
                        run = {
                            "study": config.name,
                            "dataset": dataset,
                            "method": spec.label,
                            "base_method": spec.method,
                            "params": spec.params,
                            "depth": int(depth),
                            "fold": fold,
                            "n_folds": config.folds,
                            "seed": int(seed),
                            "time_limit": float(spec.time_limit or config.time_limit),
                            "max_thresholds": config.max_thresholds,
                            "memory_limit_mb": config.memory_limit_mb,
                        }
                        run["run_id"] = _run_id(run)
                        runs.append(run)
    return runs


class _Active:
    """A run in flight: its process, pipe, deadline and observed peak RSS."""

    def __init__(self, run, context, grace):
        self.run = run
        parent_conn, child_conn = context.Pipe(duplex=False)
        worker_run = dict(run, method=run["base_method"])
        self.process = context.Process(
            target=child_main, args=(child_conn, worker_run), daemon=True
        )
        self.started = time.perf_counter()
        self.process.start()
        child_conn.close()
        self.conn = parent_conn
        self.deadline = self.started + run["time_limit"] + grace
        self.peak_rss_mb = 0.0
        self.outcome = None
        try:
            self._ps = psutil.Process(self.process.pid)
        except psutil.Error:
            self._ps = None

    def sample_memory(self):
        if self._ps is None:
            return
        try:
            rss = self._ps.memory_info().rss / 2**20
        except psutil.Error:
            return
        self.peak_rss_mb = max(self.peak_rss_mb, rss)

    def poll(self):
        """Return the outcome dict when the run is over, else ``None``."""
        if self.conn.poll():
            try:
                self.outcome = self.conn.recv()
            except (EOFError, OSError):
                self.outcome = None
            self.process.join(timeout=5)
            if self.process.is_alive():
                self.process.kill()
            return self._finish()
        if not self.process.is_alive():
            return self._finish()
        if time.perf_counter() > self.deadline:
            self.process.kill()
            self.process.join()
            return {
                "status": "timeout",
                "error": (
                    f"killed after {time.perf_counter() - self.started:.1f} s "
                    f"(time limit {self.run['time_limit']} s + grace)"
                ),
                "wall_time_s": time.perf_counter() - self.started,
                "peak_rss_mb": self.peak_rss_mb or None,
            }
        return None

    def _finish(self):
        wall = time.perf_counter() - self.started
        if self.outcome is None:
            code = self.process.exitcode
            if code is not None and code < 0:
                cause = f"signal {signal.Signals(-code).name}"
            else:
                cause = f"exit code {code}"
            if code == -signal.SIGKILL:
                cause += ", e.g. the kernel's out-of-memory killer"
            return {
                "status": "error",
                "error": f"worker process died ({cause}) before reporting",
                "wall_time_s": wall,
                "peak_rss_mb": self.peak_rss_mb or None,
            }
        outcome = dict(self.outcome)
        outcome.setdefault("wall_time_s", wall)
        if outcome.get("peak_rss_mb") is None:
            outcome["peak_rss_mb"] = self.peak_rss_mb or None
        return outcome


class _Progress:
    def __init__(self, total, quiet):
        self.total, self.done, self.quiet = total, 0, quiet
        self.start = time.perf_counter()

    def update(self, run, status, seconds):
        self.done += 1
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(
            f"[{self.done}/{self.total} ETA {eta:5.0f}s] {run['dataset']} "
            f"{run['method']} depth={run['depth']} fold={run['fold']}: "
            f"{status} ({seconds:.2f}s)",
            file=sys.stderr,
            flush=True,
        )


def run_study(
    config: StudyConfig,
    output_dir="reports",
    workers: int | None = None,
    retry_failed: bool = False,
    quiet: bool = False,
    poll_interval: float = 0.02,
) -> ResultsStore:
    """Run every missing run of ``config``; return the study's results store.

    Parameters
    ----------
    config : StudyConfig
    output_dir : path, default="reports"
        Results go to ``<output_dir>/<config.name>/results.csv``.
    workers : int, default=None
        Runs executed at the same time (one process each); ``None`` takes the
        config's ``workers``. Timings are only comparable between runs made
        at the same parallelism.
    retry_failed : bool, default=False
        Also re-run runs recorded as error/timeout/memout.
    quiet : bool, default=False
        No progress lines on stderr.
    """
    config.validate()
    workers = config.workers if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    store = ResultsStore(Path(output_dir) / config.name)
    runs = expand_runs(config)
    if retry_failed:
        done = (
            set(store.load().query("status == 'ok'")["run_id"])
            if store.path.exists()
            else set()
        )
    else:
        done = store.run_ids()
    pending = [run for run in runs if run["run_id"] not in done]
    common = {
        "versions": package_versions(),
        "host": socket.gethostname(),
        "config_hash": config.config_hash(),
    }
    context = multiprocessing.get_context("fork")
    progress = _Progress(len(pending), quiet)
    active: list[_Active] = []
    queue = list(pending)
    while queue or active:
        while queue and len(active) < workers:
            active.append(_Active(queue.pop(0), context, config.grace_s))
        time.sleep(poll_interval)
        for item in list(active):
            item.sample_memory()
            outcome = item.poll()
            if outcome is None:
                continue
            active.remove(item)
            record = _record(item.run, outcome, common)
            store.append(record)
            progress.update(item.run, record["status"], record["wall_time_s"] or 0)
    return store


def _record(run: dict, outcome: dict, common: dict) -> dict:
    record = {
        key: run[key]
        for key in (
            "run_id",
            "study",
            "dataset",
            "method",
            "params",
            "depth",
            "fold",
            "n_folds",
            "seed",
            "time_limit",
        )
    }
    record.update(outcome)
    record.update(common)
    record["utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return record
