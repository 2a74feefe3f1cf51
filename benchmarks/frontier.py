"""The frontier of exact search: proofs, the tree at the limit, the primal integral.

Commands (the targets of the frontier issue)::

    python benchmarks/frontier.py --kind numeric --depth 3 --time-limit 300
    python benchmarks/frontier.py --kind numeric --depth 4 --time-limit 300 --smallest 8
    python benchmarks/frontier.py --kind binary --depth 6 --time-limit 60

    [--datasets NAME ...] [--methods METHOD ...] [--output FILE]

``--kind numeric`` runs the 14 sets of the ConTree suite (``contree/*``)
with ``dl85-numeric`` (DL8.5 on every midpoint), ConTree (``pycontree``)
and pytrees-rs's ConTree, exact and by limited-discrepancy search;
``--kind binary`` runs 15 CP4IM sets with ``dl85``, STreeD (``pystreed``)
and pytrees-rs's DL8.5 by limited-discrepancy search. Every method is the
study registry's (``odtstudy methods``), built by ``Method.make(depth,
time_limit)``: the same problem, depth-limited training misclassifications
over the same splits. ``--smallest K`` keeps the K sets of fewest rows.

Each fit runs in a fresh forked child (killed at the limit plus a grace
period), after a warm-up fit on a tiny problem; the methods alternate on
every instance (the order rotates), one fit at a time. Recorded per fit:
the wall-clock seconds of ``fit``, the training errors of the tree returned
(recounted with ``predict``), ``optimal_``, and the anytime trace
(``stats_["anytime"]``) where the learner records one.

Printed per instance: each method's time (``*``: not proven) and errors.
Then, for the first method (the reference, ours by default) against each
other one:

- proofs: how many instances each proves, and the geometric mean of the
  time ratio reference / other over the instances both prove;
- at the limit: over the instances no method proves, on how many the
  reference's tree has at most the other's errors;
- the primal integral ``P = integral over [0, T] of p(t) dt``, ``p(t)`` the
  relative gap of the method's best tree at time t to the best tree any
  method returned on the instance (1 before its first tree; Berthold
  2013). A method without a trace has its tree when its fit returns. The
  summary is the shifted geometric mean of ``P`` (shift 1 s) per method.

The header (command, commit, date, machine) and the tables are printed and
appended to ``benchmarks/results/frontier.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl85_vs_pydl85 import _geomean, run_fit

from odtstudy.datasets import list_datasets, load_dataset

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "frontier.txt"
BINARY_SETS = [
    "anneal", "audiology", "australian-credit", "diabetes", "german-credit",
    "heart-cleveland", "hepatitis", "ionosphere", "kr-vs-kp", "lymph",
    "pendigits", "segment", "splice-1", "vehicle", "yeast",
]  # fmt: skip
METHODS = {
    "numeric": ["dl85-numeric", "pycontree", "pytrees-contree", "pytrees-contree-lds"],
    "binary": ["dl85", "pystreed", "pytrees-dl85-lds"],
}
SHIFT_S = 1.0  # shift of the primal integral's geometric mean


def _fit(method_name):
    """The fitter of ``run_fit`` for a registry method."""

    def fit(X, y, depth, limit):
        from odtstudy.study.registry import get_method

        warnings.simplefilter("ignore")
        est = get_method(method_name).make(depth, time_limit=limit)
        start = time.perf_counter()
        est.fit(X, y)
        elapsed = time.perf_counter() - start
        errors = float(np.sum(est.predict(X) != y))
        trace = [
            list(p[:2]) for p in (getattr(est, "stats_", {}) or {}).get("anytime") or []
        ]
        return elapsed, errors, bool(est.optimal_), trace

    return fit


def primal_integral(trace, end, final, best, limit) -> float:
    """``integral over [0, limit] of p(t) dt`` for a method whose incumbents
    are ``trace`` (``[time, errors]``) and whose fit returned ``final`` at
    ``end`` seconds; ``best``: the best errors any method reached."""

    def gap(value):
        if value == best:
            return 0.0
        return abs(value - best) / max(abs(value), abs(best))

    points = sorted((min(t, limit), v) for t, v in trace if math.isfinite(v))
    if math.isfinite(final):
        points.append((min(end, limit), final))
    total, at, current = 0.0, 0.0, 1.0
    for t, value in points:
        if t > at:
            total += current * (t - at)
            at = t
        current = min(current, gap(value))
    return total + current * max(limit - at, 0.0)


def _shifted_geomean(values, shift=SHIFT_S):
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return math.nan
    return math.exp(sum(math.log(v + shift) for v in values) / len(values)) - shift


def _datasets(kind, names, smallest):
    if names is None:
        if kind == "numeric":
            names = [n for n in list_datasets() if n.startswith("contree/")]
        else:
            names = list(BINARY_SETS)
    data = {name: load_dataset(name) for name in names}
    if smallest:
        names = sorted(names, key=lambda n: data[n].X.shape[0])[:smallest]
    return [(name, data[name]) for name in names]


def _git(*args):
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def _header(argv, args):
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        "# command: python benchmarks/frontier.py " + " ".join(argv),
        f"# commit: {commit}{' (modified)' if dirty else ''}, {now}, "
        f"{platform.platform()}; python {platform.python_version()}",
        f"# {args.kind} depth {args.depth}, {args.time_limit:g} s per fit, one fit "
        "at a time in its own process, methods rotating; * = not proven; "
        "err = training misclassifications of the tree returned",
    ]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=sorted(METHODS), default="numeric")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--smallest", type=int, default=None)
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    methods = args.methods or METHODS[args.kind]
    lines = _header(argv, args)
    for line in lines:
        print(line, flush=True)
    head = f"{'dataset':<22}{'rows':>7}{'feat':>5}" + "".join(
        f"{m[:18]:>20}" for m in methods
    )
    lines += [head, "-" * len(head)]
    print(lines[-2] + "\n" + lines[-1], flush=True)
    results = {}
    for i, (name, data) in enumerate(
        _datasets(args.kind, args.datasets, args.smallest)
    ):
        X, y = data.X, np.unique(data.y, return_inverse=True)[1]
        order = methods[i % len(methods) :] + methods[: i % len(methods)]
        row = {}
        for method in order:
            t, err, opt, note, *extra = run_fit(
                _fit(method), X, y, args.depth, args.time_limit
            )
            row[method] = (t, err, opt, extra[0] if extra else [], note)
        results[name] = row
        cells = "".join(f"{_cell(row[m]):>20}" for m in methods)
        line = f"{name:<22}{X.shape[0]:>7}{X.shape[1]:>5}{cells}"
        lines.append(line)
        print(line, flush=True)
    summary = _summary(results, methods, args.time_limit)
    lines += summary
    print("\n".join(summary), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a") as fh:
        fh.write("\n" + "\n".join(lines) + "\n")
    return 0


def _cell(result):
    t, err, opt, _, note = result
    if note:
        return note[:18]
    return f"{t:8.2f}{' ' if opt else '*'} {err:9.0f}"


def _summary(results, methods, limit):
    ref = methods[0]
    out = ["", f"# summary ({len(results)} instances; reference {ref})"]
    for m in methods:
        proven = sum(1 for row in results.values() if row[m][2])
        out.append(f"proven by {m}: {proven}")
    unproven = [
        name for name, row in results.items() if not any(r[2] for r in row.values())
    ]
    integrals = {m: [] for m in methods}
    for row in results.values():
        finals = [r[1] for r in row.values() if math.isfinite(r[1])]
        if not finals:
            continue
        best = min(finals)
        for m in methods:
            t, err, _, trace, _ = row[m]
            end = t if math.isfinite(t) else limit
            integrals[m].append(primal_integral(trace, end, err, best, limit))
    for m in methods[1:]:
        both = [
            row[ref][0] / row[m][0]
            for row in results.values()
            if row[ref][2] and row[m][2] and row[m][0] > 0
        ]
        out.append(
            f"{ref}/{m}: time ratio {_geomean(both):.3f} (geometric mean over "
            f"{len(both)} instances both prove)"
        )
        no_worse = sum(
            1
            for name in unproven
            if results[name][ref][1] <= results[name][m][1]
            or not math.isfinite(results[name][m][1])
        )
        out.append(
            f"  at the limit (proven by none): {ref}'s tree no worse than "
            f"{m}'s on {no_worse} of {len(unproven)}"
        )
    for m in methods:
        out.append(
            f"primal integral of {m}: {_shifted_geomean(integrals[m]):.3f} s "
            f"(shifted geometric mean, shift {SHIFT_S:g} s)"
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
