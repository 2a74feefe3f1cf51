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
appended to ``benchmarks/results/frontier.txt``; the run's every fit is also
written to ``benchmarks/results/frontier/<kind>-d<depth>-<limit>s.json``
(one file per target, the newest run replacing the last), after every
instance: a run cut short keeps what it measured, and its README row says
how many of the planned sets it ran. ::

    python benchmarks/frontier.py --readme

rebuilds the frontier table of docs/guide/benchmarks.md (between
``<!-- figures:frontier -->`` and ``<!-- /figures:frontier -->``) from those
files.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from dl85_vs_pydl85 import _geomean, run_fit
from readme_figures import update

from odtstudy.datasets import list_datasets, load_dataset

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "frontier.txt"
RECORDS = ROOT / "benchmarks" / "results" / "frontier"
README = ROOT / "docs" / "guide" / "benchmarks.md"  # the page with its region
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


def _provenance(argv, script="frontier.py"):
    """Command, commit, date and machine of a run of ``benchmarks/<script>``."""
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "command": shlex.join(["python", f"benchmarks/{script}", *argv]),
        "commit": commit + (" (modified)" if dirty else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "machine": f"{platform.platform()}; {os.cpu_count()} CPUs, this run on "
        f"CPU {sorted(os.sched_getaffinity(0))}, load average "
        f"{os.getloadavg()[0]:.2f} at its start; python {platform.python_version()}",
    }


