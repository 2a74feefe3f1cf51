"""Run a study: every (dataset, method, depth, fold, seed) in its own process.

Each run is a forked worker leading its own session, with a hard wall-clock
deadline (the learner's allowed time plus a grace period); the runner kills
the worker's whole process group (solver children included) at the deadline
and removes the solvers' temporary files. A killed run keeps the best tree
the learner reported before. Records go to ``<folder>/results.jsonl`` keyed
by a hash of the run's identity and its protocol, so running the same study
again only runs what is missing, and runs of another protocol never count as
done. SIGINT / SIGTERM stop the study cleanly: running groups are killed,
finished records are kept, and :class:`StudyInterrupted` says how to resume.

With ``repeats = N``, each run is fitted up to N times, each time in a fresh
worker, the methods of one (dataset, depth, fold, seed) interleaved: repeat 1
of every method, then repeat 2, ... Only fits that end, before their limit
and in under :data:`REPEAT_BELOW_S` seconds, are repeated: a repeat measures
the noise of a short time, and a time-out's time is its limit (a fit that
stops repeating is recorded with the repeats it had). Its record, written
when its last repeat ends, lists every repeat's fit time, CPU time and status
(``fit_times_s``, ``cpu_times_s``, ``repeat_statuses``); ``fit_time_s`` and
``cpu_time_s`` are their medians, and the other fields those of the
lower-median repeat by fit time. Every record carries the ``provenance`` of
the code and the machine (:mod:`odtstudy.study._provenance`), taken once when
the runner starts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import psutil

from odtstudy._deadline import allowed_fit_time
from odtstudy._isolation import GroupChild, GroupGuard
from odtstudy.datasets._user import held_out_entry, user_dataset, user_source
from odtstudy.study import _memory, _provenance
from odtstudy.study._folds import split_of
from odtstudy.study._provenance import package_versions
from odtstudy.study._worker import child_main, read_frames
from odtstudy.study.config import StudyConfig
from odtstudy.study.registry import get_method
from odtstudy.study.results import (
    IDENTITY_COLUMNS,
    TASK_COLUMN,
    TOOL_COLUMNS,
    ResultsStore,
    StudyLock,
)

#: Fits that end sooner than this (and before their time limit) are repeated
#: ``repeats`` times; longer ones and time-outs are timed once.
REPEAT_BELOW_S = 60.0

__all__ = [
    "StudyInterrupted",
    "expand_runs",
    "protocol_of",
    "run_study",
    "study_folder",
]

#: Seconds to wait for a Dask scheduler to have at least one worker.
DASK_WORKER_TIMEOUT_S = 30.0


class StudyInterrupted(RuntimeError):
    """The study was stopped by a signal; finished records are kept."""

    def __init__(self, signum, recorded, pending):
        self.signum, self.recorded, self.pending = signum, recorded, pending
        name = signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name}: {recorded} runs recorded this time, "
            f"{pending} not run"
        )


def study_folder(output_dir, name: str, scale: str = "default") -> Path:
    """Folder of a study's records and report: ``<output>/<name>[-<scale>]``.

    The default scale uses the plain name; other scales get their own folder,
    so a smoke run never lands beside the full study.
    """
    return Path(output_dir) / (name if scale == "default" else f"{name}-{scale}")


def protocol_of(config: StudyConfig) -> dict:
    """Everything that changes the meaning of a recorded number.

    The scale, folds, seeds, repeats, time limits, grace, memory limit, the
    binarisation of numeric data, every method with its full parameters, the
    versions of the learners' packages and the source revision of odtstudy
    (:func:`odtstudy.study._provenance.current_revision`). Datasets and
    depths are not part of it: adding one extends the same comparison. The
    machine, its load and ``workers`` are not either; every record's
    ``provenance`` holds them.
    """
    methods = {}
    for spec in config.methods:
        method = get_method(spec.method)
        methods[spec.label] = {
            "method": spec.method,
            "target": _target_name(method.target),
            "data": method.data_for(spec.params),
            "params": {**method.defaults, **spec.params},
            "time_limit": float(spec.time_limit or config.time_limit),
        }
        if spec.tune is not None:  # a tuned learner is another comparison
            methods[spec.label]["tune"] = spec.tune
        if method.user:  # another class behind the same path is another learner
            methods[spec.label]["source_sha256"] = _module_source_digest(method)
    protocol = {
        "scale": config.scale,
        "folds": int(config.folds),
        "seeds": [int(s) for s in config.seeds],
        "repeats": int(config.repeats),
        **({"repeat_below_s": REPEAT_BELOW_S} if config.repeats > 1 else {}),
        "time_limit": float(config.time_limit),
        "grace_s": float(config.grace_s),
        "memory_limit_mb": config.memory_limit_mb,
        "max_thresholds": config.max_thresholds,
        "methods": methods,
        "versions": package_versions(),
        "source_revision": _provenance.current_revision(),
    }
    user_tables = {
        name: user_source(spec)
        for name in config.datasets
        if (spec := user_dataset(name)) is not None
    }
    if user_tables:  # a changed file changes the meaning of its numbers
        protocol["user_datasets"] = user_tables
    held_out = _held_out_files(config)
    if held_out:
        protocol["held_out_files"] = held_out
    if config.task != "classification":  # classification protocols unchanged
        protocol["task"] = config.task
    return protocol


def _held_out_files(config: StudyConfig) -> dict:
    """Dataset name -> its training and test files and their rows, for the
    user tables of ``config`` with a held-out test file."""
    entries = {}
    for name in config.datasets:
        spec = user_dataset(name)
        entry = None if spec is None else held_out_entry(spec)
        if entry is not None:
            entries[name] = entry
    return entries


def _module_source_digest(method) -> str:
    """SHA-256 of the source file of the module a user method imports."""
    name = _target_name(method.target).partition(":")[0]
    path = getattr(sys.modules.get(name), "__file__", None)
    if path is None:
        spec = importlib.util.find_spec(name)
        path = None if spec is None else spec.origin
    if not path or not Path(path).is_file():
        return "unknown"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _target_name(target) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", "?")
    return f"{module}:{getattr(target, '__qualname__', target)}"


def _digest(data, length) -> str:
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def expand_runs(config: StudyConfig) -> list:
    """The study's grid as a list of run dicts (each with ``run_id`` and
    ``protocol_id``)."""
    protocol = protocol_of(config)
    protocol_id = _digest(protocol, 12)
    labels = {}
    for spec in config.methods:
        method = get_method(spec.method)
        labels[spec.label] = (method.tool(), method.objective_family(spec.params))
    runs = []
    held_out = protocol.get("held_out_files", {})
    for dataset, spec, depth, seed, fold in _cells(config, held_out):
        method = protocol["methods"][spec.label]
        n_folds = 1 if dataset in held_out else config.folds
        run = {
            "protocol_id": protocol_id,
            "tool": labels[spec.label][0],
            "objective_family": labels[spec.label][1],
            "study": config.name,
            "scale": config.scale,
            "task": config.task,
            "dataset": dataset,
            "method": spec.label,
            "base_method": spec.method,
            "params": spec.params,
            "depth": int(depth),
            "fold": fold,
            "n_folds": n_folds,
            "split": split_of(n_folds, dataset in held_out),
            "seed": int(seed),
            "time_limit": method["time_limit"],
            "max_thresholds": config.max_thresholds,
            "memory_limit_mb": config.memory_limit_mb,
            "grace_s": float(config.grace_s),
            "protocol": protocol,
        }
        if "tune" in method:
            run["tune"] = method["tune"]
        identity = {k: run[k] for k in ("protocol_id", "dataset", "method", "depth")}
        identity.update(fold=fold, seed=int(seed))
        run["run_id"] = _digest(identity, 16)
        runs.append(run)
    return runs


def _cells(config: StudyConfig, held_out=()):
    """(dataset, method spec, depth, seed, fold) of every run, tier by tier;
    the datasets in ``held_out`` (with a test file) have one fold."""
    specs = {spec.label: spec for spec in config.methods}
    for datasets, labels, depths in config.grids():
        for dataset in datasets:
            folds = 1 if dataset in held_out else config.folds
            for label in labels:
                for depth in depths:
                    for seed in config.seeds:
                        for fold in range(folds):
                            yield dataset, specs[label], depth, seed, fold


class _Active:
    """A run in flight in a forked worker: pipe, deadline, memory, incumbent.

    The worker is a :class:`odtstudy._isolation.GroupChild` (a plain
    ``os.fork``, not ``multiprocessing``, so that runs can also be started
    from daemonic processes such as Dask workers): it dies with this process
    (its parent-death signal), ``guard`` kills its process group then, with
    what the run started in it, and the group is killed at the deadline,
    which moves when the worker reports a probe or the fit's start.
    """

    def __init__(self, run, guard: GroupGuard):
        self.run = run
        self.tmpdir = tempfile.mkdtemp(prefix="odtstudy-run-")
        worker_run = dict(run, method=run["base_method"])
        worker_run.pop("protocol", None)
        self.started = time.perf_counter()
        self.allowed = allowed_fit_time(run["time_limit"])
        self.grace = run["grace_s"]
        # the worker leads its own session (child_main makes it); it dies
        # with this process and the guard kills its group then
        self.child = GroupChild.fork(
            lambda write_fd: child_main(write_fd, worker_run, self.tmpdir),
            # loading and binarising the data get a grace period of their own
            deadline_at=self.started + self.allowed + 2 * self.grace,
            guard=guard,
            lead_group=False,
        )
        self.pid = self.child.pid
        self.buffer = bytearray()
        self.fit_started = None
        self.rss_before_fit = None
        self.peak_rss_mb = 0.0
        self.peak_fit_rss_mb = 0.0
        self._next_sample = 0.0
        self.incumbent = None
        self.outcome = None
        try:
            self._ps = psutil.Process(self.pid)
        except psutil.Error:
            self._ps = None

    def sample_memory(self):
        """Sample the worker's process tree, at most every
        :data:`odtstudy.study._memory.SCAN_S` (the worker's own interval for
        its descendants): a finished worker reports its own peak, and these
        samples are what a killed run keeps."""
        now = time.perf_counter()
        if self._ps is None or now < self._next_sample:
            return
        self._next_sample = now + _memory.SCAN_S
        try:
            rss = _memory.tree_rss_mb(self._ps)
        except psutil.Error:
            return
        self.peak_rss_mb = max(self.peak_rss_mb, rss)
        if self.fit_started is not None:
            self.peak_fit_rss_mb = max(self.peak_fit_rss_mb, rss)

    def _handle(self, kind, payload):
        if kind in ("probe_start", "tune_fit_start"):
            # an unbounded probe (max_cache_fraction) and each inner fit of a
            # tuned learner get a fit's time of their own
            self.child.deadline_at = time.perf_counter() + self.allowed + 2 * self.grace
        elif kind == "fit_start":
            self.fit_started = time.perf_counter()
            self.rss_before_fit = payload["rss_mb"]
            self.child.deadline_at = self.fit_started + self.allowed + self.grace
        elif kind == "incumbent":
            self.incumbent = payload
        elif kind == "outcome":
            self.outcome = payload

    def _drain(self) -> bool:
        """Read what the worker wrote; True once its end of the pipe closed."""
        closed = False
        while (chunk := self.child.read()) is not None:
            if not chunk:
                closed = True
                break
            self.buffer += chunk
        for kind, payload in read_frames(self.buffer):
            self._handle(kind, payload)
        return closed

    def _cleanup(self):
        """Reap the worker, kill what is left of its group, drop its temp files."""
        self.child.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def kill(self):
        """Stop the run now, recording nothing (an interrupted study)."""
        self.child.kill()
        self._cleanup()

    def poll(self):
        """Return the outcome dict when the run is over, else ``None``."""
        closed = self._drain()
        if closed or self.outcome is not None or self.child.poll():
            if not closed and self.outcome is None:
                self._drain()
            self._cleanup()
            return self._finish()
        if self.child.expired():
            self.child.kill()
            self._cleanup()
            return self._killed()
        return None

    def _fit_mem_mb(self):
        if self.rss_before_fit is None or not self.peak_fit_rss_mb:
            return None
        return max(0.0, self.peak_fit_rss_mb - self.rss_before_fit)

    def _killed(self):
        wall = time.perf_counter() - self.started
        where = "in fit" if self.fit_started is not None else "before fit"
        outcome = {
            "status": "timeout",
            "has_tree": self.incumbent is not None,
            "wall_time_s": wall,
            "peak_rss_mb": self.peak_rss_mb or None,
            "fit_mem_mb": self._fit_mem_mb(),
        }
        if self.fit_started is not None:
            outcome["fit_time_s"] = time.perf_counter() - self.fit_started
        message = (
            f"killed {where} after {wall:.1f} s (time limit "
            f"{self.run['time_limit']:g} s, allowed {self.allowed:g} s + grace "
            f"{self.grace:g} s)"
        )
        if self.incumbent is not None:
            incumbent = dict(self.incumbent)
            message += f"; best tree reported at {incumbent.pop('time_s'):.1f} s kept"
            outcome.update(incumbent)
        outcome["error"] = message
        return outcome

    def _finish(self):
        wall = time.perf_counter() - self.started
        outcome = self.outcome
        if outcome is None:
            status = self.child.exit_status
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
                "fit_mem_mb": self._fit_mem_mb(),
            }
        outcome.setdefault("wall_time_s", wall)
        outcome["peak_rss_mb"] = max(self.peak_rss_mb, outcome.get("peak_rss_mb") or 0)
        if outcome.get("fit_mem_mb") is None:
            outcome["fit_mem_mb"] = self._fit_mem_mb()
        return outcome


def run_isolated(run: dict, poll_interval: float = 0.02) -> dict:
    """Execute one run in its own process and wait for its outcome.

    This is the task a Dask worker executes: the same isolation, hard
    deadline and memory measurement as the local runner.
    """
    with GroupGuard() as guard:
        active = _Active(run, guard)
        while True:
            active.sample_memory()
            outcome = active.poll()
            if outcome is not None:
                return outcome
            time.sleep(poll_interval)


class _Progress:
    """Runs done / total, ETA and the runs in flight, on stderr.

    The ETA adds up, for every run not finished, the mean time observed for
    its method so far (its allowed time until one finished), over the number
    of runs executed at once. On a terminal the line is redrawn in place;
    otherwise (CI, logs) one line is printed per finished run.
    """

    def __init__(self, runs, workers, quiet, repeats=1):
        self.total, self.done, self.quiet = len(runs), 0, quiet
        self.workers = max(1, workers)
        self.repeats = repeats
        self.remaining = {run["run_id"]: run for run in runs}
        self.observed: dict[str, list] = {}
        self.tty = sys.stderr.isatty()

    def _expected(self, run) -> float:
        seen = self.observed.get(run["method"])
        if seen:
            return sum(seen) / len(seen)
        return allowed_fit_time(run["time_limit"])

    def eta(self) -> float:
        work = sum(self._expected(run) for run in self.remaining.values())
        return work * self.repeats / self.workers

    def update(self, run, status, seconds, running=()):
        self.done += 1
        self.remaining.pop(run["run_id"], None)
        self.observed.setdefault(run["method"], []).append(seconds)
        if self.quiet:
            return
        width = 20
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        last = (
            f"{run['dataset']} {run['method']} d={run['depth']} f={run['fold']}: "
            f"{status} ({seconds:.1f}s)"
        )
        now = ", ".join(f"{r['dataset']} {r['method']} d={r['depth']}" for r in running)
        line = f"[{bar}] {self.done}/{self.total} ETA {self.eta():4.0f}s | {last}"
        if now:
            line += f" | running: {now}"
        if self.tty:
            end = "\n" if self.done == self.total else ""
            print(f"\r\x1b[K{line}", end=end, file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


class _StopSignals:
    """SIGINT / SIGTERM set a flag instead of raising in the middle of a write."""

    def __init__(self):
        self.signum = None
        self._previous = {}

    def _handler(self, signum, frame):
        self.signum = signum

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _check_memory_limit(config: StudyConfig) -> None:
    limit = config.memory_limit_mb
    if not limit:
        return
    mapped = _memory.mapped_mb()
    if float(limit) <= mapped + 256:
        raise ValueError(
            f"study {config.name!r}: memory_limit_mb = {limit} leaves no room: a "
            f"worker starts with the {mapped:.0f} MB of address space this "
            f"process maps; set memory_limit_mb to at least {mapped + 1024:.0f} "
            "or remove it"
        )


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
        Results go to ``study_folder(output_dir, config.name, config.scale)``.
    workers : int, default=None
        Runs executed at the same time (one process each); ``None`` takes the
        config's ``workers``. Timings are only comparable between runs made
        at the same parallelism: each record's ``provenance`` says which.
    retry_failed : bool, default=False
        Also re-run runs recorded as error/timeout/memout.
    quiet : bool, default=False
        No progress lines on stderr.
    scheduler : str, default=None
        Address of a Dask distributed scheduler (``tcp://host:port``) or a
        ``distributed.Client``: runs are then executed on its workers (each
        still in its own process with the same deadline), records are written
        here. Needs the ``dask`` extra on this machine and the workers.

    Raises
    ------
    StudyInterrupted
        On SIGINT / SIGTERM, after killing the runs in flight; every finished
        record is kept and the next call resumes.
    StudyLockedError
        When another runner holds the study folder.
    """
    config.validate()
    _check_memory_limit(config)
    workers = config.workers if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    client = _dask_client(scheduler) if scheduler is not None else None
    backend = "local" if client is None else f"dask {client.scheduler.address}"
    folder = study_folder(output_dir, config.name, config.scale)
    store = ResultsStore(folder)
    runs = expand_runs(config)
    with StudyLock(folder), _StopSignals() as stop:
        records = store.records()
        if retry_failed:
            done = {r["run_id"] for r in records if r.get("status") == "ok"}
        else:
            done = {r["run_id"] for r in records}
        pending = [run for run in runs if run["run_id"] not in done]
        common = {
            "versions": package_versions(),
            "provenance": _provenance.provenance(workers, backend),
            "host": socket.gethostname(),
        }
        progress = _Progress(pending, workers, quiet, config.repeats)
        recorded = 0
        repeats_done: dict[str, dict] = {}
        closed: set[str] = set()

        def finish(attempt, outcome, running=()):
            """Keep one repeat's outcome; record the run after its last."""
            nonlocal recorded
            run, repeat = attempt
            if run["run_id"] in closed:
                return
            done = repeats_done.setdefault(run["run_id"], {})
            done[repeat] = outcome
            if len(done) < config.repeats and _worth_repeating(outcome, run):
                return
            del repeats_done[run["run_id"]]
            closed.add(run["run_id"])
            outcomes = [done[r] for r in sorted(done)]
            row = _record(run, _combine_repeats(outcomes), common)
            store.append(row)
            recorded += 1
            progress.update(run, row["status"], row.get("wall_time_s") or 0, running)

        def wanted(attempt):
            return attempt[0]["run_id"] not in closed

        attempts = _attempts(pending, config.repeats)
        if client is not None:
            try:
                _run_on_dask(client, attempts, finish, stop)
            finally:
                if client is not scheduler:
                    client.close()
        else:
            _run_local(attempts, workers, poll_interval, finish, stop, wanted)
        if stop.signum is not None:
            raise StudyInterrupted(stop.signum, recorded, len(pending) - recorded)
    return store


