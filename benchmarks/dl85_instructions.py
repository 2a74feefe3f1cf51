"""Instructions per fit of DL8.5's objectives, new engine against an old one.

One command::

    python benchmarks/dl85_instructions.py [--depth 3] [--old-rev REV]
                                            [--datasets anneal vote ...]

Wall-clock times cannot resolve a few per cent on a shared machine: the
same binary timed twice scatters by up to 25 % there. This benchmark counts
the instructions a fit executes, which do not depend on the machine's load.
Each dataset runs in its own process under Valgrind's callgrind; every fit
is called through a one-line C function (compiled on first use, with
Valgrind's ``callgrind.h``) that zeroes callgrind's counters, collects
during the fit only and dumps the count after it. The fits are those of
``_objective_fits.py`` (one per objective). First every fit of every
objective runs unmeasured on both engines, ``WARM_ROUNDS`` times, so that
lazy imports, first-call caches and CPython's specialisation of the code
both engines share (scikit-learn's and NumPy's checks) are paid before any
count; then each objective is measured four times in the order new, old,
old, new (ABBA), and an engine's count is the mean of its two: a drift with
the position of a call cancels. (With one warm-up fit per engine and the new
engine measured first, an A/A run, one revision on both sides, gave the
classification fit new / old 1.016-1.037: the benchmark's, not the
engine's.) Python's hash seed is fixed. Table: instructions of the new
engine's fit and the ratio new / old per objective; geometric means over
the datasets where both engines proved every optimum.

The fits have no time limit unless ``--time-limit`` gives one: a
time-limited DL8.5 search that has not ended after its probe (a second,
see ``odtstudy.dl85.engine._skeleton``) adds a greedy descent, and a fit runs some
50 times slower under callgrind, so with a limit it would take a path that
the same fit run natively (well under a second here) never takes.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _objective_fits import OBJECTIVES, data, fitters, gmean
from _old_engine import old_engine_path

#: The CP4IM sets whose fits stay short under callgrind (about 50x slower
#: than native) at depth 3.
DATASETS = [
    "anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes",
    "german-credit", "heart-cleveland", "hepatitis", "hypothyroid", "kr-vs-kp",
    "lymph", "primary-tumor", "soybean", "tic-tac-toe", "vehicle", "vote",
    "yeast", "zoo-1",
]  # fmt: skip
#: Unmeasured rounds of every fit on both engines before the first count.
WARM_ROUNDS = 3
#: The order of the measured calls of one objective (each engine's count is
#: the mean of its two).
ABBA = ("new", "old", "old", "new")
_MARKER = "odtstudy_marked_call"
_MARKER_C = f"""#include <valgrind/callgrind.h>
void {_MARKER}(void (*fit)(void)) {{
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    fit();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS;
}}
"""


def _marker_library(folder: Path) -> ctypes.CDLL:
    source, library = folder / "marker.c", folder / "marker.so"
    if not library.exists():
        source.write_text(_MARKER_C)
        subprocess.run(
            ["cc", "-shared", "-fPIC", "-O0", "-o", str(library), str(source)],
            check=True,
        )
    return ctypes.CDLL(str(library))


def child(args) -> None:
    """Fit every objective of one dataset with both engines, each measured
    call through the marker; print the calls' order and outcomes as JSON."""
    sys.path.insert(0, old_engine_path(args.old_rev))
    marker = _marker_library(Path(args.marker_dir))
    callback = ctypes.CFUNCTYPE(None)
    X, y, yr = data(args.dataset)
    limit = args.time_limit or None
    engines = {
        "new": fitters("odtstudy", X, y, yr, args.depth, limit),
        "old": fitters("odtstudy_old", X, y, yr, args.depth, limit),
    }
    for _ in range(WARM_ROUNDS):
        for objective in OBJECTIVES:
            for engine in ("new", "old"):
                engines[engine][objective]()
    calls = []
    for objective in OBJECTIVES:
        for engine in ABBA:
            fit = engines[engine][objective]
            fitted = {}

            def measured(fit=fit, fitted=fitted):
                fitted["estimator"] = fit()

            marker.odtstudy_marked_call(callback(measured))
            est = fitted["estimator"]
            objective_value = float(est.objective_)
            calls.append([objective, engine, bool(est.optimal_), objective_value])
    print(json.dumps({"n": X.shape[0], "m": X.shape[1], "calls": calls}))


