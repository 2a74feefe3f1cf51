"""Time odtstudy's DL8.5 on numeric features against ConTree (pycontree).

One command::

    python benchmarks/numeric_vs_contree.py [--depths 2 3 4] [--time-limit 60]
                                            [--datasets uci/iris uci/sonar ...]
                                            [--repeats 3] [--with-binarized]
                                            [--with-old [--old-rev REV]]
                                            [--output FILE]

``ours`` is ``DL85Classifier(thresholds="all", max_depth=d, time_limit=T)``
on the raw numeric columns; ``contree`` is ``pycontree.ConTree(max_depth=d,
max_gap=0, time_limit=T)`` on the same rows (``max_gap=0``, its default: an
exact search); both minimise training misclassifications over every threshold
of every feature, so wherever both prove optimality their objectives must be
equal. ``--with-binarized`` adds ``binarized``: DL8.5 on
``Binarizer()`` (every midpoint) of the same rows, binarised before the
timed fit, the only way DL8.5 took numbers before ``thresholds``.
``--with-old`` adds ``old``: the same fit as ``ours`` by the engine of
another revision (``--old-rev``, default the merge base with ``main``),
built beside this one as ``odtstudy_old`` (``benchmarks/_old_engine.py``),
so ``ours/old`` measures an engine change against the ConTree reference in
the same run.

The default datasets are the numeric UCI sets vendored in the package (every
``uci/*`` set of kind numeric, which covers the numeric sets of the
``exact-numeric`` study), smallest first. Labels are encoded 0..k-1 once, for
every solver.

Every fit runs in a fresh forked child process (killed at the time limit plus
a grace period; a crash or hang stops nothing else), after a warm-up fit on a
tiny problem; ``--repeats`` fits (each in its own child, stopping past 2 s)
keep the fastest. Times are the wall-clock seconds of ``fit`` measured inside
the child, the same way for every solver (imports and data loading
excluded). The solvers alternate on every instance (the order rotates), so
that load changes on the machine hit all of them.

Printed per instance: times, training errors, optimality flags and the ratio
ours / ConTree; per depth, the geometric-mean ratio over the instances both
prove, how many each proves, and the objective check: a MISMATCH is two
proven objectives that differ, or a tree better than a proven optimum. The
header (command, commit, date, cores) and the tables are printed and
appended to ``benchmarks/results/numeric_vs_contree.txt``.

A run over the default datasets also writes its every fit to
``benchmarks/results/numeric_vs_contree.json`` (``--record FILE`` for another
file or for a run over chosen datasets, ``--record -`` for none), after every
instance, the newest run replacing the last. ::

    python benchmarks/numeric_vs_contree.py --readme

rebuilds the table of docs/guide/published-solvers.md (between
``<!-- figures:numeric-vs-contree -->`` and
``<!-- /figures:numeric-vs-contree -->``) from that record.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _old_engine import old_engine_path
from dl85_vs_pydl85 import _fmt_time, _geomean, run_fit
from frontier import _provenance, replace_region

from odtstudy.datasets import Binarizer, dataset_info, list_datasets, load_dataset

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "numeric_vs_contree.txt"
RECORD = ROOT / "benchmarks" / "results" / "numeric_vs_contree.json"
README = ROOT / "docs" / "guide" / "published-solvers.md"  # the page with its region
EXACT_NUMERIC = ROOT / "odtstudy" / "study" / "configs" / "exact-numeric.toml"
SOLVERS = ["ours", "contree"]
BINARIZED = "binarized"
OLD = "old"
SHORT = {"ours": "ours", "contree": "ctree", BINARIZED: "bin", OLD: "old"}


def _fit_numeric(estimator_class, X, y, depth, limit):
    clf = estimator_class(thresholds="all", max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    clf.fit(X, y)
    elapsed = time.perf_counter() - start
    return elapsed, float(clf.objective_), bool(clf.optimal_)


def _fit_ours(X, y, depth, limit):
    from odtstudy.dl85 import DL85Classifier

    return _fit_numeric(DL85Classifier, X, y, depth, limit)


def _fit_old(X, y, depth, limit):
    sys.path.insert(0, old_engine_path())
    from odtstudy_old.dl85 import DL85Classifier

    return _fit_numeric(DL85Classifier, X, y, depth, limit)


def _fit_contree(X, y, depth, limit):
    import pycontree

    clf = pycontree.ConTree(max_depth=depth, max_gap=0, time_limit=limit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        clf.fit(X, y)
        elapsed = time.perf_counter() - start
    # ConTree's only signal that it stopped at its limit is this warning
    timed_out = any("time limit" in str(w.message) for w in caught)
    error = float(np.sum(clf.predict(X) != y))
    return elapsed, error, not timed_out


def _fit_binarized(X, y, depth, limit):
    from odtstudy.dl85 import DL85Classifier

    clf = DL85Classifier(max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    clf.fit(X, y)
    elapsed = time.perf_counter() - start
    return elapsed, float(clf.objective_), bool(clf.optimal_)


FITTERS = {
    "ours": _fit_ours,
    "contree": _fit_contree,
    BINARIZED: _fit_binarized,
    OLD: _fit_old,
}


def default_datasets() -> list[str]:
    """The vendored numeric UCI sets (and the numeric sets of the
    ``exact-numeric`` study), smallest (rows x features) first."""
    names = {n for n in list_datasets() if n.startswith("uci/")}
    names |= set(tomllib.loads(EXACT_NUMERIC.read_text())["study"]["datasets"])
    infos = {}
    for name in names:
        info = dataset_info(name)
        if info.get("kind") == "numeric":
            infos[f"{info['collection']}/{info['name']}"] = info
    return sorted(infos, key=lambda n: (infos[n]["rows"] * infos[n]["features"], n))


def _commit() -> str:
    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        sha = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "odtstudy")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + (" + uncommitted changes in odtstudy/" if dirty else "")


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"python {platform.python_version()}"]
    for package in ("odtstudy", "pycontree"):
        try:
            parts.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package} not installed")
    return ", ".join(parts)


class _Out:
    """Print each line and append it to the result file as it comes, so a
    long run that is stopped keeps what it measured."""

    def __init__(self, path):
        self.file = None
        if path != "-":
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = path.open("a")

    def __call__(self, line=""):
        print(line, flush=True)
        if self.file is not None:
            self.file.write(line + "\n")
            self.file.flush()

    def close(self):
        if self.file is not None:
            self.file.close()


def _best_of(solver, X, y, depth, limit, repeats):
    """(seconds, objective, optimal, note): the fastest of ``repeats`` fits,
    each in a fresh child (no repeat past a 2 s fit or a failure)."""
    best = None
    for _ in range(repeats):
        result = run_fit(FITTERS[solver], X, y, depth, limit)
        if best is None or result[0] < best[0]:
            best = result
        if result[3] or not result[0] <= 2.0:
            break
    return best


def _mismatch(res, a, b) -> bool:
    """Two proven objectives differ, or one beats the other's proven optimum."""
    _, ea, pa = res[a][:3]
    _, eb, pb = res[b][:3]
    if math.isnan(ea) or math.isnan(eb):
        return False
    if pa and pb:
        return abs(ea - eb) > 1e-9
    return (pa and eb < ea - 1e-9) or (pb and ea < eb - 1e-9)