def _attempts(pending, repeats) -> list:
    """``(run, repeat)`` pairs in the order they execute: the runs of one
    (dataset, depth, fold, seed) together, repeat 1 of each of its methods,
    then repeat 2, ..., so that no method gets its repeats in a row."""
    cells: dict[tuple, list] = {}
    for run in pending:
        cell = (run["dataset"], run["depth"], run["fold"], run["seed"])
        cells.setdefault(cell, []).append(run)
    return [
        (run, repeat)
        for runs in cells.values()
        for repeat in range(repeats)
        for run in runs
    ]


def _worth_repeating(outcome: dict, run: dict) -> bool:
    """Whether a fit is short enough, and ended on its own, to be timed again."""
    if outcome.get("status") != "ok" or outcome.get("learner_status") == "timeout":
        return False
    seconds = outcome.get("fit_time_s")
    if seconds is None or seconds >= REPEAT_BELOW_S:
        return False
    return seconds < run["time_limit"]


def _combine_repeats(outcomes: list) -> dict:
    """One run's record fields from the outcomes of its repeats (see the
    module documentation)."""
    fit_times = [outcome.get("fit_time_s") for outcome in outcomes]
    cpu_times = [outcome.get("cpu_time_s") for outcome in outcomes]
    order = sorted(
        range(len(outcomes)),
        key=lambda i: (fit_times[i] is None, fit_times[i] or 0.0, i),
    )
    combined = dict(outcomes[order[(len(order) - 1) // 2]])
    for key, values in (("fit_time_s", fit_times), ("cpu_time_s", cpu_times)):
        known = [value for value in values if value is not None]
        combined[key] = statistics.median(known) if known else None
    combined["fit_times_s"] = fit_times
    combined["cpu_times_s"] = cpu_times
    combined["repeat_statuses"] = [outcome.get("status") for outcome in outcomes]
    return combined


def _run_local(attempts, workers, poll_interval, finish, stop, wanted):
    active: list[tuple] = []  # of (attempt, _Active)
    queue = list(attempts)
    guard = GroupGuard()
    try:
        while (queue or active) and stop.signum is None:
            while queue and len(active) < workers and stop.signum is None:
                attempt = queue.pop(0)
                if not wanted(attempt):
                    continue
                active.append((attempt, _Active(attempt[0], guard)))
            time.sleep(poll_interval)
            for pair in list(active):
                attempt, item = pair
                item.sample_memory()
                outcome = item.poll()
                if outcome is not None:
                    active.remove(pair)
                    finish(attempt, outcome, [a.run for _, a in active])
    finally:
        for _, item in active:
            item.kill()
        guard.close()


def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "--scheduler needs Dask distributed: pip install 'odtstudy[dask]'"
        ) from None
    if isinstance(scheduler, Client):
        client = scheduler
    else:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(
                f"cannot reach the Dask scheduler at {scheduler!r}: {exc}"
            ) from None
    try:
        client.wait_for_workers(1, timeout=DASK_WORKER_TIMEOUT_S)
    except (TimeoutError, OSError):
        address = client.scheduler.address
        if client is not scheduler:
            client.close()
        raise ValueError(
            f"the Dask scheduler at {address} has no workers after "
            f"{DASK_WORKER_TIMEOUT_S:g} s; start some with `dask worker {address}` "
            "and run again"
        ) from None
    return client


def _run_on_dask(client, attempts, finish, stop):
    from distributed import as_completed

    futures = {
        client.submit(
            run_isolated, run, pure=False, key=f"run-{run['run_id']}-{repeat}"
        ): (run, repeat)
        for run, repeat in attempts
    }
    completed = as_completed(futures)
    try:
        for future in completed:
            if stop.signum is not None:
                break
            try:
                outcome = future.result()
            except Exception as exc:  # the Dask worker itself failed
                outcome = {"status": "error", "error": f"Dask task failed: {exc!r}"}
            finish(futures[future], outcome)
    finally:
        client.cancel(list(futures))


def _record(run: dict, outcome: dict, common: dict) -> dict:
    columns = (*IDENTITY_COLUMNS, *TOOL_COLUMNS, TASK_COLUMN)
    record = {key: run[key] for key in columns if key in run}
    record["protocol"] = run["protocol"]
    record.update(outcome)
    record.update(common)
    record["utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return record
