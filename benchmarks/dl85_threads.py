"""``n_jobs``: DL8.5 on two threads against one, in the same run.

Command (the frontier issue's target: on 2 cores, ``n_jobs=2`` takes at most
0.6x the time of ``n_jobs=1`` on the instances that take more than 5 s on
one thread, geometric mean, with identical objectives)::

    python benchmarks/dl85_threads.py [--kind binary|numeric|both] [--cap 60]
        [--jobs 2] [--datasets NAME ...] [--note TEXT]

``binary``: the 15 CP4IM sets of ``frontier.py`` at depth 6
(``DL85Classifier``); ``numeric``: the 14 sets of the ConTree suite at
depth 3 (``DL85Classifier(thresholds="all")``). The rule, fixed before any
run: each instance is fitted with ``n_jobs=1`` and ``n_jobs=--jobs``, no
time limit (the threads serve the exact search), each fit in a fresh forked
child killed after ``--cap`` seconds plus 5 s, one fit at a time,
the order of the two alternating from one instance to the next. The ratio
is ``t(n_jobs) / t(1)``; the summary is its geometric mean over the
instances whose one-thread fit takes more than 5 s and both fits end, and
the count of instances where both end with a different objective, lower
bound or proof (it must be 0).

The header (command, commit, date, machine, load) and the table are printed
and appended to ``benchmarks/results/dl85_threads.txt``; the run's fits are
written to ``benchmarks/results/dl85_threads.json`` (the newest run replacing
the last). ::

    python benchmarks/dl85_threads.py --readme

rebuilds the table in docs/guide/benchmarks.md (``<!-- figures:threads -->``)
from that file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl85_vs_pydl85 import _geomean, run_fit
from frontier import _datasets, _provenance, replace_region

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "dl85_threads.txt"
RECORD = ROOT / "benchmarks" / "results" / "dl85_threads.json"
README = ROOT / "docs" / "guide" / "benchmarks.md"  # the page with its region
DEPTH = {"binary": 6, "numeric": 3}
SLOW_S = 5.0  # the target counts the instances slower than this on one thread
GRACE_S = 5.0  # a fit has no time limit: its child is killed at the cap plus this


def _fit(kind, n_jobs):
    """The fitter of ``run_fit``: a ``DL85Classifier`` on ``n_jobs`` threads."""

    def fit(X, y, depth, limit):
        from odtstudy.dl85 import DL85Classifier

        warnings.simplefilter("ignore")
        thresholds = "all" if kind == "numeric" else None
        est = DL85Classifier(max_depth=depth, thresholds=thresholds, n_jobs=n_jobs)
        start = time.perf_counter()
        est.fit(X, y)
        elapsed = time.perf_counter() - start
        bound = float(est.lower_bound_)
        return elapsed, float(est.objective_), bool(est.optimal_), bound

    return fit


def _fits(kind, data, jobs, cap, flip):
    """``{n_jobs: fit}`` of one instance, the two fits in the order given by
    ``flip``; a fit is ``{"seconds", "objective", "optimal", "lower_bound"}``
    (NaN seconds: killed at the cap or crashed)."""
    X = np.asarray(data.X, dtype=float if kind == "numeric" else np.uint8)
    y = np.asarray(data.y)
    fits = {}
    for n_jobs in [jobs, 1] if flip else [1, jobs]:
        seconds, objective, optimal, _note, *extra = run_fit(
            _fit(kind, n_jobs), X, y, DEPTH[kind], cap, grace=GRACE_S
        )
        fits[str(n_jobs)] = {
            "seconds": seconds,
            "objective": objective,
            "optimal": optimal,
            "lower_bound": extra[0] if extra else math.nan,
        }
    return fits


def _outcome(fit):
    return (fit["objective"], fit["optimal"], fit["lower_bound"])


def _compared(instance, jobs):
    """``(ended, ratio, same)`` of an instance: both fits ended, the time
    ratio, and the same objective, proof and bound."""
    one, many = instance["fits"]["1"], instance["fits"][str(jobs)]
    ended = math.isfinite(one["seconds"]) and math.isfinite(many["seconds"])
    if not ended:
        return False, math.nan, False
    return True, many["seconds"] / one["seconds"], _outcome(one) == _outcome(many)


def summary(run) -> dict:
    """Per kind: instances, how many ended with both, how many differ, and
    the ratios of the instances slower than ``SLOW_S`` on one thread."""
    out = {}
    for inst in run["instances"]:
        st = out.setdefault(
            inst["kind"], {"instances": 0, "ended": 0, "different": 0, "slow": {}}
        )
        ended, ratio, same = _compared(inst, run["jobs"])
        st["instances"] += 1
        if ended:
            st["ended"] += 1
            st["different"] += not same
            if inst["fits"]["1"]["seconds"] > SLOW_S:
                st["slow"][inst["name"]] = ratio
    return out


def _row(inst, jobs):
    ended, ratio, same = _compared(inst, jobs)
    cells = []
    for key in ("1", str(jobs)):
        fit = inst["fits"][key]
        t, obj = fit["seconds"], fit["objective"]
        proof = "" if fit["optimal"] else "*"
        cells.append(f"{t:7.2f}{proof}" if math.isfinite(t) else "     --")
        cells.append(f"{obj:8g}" if math.isfinite(obj) else "      --")
    verdict = ("  same" if same else "  DIFFERENT") if ended else ""
    return (
        f"{inst['kind']:8s} {inst['name']:20s} {DEPTH[inst['kind']]:2d} "
        f"{inst['rows']:6d} "
        + " ".join(cells)
        + (f" {ratio:6.3f}" if ended else "     --")
        + verdict
    )


def _summary_lines(run):
    lines = []
    for kind, st in summary(run).items():
        lines.append(
            f"# {kind}: {st['instances']} instances, {st['ended']} ended with both; "
            f"different objective, bound or proof on {st['different']}; time ratio "
            f"n_jobs={run['jobs']} / n_jobs=1 over the {len(st['slow'])} slower than "
            f"{SLOW_S:g} s on one thread: geometric mean "
            f"{_geomean(list(st['slow'].values())):.3f} (target <= 0.6)"
        )
    return lines


def readme_table(run) -> str:
    """The README's threads table, from a run record."""
    lines = [
        f"| search | instances slower than {SLOW_S:g} s on one thread "
        f"| time n_jobs={run['jobs']} / n_jobs=1 (geometric mean) | range "
        "| different loss, bound or proof (all that ended) "
        "| not ended in the cap (left out) |",
        "|---|---|---|---|---|---|",
    ]
    for kind, st in summary(run).items():
        ratios = list(st["slow"].values())
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else "—"
        mean = f"{_geomean(ratios):.2f}" if ratios else "—"
        lines.append(
            f"| {kind} depth {DEPTH[kind]} | {len(ratios)} of {st['instances']} "
            f"| {mean} | {spread} | {st['different']} of {st['ended']} "
            f"| {_not_ended(run, kind)} |"
        )
    note = f"; {run['note']}" if run.get("note") else ""
    lines += [
        "",
        f"`{run['command'].strip()}`, commit {run['commit']}, {run['date']}, "
        f"{run['machine']}{note}. No time limit; each fit in its own process, "
        f"one at a time, killed after {run['cap'] + GRACE_S:g} s.",
    ]
    return "\n".join(lines) + "\n"