def _fmt_err(error) -> str:
    return "--" if math.isnan(error) else f"{error:g}"


def _pairs(solvers):
    return [(a, b) for i, a in enumerate(solvers) for b in solvers[i + 1 :]]


def _thresholds(X) -> int:
    return int(sum(len(np.unique(X[:, j])) - 1 for j in range(X.shape[1])))


def _instance_line(name, depth, shape, res, solvers, others):
    rows, cols, thr = shape
    line = f"{name:<18} {depth:>1} {rows:>6} {cols:>4} {thr:>6} "
    line += " ".join(
        f"{_fmt_time(res[s][0], res[s][2]):>9} {_fmt_err(res[s][1]):>8}"
        for s in solvers
    )
    for s in others:
        both = res["ours"][2] and res[s][2]
        ratio = res["ours"][0] / max(res[s][0], 1e-9) if both else math.nan
        line += f" {ratio:>10.3f}" if both else f" {'--':>10}"
    notes = [f"{s}: {res[s][3]}" for s in solvers if res[s][3]]
    bad = [f"{a} vs {b}" for a, b in _pairs(solvers) if _mismatch(res, a, b)]
    if bad:
        notes.insert(0, "<<< MISMATCH " + ", ".join(bad) + " >>>")
    if notes:
        line += "  [" + "; ".join(notes) + "]"
    return line


