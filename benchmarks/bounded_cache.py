"""DL8.5 under a memory bound: memory / time trade-off of the bounded cache.

Reproduces the protocol of Aglin, Nijssen and Schaus, "Learning optimal
decision trees under memory constraints" (ECML PKDD 2022; thesis chapter 5,
Table 5.2 and Figure 5.4) on CP4IM instances that need many cache entries
but finish within minutes here:

1. each instance is solved with an unbounded cache;
2. then with ``max_cache_size`` = 50%, 25% and 10% of the unbounded run's
   peak entry count, for each wipe strategy (``reuses``, ``descendants``,
   ``all_non_useful``);
3. every run executes in its own process, which reports its peak RSS
   (``VmHWM`` of ``/proc/self/status`` after the fit), its RSS right
   before the fit (interpreter, numpy, scikit-learn, data) and the fit's
   wall time.

The table gives, per run: entries created / peak live entries, peak RSS of
the process and of the search alone (peak minus the RSS before the fit),
their ratio to the unbounded run, the time factor (bounded / unbounded fit
time) and the reconstitution time ``rTime``. Geometric means per strategy and
bound follow, with the issue's targets (at 25%: peak RSS <= 40% of the
unbounded run and time factor <= 2 for "reuses"; rTime < 50 ms). A seaborn
plot of the time factor against the cache bound per strategy is saved under
``benchmarks/results/``.

Usage::

    python benchmarks/bounded_cache.py                 # default instances
    python benchmarks/bounded_cache.py --instances anneal:6,soybean:7 \\
        --fractions 0.5,0.25,0.1,0.05 --wipe-factor 0.4
    python benchmarks/bounded_cache.py --large         # bigger instances
    python benchmarks/bounded_cache.py --mode estimator  # via DL85Classifier.fit
    python benchmarks/bounded_cache.py --replot benchmarks/results/bounded_cache.csv

By default (``--mode core``) each run imports only numpy and the compiled
search modules (~35 MB RSS before the fit); with ``--mode estimator`` the
process also holds scikit-learn, scipy and pandas (~185 MB), which dilutes
the whole-process RSS ratios on instances of a few million entries. The
"search" columns (peak minus RSS before the fit) do not depend on the mode.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
STRATEGIES = ("reuses", "descendants", "all_non_useful")
# (dataset, depth): 0.6M to 3.4M cache entries, unbounded fits of ~3-15 s
# on a loaded 2-core machine; the whole default run takes ~10 minutes
DEFAULT_INSTANCES = ("primary-tumor:8", "soybean:7", "anneal:6")
# 7-8M entries, minutes per fit
LARGE_INSTANCES = ("primary-tumor:9", "soybean:8", "australian-credit:6")


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mb() -> float:
    """Peak RSS of this process image (``VmHWM``). Unlike ``ru_maxrss``, it
    is reset by ``exec``, so the forking parent's size does not leak in."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource  # pragma: no cover - non-Linux

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _lean_imports():
    """The search core without the package's ``__init__`` (no scikit-learn,
    pandas or scipy in the process): stub parent packages, then import the
    compiled modules. Keeps the interpreter's share of the RSS small."""
    import importlib.util
    import types

    spec = importlib.util.find_spec("odtstudy")
    root = types.ModuleType("odtstudy")
    root.__path__ = list(spec.submodule_search_locations)
    sys.modules["odtstudy"] = root
    sub = types.ModuleType("odtstudy.dl85")
    sub.__path__ = [os.path.join(p, "dl85") for p in root.__path__]
    sys.modules["odtstudy.dl85"] = sub
    from odtstudy.dl85._bitset import pack_columns
    from odtstudy.dl85._search import Searcher

    return pack_columns, Searcher


def _tree_error(feature, left, right, value, X, y):
    """Training errors of the tree arrays (as ``Searcher.tree_arrays``)."""
    import numpy as np

    node = np.zeros(len(y), dtype=np.int64)
    for _ in range(len(feature)):
        f = np.asarray(feature)[node]
        inner = f >= 0
        if not inner.any():
            break
        go_right = X[np.arange(len(y)), np.where(inner, f, 0)] == 1
        nxt = np.where(go_right, np.asarray(right)[node], np.asarray(left)[node])
        node = np.where(inner, nxt, node)
    pred = np.asarray(value).argmax(axis=1)[node]
    return float((pred != y).sum())


