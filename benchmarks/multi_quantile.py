"""Nine quantiles in one DL8.5 search against nine single-quantile fits.

One command::

    python benchmarks/multi_quantile.py [--depths 3 4] [--time-limit 60]
                                        [--repeats 3] [--datasets osrt/servo ...]
                                        [--output FILE]

``multi`` is ``DL85Regressor(criterion="quantile", quantile=[0.1, ..., 0.9],
max_depth=d)``; ``nine`` is nine ``DL85Regressor(criterion="quantile",
quantile=tau, max_depth=d)`` fits, one per tau, timed together. Both run in
this process, interleaved (multi, nine, multi, nine, ...), and the fastest
of ``--repeats`` rounds of each is kept (no repeat past a 2 s fit). Times
are ``perf_counter`` seconds around ``fit`` (data loaded before). The time
limit is per quantile: each single fit gets ``--time-limit`` seconds, the
multi-quantile fit nine times that for the whole search.

The default datasets are the OSRT regression sets (``osrt/*``, 0/1 features,
real target), smallest first. Printed per instance: both times, the ratio
multi / nine, whether each proved every quantile, the quantile pairs whose
trees cross on training rows, and the objective check: a MISMATCH is a
quantile whose proven objectives differ. Per depth and overall: the
geometric-mean ratio over the instances both prove (target <= 0.4). The
header (command, commit, date, cores) and the table are printed and
appended to ``benchmarks/results/multi_quantile.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl85_vs_pydl85 import _geomean
from numeric_vs_contree import _commit, _Out

from odtstudy.datasets import dataset_info, list_datasets, load_dataset
from odtstudy.dl85 import DL85Regressor

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "multi_quantile.txt"
TAUS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
TARGET = 0.4


def default_datasets() -> list[str]:
    """The OSRT regression sets, smallest (rows x features) first."""
    names = [n for n in list_datasets(task="regression") if n.startswith("osrt/")]
    infos = {n: dataset_info(n) for n in names}
    return sorted(names, key=lambda n: (infos[n]["rows"] * infos[n]["features"], n))


def _fit_multi(X, y, depth, limit):
    """(seconds, objectives, proven, crossing pairs) of the nine-quantile fit."""
    reg = DL85Regressor(
        criterion="quantile", quantile=TAUS, max_depth=depth, time_limit=limit * 9
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # crossings: counted below
        start = time.perf_counter()
        reg.fit(X, y)
        seconds = time.perf_counter() - start
    crossing = int(np.count_nonzero(reg.crossings_))
    return seconds, list(reg.objective_), list(reg.optimal_per_quantile_), crossing


def _fit_nine(X, y, depth, limit):
    """(seconds, objectives, proven, None) of nine single-quantile fits."""
    seconds, objectives, proven = 0.0, [], []
    for tau in TAUS:
        reg = DL85Regressor(
            criterion="quantile", quantile=tau, max_depth=depth, time_limit=limit
        )
        start = time.perf_counter()
        reg.fit(X, y)
        seconds += time.perf_counter() - start
        objectives.append(reg.objective_)
        proven.append(reg.optimal_)
    return seconds, objectives, proven, None


def _best_interleaved(X, y, depth, limit, repeats):
    """The fastest of ``repeats`` rounds of each, the two alternating."""
    best = {}
    for _ in range(repeats):
        for name, fit in (("multi", _fit_multi), ("nine", _fit_nine)):
            result = fit(X, y, depth, limit)
            if name not in best or result[0] < best[name][0]:
                best[name] = result
        if max(best["multi"][0], best["nine"][0]) > 2.0:
            break
    return best


def _check(best) -> str:
    """ "ok", or MISMATCH naming the quantiles whose proven objectives differ."""
    bad = [
        f"{tau:g}"
        for tau, a, b, pa, pb in zip(
            TAUS, best["multi"][1], best["nine"][1], best["multi"][2], best["nine"][2]
        )
        if pa and pb and not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    ]
    return "ok" if not bad else "MISMATCH at " + ", ".join(bad)


def _summary(out, rows, depths):
    out()
    for depth in [*depths, None]:
        ratios = [r for d, r, both in rows if both and (depth is None or d == depth)]
        where = "all depths" if depth is None else f"depth {depth}"
        total = sum(1 for d, _, _ in rows if depth is None or d == depth)
        if not ratios:
            out(f"# {where}: no instance proven by both")
            continue
        mean = _geomean(ratios)
        verdict = "met" if mean <= TARGET else "NOT met"
        out(
            f"# {where}: geometric mean multi/nine = {mean:.3f} over {len(ratios)} "
            f"of {total} instances both prove (target <= {TARGET}: {verdict})"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument(
        "--time-limit", type=float, default=60.0, help="seconds per quantile"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="keep the fastest of this many interleaved rounds (fits under 2 s)",
    )
    parser.add_argument(
        "--output",
        default=str(DEFAULT_OUTPUT),
        help=f"append the results to this file (default {DEFAULT_OUTPUT}; "
        "'-' for none)",
    )
    args = parser.parse_args(argv)
    datasets = args.datasets or default_datasets()

    out = _Out(args.output)
    given = sys.argv[1:] if argv is None else argv
    command = " ".join(["python benchmarks/multi_quantile.py", *given])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out()
    out(f"# command: {command}")
    out(
        f"# commit: {_commit()}, {now}, {os.cpu_count()} cores (shared), "
        f"{platform.platform()}; python {platform.python_version()}"
    )
    out(
        f"# DL85Regressor pinball loss at {len(TAUS)} quantiles: one search (multi) "
        f"vs one fit per quantile (nine); depths {args.depths}, time limit "
        f"{args.time_limit:g} s per quantile, fastest of {args.repeats} "
        "interleaved round(s) under 2 s"
    )
    out(
        "# times in seconds; * = some quantile not proven optimal; cross = "
        "quantile pairs whose trees cross on training rows"
    )
    header = (
        f"{'dataset':<14} {'d':>1} {'rows':>6} {'feat':>4} {'t_multi':>9} "
        f"{'t_nine':>9} {'multi/nine':>10} {'cross':>5}  check"
    )
    out(header)
    out("-" * len(header))
    rows = []
    for name in datasets:
        data = load_dataset(name)
        X = np.ascontiguousarray(data.X, dtype=np.uint8)
        y = np.asarray(data.y, dtype=np.float64)
        short = name.removeprefix("osrt/")
        for depth in args.depths:
            best = _best_interleaved(X, y, depth, args.time_limit, args.repeats)
            multi, nine = best["multi"], best["nine"]
            both = all(multi[2]) and all(nine[2])
            ratio = multi[0] / nine[0]
            rows.append((depth, ratio, both))
            out(
                f"{short:<14} {depth:>1} {X.shape[0]:>6} {X.shape[1]:>4} "
                f"{multi[0]:>8.3f}{' ' if all(multi[2]) else '*'} "
                f"{nine[0]:>8.3f}{' ' if all(nine[2]) else '*'} {ratio:>10.3f} "
                f"{multi[3]:>5}  {_check(best)}"
            )
    _summary(out, rows, args.depths)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