def _counts(out_dir: Path, pid_prefix: str) -> list[int]:
    """Instruction totals of the dumps written after each marked call, in
    call order."""
    dumps = []
    for path in out_dir.glob(f"{pid_prefix}.*"):
        text = path.read_text(errors="replace")
        if "Trigger: Client Request" not in text:
            continue
        number = int(path.name.rsplit(".", 1)[1])
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
        dumps.append((number, int(total.group(1))))
    return [count for _, count in sorted(dumps)]


def measure(dataset, args, work: Path) -> dict:
    out = work / dataset
    out.mkdir()
    command = [
        "valgrind", "--tool=callgrind", "--collect-atstart=no",
        f"--callgrind-out-file={out}/cg",
        sys.executable, __file__, "--child", dataset,
        "--depth", str(args.depth), "--time-limit", str(args.time_limit),
        "--marker-dir", str(work),
    ]  # fmt: skip
    if args.old_rev:
        command += ["--old-rev", args.old_rev]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{dataset}: callgrind run failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    counts = _counts(out, "cg")
    if len(counts) != len(result["calls"]):
        raise RuntimeError(
            f"{dataset}: {len(counts)} callgrind dumps for {len(result['calls'])} fits"
        )
    runs = {}
    for (objective, engine, optimal, value), count in zip(result["calls"], counts):
        runs.setdefault(objective, {}).setdefault(engine, []).append(
            (count, optimal, value)
        )
    table = {
        objective: {
            engine: (
                round(sum(c for c, _, _ in calls) / len(calls)),
                all(ok for _, ok, _ in calls),
                calls[-1][2],
            )
            for engine, calls in by_engine.items()
        }
        for objective, by_engine in runs.items()
    }
    return {"n": result["n"], "m": result["m"], "table": table}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument(
        "--time-limit",
        type=float,
        default=0.0,
        help="seconds per fit; 0: none (the default, see the module's docstring)",
    )
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--old-rev", default=None)
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="datasets measured at once (counts do not depend on the load)",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--marker-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        args.dataset = args.child
        child(args)
        return
    old_engine_path(args.old_rev)  # built once, before the child processes
    print(
        f"# depth {args.depth}, time limit "
        f"{f'{args.time_limit:g} s' if args.time_limit else 'none'}; "
        "instructions of one fit (callgrind), new engine "
        "and the ratio new / old per objective; TO = time limit, != = objectives "
        "differ"
    )
    head = f"{'dataset':<18} {'n':>5} {'m':>4} " + " ".join(
        f"{o:>12} {'n/o':>6}" for o in OBJECTIVES
    )
    print(head)
    print("-" * len(head))
    ratios = {o: [] for o in OBJECTIVES}
    with tempfile.TemporaryDirectory() as tmp:
        _marker_library(Path(tmp))  # compiled once, before the children
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = pool.map(
                lambda name: measure(name, args, Path(tmp)), args.datasets
            )
        for name, res in zip(args.datasets, results):
            cells = []
            for objective in OBJECTIVES:
                (new, new_ok, new_val), (old, old_ok, old_val) = (
                    res["table"][objective]["new"],
                    res["table"][objective]["old"],
                )
                same = math.isclose(new_val, old_val, rel_tol=1e-9, abs_tol=1e-9)
                if new_ok and old_ok and same:
                    ratios[objective].append(new / old)
                    cells.append(f"{new:>12} {new / old:6.3f}")
                else:
                    flag = "TO" if not (new_ok and old_ok) else "!="
                    cells.append(f"{new:>12} {flag:>6}")
            print(
                f"{name:<18} {res['n']:>5} {res['m']:>4} " + " ".join(cells), flush=True
            )
    print("-" * len(head))
    for objective in OBJECTIVES:
        values = ratios[objective]
        worst = max(values, default=math.nan)
        print(
            f"geometric mean instructions new/old {objective:<4} = "
            f"{gmean(values):.4f} over {len(values)} sets (max {worst:.4f})"
        )


if __name__ == "__main__":
    main()
