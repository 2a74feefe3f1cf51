"""Registry of the learners a study can run: method name -> estimator factory.

Built-in methods are declared by import path, so a study only imports the
learners it runs, and a learner whose dependencies are missing is reported
as "not installed" before any run starts.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Method", "get_method", "list_methods", "register_method"]

DATA_KINDS = ("binary", "numeric")


@dataclass(frozen=True)
class Method:
    """A learner the study runner can run.

    Parameters
    ----------
    name : str
    target : str or callable
        ``"module:Class"`` import path, or a callable returning an estimator.
    data : {"binary", "numeric"}
        ``"binary"``: the runner feeds 0/1 data (numeric sets are binarised
        on the training fold). ``"numeric"``: the runner feeds the raw
        numeric matrix (CP4IM sets are already 0/1).
    exact : bool
        True when the learner can prove optimality (its objective is used in
        the exact-method consistency check).
    defaults : dict
        Extra constructor parameters.
    description : str
    """

    name: str
    target: Any
    data: str = "numeric"
    exact: bool = False
    defaults: dict = field(default_factory=dict)
    description: str = ""

    def estimator_class(self):
        if callable(self.target):
            return self.target
        module_name, _, attr = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
            return getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            raise KeyError(
                f"method {self.name!r} is not installed: cannot import "
                f"{self.target} ({exc})"
            ) from exc

    def available(self) -> bool:
        try:
            self.estimator_class()
        except KeyError:
            return False
        return True

    def make(self, max_depth, time_limit=None, random_state=None, **params):
        """Build the estimator, passing only the arguments it accepts."""
        cls = self.estimator_class()
        kwargs = {**self.defaults, **params}
        try:
            accepted = set(inspect.signature(cls).parameters)
        except (TypeError, ValueError):
            accepted = None
        for key, value in (
            ("max_depth", max_depth),
            ("time_limit", time_limit),
            ("random_state", random_state),
        ):
            if accepted is None or key in accepted:
                kwargs.setdefault(key, value)
        return cls(**kwargs)


_REGISTRY: dict[str, Method] = {}


def register_method(
    name: str,
    target,
    data: str = "numeric",
    exact: bool = False,
    defaults: dict | None = None,
    description: str = "",
    replace: bool = False,
) -> Method:
    """Add a learner to the registry and return its :class:`Method`."""
    if data not in DATA_KINDS:
        raise ValueError(f"data must be one of {DATA_KINDS}, got {data!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"method {name!r} is already registered")
    method = Method(name, target, data, exact, dict(defaults or {}), description)
    _REGISTRY[name] = method
    return method


def get_method(name: str) -> Method:
    """Return the registered method ``name`` (``KeyError`` names the choices)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(
            f"unknown method {name!r}; registered methods: {sorted(_REGISTRY)}"
        ) from None


def list_methods(available_only: bool = True) -> list[str]:
    """Names of registered methods (by default only those that import)."""
    return [
        name
        for name, method in _REGISTRY.items()
        if not available_only or method.available()
    ]


def _register_builtins(entries: list[tuple[str, str, str, bool, dict, str]]):
    for name, target, data, exact, defaults, description in entries:
        register_method(name, target, data, exact, defaults, description)


_register_builtins(
    [
        (
            "cart",
            "odtstudy.cart:CARTClassifier",
            "numeric",
            False,
            {},
            "scikit-learn CART (greedy, Gini)",
        ),
        (
            "dl85",
            "odtstudy.dl85:DL85Classifier",
            "binary",
            True,
            {},
            "DL8.5 caching branch-and-bound (Cython)",
        ),
        (
            "dl8",
            "odtstudy.dl85:DL85Classifier",
            "binary",
            True,
            {"algorithm": "dl8"},
            "DL8: caching search without bounds",
        ),
        (
            "binoct",
            "odtstudy.milp:BinOCTClassifier",
            "numeric",
            True,
            {},
            "BinOCT binary linear program (PuLP + CBC)",
        ),
        (
            "oct",
            "odtstudy.milp:OCTClassifier",
            "numeric",
            True,
            {},
            "OCT mixed-integer program (PuLP + CBC)",
        ),
        (
            "cpsat",
            "odtstudy.cp:CPSATClassifier",
            "binary",
            True,
            {},
            "CP-SAT model (OR-Tools)",
        ),
        (
            "tao",
            "odtstudy.memetic:TAOClassifier",
            "numeric",
            False,
            {},
            "TAO refinement of CART",
        ),
        (
            "tmo",
            "odtstudy.memetic:TMOClassifier",
            "numeric",
            False,
            {},
            "TMO memetic search (DEAP + TAO)",
        ),
        (
            "dl8forest",
            "odtstudy.naiveforest:DL8ForestClassifier",
            "binary",
            False,
            {},
            "DL8-forest: bagged DL8.5 trees, majority vote (Bosch ch. 3)",
        ),
        (
            "optiboost-lp",
            "odtstudy.naiveforest:OptimalBoostClassifier",
            "binary",
            False,
            {"objective": "lpboost", "pricing": "dl85", "lp_solver": "highspy"},
            "OptiLPBoost: LPBoost by column generation, weighted DL8.5 pricing",
        ),
        (
            "optiboost-md",
            "odtstudy.naiveforest:OptimalBoostClassifier",
            "binary",
            False,
            {"objective": "mdboost", "pricing": "dl85"},
            "OptiMDBoost: MDBoost by column generation, weighted DL8.5 pricing",
        ),
        (
            "lpboost-cart",
            "odtstudy.naiveforest:OptimalBoostClassifier",
            "binary",
            False,
            {"objective": "lpboost", "pricing": "cart", "lp_solver": "highspy"},
            "LPBoost by column generation, weighted CART pricing",
        ),
        (
            "mdboost-cart",
            "odtstudy.naiveforest:OptimalBoostClassifier",
            "binary",
            False,
            {"objective": "mdboost", "pricing": "cart"},
            "MDBoost by column generation, weighted CART pricing",
        ),
        (
            "random-forest",
            "odtstudy.naiveforest:RandomForestBaseline",
            "binary",
            False,
            {},
            "scikit-learn RandomForestClassifier, 100 trees of the same depth",
        ),
        (
            "gradient-boosting",
            "odtstudy.naiveforest:GradientBoostingBaseline",
            "binary",
            False,
            {},
            "scikit-learn GradientBoostingClassifier, 100 trees of the same depth",
        ),
        (
            "adaboost",
            "odtstudy.naiveforest:AdaBoostBaseline",
            "binary",
            False,
            {},
            "scikit-learn AdaBoostClassifier, 100 CART trees of the same depth",
        ),
    ]
)
