"""Do the time limits hold? Worst wall time of ``fit`` per learner against T x 1.1 + 1.

The contract: a learner fitted with ``time_limit=T`` returns its best tree
within ``T * 1.1 + 1`` seconds of its own wall clock, measured from entering
``fit`` to returning. Every registered learner that imports is fitted on
hard instances (CP4IM and UCI sets at depths where the exact learners cannot
prove optimality within the limit). Each fit runs in its own forked process:
the child times ``fit`` with ``time.perf_counter``; the parent kills a child
that is still running after ``3 T + 10`` s (reported as "killed"). After
every fit the parent checks that no process the child started (e.g. a
``cbc`` solver) is still alive, and that the child left no file in its
private temporary directory; both count as failures.

BinOCT and OCT run once per solver (``binoct/cbc``, ``binoct/highs``, ...).
Learners whose registry entry says ``data = "binary"`` get numeric sets
binarised by ``odtstudy.datasets.Binarizer`` (at most 8 thresholds per
feature, as in the quick study); the others get the raw matrix.

Usage::

    python benchmarks/time_limits.py --limits 2 10
    python benchmarks/time_limits.py --limits 2 --methods oct binoct \\
        --datasets vote anneal --depth 4
    python benchmarks/time_limits.py --output -      # do not write a file
    python benchmarks/time_limits.py --limits 5 --hard-only  # big instances

``--hard`` adds the big instances of the hardening issue (BinOCT / OCT on
UCI spambase and letter, OCT on UCI diabetes, CP-SAT at depth 8 on
pendigits, TMO with 500 individuals), where building the model alone can
take longer than the limit; ``--hard-only`` runs just those.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import select
import shutil
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import psutil

from odtstudy._deadline import allowed_fit_time
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.study.registry import get_method, list_methods

DEFAULT_DATASETS = ["anneal", "vote", "german-credit", "uci/iris"]
#: Registry methods run once per solver: ``binoct/cbc``, ``binoct/highs``, ...
SOLVER_VARIANTS = {"binoct": ("cbc", "highs"), "oct": ("cbc", "highs")}
DEFAULT_OUTPUT = os.path.join(os.path.dirname(__file__), "results", "time_limits.txt")
_POLL_S = 0.05
#: ``(method, dataset, depth, params)``: big models, slow starts.
HARD_INSTANCES = [
    ("binoct", "uci/spambase", 4, {}),
    ("binoct", "uci/letter", 4, {}),
    ("oct", "uci/spambase", 4, {}),
    ("oct", "uci/diabetes", 3, {}),
    ("cpsat", "pendigits", 8, {}),
    ("tmo", "uci/spambase", 5, {"population_size": 500}),
]


bound = allowed_fit_time  # the contract's wall-clock bound for a limit


@dataclass
class Run:
    """One fit: where, its outcome and what it left behind."""

    method: str
    dataset: str
    depth: int
    limit: float
    wall: float | None = None
    optimal: bool | None = None
    status: str = ""
    error: str = ""
    killed: bool = False
    leftover_processes: list = field(default_factory=list)
    leftover_files: int = 0

    @property
    def failed(self) -> bool:
        return bool(
            self.killed
            or self.error
            or self.leftover_processes
            or self.leftover_files
            or self.wall is None
            or self.wall > bound(self.limit)
        )


# --------------------------------------------------------------------- data
def _load(name: str, binary: bool):
    data = load_dataset(name)
    X, y = np.asarray(data.X), np.asarray(data.y)
    if binary and not np.isin(X, (0, 1)).all():
        X = Binarizer(max_thresholds=8).fit_transform(X)
    return np.ascontiguousarray(X, dtype=float), y


# -------------------------------------------------------------------- child
def _variants(methods):
    """Expand registry names into ``(label, method, params)``."""
    out = []
    for name in methods:
        base, _, solver = name.partition("/")
        solvers = (solver,) if solver else SOLVER_VARIANTS.get(base, ())
        if not solvers:
            out.append((name, base, {}))
        out += [(f"{base}/{s}", base, {"solver": s}) for s in solvers]
    return out


def _child(method, params, X, y, depth, limit, tmpdir, write_fd):
    for key in ("TMPDIR", "TEMP", "TMP"):
        os.environ[key] = tmpdir
    tempfile.tempdir = None
    out = {}
    try:
        est = get_method(method).make(
            max_depth=depth, time_limit=limit, random_state=0, **params
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            est.fit(X, y)
            out["wall"] = time.perf_counter() - start
        out["optimal"] = bool(getattr(est, "optimal_", False))
        out["status"] = str(getattr(est, "status_", ""))
    except BaseException as exc:  # reported to the parent
        out["error"] = f"{type(exc).__name__}: {exc}"[:200]
    with os.fdopen(write_fd, "wb") as fh:
        pickle.dump(out, fh)
    os._exit(0)


def _descendants(pid):
    try:
        procs = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return set()
    found = set()
    for proc in procs:
        try:
            found.add((proc.pid, proc.create_time(), proc.name()))
        except psutil.Error:
            pass
    return found


def _still_alive(seen):
    alive = []
    for pid, created, name in seen:
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != "zombie":
                alive.append((proc, name))
        except psutil.Error:
            pass
    return alive


def run_one(label, method, params, X, y, dataset, depth, limit, kill_after) -> Run:
    """Fit ``method`` in a forked child; kill it after ``kill_after`` seconds."""
    run = Run(label, dataset, depth, limit)
    tmpdir = tempfile.mkdtemp(prefix="odtstudy_tl_")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(read_fd)
        _child(method, params, X, y, depth, limit, tmpdir, write_fd)
    os.close(write_fd)
    seen = set()
    payload = b""
    started = time.perf_counter()
    with os.fdopen(read_fd, "rb") as pipe:
        while True:
            seen |= _descendants(pid)
            ready, _, _ = select.select([pipe], [], [], _POLL_S)
            if ready:
                payload = pipe.read()  # until the child closes its end
                break
            if time.perf_counter() - started > kill_after:
                os.kill(pid, signal.SIGKILL)
                run.killed = True
                break
    os.waitpid(pid, 0)
    if payload:
        out = pickle.loads(payload)
        run.wall = out.get("wall")
        run.optimal = out.get("optimal")
        run.status = out.get("status", "")
        run.error = out.get("error", "")
    # give a solver that was told to stop a moment to go
    for _ in range(20):
        alive = _still_alive(seen)
        if not alive:
            break
        time.sleep(0.05)
    for proc, name in alive:
        run.leftover_processes.append(name)
        try:
            proc.kill()
        except psutil.Error:
            pass
    run.leftover_files = sum(len(files) for _, _, files in os.walk(tmpdir))
    shutil.rmtree(tmpdir, ignore_errors=True)
    return run


# ------------------------------------------------------------------- report
def _fmt(value, spec=".2f"):
    return "-" if value is None else format(value, spec)


def report(runs, limits) -> str:
    lines = ["Reference bound T x 1.1 + 1 s:"]
    lines += [f"  T = {t:g} s -> {bound(t):.1f} s" for t in limits]
    lines.append("")
    header = (
        f"{'learner':<18} {'T (s)':>6} {'runs':>5} {'worst wall (s)':>15} "
        f"{'worst / T':>10} {'within':>7} {'not opt.':>9} {'failures':>9}  "
        "worst instance"
    )
    lines += [header, "-" * len(header)]
    failures = []
    for method in dict.fromkeys(r.method for r in runs):
        for limit in limits:
            group = [r for r in runs if r.method == method and r.limit == limit]
            if not group:
                continue
            timed = [r for r in group if r.wall is not None]
            worst = max(timed, key=lambda r: r.wall) if timed else None
            worst_wall = worst.wall if worst else None
            bad = [r for r in group if r.failed]
            failures += bad
            killed = any(r.killed for r in group)
            ok = worst_wall is not None and worst_wall <= bound(limit) and not killed
            within = "yes" if ok else "NO"
            not_opt = sum(1 for r in timed if not r.optimal)
            where = f"{worst.dataset} d={worst.depth}" if worst else "-"
            lines.append(
                f"{method:<18} {limit:>6g} {len(group):>5} {_fmt(worst_wall):>15} "
                f"{_fmt(None if worst_wall is None else worst_wall / limit):>10} "
                f"{within:>7} {not_opt:>9} {len(bad):>9}  {where}"
            )
    lines.append("")
    if failures:
        lines.append("Failures:")
        for r in failures:
            why = []
            if r.killed:
                why.append("killed (still running at 3 T + 10 s)")
            if r.error:
                why.append(f"error {r.error}")
            if r.wall is not None and r.wall > bound(r.limit):
                why.append(f"wall {r.wall:.2f} s > {bound(r.limit):.1f} s")
            if r.leftover_processes:
                why.append(f"processes left alive: {', '.join(r.leftover_processes)}")
            if r.leftover_files:
                why.append(f"{r.leftover_files} temp file(s) left")
            lines.append(
                f"  {r.method} {r.dataset} d={r.depth} T={r.limit:g}: {'; '.join(why)}"
            )
    else:
        lines.append("No failures: every fit returned within T x 1.1 + 1 s, no")
        lines.append("process or temp file left behind.")
    return "\n".join(lines)


# --------------------------------------------------------------------- main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", nargs="+", type=float, default=[2.0, 10.0])
    parser.add_argument(
        "--methods",
        nargs="+",
        default=None,
        help="registry names (default: every one that imports); binoct and oct "
        "run with each solver, or name one: binoct/highs",
    )
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS)
    parser.add_argument("--depth", nargs="+", type=int, default=[4, 5])
    parser.add_argument("--hard", action="store_true", help="also run HARD_INSTANCES")
    parser.add_argument(
        "--hard-only", action="store_true", help="run only HARD_INSTANCES"
    )
    parser.add_argument(
        "--output",
        default=DEFAULT_OUTPUT,
        help=f"result file (default {DEFAULT_OUTPUT}; '-' for none)",
    )
    args = parser.parse_args(argv)

    available = list_methods()
    methods = _variants(args.methods or available)
    missing = sorted({m for _, m, _ in methods if m not in available})
    if missing:
        parser.error(f"not installed or unknown: {', '.join(missing)}")
    instances = []
    if not args.hard_only:
        instances = [
            (label, method, params, dataset, depth)
            for label, method, params in methods
            for dataset in args.datasets
            for depth in args.depth
        ]
    if args.hard or args.hard_only:
        wanted = {m for _, m, _ in methods}
        for method, dataset, depth, extra in HARD_INSTANCES:
            if method in wanted:
                instances += [
                    (label, m, {**params, **extra}, dataset, depth)
                    for label, m, params in methods
                    if m == method
                ]
    data = {}
    runs = []
    start = time.perf_counter()
    for label, method, params, dataset, depth in instances:
        binary = get_method(method).data == "binary"
        key = (dataset, binary)
        if key not in data:
            data[key] = _load(dataset, binary)
        X, y = data[key]
        for limit in args.limits:
            run = run_one(
                label, method, params, X, y, dataset, depth, limit, 3 * limit + 10
            )
            runs.append(run)
            flag = " FAIL" if run.failed else ""
            print(
                f"{label:<18} {dataset:<14} d={depth} T={limit:<4g} "
                f"wall={_fmt(run.wall)} optimal={run.optimal}{flag}",
                flush=True,
            )
    table = report(runs, args.limits)
    command = " ".join(["python benchmarks/time_limits.py", *(argv or sys.argv[1:])])
    text = "\n".join(
        [
            "Time limits: worst wall time of fit (s) per learner and limit T",
            f"Command: {command}",
            "; ".join(
                (
                    []
                    if args.hard_only
                    else [
                        f"Datasets: {', '.join(args.datasets)}",
                        f"depths: {', '.join(map(str, args.depth))}",
                    ]
                )
                + (
                    [
                        "hard instances: "
                        + ", ".join(f"{m} {d} d={k}" for m, d, k, _ in HARD_INSTANCES)
                    ]
                    if args.hard or args.hard_only
                    else []
                )
            ),
            f"Machine: {platform.platform()}, {psutil.cpu_count()} CPUs; "
            f"total {time.perf_counter() - start:.0f} s",
            "",
            table,
        ]
    )
    print()
    print(text)
    if args.output != "-":
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