def _not_ended(run, kind) -> str:
    """The instances of ``kind`` where a fit did not end, and which ones."""
    names = []
    for inst in run["instances"]:
        if inst["kind"] != kind:
            continue
        fits = inst["fits"]
        late = [k for k, fit in fits.items() if not math.isfinite(fit["seconds"])]
        if len(late) == 2:
            names.append(inst["name"])
        elif late:
            other = next(k for k in fits if k not in late)
            ended = f"n_jobs={other}: {fits[other]['seconds']:.0f} s"
            names.append(f"{inst['name']} (n_jobs={late[0]}; {ended})")
    return ", ".join(names) or "—"


def update_readme(readme: Path, record: Path) -> int:
    """Replace the README's threads region; 1 when the region is missing."""
    table = readme_table(json.loads(record.read_text()))
    return replace_region(readme, "threads", table)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", choices=["binary", "numeric", "both"], default="both")
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--note", default="")
    parser.add_argument(
        "--readme",
        action="store_true",
        help="rebuild its table in the user guide (README) and exit",
    )
    args = parser.parse_args(argv)
    if args.readme:
        return update_readme(README, args.record)
    run = {
        **_provenance(argv, "dl85_threads.py"),
        "note": args.note,
        "jobs": args.jobs,
        "cap": args.cap,
        "instances": [],
    }
    kinds = ["binary", "numeric"] if args.kind == "both" else [args.kind]
    note = f"; {args.note}" if args.note else ""
    lines = [
        f"# command: {run['command']}",
        f"# commit: {run['commit']}, {run['date']}, {run['machine']}{note}",
        f"# n_jobs={args.jobs} against n_jobs=1, no time limit, each fit in its own "
        f"process killed after {args.cap + GRACE_S:g} s, one fit at a time, the order "
        "alternating; * = not proven; ratio = t(n_jobs) / t(1)",
        f"{'kind':8s} {'dataset':20s} {'d':>2s} {'rows':>6s} {'t(1)':>7s} "
        f"{'obj(1)':>8s} {'t(' + str(args.jobs) + ')':>7s} {'obj':>8s} {'ratio':>6s}",
    ]
    print("\n".join(lines), flush=True)
    flip = False
    for kind in kinds:
        names = args.datasets
        if names is not None:
            numeric = kind == "numeric"
            names = [n for n in names if n.startswith("contree/") == numeric]
            if not names:
                continue
        for name, data in _datasets(kind, names, None):
            inst = {
                "kind": kind,
                "name": name,
                "rows": int(data.X.shape[0]),
                "fits": _fits(kind, data, args.jobs, args.cap, flip),
            }
            flip = not flip
            run["instances"].append(inst)
            lines.append(_row(inst, args.jobs))
            print(lines[-1], flush=True)
    summary_lines = _summary_lines(run)
    print("\n".join(summary_lines))
    lines += summary_lines
    with open(args.output, "a") as fh:
        fh.write("\n" + "\n".join(lines) + "\n")
    args.record.write_text(json.dumps(run, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
