"""Study configurations: which datasets, methods, depths, folds and limits to run.

A study is a TOML file (the built-in ones live in ``odtstudy/study/configs``)::

    [study]
    name = "quick"
    datasets = ["zoo-1", "uci/iris"]
    methods = ["all"]            # every registered method that imports
    depths = [2, 3, 4]
    folds = 5
    seeds = [0]
    time_limit = 10              # seconds per run, given to the learner
    memory_limit_mb = 4096
    max_thresholds = 8           # Binarizer setting for 0/1-only learners
    workers = 2                  # runs at the same time (one process each)

    [methods.dl85-asc]           # a labelled variant with its own parameters
    method = "dl85"
    branching = "asc"

    [scales.smoke]               # overrides selected by --scale smoke
    depths = [2]
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from odtstudy.datasets._loaders import _resolve
from odtstudy.study.registry import get_method, list_methods

__all__ = ["MethodSpec", "StudyConfig", "list_studies", "load_config"]

SCALES = ("smoke", "default", "paper")
_STUDY_KEYS = {
    "name",
    "description",
    "datasets",
    "methods",
    "depths",
    "folds",
    "seeds",
    "time_limit",
    "memory_limit_mb",
    "max_thresholds",
    "grace_s",
    "workers",
}


@dataclass(frozen=True)
class MethodSpec:
    """A labelled learner: a registered method plus constructor parameters."""

    label: str
    method: str
    params: dict = field(default_factory=dict)
    time_limit: float | None = None


@dataclass
class StudyConfig:
    """Everything that defines a study's grid of runs."""

    name: str
    datasets: list
    methods: list  # of MethodSpec
    depths: list = field(default_factory=lambda: [2, 3, 4])
    folds: int = 5
    seeds: list = field(default_factory=lambda: [0])
    time_limit: float = 60.0
    memory_limit_mb: float | None = None
    max_thresholds: int | None = 8
    grace_s: float = 10.0
    workers: int = 1
    description: str = ""
    scale: str = "default"

    def validate(self):
        """Raise one clear error for anything that would fail a run later."""
        if not self.datasets:
            raise ValueError(f"study {self.name!r} lists no datasets")
        if not self.methods:
            raise ValueError(f"study {self.name!r} lists no (installed) methods")
        for name in self.datasets:
            try:
                _resolve(name)
            except KeyError as exc:
                raise ValueError(f"study {self.name!r}: {exc.args[0]}") from None
        for spec in self.methods:
            try:
                method = get_method(spec.method)
            except KeyError as exc:
                raise ValueError(f"study {self.name!r}: {exc.args[0]}") from None
            if not method.available():
                try:
                    method.estimator_class()
                except KeyError as exc:
                    raise ValueError(f"study {self.name!r}: {exc.args[0]}") from None
        if not self.depths or any(int(d) < 1 for d in self.depths):
            raise ValueError(f"study {self.name!r}: depths must be integers >= 1")
        if int(self.folds) < 1:
            raise ValueError(
                f"study {self.name!r}: folds must be >= 1 (1 = fit on all rows)"
            )
        if self.time_limit is None or float(self.time_limit) <= 0:
            raise ValueError(f"study {self.name!r}: time_limit must be > 0 seconds")
        return self

    def config_hash(self) -> str:
        data = asdict(self)
        data.pop("description")
        data.pop("workers")
        text = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def _configs_dir():
    return resources.files("odtstudy.study").joinpath("configs")


def list_studies() -> list:
    """Names of the built-in study configurations."""
    return sorted(
        p.name[: -len(".toml")]
        for p in _configs_dir().iterdir()
        if p.name.endswith(".toml")
    )


def _read_toml(name_or_path) -> tuple[dict, str]:
    path = Path(str(name_or_path))
    try:
        if path.suffix == ".toml" and path.exists():
            text = path.read_text()
        else:
            resource = _configs_dir().joinpath(f"{name_or_path}.toml")
            if not resource.is_file():
                raise KeyError(
                    f"unknown study {name_or_path!r}; built-in studies: "
                    f"{list_studies()} (or pass a path to a .toml file)"
                )
            text = resource.read_text()
        return tomllib.loads(text), str(name_or_path)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"malformed study config {name_or_path}: {exc}") from None


def _method_specs(names, tables) -> list:
    if names in (["all"], "all"):
        names = list(list_methods(available_only=True))
        names = [n for n in names if not get_method(n).defaults] + [
            label for label in tables if label not in names
        ]
    specs = []
    for label in names:
        table = dict(tables.get(label, {}))
        method = table.pop("method", label)
        time_limit = table.pop("time_limit", None)
        specs.append(MethodSpec(label, method, table, time_limit))
    return specs


def load_config(name_or_path, scale: str = "default", **overrides) -> StudyConfig:
    """Load a built-in study by name (or a TOML file by path) at a scale.

    Parameters
    ----------
    name_or_path : str
        A name from :func:`list_studies` or a path to a ``.toml`` file.
    scale : {"smoke", "default", "paper"}
        Applies the ``[scales.<scale>]`` overrides of the file.
    **overrides
        Final overrides of study keys (e.g. ``folds=2``).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    data, origin = _read_toml(name_or_path)
    if "study" not in data:
        raise ValueError(f"study config {origin} has no [study] table")
    study = dict(data["study"])
    study.update(data.get("scales", {}).get(scale, {}))
    study.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(study) - _STUDY_KEYS
    if unknown:
        raise ValueError(f"study config {origin}: unknown keys {sorted(unknown)}")
    for key in ("datasets", "methods"):
        if key not in study:
            raise ValueError(f"study config {origin}: [study] needs {key!r}")
    config = StudyConfig(
        name=study.get("name", Path(origin).stem),
        datasets=list(study["datasets"]),
        methods=_method_specs(study["methods"], data.get("methods", {})),
        depths=[int(d) for d in study.get("depths", [2, 3, 4])],
        folds=int(study.get("folds", 5)),
        seeds=[int(s) for s in study.get("seeds", [0])],
        time_limit=float(study.get("time_limit", 60.0)),
        memory_limit_mb=study.get("memory_limit_mb"),
        max_thresholds=study.get("max_thresholds", 8),
        grace_s=float(study.get("grace_s", 10.0)),
        workers=int(study.get("workers", 1)),
        description=study.get("description", ""),
        scale=scale,
    )
    return config.validate()
