"""The report's account of where one protocol's numbers were measured.

:func:`provenance_text` turns the ``provenance`` of a protocol's records
(:func:`odtstudy.study._provenance.provenance`) and the protocol's
``repeats`` into sentences for the report's header: the source revision, the
machine (CPU model and clock, DL8.5 kernels, cores, threads per core,
RAM), the load when each runner started, the runs executed at once, the
timing protocol, the steal time during the fits, Python and the solver
packages, and warnings when the timings were taken on a busy machine (a
load at the start above the cores left free, fits over 1 s that got less
than 0.95 of their wall time on the CPU). Runner invocations that differ
(a study resumed on another machine or at another concurrency) are all
named, never averaged away.
"""

from __future__ import annotations

import json

import pandas as pd

__all__ = ["provenance_text"]


def _parsed(value) -> dict | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        return json.loads(value)
    return None


def _distinct(values) -> list:
    """Values in first-seen order, each once (lists compared by content)."""
    seen, kept = set(), []
    for value in values:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _one_or_all(values, show=str) -> str:
    shown = [show(value) for value in _distinct(values)]
    return shown[0] if len(shown) == 1 else " / ".join(shown)


def _machine(provenances) -> str:
    def cpu(p):
        flags = p.get("cpu_flags")
        kernels = p.get("kernel_isa") or "not built"
        flag_text = "unknown" if flags is None else ", ".join(flags) or "none"
        cores = p.get("logical_cores")
        usable = p.get("affinity_cores")
        core_text = f"{cores} logical cores"
        if usable is not None and usable != cores:
            core_text += f" ({usable} usable by the study)"
        size = [
            f"{p['cpu_mhz']:g} MHz" if p.get("cpu_mhz") else "clock not recorded",
            core_text,
        ]
        if p.get("physical_cores"):
            size.append(
                f"{p['physical_cores']} physical, {p.get('threads_per_core')} "
                "thread(s) per core"
            )
        size.append(
            f"{p['ram_gb']:g} GB RAM" if p.get("ram_gb") else "RAM not recorded"
        )
        return (
            f"{p.get('cpu_model', 'unknown CPU')}, {', '.join(size)}, DL8.5 "
            f"kernels {kernels} (CPU flags {flag_text})"
        )

    return f"Machine: {_one_or_all(provenances, cpu)}."


def _load(provenances) -> str:
    loads = [p.get("load_at_start") for p in provenances]
    shown = [
        "unknown" if load is None else "/".join(f"{x:g}" for x in load)
        for load in _distinct(loads)
    ]
    runs = "the study started" if len(shown) == 1 else "each runner started"
    return f"Load average (1/5/15 min) when {runs}: {', '.join(shown)}."


def _concurrency(provenances, repeats, repeat_below_s=None) -> str:
    workers = sorted({int(p["workers"]) for p in provenances if "workers" in p})
    if not workers:
        text = "Runs at once: not recorded"
    elif len(workers) == 1:
        n = workers[0]
        text = "One fit at a time" if n == 1 else f"{n} fits at a time"
        text += f" (workers = {n})"
    else:
        text = (
            f"Fits ran at different concurrencies (workers = "
            f"{', '.join(map(str, workers))}): their times are not comparable"
        )
    backends = _distinct(p.get("backend", "local") for p in provenances)
    if backends != ["local"]:
        text += f", on {', '.join(backends)}"
    if repeats > 1 and repeat_below_s is not None:
        text += (
            f"; each fit that ended before its limit in under {repeat_below_s:g} s "
            f"repeated up to {repeats} times, each in a fresh process, methods "
            "interleaved: times are the medians (longer fits and time-outs once)"
        )
    elif repeats > 1:
        text += (
            f"; each fit repeated {repeats} times, each in a fresh process, "
            "methods interleaved: times are the medians"
        )
    else:
        text += "; each fit once"
    return text + ", wall-clock and CPU time recorded."


#: Fits at least this long are judged by their CPU / wall ratio.
BUSY_FIT_S = 1.0
#: A median CPU / wall below this means the fits waited for the CPU.
MIN_CPU_SHARE = 0.95
_NAMED = 8


def _steal(frame: pd.DataFrame) -> str:
    """The steal time the fits saw (``machine_steal_s`` of their stats)."""
    stats = frame["stats"].map(_parsed) if "stats" in frame else pd.Series([])
    steal = stats.map(lambda s: (s or {}).get("machine_steal_s"))
    steal = pd.to_numeric(steal, errors="coerce")
    if steal.notna().sum() == 0:
        return "Steal time: not recorded."
    fit = frame.loc[steal.notna(), "fit_time_s"].sum()
    total = float(steal.sum())
    share = f" ({100 * total / fit:.2g} % of their {fit:.3g} s)" if fit > 0 else ""
    return f"Steal time during the fits: {total:.3g} s over all CPUs{share}."


