"""Registry of the learners a study can run: method name -> estimator factory.

Built-in methods are declared by import path, so a study only imports the
learners it runs, and a learner whose dependencies are missing is reported
as "not installed" before any run starts.

:meth:`Method.make` builds a learner and refuses a parameter its constructor
does not take (the runner's own ``max_depth``, ``time_limit`` and
``random_state`` are passed only to learners that take them).
:meth:`Method.preflight` fits a learner once on a tiny synthetic dataset, so
that a study can reject a bad parameter value, or a depth the learner does not
support, before any run.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RUNNER_PARAMS", "Method", "get_method", "list_methods", "register_method"]

DATA_KINDS = ("binary", "numeric")
RUNNER_PARAMS = ("max_depth", "time_limit", "random_state")
"""Constructor parameters the study runner sets itself (from the study's
depths, time limit and seeds), never taken from a method's parameters."""


def _preflight_data(kind: str):
    """24 rows x 3 non-constant 0/1 features, 2 balanced classes (y = first
    feature, so exact learners prove optimality at once)."""
    X = np.array([[(i >> b) & 1 for b in range(3)] for i in range(8)] * 3)
    y = X[:, 0].astype(np.int64)
    return (X.astype(np.uint8) if kind == "binary" else X.astype(float)), y


def _close(name: str, choices) -> str:
    match = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


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
        """Import and return the estimator class (or factory).

        Raises
        ------
        KeyError
            When the learner cannot be imported (not installed).
        """
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
        """True when the learner imports."""
        try:
            self.estimator_class()
        except KeyError:
            return False
        return True

    def parameters(self):
        """Names of the learner's constructor parameters.

        Returns
        -------
        frozenset of str or None
            ``None`` when any keyword is accepted (``**kwargs``) or the
            signature cannot be inspected.
        """
        try:
            signature = inspect.signature(self.estimator_class())
        except (TypeError, ValueError):
            return None
        kinds = {p.kind for p in signature.parameters.values()}
        if inspect.Parameter.VAR_KEYWORD in kinds:
            return None
        return frozenset(
            name
            for name, p in signature.parameters.items()
            if p.kind is not inspect.Parameter.VAR_POSITIONAL
        )

    def _unknown_parameter(self, params):
        """``(name, message)`` for the first of ``params`` the constructor
        does not take (the message lists those it takes), else ``None``."""
        accepted = self.parameters()
        if accepted is None:
            return None
        for name in params:
            if name not in accepted:
                own = sorted(accepted - set(RUNNER_PARAMS))
                cls = self.estimator_class()
                learner = getattr(cls, "__name__", repr(cls))
                return name, (
                    f"{learner} (method {self.name!r}) takes no parameter "
                    f"{name!r}{_close(name, own)}; its parameters are "
                    f"{', '.join(own) or 'none'}"
                )
        return None

    def make(self, max_depth, time_limit=None, random_state=None, **params):
        """Build the estimator.

        Parameters
        ----------
        max_depth, time_limit, random_state
            Set by the runner; passed only when the constructor takes them.
        **params
            Constructor parameters (on top of the method's ``defaults``).

        Returns
        -------
        estimator

        Raises
        ------
        TypeError
            When a parameter is not one the constructor takes (the message
            names it and lists the accepted ones).
        """
        cls = self.estimator_class()
        kwargs = {**self.defaults, **params}
        unknown = self._unknown_parameter(kwargs)
        if unknown:
            raise TypeError(unknown[1])
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

    def preflight(self, max_depth, params=None, time_limit=1.0, random_state=0):
        """Build the learner and fit it once on a tiny synthetic dataset.

        A cheap check, before a study runs, that the parameters and the depth
        are accepted: the learner raises (``ValueError``, ``TypeError``, ...)
        as it would in every run. The fit runs in this process (the study
        config checks run it in a forked one); warnings are silenced.

        Parameters
        ----------
        max_depth : int
        params : dict, default=None
            Constructor parameters (on top of the method's ``defaults``).
        time_limit : float, default=1.0
            Given to the learner (when it takes one).
        random_state : int, default=0

        Returns
        -------
        estimator
            The fitted estimator.
        """
        X, y = _preflight_data(self.data)
        estimator = self.make(max_depth, time_limit, random_state, **(params or {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimator.fit(X, y)


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
