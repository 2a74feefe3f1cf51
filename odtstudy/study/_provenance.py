"""Where a study's numbers come from: the code's revision and the machine.

Every record carries a ``provenance`` dict (:func:`provenance`), taken once
per runner invocation: the package version and the revision of its source
(:func:`source_revision`), the CPU model, the instruction set the DL8.5
kernels use and the CPU flags they dispatch on, the logical cores and those
this process may run on, the load average when the study started, the
number of runs executed at once (``workers``), Python, and the version of
every solver package (``None``: not installed).

The source revision is also part of the protocol, so records of two
revisions never share a protocol id. In a git checkout it is the commit,
with ``-dirty-<sha256 of the uncommitted changes, 12 hex digits>`` when the
package's folder differs from it; without git (a ``pip install``, no git
binary, git failing), it is ``sha256:`` and a hash over the package's
sources (:data:`SOURCE_SUFFIXES`, sorted by path). Git is never required.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import odtstudy

__all__ = [
    "KERNEL_FLAGS",
    "SOURCE_SUFFIXES",
    "current_revision",
    "machine",
    "package_versions",
    "provenance",
    "source_digest",
    "source_revision",
]

#: Files whose content is the package's code (what the source hash covers).
SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".h")
#: CPU flags the DL8.5 kernels dispatch on (``odtstudy/dl85/engine/_kernels.h``).
KERNEL_FLAGS = (
    "popcnt",
    "sse4_2",
    "avx2",
    "bmi2",
    "avx512f",
    "avx512vl",
    "avx512bw",
    "avx512_vpopcntdq",
)
#: Packages whose version changes what a learner computes.
VERSIONED = (
    "odtstudy",
    "numpy",
    "scikit-learn",
    "pandas",
    "deap",
    *("pulp", "cbcbox", "highspy", "ortools"),  # MILP and CP solvers
    *("pystreed", "pydl8.5", "gosdt", "pycontree", "licketysplit"),  # [external]
)
_COMMAND_TIMEOUT_S = 10.0


def package_versions() -> dict:
    """Python's version and that of every package in :data:`VERSIONED`
    (``None`` for a package that is not installed)."""
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = odtstudy.__version__ if name == "odtstudy" else None
    return versions


def _package_root() -> Path:
    return Path(odtstudy.__file__).resolve().parent


def source_digest(root) -> str:
    """SHA-256 over the sources under ``root`` (:data:`SOURCE_SUFFIXES`):
    each file's path relative to ``root`` and the hash of its bytes, in
    path order."""
    root = Path(root)
    files = sorted(
        (path.relative_to(root).as_posix(), path)
        for path in root.rglob("*")
        if path.suffix in SOURCE_SUFFIXES
        and "__pycache__" not in path.parts
        and path.is_file()
    )
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _git(root: Path, *args) -> bytes | None:
    """Output of ``git <args>`` run in ``root``; ``None`` if git is missing
    or fails. Never takes the index lock (``GIT_OPTIONAL_LOCKS=0``)."""
    git = shutil.which("git")
    if git is None:
        return None
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        done = subprocess.run(
            [git, *args],
            cwd=root,
            env=env,
            capture_output=True,
            timeout=_COMMAND_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_revision(root: Path) -> str | None:
    """The commit of ``root``'s checkout, marked dirty with a hash of the
    uncommitted changes under ``root``; ``None`` when ``root`` is not tracked
    by git (e.g. installed into an environment that lives in a checkout)."""
    if not _git(root, "ls-files", "--", "__init__.py"):
        return None
    commit = _git(root, "rev-parse", "--verify", "HEAD")
    diff = _git(root, "diff", "HEAD", "--binary", "--", ".")
    untracked = _git(
        root, "ls-files", "--others", "--exclude-standard", "-z", "--", "."
    )
    if commit is None or diff is None or untracked is None:
        return None
    revision = commit.decode().strip()
    names = sorted(name for name in untracked.split(b"\0") if name)
    if not diff and not names:
        return revision
    digest = hashlib.sha256(diff)
    for name in names:
        path = root / os.fsdecode(name)
        digest.update(name + b"\0")
        if path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{revision}-dirty-{digest.hexdigest()[:12]}"


def source_revision(root=None) -> str:
    """Identity of the source tree at ``root`` (default: this package).

    Returns
    -------
    str
        ``"<commit>"`` for a clean git checkout, ``"<commit>-dirty-<12 hex>"``
        with uncommitted changes, else ``"sha256:<64 hex>"`` from
        :func:`source_digest`.
    """
    root = _package_root() if root is None else Path(root).resolve()
    return _git_revision(root) or f"sha256:{source_digest(root)}"


@lru_cache(maxsize=1)
def current_revision() -> str:
    """:func:`source_revision` of this package, read once per process: the
    code the process imported, even if the files change while it runs."""
    return source_revision()


def _cpuinfo() -> dict:
    """The first value of each key of ``/proc/cpuinfo`` (empty elsewhere)."""
    info: dict = {}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return info
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            info.setdefault(key.strip(), value.strip())
    return info


def _cpu_model(info: dict) -> str:
    for key in ("model name", "Model", "Hardware", "cpu model", "Processor"):
        if info.get(key):
            return info[key]
    if sys.platform == "darwin":
        try:
            done = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=_COMMAND_TIMEOUT_S,
                check=False,
            )
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown"


def _kernel_flags(info: dict) -> list | None:
    """The :data:`KERNEL_FLAGS` this CPU has; ``None`` when unknown."""
    flags = info.get("flags") or info.get("Features")
    if flags is None:
        return None
    present = set(flags.split())
    return [flag for flag in KERNEL_FLAGS if flag in present]


def _kernel_isa() -> str | None:
    try:
        from odtstudy.dl85.engine._depth2 import kernel_isa
    except ImportError:  # the Cython extensions are not built
        return None
    return kernel_isa()


def _load_average() -> list | None:
    try:
        return [round(load, 2) for load in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _affinity_cores() -> int | None:
    if not hasattr(os, "sched_getaffinity"):
        return None
    return len(os.sched_getaffinity(0))


def _cpu_mhz(info: dict) -> float | None:
    """The CPU's clock in MHz: its rated maximum where the OS gives one
    (cpufreq), else the current clock of ``/proc/cpuinfo``."""
    rated = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return round(int(rated.read_text()) / 1000, 1)
    except (OSError, ValueError):
        pass
    try:
        return round(float(info["cpu MHz"]), 1)
    except (KeyError, ValueError):
        return None


def machine() -> dict:
    """The machine's size and what it was doing: ``cpu_mhz``,
    ``physical_cores``, ``threads_per_core``, ``ram_gb``, and ``steal_s``,
    the CPU time the hypervisor has taken from this virtual machine since it
    booted (0 on bare metal; ``None`` where the OS does not say), whose
    growth over a study is time its fits did not get."""
    import psutil

    logical = psutil.cpu_count() or 0
    physical = psutil.cpu_count(logical=False)
    steal = getattr(psutil.cpu_times(), "steal", None)
    return {
        "cpu_mhz": _cpu_mhz(_cpuinfo()),
        "physical_cores": physical,
        "threads_per_core": (
            round(logical / physical) if physical and logical else None
        ),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "steal_s": None if steal is None else round(float(steal), 2),
    }


def provenance(workers: int, backend: str = "local") -> dict:
    """The code and the machine a study runs on, now.

    Parameters
    ----------
    workers : int
        Runs executed at the same time.
    backend : str, default="local"
        Where the fits run: ``"local"`` (this machine), or ``"dask <address>"``
        (then the machine fields describe the runner, not the Dask workers).

    Returns
    -------
    dict
        ``odtstudy``, ``source_revision``, ``cpu_model``, ``kernel_isa``
        (the DL8.5 kernels in use: baseline, popcnt, avx2 or avx512; ``None``
        if not built), ``cpu_flags`` (the :data:`KERNEL_FLAGS` present;
        ``None`` if unknown), ``logical_cores``, ``affinity_cores``,
        ``load_at_start`` (1, 5 and 15 minute load averages), ``workers``,
        ``backend``, ``python``, ``python_implementation``, ``platform``,
        ``packages`` (:func:`package_versions`), and the fields of
        :func:`machine` (clock, cores, threads per core, RAM, steal time).
    """
    info = _cpuinfo()
    versions = package_versions()
    return {
        "odtstudy": versions["odtstudy"],
        "source_revision": current_revision(),
        "cpu_model": _cpu_model(info),
        "kernel_isa": _kernel_isa(),
        "cpu_flags": _kernel_flags(info),
        "logical_cores": os.cpu_count(),
        "affinity_cores": _affinity_cores(),
        "load_at_start": _load_average(),
        "workers": int(workers),
        "backend": backend,
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": versions,
        **machine(),
    }