def _free_cores(p: dict) -> int | None:
    """The machine's cores the study's workers left to other processes (the
    load average counts the whole machine, whatever the study may use)."""
    cores = p.get("logical_cores")
    return None if not cores else max(0, int(cores) - int(p.get("workers", 1)))


def _warnings(frame: pd.DataFrame, provenances) -> list:
    """Warnings on the conditions of the timings: a load at the start above
    the cores the study left free, fits over :data:`BUSY_FIT_S` that got
    less than :data:`MIN_CPU_SHARE` of their wall time on the CPU."""
    warnings = []
    for p in _distinct(provenances):
        load, free = p.get("load_at_start"), _free_cores(p)
        if load and free is not None and load[0] > free:
            warnings.append(
                f"**Warning: the load average when a runner started ({load[0]:g}) "
                f"exceeded the {free} of {p.get('logical_cores')} cores its "
                f"{p.get('workers', 1)} worker(s) left free: other processes "
                "shared the CPUs.**"
            )
    if "cpu_time_s" not in frame:
        return warnings
    busy = frame[(frame["fit_time_s"] > BUSY_FIT_S) & frame["cpu_time_s"].notna()]
    if busy.empty:
        return warnings
    share = busy["cpu_time_s"] / busy["fit_time_s"]
    median = float(share.median())
    if median < MIN_CPU_SHARE:
        low = busy.assign(share=share)[share < MIN_CPU_SHARE].sort_values("share")
        named = [
            f"{r.method} on {r.dataset} d{r.depth} fold {r.fold} ({r.share:.2f})"
            for r in low.head(_NAMED).itertuples()
        ]
        more = f" and {len(low) - _NAMED} more" if len(low) > _NAMED else ""
        warnings.append(
            f"**Warning: the {len(busy)} fits over {BUSY_FIT_S:g} s spent a "
            f"median {median:.2f} of their wall time on the CPU (below "
            f"{MIN_CPU_SHARE}): they waited, for the CPU or for I/O and the "
            "processes they started, so their times can be longer than the "
            f"work. Per method, median share (fits): {_shares(busy, share)}. "
            f"Below {MIN_CPU_SHARE}: {', '.join(named)}{more}.**"
        )
    return warnings


def _shares(busy: pd.DataFrame, share: pd.Series) -> str:
    """Each method's median CPU share of its fits over :data:`BUSY_FIT_S`,
    lowest first: a wait of one method's solver process is told apart from
    a machine that was busy for every method."""
    per = share.groupby(busy["method"]).agg(["median", "size"])
    per = per.sort_values(["median", "size"], ascending=[True, False])
    return ", ".join(
        f"{m} {row['median']:.2f} ({int(row['size'])})" for m, row in per.iterrows()
    )


def _software(provenances, versions) -> str:
    revisions = _one_or_all(p.get("source_revision", "?") for p in provenances)
    pythons = _one_or_all(
        f"{p.get('python', '?')} ({p.get('python_implementation', '?')})"
        for p in provenances
    )
    packages = provenances[-1].get("packages") or versions
    listed = ", ".join(
        f"{name} {version or 'not installed'}"
        for name, version in packages.items()
        if name not in ("python", "odtstudy")
    )
    odtstudy = packages.get("odtstudy") or versions.get("odtstudy")
    return (
        f"Code: odtstudy {odtstudy}, source revision `{revisions}`; Python "
        f"{pythons}; packages: {listed}."
    )


def provenance_text(frame: pd.DataFrame, protocol: dict) -> str:
    """Sentences on the code and machine behind one protocol's records.

    Parameters
    ----------
    frame : DataFrame
        The protocol's records (a ``provenance`` column of JSON text or
        dicts; missing in records written before odtstudy recorded it).
    protocol : dict
        The protocol (its ``repeats`` and ``versions``).

    Returns
    -------
    str
    """
    column = frame["provenance"] if "provenance" in frame else pd.Series([])
    provenances = [p for p in map(_parsed, column.dropna()) if p]
    repeats = int(protocol.get("repeats", 1))
    versions = protocol.get("versions", {})
    if not provenances:
        return (
            "No provenance recorded (records written before odtstudy recorded "
            f"the source revision and the machine); odtstudy "
            f"{versions.get('odtstudy')}, Python {versions.get('python')}."
        )
    parts = [
        _software(provenances, versions),
        _machine(provenances),
        _load(provenances),
        _concurrency(provenances, repeats, protocol.get("repeat_below_s")),
        _steal(frame),
        *_warnings(frame, provenances),
    ]
    if len(provenances) < len(frame):
        parts.append(
            f"{len(frame) - len(provenances)} of {len(frame)} records carry no "
            "provenance (written by an older odtstudy)."
        )
    return " ".join(parts)