def _header(run):
    note = f"; {run['note']}" if run.get("note") else ""
    return [
        f"# command: {run['command']}",
        f"# commit: {run['commit']}, {run['date']}, {run['machine']}{note}",
        f"# {run['kind']} depth {run['depth']}, {run['time_limit']:g} s per fit, "
        "one fit at a time in its own process, methods rotating; * = not "
        "proven; err = training misclassifications of the tree returned",
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
    parser.add_argument("--records", type=Path, default=RECORDS)
    parser.add_argument(
        "--readme",
        action="store_true",
        help="rebuild its table in the user guide (README) and exit",
    )
    parser.add_argument(
        "--note", default="", help="what else ran on the machine (for the record)"
    )
    args = parser.parse_args(argv)
    if args.readme:
        return update_readme(README, args.records)
    run = {
        **_provenance(argv),
        "kind": args.kind,
        "depth": args.depth,
        "time_limit": args.time_limit,
        "methods": args.methods or METHODS[args.kind],
        "note": args.note,
        "instances": [],
    }
    methods = run["methods"]
    lines = _header(run)
    for line in lines:
        print(line, flush=True)
    datasets = _datasets(args.kind, args.datasets, args.smallest)
    run["planned"] = len(datasets)
    args.records.mkdir(parents=True, exist_ok=True)
    path = args.records / f"{args.kind}-d{args.depth}-{args.time_limit:g}s.json"
    for i, (name, data) in enumerate(datasets):
        X, y = data.X, np.unique(data.y, return_inverse=True)[1]
        order = methods[i % len(methods) :] + methods[: i % len(methods)]
        fits = {}
        for method in order:
            t, err, opt, note, *extra = run_fit(
                _fit(method), X, y, args.depth, args.time_limit
            )
            fits[method] = {
                "seconds": t,
                "errors": err,
                "optimal": opt,
                "trace": extra[0] if extra else [],
                "note": note,
            }
        run["instances"].append(
            {"name": name, "rows": X.shape[0], "features": X.shape[1], "fits": fits}
        )
        # the record after every instance: a run cut short keeps its fits
        path.write_text(json.dumps(run, indent=1) + "\n")
        if i == 0:
            print("\n".join(_table(run)[:2]), flush=True)
        print(_table(run)[-1], flush=True)
    summary_lines = _summary_lines(run)
    lines += _table(run) + summary_lines
    print("\n".join(summary_lines), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a") as fh:
        fh.write("\n" + "\n".join(lines) + "\n")
    return 0


def _cell(fit):
    if fit["note"]:
        return fit["note"][:18]
    mark = " " if fit["optimal"] else "*"
    return f"{fit['seconds']:8.2f}{mark} {fit['errors']:9.0f}"


def _table(run):
    methods = run["methods"]
    head = f"{'dataset':<22}{'rows':>7}{'feat':>5}" + "".join(
        f"{m[:18]:>20}" for m in methods
    )
    lines = [head, "-" * len(head)]
    for inst in run["instances"]:
        cells = "".join(f"{_cell(inst['fits'][m]):>20}" for m in methods)
        lines.append(f"{inst['name']:<22}{inst['rows']:>7}{inst['features']:>5}{cells}")
    return lines


def summary(run):
    """Per method: instances proven, the time ratio of the reference (the
    first method) to it over the instances both prove, on how many of the
    instances no method proves the reference's tree is no worse, and the
    shifted geometric mean of the primal integral."""
    methods, limit = run["methods"], run["time_limit"]
    ref = methods[0]
    rows = [inst["fits"] for inst in run["instances"]]
    unproven = [fits for fits in rows if not any(f["optimal"] for f in fits.values())]
    # the best tree any method returned, per instance that has one
    bests = []
    for fits in rows:
        finals = [f["errors"] for f in fits.values() if math.isfinite(f["errors"])]
        if finals:
            bests.append((fits, min(finals)))
    out = {}
    for m in methods:
        integrals = []
        for fits, best in bests:
            fit = fits[m]
            end = fit["seconds"] if math.isfinite(fit["seconds"]) else limit
            integrals.append(
                primal_integral(fit["trace"], end, fit["errors"], best, limit)
            )
        both = [
            fits[ref]["seconds"] / fits[m]["seconds"]
            for fits in rows
            if fits[ref]["optimal"] and fits[m]["optimal"] and fits[m]["seconds"] > 0
        ]
        no_worse = sum(
            1
            for fits in unproven
            if fits[ref]["errors"] <= fits[m]["errors"]
            or not math.isfinite(fits[m]["errors"])
        )
        out[m] = {
            "proven": sum(1 for fits in rows if fits[m]["optimal"]),
            "time_ratio": _geomean(both),
            "both_proven": len(both),
            "no_worse": no_worse,
            "unproven": len(unproven),
            "primal_integral": _shifted_geomean(integrals),
        }
    return out


def _summary_lines(run):
    methods = run["methods"]
    ref = methods[0]
    stats = summary(run)
    out = ["", f"# summary ({len(run['instances'])} instances; reference {ref})"]
    out += [f"proven by {m}: {stats[m]['proven']}" for m in methods]
    for m in methods[1:]:
        st = stats[m]
        out.append(
            f"{ref}/{m}: time ratio {st['time_ratio']:.3f} (geometric mean over "
            f"{st['both_proven']} instances both prove)"
        )
        out.append(
            f"  at the limit (proven by none): {ref}'s tree no worse than "
            f"{m}'s on {st['no_worse']} of {st['unproven']}"
        )
    out += [
        f"primal integral of {m}: {stats[m]['primal_integral']:.3f} s "
        f"(shifted geometric mean, shift {SHIFT_S:g} s)"
        for m in methods
    ]
    return out


def readme_table(records: Path) -> str:
    """The README's table: one block of rows per committed frontier record."""
    lines = [
        "| target | method | proven | time ratio ours / it (both prove) "
        "| ours no worse at the limit (none proves) | primal integral (s) |",
        "|---|---|---|---|---|---|",
    ]
    runs = [json.loads(p.read_text()) for p in sorted(records.glob("*.json"))]
    for run in runs:
        stats = summary(run)
        done = len(run["instances"])
        sets = f"{done} sets"
        if run.get("planned", done) > done:
            sets = f"{done} of {run['planned']} sets (run cut short)"
        target = (
            f"{run['kind']} d{run['depth']}, {run['time_limit']:g} s, "
            f"{sets} ({run['commit']})"
        )
        for k, (m, st) in enumerate(stats.items()):
            ratio = (
                f"{st['time_ratio']:.2f} ({st['both_proven']})"
                if st["both_proven"]
                else "none both prove"
            )
            worse = f"{st['no_worse']} of {st['unproven']}" if st["unproven"] else "—"
            if k == 0:
                ratio, worse = "reference", ""
            lines.append(
                f"| {target if k == 0 else ''} | {m} | {st['proven']} | {ratio} "
                f"| {worse} | {st['primal_integral']:.2f} |"
            )
    if not runs:
        lines.append("| (no record yet) | | | | | |")
    lines.append("")
    for run in runs:
        note = f"; {run['note']}" if run.get("note") else ""
        lines.append(
            f"- {run['kind']} d{run['depth']}: `{run['command']}`, {run['date']}, "
            f"{run['machine']}{note}."
        )
    return "\n".join(lines) + "\n"


def replace_region(readme: Path, name: str, table: str) -> int:
    """Replace the README's region ``name`` by ``table``; 1 when it is missing."""
    text = readme.read_text()
    if f"<!-- figures:{name} -->" not in text:
        print(f"{readme}: no <!-- figures:{name} --> region", file=sys.stderr)
        return 1
    text, _ = update(text, {name: table})
    readme.write_text(text)
    return 0


def update_readme(readme: Path, records: Path) -> int:
    """Replace the README's frontier region; 1 when the region is missing."""
    return replace_region(readme, "frontier", readme_table(records))


if __name__ == "__main__":
    sys.exit(main())