def child(args: argparse.Namespace) -> None:
    """One fit in this process; prints a JSON record."""
    keys = (
        "cache_entries_created",
        "cache_peak_entries",
        "cache_wipes",
        "cache_entries_wiped",
        "reconstitution_ms",
    )
    bound = {}
    if args.max_cache_size:
        bound = dict(
            max_cache_size=args.max_cache_size,
            wipe_factor=args.wipe_factor,
            wipe_strategy=args.strategy,
        )
    if args.mode == "core":
        import numpy as np

        pack_columns, Searcher = _lean_imports()
        with np.load(args.data) as data:
            X, y = data["X"], data["y"]
        base = _current_rss_mb()
        start = time.perf_counter()
        cpu0 = time.process_time()
        onehot = np.zeros((len(y), int(y.max()) + 1), dtype=np.uint8)
        onehot[np.arange(len(y)), y] = 1
        searcher = Searcher(
            pack_columns(X),
            pack_columns(onehot),
            X.shape[0],
            args.depth,
            cache=args.cache,
            **bound,
        )
        objective, _ = searcher.run()
        tree = searcher.tree_arrays()
        cpu = time.process_time() - cpu0
        wall = time.perf_counter() - start
        stats = searcher.stats()
        err = _tree_error(*tree, X, y)
    else:
        from odtstudy.datasets import load_dataset
        from odtstudy.dl85 import DL85Classifier

        data = load_dataset(args.dataset)
        base = _current_rss_mb()
        start = time.perf_counter()
        cpu0 = time.process_time()
        clf = DL85Classifier(max_depth=args.depth, cache=args.cache, **bound)
        clf.fit(data.X, data.y)
        cpu = time.process_time() - cpu0
        wall = time.perf_counter() - start
        objective, stats = clf.objective_, clf.stats_
        err = float((clf.predict(data.X) != data.y).sum())
    peak = _peak_rss_mb()
    record = {
        "objective": float(objective),
        "tree_error": err,
        "time_s": wall,
        "cpu_s": cpu,
        "peak_rss_mb": peak,
        "base_rss_mb": base,
        **{k: stats[k] for k in keys},
    }
    print(json.dumps(record))


