"""Cache bounds relative to each instance: the ``max_cache_fraction`` key.

The bounded-cache paper (Aglin, Nijssen & Schaus 2022) sets DL8.5's bound to
a fraction (75 %, 50 %) of the cache an unbounded search of the same
instance keeps at its peak. A method table of a study may do the same::

    [methods.dl85-reuses-75pct]
    method = "dl85"
    max_cache_fraction = 0.75
    wipe_strategy = "reuses"

The key is the study's, not the learner's: before the timed fit, the worker
fits the method without a bound in a forked child (its memory is never the
worker's, so the fit's memory figure stays its own), reads that search's
``cache_peak_entries`` and fits with ``max_cache_size`` = the fraction of
it, rounded up, and raised to the smallest bound the learner's cache
accepts (a small instance or depth 2 peaks at a few entries). The run's
stats record ``max_cache_size``, ``max_cache_fraction``,
``max_cache_size_clamped`` (whether the fraction's entries were raised to
that minimum), ``fraction_entries`` (the fraction's entries before that) and
the probe's ``probe_peak_entries`` and ``probe_time_s``. Entries are
deterministic, so the probe's peak is the one an unbounded run of the same
instance records.
"""

from __future__ import annotations

import math

from odtstudy._child import call_in_fork

__all__ = ["KEY", "check_fraction", "engine_minimum", "resolve", "split"]

#: The method-table key.
KEY = "max_cache_fraction"
#: The learner parameter it sets.
BOUND = "max_cache_size"


def split(params: dict) -> tuple[float | None, dict]:
    """``(fraction or None, the learner's own parameters)``."""
    if KEY not in params:
        return None, params
    own = {k: v for k, v in params.items() if k != KEY}
    return params[KEY], own


def check_fraction(method, params: dict) -> str | None:
    """Why ``params`` cannot take a relative bound (None when it can)."""
    if KEY not in params:
        return None
    value = params[KEY]
    accepted = method.parameters()
    if accepted is not None and BOUND not in accepted:
        return (
            f"{KEY} sets the learner's {BOUND}, which method {method.name!r} "
            f"does not take: remove {KEY}"
        )
    if BOUND in params:
        return (
            f"{KEY} and {BOUND} both bound the cache: keep one (a fraction of "
            "the unbounded search's peak entries, or a number of entries)"
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{KEY} must be a number in (0, 1], got {value!r}"
    if not 0 < value <= 1:
        return (
            f"{KEY} must lie in (0, 1] (a share of the unbounded search's peak "
            f"entries), got {value!r}"
        )
    return None


def engine_minimum(estimator) -> int:
    """Smallest ``max_cache_size`` the cache of ``estimator`` accepts.

    DL8.5's caches need room for the paths under evaluation
    (``min_size()``, which grows with ``max_depth``); a learner without one
    of them gets 1.
    """
    get_params = getattr(estimator, "get_params", None)
    params = get_params() if get_params is not None else {}
    # imported here: the config checks import this module, and must name
    # missing compiled extensions through the registry, not fail on them
    from odtstudy.dl85.engine._cache import HashCache, TrieCache

    cache = {"trie": TrieCache, "hash": HashCache}.get(params.get("cache"))
    depth = params.get("max_depth")
    if cache is None or depth is None:
        return 1
    return int(cache(depth).min_size())


def _probe(make, X, y) -> dict:
    estimator = make()
    estimator.fit(X, y)
    stats = getattr(estimator, "stats_", {}) or {}
    return {"peak": stats.get("cache_peak_entries")}


def resolve(fraction: float, make_unbounded, X, y, timeout: float) -> dict:
    """Fit without a bound in a forked child; the bound and what it came from.

    Parameters
    ----------
    fraction : float
        Share of the unbounded search's peak entries, in (0, 1].
    make_unbounded : callable
        Builds the learner without ``max_cache_size``.
    X, y : array-like
        The run's training data.
    timeout : float
        Seconds the probe may take before it is killed.

    Returns
    -------
    dict
        ``max_cache_size`` (at least :func:`engine_minimum`),
        ``max_cache_fraction``, ``max_cache_size_clamped``,
        ``fraction_entries``, ``probe_peak_entries``, ``probe_time_s``.

    Raises
    ------
    RuntimeError
        When the probe is killed at ``timeout`` or reports no peak.
    """
    call = call_in_fork(lambda: _probe(make_unbounded, X, y), timeout)
    peak = call.value.get("peak") if call.finished and call.value else None
    if not peak:
        why = "was killed at its time limit" if not call.finished else "gave no peak"
        raise RuntimeError(
            f"{KEY}: the unbounded probe fit {why}, so no bound can be set; "
            f"give {BOUND} in entries instead"
        )
    entries = max(1, math.ceil(fraction * peak))
    minimum = engine_minimum(make_unbounded())
    return {
        BOUND: max(entries, minimum),
        KEY: fraction,
        "max_cache_size_clamped": entries < minimum,
        "fraction_entries": entries,
        "probe_peak_entries": int(peak),
        "probe_time_s": call.solver_time_s,
    }
