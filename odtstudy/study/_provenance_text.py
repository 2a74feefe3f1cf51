"""The report's account of where one protocol's numbers were measured.

:func:`provenance_text` turns the ``provenance`` of a protocol's records
(:func:`odtstudy.study._provenance.provenance`) and the protocol's
``repeats`` into sentences for the report's header: the source revision, the
machine (CPU model, DL8.5 kernels, cores), the load when each runner
started, the runs executed at once, the timing protocol, Python and the
solver packages. Runner invocations that differ (a study resumed on another
machine or at another concurrency) are all named, never averaged away.
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
        return (
            f"{p.get('cpu_model', 'unknown CPU')}, {core_text}, DL8.5 kernels "
            f"{kernels} (CPU flags {flag_text})"
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


def _concurrency(provenances, repeats) -> str:
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
    if repeats > 1:
        text += (
            f"; each fit repeated {repeats} times, each in a fresh process, "
            "methods interleaved: times are the medians"
        )
    else:
        text += "; each fit once"
    return text + ", wall-clock and CPU time recorded."


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
        _concurrency(provenances, repeats),
    ]
    if len(provenances) < len(frame):
        parts.append(
            f"{len(frame) - len(provenances)} of {len(frame)} records carry no "
            "provenance (written by an older odtstudy)."
        )
    return " ".join(parts)