def _summary(out, run):
    """Print the per-depth summary of ``run`` (see :func:`summary`); returns
    the objective mismatches."""
    out()
    out("# summary per depth")
    fits = {(i["name"], i["depth"]): _fits(i) for i in run["instances"]}
    mismatches = []
    for depth, st in summary(run).items():
        solved = ", ".join(f"{s} {n}" for s, n in st["proven"].items())
        out(f"depth {depth}: proven / {st['instances']}: {solved}")
        if any(st["failed"].values()):
            failed = ", ".join(f"{s} {n}" for s, n in st["failed"].items())
            out(f"  failed (error, crash or hard timeout): {failed}")
        for s, by_name in st["ratios"].items():
            ratios = list(by_name.values())
            faster = sum(1 for q in ratios if q < 1)
            out(
                f"  geometric mean time ratio ours/{s}: {_geomean(ratios):.3f} over "
                f"{len(ratios)} instances both prove (ours faster on {faster})"
            )
        for n, a, b in st["mismatches"]:
            r = fits[(n, depth)]
            mismatches.append((n, depth, a, b, r[a][:3], r[b][:3]))
    if mismatches:
        out("!!! OBJECTIVE MISMATCHES (dataset, depth, solver a, solver b, a, b;")
        out("!!! each (seconds, objective, proven)):")
        for m in mismatches:
            out(f"!!! MISMATCH {m}")
    else:
        out("objectives equal wherever two solvers prove optimality, and no tree")
        out("beats a proven optimum: yes")
    return mismatches


def _fits(inst) -> dict:
    """An instance's fits of a record as ``(seconds, objective, optimal, note)``."""
    return {
        s: (f["seconds"], f["errors"], f["optimal"], f["note"])
        for s, f in inst["fits"].items()
    }


def _proven_by_one(res, other) -> dict:
    """The instances only ours, and only ``other``, proves."""
    return {
        "ours": [n for n, r in res if r["ours"][2] and not r[other][2]],
        other: [n for n, r in res if r[other][2] and not r["ours"][2]],
    }


def _at_limit(res, other) -> dict:
    """Over the instances neither proves (both with a tree): where ours has
    fewer, as many or more training errors than ``other``'s."""
    out = {"fewer": [], "same": [], "more": []}
    for n, r in res:
        a, b = r["ours"][1], r[other][1]
        if r["ours"][2] or r[other][2] or math.isnan(a) or math.isnan(b):
            continue
        out["fewer" if a < b else "same" if a == b else "more"].append(n)
    return out


def summary(run) -> dict:
    """Per depth of a record: instances, proofs and failed fits per solver, and
    per other solver the ratios ours / it over the instances both prove, the
    instances one of the two proves, the trees at the limit; mismatched pairs."""
    stats = {}
    for depth in run["depths"]:
        at = [i for i in run["instances"] if i["depth"] == depth]
        if not at:
            continue
        res = [(i["name"], _fits(i)) for i in at]
        ratios = {
            s: {
                n: r["ours"][0] / max(r[s][0], 1e-9)
                for n, r in res
                if r["ours"][2] and r[s][2]
            }
            for s in run["solvers"][1:]
        }
        stats[depth] = {
            "instances": len(at),
            "proven": {s: sum(1 for _, r in res if r[s][2]) for s in run["solvers"]},
            "failed": {s: sum(1 for _, r in res if r[s][3]) for s in run["solvers"]},
            "ratios": ratios,
            "only": {s: _proven_by_one(res, s) for s in run["solvers"][1:]},
            "at_limit": {s: _at_limit(res, s) for s in run["solvers"][1:]},
            "mismatches": [
                (n, a, b)
                for n, r in res
                for a, b in _pairs(run["solvers"])
                if _mismatch(r, a, b)
            ],
            "skipped": [n for n, d in run["skipped"] if d == depth],
        }
    return stats