def run_one(
    dataset,
    depth,
    cache,
    max_cache_size=None,
    strategy="reuses",
    wipe_factor=0.5,
    mode="core",
    data=None,
):
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--dataset",
        dataset,
        "--depth",
        str(depth),
        "--cache",
        cache,
        "--strategy",
        strategy,
        "--wipe-factor",
        str(wipe_factor),
        "--max-cache-size",
        str(max_cache_size or 0),
        "--mode",
        mode,
    ]
    if data is not None:
        cmd += ["--data", str(data)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"run failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _geomean(values):
    values = [v for v in values if v > 0]
    return (
        math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default=None, help="name:depth,... (CP4IM sets)")
    parser.add_argument("--large", action="store_true", help="bigger instances (slow)")
    parser.add_argument("--fractions", default="0.5,0.25,0.1")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--wipe-factor", type=float, default=0.5)
    parser.add_argument("--cache", default="trie", choices=["trie", "hash"])
    parser.add_argument(
        "--mode",
        default="core",
        choices=["core", "estimator"],
        help="core: the Cython search in a lean process (numpy only; default); "
        "estimator: DL85Classifier.fit (scikit-learn et al. in the process)",
    )
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument(
        "--replot", metavar="CSV", help="no runs: table and plot from a saved CSV"
    )
    parser.add_argument(
        "--plot", default=str(RESULTS / "bounded_cache_time_factor.png")
    )
    parser.add_argument("--csv", default=str(RESULTS / "bounded_cache.csv"))
    # child mode
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", help=argparse.SUPPRESS)
    parser.add_argument("--depth", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--strategy", default="reuses", help=argparse.SUPPRESS)
    parser.add_argument("--max-cache-size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0

    import pandas as pd

    if args.instances:
        instances = args.instances.split(",")
    else:
        instances = LARGE_INSTANCES if args.large else DEFAULT_INSTANCES
    fractions = [float(f) for f in args.fractions.split(",")]
    strategies = args.strategies.split(",")
    rows = []
    t_all = time.perf_counter()
    tmpdir = tempfile.TemporaryDirectory()
    for inst in [] if args.replot else instances:
        name, depth = inst.rsplit(":", 1)
        depth = int(depth)
        data = None
        if args.mode == "core":
            import numpy as np

            from odtstudy.datasets import load_dataset

            ds = load_dataset(name)
            y = np.unique(ds.y, return_inverse=True)[1]
            data = Path(tmpdir.name) / f"{name}.npz"
            np.savez(data, X=np.ascontiguousarray(ds.X, dtype=np.uint8), y=y)
        run = functools.partial(
            run_one, name, depth, args.cache, mode=args.mode, data=data
        )
        ref = run()
        ref_search = max(ref["peak_rss_mb"] - ref["base_rss_mb"], 1e-9)
        print(
            f"{name} d{depth}: unbounded objective {ref['objective']:g}, "
            f"{ref['cache_peak_entries']} entries, {ref['time_s']:.2f} s, "
            f"peak RSS {ref['peak_rss_mb']:.0f} MB (search {ref_search:.0f} MB)",
            flush=True,
        )
        rows.append(
            {
                "dataset": name,
                "depth": depth,
                "strategy": "unbounded",
                "bound_pct": 100.0,
                "max_cache_size": None,
                **ref,
            }
        )
        for strategy in strategies:
            for frac in fractions:
                bound = max(
                    int(frac * ref["cache_peak_entries"]), 1 + depth * (depth + 1) // 2
                )
                res = run(bound, strategy, args.wipe_factor)
                if (
                    res["objective"] != ref["objective"]
                    or res["tree_error"] != res["objective"]
                ):
                    raise AssertionError(
                        f"{inst} {strategy} {bound}: objective {res} != {ref}"
                    )
                rows.append(
                    {
                        "dataset": name,
                        "depth": depth,
                        "strategy": strategy,
                        "bound_pct": 100 * frac,
                        "max_cache_size": bound,
                        **res,
                    }
                )
                print(
                    f"  {strategy:>15} {100 * frac:>4.0f}%: {res['time_s']:.2f} s, "
                    f"{res['peak_rss_mb']:.0f} MB",
                    flush=True,
                )
    if args.replot:
        df = pd.read_csv(args.replot)
        pairs = df[["dataset", "depth"]].drop_duplicates().itertuples(index=False)
        instances = [f"{d}:{k}" for d, k in pairs]
        strategies = [s for s in df.strategy.unique() if s != "unbounded"]
    else:
        df = pd.DataFrame(rows)
    ref = df[df.strategy == "unbounded"].set_index(["dataset", "depth"])
    key = list(zip(df.dataset, df.depth))
    df["search_rss_mb"] = (df.peak_rss_mb - df.base_rss_mb).clip(lower=0)
    # CPU time of the fit (the search is single-threaded): robust to other
    # jobs on a shared machine; the wall-clock factor is reported next to it
    df["time_factor"] = [t / ref.loc[k, "cpu_s"] for t, k in zip(df.cpu_s, key)]
    df["wall_factor"] = [t / ref.loc[k, "time_s"] for t, k in zip(df.time_s, key)]
    df["rss_ratio"] = [
        r / ref.loc[k, "peak_rss_mb"] for r, k in zip(df.peak_rss_mb, key)
    ]
    df["search_rss_ratio"] = [
        r / max(ref.loc[k, "peak_rss_mb"] - ref.loc[k, "base_rss_mb"], 1e-9)
        for r, k in zip(df.search_rss_mb, key)
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.replot:
        df.to_csv(args.csv, index=False)

    print()
    print("Table (as the paper's Table 5.2; ratios are bounded / unbounded):")
    header = (
        f"{'dataset':<18}{'d':>2} {'strategy':<15}{'bound':>6} {'max_size':>9} "
        f"{'created':>10} {'peak':>9} {'wipes':>5} {'RSS MB':>7} {'RSS%':>5} "
        f"{'srch MB':>8} {'srch%':>6} {'cpu s':>7} {'factor':>6} {'wall s':>7} "
        f"{'wall f':>6} {'rTime ms':>8}"
    )
    print(header)
    print("-" * len(header))
    for r in df.itertuples():
        print(
            f"{r.dataset:<18}{r.depth:>2} {r.strategy:<15}{r.bound_pct:>5.0f}% "
            f"{(r.max_cache_size or 0):>9.0f} {r.cache_entries_created:>10} "
            f"{r.cache_peak_entries:>9} {r.cache_wipes:>5} {r.peak_rss_mb:>7.0f} "
            f"{100 * r.rss_ratio:>4.0f}% {r.search_rss_mb:>8.1f} "
            f"{100 * r.search_rss_ratio:>5.0f}% {r.cpu_s:>7.2f} {r.time_factor:>6.2f} "
            f"{r.time_s:>7.2f} {r.wall_factor:>6.2f} {r.reconstitution_ms:>8.2f}"
        )
    print()
    print("Geometric means over the instances:")
    print(
        f"{'strategy':<15}{'bound':>6} {'time factor':>12} {'wall factor':>12} "
        f"{'peak RSS':>9} {'search RSS':>11} {'max rTime ms':>13}"
    )
    bounded = df[df.strategy != "unbounded"]
    summary = []
    for (strategy, pct), g in bounded.groupby(["strategy", "bound_pct"], sort=False):
        s = {
            "strategy": strategy,
            "bound_pct": pct,
            "time_factor": _geomean(g.time_factor),
            "wall_factor": _geomean(g.wall_factor),
            "rss_ratio": _geomean(g.rss_ratio),
            "search_rss_ratio": _geomean(g.search_rss_ratio),
            "max_rtime_ms": g.reconstitution_ms.max(),
        }
        summary.append(s)
        print(
            f"{strategy:<15}{pct:>5.0f}% {s['time_factor']:>12.2f} "
            f"{s['wall_factor']:>12.2f} {100 * s['rss_ratio']:>8.0f}% "
            f"{100 * s['search_rss_ratio']:>10.0f}% "
            f"{s['max_rtime_ms']:>13.2f}"
        )
    target = [
        s
        for s in summary
        if s["strategy"] == "reuses" and abs(s["bound_pct"] - 25) < 1e-9
    ]
    if target:
        s = target[0]
        print()
        print(
            f"Targets at 25% with 'reuses': time factor {s['time_factor']:.2f} "
            f"(<= 2.0: "
            f"{'ok' if s['time_factor'] <= 2.0 else 'MISSED'}), peak RSS "
            f"{100 * s['rss_ratio']:.0f}% of unbounded (<= 40%: "
            f"{'ok' if s['rss_ratio'] <= 0.4 else 'MISSED'}; search alone "
            f"{100 * s['search_rss_ratio']:.0f}%), max rTime "
            f"{bounded.reconstitution_ms.max():.2f} ms (< 50 ms: "
            f"{'ok' if bounded.reconstitution_ms.max() < 50 else 'MISSED'})"
        )

    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    sns.lineplot(
        data=bounded,
        x="bound_pct",
        y="time_factor",
        hue="strategy",
        style="dataset",
        markers=True,
        dashes=False,
        alpha=0.35,
        legend=False,
        ax=ax,
        hue_order=strategies,
    )
    sm = pd.DataFrame(summary)
    sns.lineplot(
        data=sm,
        x="bound_pct",
        y="time_factor",
        hue="strategy",
        marker="o",
        linewidth=2.5,
        ax=ax,
        hue_order=strategies,
    )
    ax.axhline(1.0, color="grey", lw=1, ls=":")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(sorted(set(sm.bound_pct)))
    ax.set_xticklabels([f"{p:g}%" for p in sorted(set(sm.bound_pct))])
    ax.invert_xaxis()
    ax.set_xlabel("cache bound (% of the unbounded peak entries)")
    ax.set_ylabel("time factor (bounded / unbounded CPU time)")
    ax.set_title(
        "Bounded DL8.5: time factor per wipe strategy\n"
        "(thick: geometric mean; thin: instances " + ", ".join(instances) + ")",
        fontsize=9,
    )
    fig.tight_layout()
    Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=130)
    total = time.perf_counter() - t_all
    print(f"\nplot: {args.plot}\ncsv: {args.csv}\ntotal {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
