"""Preflight: fit each method of a study once on tiny data before any run.

A learner's ``ValueError`` / ``TypeError`` there (a bad parameter value, a
depth it cannot take) becomes a config error naming the key. Each fit runs in
a forked child with its own temp folder, killed with its process group after
a short deadline, so a learner that crashes or hangs cannot take the caller
down (its failure is then left to the runs, which record it).
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import shutil
import tempfile

from odtstudy._child import call_with_deadline
from odtstudy._isolation import GroupGuard, use_temp_dir
from odtstudy.study.config import _cache_fraction
from odtstudy.study.registry import get_method

_PREFLIGHT_TIME_LIMIT = 1.0
_PREFLIGHT_GRACE_S = 2.0
_PREFLIGHT_DATA = "a synthetic 24-row, 3-feature 0/1 dataset"

_preflight_outcomes: dict = {}


def _fit_outcome(method, params, depth, time_limit, seed) -> str | None:
    """``"<Error>: <message>"`` for a ValueError/TypeError of the preflight
    fit, else None (other failures are left to the runs, which record them)."""
    try:
        method.preflight(depth, _cache_fraction.split(params)[1], time_limit, seed)
    except (ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return None
    return None


def _in_child(task, timeout):
    """``task()`` in a forked process: its result, or None when it crashes or
    outlives ``timeout`` seconds, so that a learner that segfaults or ignores
    its time limit cannot take the caller down. The child's output is
    silenced, and it and its own children (solvers) are killed and their
    temporary files removed when it ends; should this process die first,
    they are killed all the same (``GroupGuard``)."""
    if not hasattr(os, "fork"):  # pragma: no cover
        return task()
    tmpdir = tempfile.mkdtemp(prefix="odtstudy-preflight-")

    def silenced():
        faulthandler.disable()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        use_temp_dir(tmpdir)

    try:
        with GroupGuard() as guard:
            finished, value = call_with_deadline(task, timeout, silenced, guard)
    except Exception:  # the child died: its failure is left to the runs
        return None
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return value if finished else None


def _preflight_error(method, spec, depth, config) -> str | None:
    """The learner's ValueError/TypeError on the preflight fit, else None."""
    time_limit = min(spec.time_limit or config.time_limit, _PREFLIGHT_TIME_LIMIT)
    seed = config.seeds[0]
    key = (
        method.name,
        method.target,
        method.data_for(spec.params),
        json.dumps(method.defaults, sort_keys=True, default=repr),
        json.dumps(spec.params, sort_keys=True, default=repr),
        depth,
        time_limit,
        seed,
    )
    if key not in _preflight_outcomes:
        _preflight_outcomes[key] = _in_child(
            lambda: _fit_outcome(method, spec.params, depth, time_limit, seed),
            time_limit + _PREFLIGHT_GRACE_S,
        )
    return _preflight_outcomes[key]


def _param_named(params, message) -> str | None:
    """The parameter a learner's message is about: quoted (``'reg'``) or
    assigned (``reg=``) first, else named as a word; None if none is."""
    for pattern in (r"'{}'|\b{}=", r"\b{}\b"):
        for key in params:
            escaped = re.escape(key)
            if re.search(pattern.format(escaped, escaped), message):
                return key
    return None


def preflight_check(config, where):
    """Fit each method once at the largest depth; name what it rejects."""
    depths = sorted(set(config.depths))
    for spec in config.methods:
        method = get_method(spec.method)
        failure = _preflight_error(method, spec, depths[-1], config)
        if failure is None:
            continue
        failed_at = depths[-1]
        for depth in reversed(depths[:-1]):
            error = _preflight_error(method, spec, depth, config)
            if error is None:
                fix = f"use depths <= {depth}"
                if spec.params:
                    fix += f", change the parameters of {where.method(spec.label)}"
                raise where.error(
                    where.key("depths"),
                    f"method {spec.label!r} does not run at max_depth={failed_at}: "
                    f"{failure} (preflight fit on {_PREFLIGHT_DATA}); it runs at "
                    f"max_depth={depth}: {fix}, or run it in another study",
                )
            failure, failed_at = error, depth
        raise where.error(
            where.method(spec.label, _param_named(spec.params, failure)),
            f"the learner rejects this configuration: {failure} (preflight fit "
            f"on {_PREFLIGHT_DATA} at max_depth={failed_at}, parameters "
            f"{spec.params})",
        )