def readme_table(run) -> str:
    """The README's table, from a run record."""
    others = run["solvers"][1:]
    proven = " / ".join(["ours", *others])
    lines = [
        f"| depth | instances | proven: {proven} "
        + "".join(
            f"| time ours / {s} (geometric mean, instances both prove) "
            "| ours faster on | slowest ratio | proven by one only "
            f"| neither proves: ours fewer / as many / more errors than {s} "
            for s in others
        )
        + "|",
        "|---|---|---" + "|---|---|---|---|---" * len(others) + "|",
    ]
    stats = summary(run)
    mismatches = 0
    for depth, st in stats.items():
        mismatches += len(st["mismatches"])
        cells = [
            str(depth),
            str(st["instances"]),
            " / ".join(str(st["proven"][s]) for s in run["solvers"]),
        ]
        for s in others:
            ratios = st["ratios"][s]
            if ratios:
                worst = max(ratios, key=ratios.get)
                faster = sum(1 for q in ratios.values() if q < 1)
                cells += [
                    f"{_geomean(list(ratios.values())):.2f} ({len(ratios)})",
                    f"{faster} of {len(ratios)}",
                    f"{ratios[worst]:.2f} ({worst})",
                ]
            else:
                cells += ["none both prove", "—", "—"]
            only = [f"{k}: {', '.join(v)}" for k, v in st["only"][s].items() if v]
            limit = st["at_limit"][s]
            counts = " / ".join(str(len(limit[k])) for k in ("fewer", "same", "more"))
            if limit["more"]:
                counts += f" (more: {', '.join(limit['more'])})"
            cells += ["; ".join(only) or "—", counts]
        lines.append("| " + " | ".join(cells) + " |")
    skipped = sum(len(st["skipped"]) for st in stats.values())
    check = (
        "every objective two solvers prove is equal, and no tree beats a proven optimum"
        if not mismatches
        else f"**objective mismatches: {mismatches}** (see the record)"
    )
    note = f"; {run['note']}" if run.get("note") else ""
    done = len({i["name"] for i in run["instances"]} | {n for n, _ in run["skipped"]})
    if done < run["planned"]:
        note += f"; run cut short: {done} of {run['planned']} sets"
    lines += [
        "",
        f"`{run['command']}`, commit {run['commit']}, {run['date']}, "
        f"{run['machine']}{note}. {run['time_limit']:g} s per fit, one process "
        f"per fit, the solvers alternating, the fastest of {run['repeats']} "
        f"fit(s) under 2 s; {check}"
        + (
            f"; {skipped} instances skipped after every solver timed out at a "
            "smaller depth (unproven for all)."
            if skipped
            else "."
        ),
    ]
    return "\n".join(lines) + "\n"


def update_readme(readme: Path, record: Path) -> int:
    """Replace the README's numeric-vs-contree region; 1 when it is missing."""
    table = readme_table(json.loads(record.read_text()))
    return replace_region(readme, "numeric-vs-contree", table)


