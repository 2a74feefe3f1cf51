"""FlowOCT and BendersOCT against BinOCT and OCT on the same instances.

The strong formulations of Aghaei, Gómez & Vayanos (2024) against the two
older MILPs, all four in PuLP with one solver (CBC by default, ``--solver
highs``), on CP4IM (0/1) sets at depths 2-3, one time limit per fit, one
thread. The four learners run interleaved on each instance (their order
rotates from one instance to the next), one fit at a time, in this process
(each solver in its own child process). DL8.5's optimum is the reference
objective. A dataset ``name:k`` keeps the first ``k`` features of ``name``
(instances the open-source solvers can prove within a short limit).

Usage::

    python benchmarks/milp_strong_formulations.py              # defaults
    python benchmarks/milp_strong_formulations.py --time-limit 60 \\
        --cp4im zoo-1 vote hepatitis:24 --depths 2 3 --solver highs

A cell reads ``errors[*] seconds``: ``*`` = proven optimal; seconds are the
wall-clock time of the whole fit (model building included). The summary
gives each learner's proven count, and for FlowOCT and BendersOCT the
geometric mean of ``t_new / t_old`` against BinOCT and OCT over the
instances both prove (below 1× the strong formulation is faster), and
whether every proven objective equals DL8.5's.
"""

from __future__ import annotations

import argparse
import math
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.milp import (
    BendersOCTClassifier,
    BinOCTClassifier,
    FlowOCTClassifier,
    OCTClassifier,
)

DEFAULT_CP4IM = ["zoo-1", "hepatitis:24", "lymph:24", "primary-tumor:16", "vote"]
LEARNERS = {
    "FlowOCT": FlowOCTClassifier,
    "BendersOCT": BendersOCTClassifier,
    "BinOCT": BinOCTClassifier,
    "OCT": OCTClassifier,
}
NEW, OLD = ("FlowOCT", "BendersOCT"), ("BinOCT", "OCT")


def _revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def _load(spec):
    """``(X, y)`` of CP4IM set ``name`` or ``name:k`` (its first k features)."""
    name, _, k = spec.partition(":")
    data = load_dataset(name)
    X = np.asarray(data.X)
    return (X[:, : int(k)] if k else X), np.asarray(data.y)


def _fit(learner, depth, time_limit, solver, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = learner(max_depth=depth, time_limit=time_limit, solver=solver)
        est.fit(X, y)
    return {
        "time": time.perf_counter() - start,
        "obj": float(est.objective_),
        "opt": bool(est.optimal_),
        "lb": est.lower_bound_,
    }


def _cell(res) -> str:
    if "error" in res:
        return "error"
    return f"{res['obj']:g}{'*' if res['opt'] else ' '} {res['time']:6.1f}s"


def _geomean(values) -> float:
    return math.exp(float(np.mean(np.log(values))))


def _ratios(rows, new, old):
    """``t_new / t_old`` over the instances both prove."""
    return [
        res[new]["time"] / max(res[old]["time"], 1e-3)
        for _, _, res, _ in rows
        if res[new].get("opt") and res[old].get("opt")
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cp4im", nargs="*", default=DEFAULT_CP4IM)
    parser.add_argument("--depths", nargs="*", type=int, default=[2, 3])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solver", choices=["cbc", "highs"], default="cbc")
    given = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(given)

    names = list(LEARNERS)
    command = " ".join(["python benchmarks/milp_strong_formulations.py", *given])
    print(f"# command: {command}")
    print(
        f"# revision {_revision()}, {platform.platform()}, "
        f"python {sys.version.split()[0]}; solver {args.solver}, 1 thread, "
        f"time limit {args.time_limit:g} s per fit, one fit at a time"
    )
    print("# cell: training errors (* = proven optimal) and wall seconds of the fit")
    header = f"{'dataset':<18}{'d':>2}{'rows':>6}{'feat':>5}{'DL8.5':>7}  " + "".join(
        f"{name:<16}" for name in names
    )
    print(header)
    print("-" * len(header))
    rows = []
    instances = [(n, d) for d in args.depths for n in args.cp4im]
    for k, (name, depth) in enumerate(instances):
        X, y = _load(name)
        reference = DL85Classifier(max_depth=depth).fit(X, y).objective_
        order = names[k % len(names) :] + names[: k % len(names)]
        results = {}
        for label in order:
            try:
                results[label] = _fit(
                    LEARNERS[label], depth, args.time_limit, args.solver, X, y
                )
            except Exception as exc:  # report and keep going
                results[label] = {"error": repr(exc)}
        line = f"{name:<18}{depth:>2}{X.shape[0]:>6}{X.shape[1]:>5}{reference:>7g}  "
        print(line + "".join(f"{_cell(results[m]):<16}" for m in names), flush=True)
        rows.append((name, depth, results, reference))

    print()
    print(f"Proven optimal (of {len(rows)} instances):")
    for label in names:
        proven = sum(r[2][label].get("opt", False) for r in rows)
        print(f"  {label:<11}{proven:>3}")
    print()
    print("Time ratio t_new / t_old, geometric mean over the instances both prove:")
    for new in NEW:
        for old in OLD:
            ratios = _ratios(rows, new, old)
            if ratios:
                text = (
                    f"{_geomean(ratios):.3g}× (min {min(ratios):.3g}×, "
                    f"max {max(ratios):.3g}×; {len(ratios)} instances)"
                )
            else:
                text = "n/a (no instance proven by both)"
            print(f"  {new:<11}vs {old:<7}{text}")
    wrong = [
        (name, depth, label, res["obj"], reference)
        for name, depth, results, reference in rows
        for label, res in results.items()
        if res.get("opt") and res["obj"] != reference
    ]
    print()
    print(
        "Every proven objective equals DL8.5's optimum"
        if not wrong
        else f"DISAGREEMENT with DL8.5's optimum: {wrong}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
