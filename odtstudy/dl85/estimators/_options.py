"""The search options every DL8.5 estimator takes, validated in one place."""

from __future__ import annotations

import os
import warnings
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy.dl85.engine._cache import MAX_CACHE_SIZE
from odtstudy.dl85.engine._cache_policy import WIPE_STRATEGIES, check_wipe_strategy
from odtstudy.dl85.engine._skeleton import DEPTH_LIMIT

__all__ = ["MAX_DEPTH_LIMIT", "MAX_MIN_SUP", "SEARCH_CONSTRAINTS", "SearchOptionsMixin"]

MAX_DEPTH_LIMIT = DEPTH_LIMIT
#: ``n_jobs`` runs at most this many threads per usable CPU (:func:`threads`).
THREADS_PER_CPU = 4
#: ``min_sup`` is a C int in the search core (and no data set has more rows).
MAX_MIN_SUP = 2**31 - 1

#: ``_parameter_constraints`` of the search options (see ``DL85Classifier``).
SEARCH_CONSTRAINTS: dict = {
    "max_depth": [Interval(Integral, 1, MAX_DEPTH_LIMIT, closed="both")],
    "min_sup": [Interval(Integral, 1, MAX_MIN_SUP, closed="both")],
    "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    "max_error": [Interval(Real, 0, None, closed="neither"), None],
    "branching": [StrOptions({"data", "asc", "desc"})],
    "use_infeasibility_lb": ["boolean"],
    "use_similarity_lb": ["boolean"],
    "use_depth2_solver": ["boolean"],
    "cache": [StrOptions({"trie", "hash"})],
    "algorithm": [StrOptions({"dl85", "dl8"})],
    "max_cache_size": [Interval(Integral, 1, MAX_CACHE_SIZE, closed="both"), None],
    "wipe_factor": [Interval(Real, 0, 1, closed="right")],
    "wipe_strategy": [StrOptions(set(WIPE_STRATEGIES))],
    "random_state": ["random_state"],
    "n_jobs": [
        Interval(Integral, 1, None, closed="left"),
        Interval(Integral, None, -1, closed="right"),
        None,
    ],
}


class SearchOptionsMixin:
    """``_search_options()``: the estimator's search options for ``search``."""

    def _search_options(self) -> dict:
        # option strings as plain str: the Cython core refuses str subclasses
        # such as numpy.str_, which the parameter check lets through
        return {
            "max_depth": int(self.max_depth),
            "min_sup": int(self.min_sup),
            "time_limit": self._time_left(),
            "max_error": self.max_error,
            "branching": str(self.branching),
            "use_infeasibility_lb": self.use_infeasibility_lb,
            "use_similarity_lb": self.use_similarity_lb,
            "use_depth2_solver": self.use_depth2_solver,
            "cache": str(self.cache),
            "algorithm": str(self.algorithm),
            "max_cache_size": self.max_cache_size,
            "wipe_factor": self.wipe_factor,
            "wipe_strategy": self._wipe_strategy(),
            "n_jobs": threads(self.n_jobs),
        }

    def _wipe_strategy(self) -> str:
        # with thresholds, whichever search the data goes to: the option's
        # validity must not depend on the data
        numeric = getattr(self, "thresholds", None) is not None
        check_wipe_strategy(str(self.wipe_strategy), numeric=numeric)
        return str(self.wipe_strategy)


def threads(n_jobs) -> int:
    """The threads of ``n_jobs``, as in scikit-learn: ``None`` is 1, ``-1``
    one per usable CPU, ``-2`` all but one, and so on (at least 1); at most
    :func:`max_threads`, with a warning when ``n_jobs`` asks for more."""
    if n_jobs is None:
        return 1
    cpus = _usable_cpus()
    if n_jobs < 0:
        return max(1, cpus + 1 + int(n_jobs))
    cap = max_threads(cpus)
    if n_jobs > cap:
        warnings.warn(
            f"n_jobs={n_jobs} asks for more threads than the search runs: at "
            f"most {THREADS_PER_CPU} per usable CPU ({cpus} here), so {cap}; "
            f"pass n_jobs=-1 for one thread per CPU",
            UserWarning,
            stacklevel=2,
        )
        return cap
    return int(n_jobs)


def max_threads(cpus=None) -> int:
    """The most threads a search runs: ``THREADS_PER_CPU`` per usable CPU
    (each thread holds its own buffers, and more threads than that only
    wait for each other)."""
    return THREADS_PER_CPU * (_usable_cpus() if cpus is None else cpus)


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