def _record_path(args) -> Path | None:
    if args.record == "-":
        return None
    if args.record is not None:
        return Path(args.record)
    return RECORD if args.datasets is None else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="keep the fastest of this many fits (each in a fresh process; "
        "fits under 2 s only)",
    )
    parser.add_argument(
        "--skip-after-timeouts",
        action="store_true",
        help="skip the deeper depths of a dataset once every solver timed out "
        "at a smaller depth (a deeper tree is not easier to prove); the "
        "skipped instances are listed and count as unproven for every solver",
    )
    parser.add_argument(
        "--with-binarized",
        action="store_true",
        help="also DL8.5 on the every-midpoint Binarizer output",
    )
    parser.add_argument(
        "--with-old",
        action="store_true",
        help="also the same fit by the engine of --old-rev (odtstudy_old)",
    )
    parser.add_argument(
        "--old-rev",
        default=None,
        help="git revision of the old engine (default: the merge base with main)",
    )
    parser.add_argument(
        "--output",
        default=str(DEFAULT_OUTPUT),
        help=f"append the results to this file (default {DEFAULT_OUTPUT}; "
        "'-' for none)",
    )
    parser.add_argument(
        "--record",
        default=None,
        help=f"write every fit to this JSON file (default {RECORD} for a run "
        "over the default datasets, else none; '-' for none)",
    )
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
        return update_readme(README, Path(args.record or RECORD))
    datasets = args.datasets or default_datasets()
    solvers = SOLVERS + ([BINARIZED] if args.with_binarized else [])
    if args.old_rev:
        os.environ["ODTSTUDY_OLD_REV"] = args.old_rev  # read by the children too
    if args.with_old:
        solvers.append(OLD)
        old_engine_path()  # build it once, before the forked children
    others = solvers[1:]

    out = _Out(args.output)
    given = sys.argv[1:] if argv is None else argv
    record = _record_path(args)
    run = {
        **_provenance(given, script="numeric_vs_contree.py"),
        "depths": args.depths,
        "time_limit": args.time_limit,
        "repeats": args.repeats,
        "solvers": solvers,
        "note": args.note,
        "planned": len(datasets),
        "instances": [],
        "skipped": [],
    }
    out()
    out(f"# command: {run['command']}")
    out(
        f"# commit: {_commit()}, {run['date']}, {os.cpu_count()} cores (shared), "
        f"{platform.platform()}; {_versions()}"
    )
    out(
        f"# DL8.5 thresholds='all' vs ConTree: depths {args.depths}, time limit "
        f"{args.time_limit:g} s, solvers {', '.join(solvers)}, fastest of "
        f"{args.repeats} fit(s) under 2 s, one process per fit"
    )
    out(
        "# times in seconds; * = not proven optimal; err = training "
        "misclassifications; thr = candidate thresholds (distinct values - 1, "
        "summed over features)"
    )
    header = f"{'dataset':<18} {'d':>1} {'rows':>6} {'feat':>4} {'thr':>6} "
    header += " ".join(f"{'t_' + SHORT[s]:>9} {'err_' + SHORT[s]:>8}" for s in solvers)
    header += " " + " ".join(f"{'ours/' + SHORT[s]:>10}" for s in others)
    out(header)
    out("-" * len(header))

    turn = 0
    started = time.perf_counter()
    for name in datasets:
        data = load_dataset(name)
        X = np.ascontiguousarray(data.X, dtype=np.float64)
        _, y = np.unique(np.asarray(data.y), return_inverse=True)
        y = y.astype(np.int64)
        inputs = {"ours": X, "contree": X, OLD: X}
        if args.with_binarized:
            inputs[BINARIZED] = np.ascontiguousarray(Binarizer().fit_transform(X))
        shape = (X.shape[0], X.shape[1], _thresholds(X))
        short = name.removeprefix("uci/")
        hopeless = None
        for depth in args.depths:
            if hopeless is not None:
                out(
                    f"{short:<18} {depth:>1} skipped: every solver timed out "
                    f"at depth {hopeless}"
                )
                run["skipped"].append([short, depth])
                continue
            order = solvers[turn % len(solvers) :] + solvers[: turn % len(solvers)]
            turn += 1
            res = {
                s: _best_of(s, inputs[s], y, depth, args.time_limit, args.repeats)
                for s in order
            }
            run["instances"].append(
                {
                    "name": short,
                    "depth": depth,
                    "rows": shape[0],
                    "features": shape[1],
                    "thresholds": shape[2],
                    "fits": {
                        s: dict(zip(("seconds", "errors", "optimal", "note"), res[s]))
                        for s in solvers
                    },
                }
            )
            if record is not None:
                # after every instance: a run cut short keeps its fits
                record.write_text(json.dumps(run, indent=1) + "\n")
            out(_instance_line(short, depth, shape, res, solvers, others))
            if args.skip_after_timeouts and not any(res[s][2] for s in solvers):
                hopeless = depth

    mismatches = _summary(out, run)
    for depth in args.depths:
        names = [n for n, d in run["skipped"] if d == depth]
        if names:
            out(
                f"depth {depth}: {len(names)} skipped (every solver timed out at a "
                f"smaller depth; unproven for all): {', '.join(names)}"
            )
    out(f"# total {time.perf_counter() - started:.0f} s")
    out.close()
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
