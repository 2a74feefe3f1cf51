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
import os
import pickle
import platform
import select
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
from odtstudy.study.results import IDENTITY_COLUMNS, ResultsStore

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
    """A run in flight in a forked process: pipe, deadline, observed peak RSS.

    Plain ``os.fork`` (not ``multiprocessing``) so that runs can also be
    started from daemonic processes such as Dask workers.
    """

    def __init__(self, run, grace):
        self.run = run
        read_fd, write_fd = os.pipe()
        worker_run = dict(run, method=run["base_method"])
        self.started = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            code = 1
            try:
                os.close(read_fd)
                child_main(write_fd, worker_run)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        self.pid = pid
        self.fd = read_fd
        self.buffer = bytearray()
        self.exit_status = None
        self.deadline = self.started + run["time_limit"] + grace
        self.peak_rss_mb = 0.0
        try:
            self._ps = psutil.Process(pid)
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

    def _drain(self) -> bool:
        """Read what the worker wrote; True once its end of the pipe closed."""
        while select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return True
            self.buffer += chunk
        return False

    def _reap(self, block=False) -> bool:
        if self.exit_status is None:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            if pid == self.pid:
                self.exit_status = status
        return self.exit_status is not None

    def poll(self):
        """Return the outcome dict when the run is over, else ``None``."""
        closed = self._drain()
        if closed or self._reap():
            if not closed:
                self._drain()
            self._reap(block=True)
            os.close(self.fd)
            return self._finish()
        if time.perf_counter() > self.deadline:
            os.kill(self.pid, signal.SIGKILL)
            self._reap(block=True)
            os.close(self.fd)
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
        try:
            outcome = pickle.loads(bytes(self.buffer)) if self.buffer else None
        except Exception:
            outcome = None
        if outcome is None:
            status = self.exit_status
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                cause = f"signal {signal.Signals(sig).name}"
                if sig == signal.SIGKILL:
                    cause += ", e.g. the kernel's out-of-memory killer"
            else:
                cause = f"exit code {os.WEXITSTATUS(status)}"
            return {
                "status": "error",
                "error": f"worker process died ({cause}) before reporting",
                "wall_time_s": wall,
                "peak_rss_mb": self.peak_rss_mb or None,
            }
        outcome.setdefault("wall_time_s", wall)
        if outcome.get("peak_rss_mb") is None:
            outcome["peak_rss_mb"] = self.peak_rss_mb or None
        return outcome


def run_isolated(run: dict, grace: float, poll_interval: float = 0.02) -> dict:
    """Execute one run in its own process and wait for its outcome.

    This is the task a Dask worker executes: the same isolation, hard
    deadline and memory measurement as the local runner.
    """
    active = _Active(run, grace)
    while True:
        active.sample_memory()
        outcome = active.poll()
        if outcome is not None:
            return outcome
        time.sleep(poll_interval)


class _Progress:
    """Runs done / total, ETA and the runs in flight, on stderr.

    On a terminal the line is redrawn in place; otherwise (CI, logs) one line
    is printed per finished run.
    """

    def __init__(self, total, quiet):
        self.total, self.done, self.quiet = total, 0, quiet
        self.start = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def update(self, run, status, seconds, running=()):
        self.done += 1
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        width = 20
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        last = (
            f"{run['dataset']} {run['method']} d={run['depth']} f={run['fold']}: "
            f"{status} ({seconds:.1f}s)"
        )
        now = ", ".join(f"{r['dataset']} {r['method']} d={r['depth']}" for r in running)
        line = f"[{bar}] {self.done}/{self.total} ETA {eta:4.0f}s | {last}"
        if now:
            line += f" | running: {now}"
        if self.tty:
            end = "\n" if self.done == self.total else ""
            print(f"\r\x1b[K{line}", end=end, file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


def run_study(
    config: StudyConfig,
    output_dir="reports",
    workers: int | None = None,
    retry_failed: bool = False,
    quiet: bool = False,
    scheduler: str | None = None,
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
    scheduler : str, default=None
        Address of a Dask distributed scheduler (``tcp://host:port``) or a
        ``distributed.Client``: runs are then executed on its workers (each
        still in its own process with the same deadline), records are written
        here. Needs the ``dask`` extra on this machine and the workers.
    """
    config.validate()
    workers = config.workers if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    client = _dask_client(scheduler) if scheduler is not None else None
    store = ResultsStore(Path(output_dir) / config.name)
    runs = expand_runs(config)
    if retry_failed and store.path.exists():
        done = set(store.load().query("status == 'ok'")["run_id"])
    else:
        done = store.run_ids()
    pending = [run for run in runs if run["run_id"] not in done]
    common = {
        "versions": package_versions(),
        "host": socket.gethostname(),
        "config_hash": config.config_hash(),
    }
    progress = _Progress(len(pending), quiet)

    def record(run, outcome, running=()):
        row = _record(run, outcome, common)
        store.append(row)
        progress.update(run, row["status"], row["wall_time_s"] or 0, running)

    if client is not None:
        _run_on_dask(client, pending, config.grace_s, record)
        return store
    active: list[_Active] = []
    queue = list(pending)
    while queue or active:
        while queue and len(active) < workers:
            active.append(_Active(queue.pop(0), config.grace_s))
        time.sleep(poll_interval)
        for item in list(active):
            item.sample_memory()
            outcome = item.poll()
            if outcome is not None:
                active.remove(item)
                record(item.run, outcome, [a.run for a in active])
    return store


def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "--scheduler needs Dask distributed: pip install 'odtstudy[dask]'"
        ) from None
    if isinstance(scheduler, Client):
        return scheduler
    try:
        return Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(
            f"cannot reach the Dask scheduler at {scheduler!r}: {exc}"
        ) from None


def _run_on_dask(client, runs, grace, record):
    from distributed import as_completed

    futures = {
        client.submit(
            run_isolated, run, grace, pure=False, key=f"run-{run['run_id']}"
        ): run
        for run in runs
    }
    for future in as_completed(futures):
        run = futures[future]
        try:
            outcome = future.result()
        except Exception as exc:  # the Dask worker itself failed
            outcome = {"status": "error", "error": f"Dask task failed: {exc!r}"}
        record(run, outcome)


def _record(run: dict, outcome: dict, common: dict) -> dict:
    record = {key: run[key] for key in IDENTITY_COLUMNS}
    record.update(outcome)
    record.update(common)
    record["utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return record
