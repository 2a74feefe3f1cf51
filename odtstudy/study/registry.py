"""Registry of the learners a study can run: method name -> estimator factory.

Built-in methods are declared by import path, so a study only imports the
learners it runs, and a learner whose dependencies are missing is reported
as "not installed" before any run starts. The adapters of published solvers
(:mod:`odtstudy.external`) are always registered; each is available only when
its solver's package imports (the ``external`` extra). A study file can
register the user's own learners by import path
(:func:`register_user_method`).

A learner's data kind, exactness, objective family and study tasks come
from its class (see :mod:`odtstudy.base`: ``study_data(params)`` /
``_study_data`` / ``_requires_binary``, ``_exact``,
``objective_family(params)`` / ``_objective_family``, ``_study_tasks``), read
when first asked for; a registry entry only overrides them for a class that
does not declare them (a user's learner, whose study file says them), or
declares the tasks of a method whose class may be missing (so that a study
can tell "not installed" from "not a method of this task").

:meth:`Method.data_for` is ``"binary"`` (the runner feeds 0/1 data) or
``"numeric"`` for given parameters (``dl85-numeric`` is DL8.5 with
``thresholds="all"``: numeric data), :attr:`Method.data` the same for the
method's own defaults; :attr:`Method.exact` is True when the learner can prove
optimality. :meth:`Method.objective_family` says what a learner's
``objective_`` measures (``"misclassification"``,
``"misclassification+leaf-penalty"``, ``"lpboost"``, ``"squared-error"``,
``"pinball@0.5"``, ...): proven objectives are only compared within a family.
:attr:`Method.tasks` lists the study tasks the learner serves
(``"classification"``, ``"regression"``). :meth:`Method.tool` names who
solves: ``"odtstudy"`` or the solver's package.

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

__all__ = [
    "RUNNER_PARAMS",
    "TASKS",
    "Method",
    "check_tasks",
    "get_method",
    "list_methods",
    "register_method",
    "register_user_method",
]

DATA_KINDS = ("binary", "numeric")
#: The study tasks; a learner class without ``_study_tasks`` classifies.
TASKS = ("classification", "regression")
MISCLASSIFICATION = "misclassification"
#: The objective family of a regression learner that declares none: its
#: ``objective_`` (or the runner's recount) is the sum of squared errors.
SQUARED_ERROR = "squared-error"
RUNNER_PARAMS = ("max_depth", "time_limit", "random_state")
"""Constructor parameters the study runner sets itself (from the study's
depths, time limit and seeds), never taken from a method's parameters."""


def _preflight_data(kind: str, task: str = "classification"):
    """24 rows x 3 non-constant 0/1 features, 2 balanced classes (y = first
    feature, so exact learners prove optimality at once); for regression the
    target is a number per row set by the first two features."""
    X = np.array([[(i >> b) & 1 for b in range(3)] for i in range(8)] * 3)
    if task == "regression":
        y = 1.0 + 2.0 * X[:, 0] + 0.5 * X[:, 1]
    else:
        y = X[:, 0].astype(np.int64)
    return (X.astype(np.uint8) if kind == "binary" else X.astype(float)), y


def _close(name: str, choices) -> str:
    match = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _class_data(cls, params) -> str:
    """The data kind a learner class declares for these parameters (a
    ``study_data(params)`` class method, else ``_study_data``, else
    ``"binary"`` exactly when it has ``_requires_binary``)."""
    declared = getattr(cls, "study_data", None)
    if callable(declared):
        return declared(params)
    data = getattr(cls, "_study_data", None)
    if data is None:
        data = "binary" if getattr(cls, "_requires_binary", False) else "numeric"
    return data


def check_tasks(name: str, tasks) -> tuple:
    """``tasks`` as a tuple of known study tasks (a single name is one task).

    Raises
    ------
    ValueError
        Naming the method and the tasks it may declare.
    """
    tasks = (tasks,) if isinstance(tasks, str) else tuple(tasks)
    bad = [task for task in tasks if task not in TASKS]
    if bad or not tasks:
        raise ValueError(
            f"method {name!r}: tasks must be a non-empty list of {TASKS}, got "
            f"{list(tasks)!r}"
        )
    return tasks


def _check_data(name: str, data) -> str:
    if data not in DATA_KINDS:
        raise ValueError(
            f"method {name!r}: data must be one of {DATA_KINDS}, got {data!r}"
        )
    return data


@dataclass(frozen=True)
class Method:
    """A learner the study runner can run.

    Parameters
    ----------
    name : str
    target : str or callable
        ``"module:Class"`` import path, or a callable returning an estimator.
    declared_data : {"binary", "numeric"}, callable or None, default=None
        Overrides the class's data kind (see :meth:`data_for`); a callable
        gets the parameters; ``None``: the class decides.
    declared_exact : bool or None, default=None
        Overrides the class's ``_exact`` (see :attr:`exact`).
    defaults : dict
        Extra constructor parameters.
    description : str
    family : str or callable, default=None
        Objective family of ``objective_`` (see :meth:`objective_family`),
        overriding the class's; a callable gets the parameters.
    user : bool, default=False
        True for a method defined in a study file (``[methods.<label>]
        target = "module:Class"``).
    declared_tasks : tuple of str or None, default=None
        Overrides the class's ``_study_tasks`` (see :attr:`tasks`).
    """

    name: str
    target: Any
    declared_data: str | None = None
    declared_exact: bool | None = None
    defaults: dict = field(default_factory=dict)
    description: str = ""
    family: Any = None
    user: bool = False
    declared_tasks: tuple | None = None

    @property
    def tasks(self) -> tuple:
        """The study tasks the learner serves (``"classification"``,
        ``"regression"``): declared, else the class's ``_study_tasks``, else
        classification only."""
        if self.declared_tasks is not None:
            return tuple(self.declared_tasks)
        declared = getattr(self._class_or_none(), "_study_tasks", None)
        return check_tasks(self.name, declared or ("classification",))

    @property
    def data(self) -> str:
        """The data kind for the method's own parameters: :meth:`data_for`
        with none on top of its defaults."""
        return self.data_for()

    def data_for(self, params=None) -> str:
        """The data the learner takes with these parameters (on top of the
        method's ``defaults``).

        ``"binary"``: the runner feeds 0/1 data (numeric sets are binarised
        on the training fold); ``"numeric"``: the raw numeric matrix
        (categorical columns one-hot; CP4IM sets are already 0/1). From the
        class unless declared.
        """
        params = {**self.defaults, **(params or {})}
        declared = self.declared_data
        if callable(declared):
            return _check_data(self.name, declared(params))
        if declared is not None:
            return declared
        return _check_data(self.name, _class_data(self._class_or_none(), params))

    @property
    def exact(self) -> bool:
        """True when the learner can prove optimality (its objective is used
        in the exact-method consistency check). The class's ``_exact``
        unless declared."""
        if self.declared_exact is not None:
            return bool(self.declared_exact)
        return bool(getattr(self._class_or_none(), "_exact", False))

    def estimator_class(self):
        """Import and return the estimator class (or factory).

        Raises
        ------
        KeyError
            When the learner cannot be imported, or its class says the
            package it needs is missing (``installed()`` is False): not
            installed.
        """
        cls = _import_target(self.name, self.target)
        installed = getattr(cls, "installed", None)
        if callable(installed) and not installed():
            hint = getattr(cls, "install_hint", None)
            raise KeyError(
                f"method {self.name!r} is not installed: {cls.__name__} needs "
                f"the {getattr(cls, '_tool', '?')!r} package "
                f"({hint() if callable(hint) else 'pip install odtstudy[external]'})"
            )
        return cls

    def available(self) -> bool:
        """True when the learner imports (for an adapter: and its solver)."""
        try:
            self.estimator_class()
        except KeyError:
            return False
        return True

    def objective_family(self, params=None) -> str:
        """What the learner's ``objective_`` measures, for these parameters.

        Proven objectives are only compared within one family. The
        registry's ``family`` decides when given (a user's declaration),
        then the class (an ``objective_family(params)`` class method or an
        ``_objective_family`` attribute); otherwise ``"misclassification"``,
        the contract's ``objective_`` (``"squared-error"`` for a learner
        that only regresses).
        """
        params = {**self.defaults, **(params or {})}
        if callable(self.family):
            return self.family(params)
        if self.family:
            return self.family
        cls = self._class_or_none()
        declared = getattr(cls, "objective_family", None)
        if callable(declared):
            return declared(params)
        if isinstance(getattr(cls, "_objective_family", None), str):
            return cls._objective_family
        return SQUARED_ERROR if self.tasks == ("regression",) else MISCLASSIFICATION

    def tool(self) -> str:
        """``"odtstudy"`` for odtstudy's own learners, else the package that
        solves (an adapter's ``_tool``, or a user class's top-level module)."""
        cls = self._class_or_none()
        if getattr(cls, "_tool", ""):
            return cls._tool
        module = getattr(cls, "__module__", None) or str(self.target).split(":")[0]
        return module.split(".")[0]

    def _class_or_none(self):
        try:
            return _import_target(self.name, self.target)
        except KeyError:
            return None

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
        task = "classification" if "classification" in self.tasks else "regression"
        X, y = _preflight_data(self.data_for(params), task)
        estimator = self.make(max_depth, time_limit, random_state, **(params or {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimator.fit(X, y)


def _import_target(name, target):
    """The class (or factory) ``target`` names: ``"module:Attr"`` or itself.

    Raises
    ------
    KeyError
        When it cannot be imported (not installed).
    """
    if callable(target):
        return target
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise KeyError(
            f"method {name!r} is not installed: cannot import {target} ({exc})"
        ) from exc


_REGISTRY: dict[str, Method] = {}


def register_method(
    name: str,
    target,
    data: str | None = None,
    exact: bool | None = None,
    defaults: dict | None = None,
    description: str = "",
    replace: bool = False,
    family=None,
    user: bool = False,
    tasks=None,
) -> Method:
    """Add a learner to the registry and return its :class:`Method`.

    ``data``, ``exact``, ``family`` and ``tasks`` override what the class
    declares (``None``: the class decides, when first asked; ``data`` and
    ``family`` may be callables of the parameters).
    """
    if data is not None and not callable(data):
        _check_data(name, data)
    if tasks is not None:
        tasks = check_tasks(name, tasks)
    if name in _REGISTRY and not replace:
        raise ValueError(f"method {name!r} is already registered")
    method = Method(
        name,
        target,
        data,
        exact,
        dict(defaults or {}),
        description,
        family,
        user,
        tasks,
    )
    _REGISTRY[name] = method
    return method


def register_user_method(name, target, data, exact, family=None, tasks=None) -> Method:
    """Register (or re-register) a method a study file defines by import path.

    A built-in method cannot be replaced. ``tasks`` (default: the class's
    ``_study_tasks``, else classification) lists the study tasks it serves.

    Raises
    ------
    ValueError
        When ``name`` is a built-in method.
    """
    current = _REGISTRY.get(name)
    if current is not None and not current.user:
        raise ValueError(
            f"{name!r} is a built-in method; give your learner another label"
        )
    description = f"user learner {name}"
    return register_method(
        name, target, data, exact, None, description, True, family, True, tasks
    )


def get_method(name: str) -> Method:
    """Return the registered method ``name`` (``KeyError`` names the choices)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(
            f"unknown method {name!r}; registered methods: {sorted(_REGISTRY)}"
        ) from None


def list_methods(available_only: bool = True, task: str | None = None) -> list[str]:
    """Names of registered methods (by default only those that import;
    ``task``: only those serving that study task)."""
    return [
        name
        for name, method in _REGISTRY.items()
        if (not available_only or method.available())
        and (task is None or task in method.tasks)
    ]


#: Built-in learners: name, import path, constructor defaults, description.
_SINGLE_TREES_AND_DL8_FORESTS = [
    ("cart", "odtstudy.cart:CARTClassifier", {}, "scikit-learn CART (greedy, Gini)"),
    (
        "dl85",
        "odtstudy.dl85:DL85Classifier",
        {},
        "DL8.5 caching branch-and-bound (Cython)",
    ),
    (
        "dl85-numeric",
        "odtstudy.dl85:DL85Classifier",
        {"thresholds": "all"},
        "DL8.5 on numeric features: every midpoint of every column (Cython)",
    ),
    (
        "dl8",
        "odtstudy.dl85:DL85Classifier",
        {"algorithm": "dl8"},
        "DL8: caching search without bounds",
    ),
    (
        "binoct",
        "odtstudy.milp:BinOCTClassifier",
        {},
        "BinOCT binary linear program (PuLP + CBC)",
    ),
    (
        "oct",
        "odtstudy.milp:OCTClassifier",
        {},
        "OCT mixed-integer program (PuLP + CBC)",
    ),
    (
        "flowoct",
        "odtstudy.milp:FlowOCTClassifier",
        {},
        "FlowOCT max-flow MILP on 0/1 features (PuLP + CBC)",
    ),
    (
        "bendersoct",
        "odtstudy.milp:BendersOCTClassifier",
        {},
        "BendersOCT: FlowOCT's Benders decomposition by cutting planes (PuLP + CBC)",
    ),
    ("cpsat", "odtstudy.cp:CPSATClassifier", {}, "CP-SAT model (OR-Tools)"),
    ("tao", "odtstudy.memetic:TAOClassifier", {}, "TAO refinement of CART"),
    ("tmo", "odtstudy.memetic:TMOClassifier", {}, "TMO memetic search (DEAP + TAO)"),
    (
        "dl8forest",
        "odtstudy.naiveforest:DL8ForestClassifier",
        {},
        "DL8-forest: bagged DL8.5 trees, majority vote (Bosch ch. 3)",
    ),
]

#: Optimal forests by column generation (OptimalBoostClassifier): name,
#: objective, pricing oracle, description. LPBoost's master runs on highspy.
_BOOSTS = [
    (
        "optiboost-lp",
        "lpboost",
        "dl85",
        "OptiLPBoost: LPBoost by column generation, weighted DL8.5 pricing",
    ),
    (
        "optiboost-md",
        "mdboost",
        "dl85",
        "OptiMDBoost: MDBoost by column generation, weighted DL8.5 pricing",
    ),
    (
        "lpboost-cart",
        "lpboost",
        "cart",
        "LPBoost by column generation, weighted CART pricing",
    ),
    (
        "mdboost-cart",
        "mdboost",
        "cart",
        "MDBoost by column generation, weighted CART pricing",
    ),
]

#: scikit-learn ensembles wrapped for the forest studies.
_BASELINES = [
    (
        "random-forest",
        "odtstudy.naiveforest:RandomForestBaseline",
        {},
        "scikit-learn RandomForestClassifier, 100 trees of the same depth",
    ),
    (
        "gradient-boosting",
        "odtstudy.naiveforest:GradientBoostingBaseline",
        {},
        "scikit-learn GradientBoostingClassifier, 100 trees of the same depth",
    ),
    (
        "adaboost",
        "odtstudy.naiveforest:AdaBoostBaseline",
        {},
        "scikit-learn AdaBoostClassifier, 100 CART trees of the same depth",
    ),
]
_BUILTINS = [
    *_SINGLE_TREES_AND_DL8_FORESTS,
    *(
        (
            name,
            "odtstudy.naiveforest:OptimalBoostClassifier",
            {"objective": objective, "pricing": pricing}
            | ({"lp_solver": "highspy"} if objective == "lpboost" else {}),
            description,
        )
        for name, objective, pricing, description in _BOOSTS
    ),
    *_BASELINES,
]

#: Adapters for published solvers (odtstudy.external); a method is available
#: when its solver's package imports (the ``external`` extra).
_ADAPTERS = [
    ("pystreed", "STreeDClassifier", "STreeD (pystreed): depth-limited optimal trees"),
    (
        "pystreed-cost",
        "STreeDCostClassifier",
        "STreeD (pystreed): cost-sensitive optimal trees (cost_matrix)",
    ),
    ("pydl85", "PyDL85Classifier", "PyDL8.5 (pydl8.5): the authors' C++ DL8.5"),
    ("gosdt", "GOSDTClassifier", "GOSDT (gosdt) with a depth budget"),
    ("pycontree", "ConTreeClassifier", "ConTree (pycontree): all numeric thresholds"),
    ("licketysplit", "LicketySplitClassifier", "LicketySPLIT: lookahead heuristic"),
    ("pytrees-dl85", "PyTreesDL85Classifier", "pytrees-rs: its Rust DL8.5"),
    (
        "pytrees-dl85-lds",
        "PyTreesDL85AnytimeClassifier",
        "pytrees-rs: its DL8.5 by limited-discrepancy search (anytime)",
    ),
    ("pytrees-contree", "PyTreesConTreeClassifier", "pytrees-rs: its Rust ConTree"),
    (
        "pytrees-contree-lds",
        "PyTreesConTreeAnytimeClassifier",
        "pytrees-rs: its ConTree by limited-discrepancy search (anytime)",
    ),
]

#: Regression learners: name, import path, constructor defaults, whether the
#: registry declares them exact (``None``: the class says), description.
_REGRESSORS = [
    (
        "dl85-reg",
        "odtstudy.dl85:DL85Regressor",
        {},
        True,
        "DL8.5 regression tree, squared error (Cython)",
    ),
    (
        "dl85-reg-abs",
        "odtstudy.dl85:DL85Regressor",
        {"criterion": "absolute_error"},
        True,
        "DL8.5 regression tree, absolute error (Cython)",
    ),
    (
        "dl85-reg-quantile",
        "odtstudy.dl85:DL85Regressor",
        {"criterion": "quantile", "quantile": 0.5},
        True,
        "DL8.5 quantile regression tree, pinball loss (Cython)",
    ),
    (
        "dl85-reg-numeric",
        "odtstudy.dl85:DL85Regressor",
        {"thresholds": "all"},
        True,
        "DL8.5 regression tree on numeric features: every midpoint (Cython)",
    ),
    (
        "cart-reg",
        "odtstudy.cart:CARTRegressor",
        {},
        None,
        "scikit-learn CART regressor (greedy, squared error)",
    ),
    (
        "pystreed-reg",
        "odtstudy.external:STreeDRegressor",
        {},
        None,
        "STreeD (pystreed): depth-limited optimal regression trees",
    ),
    (
        "osrt",
        "odtstudy.external:OSRTRegressor",
        {},
        None,
        "OSRT (osrt): optimal sparse regression trees, a penalty per leaf",
    ),
]

for _name, _target, _defaults, _description in _BUILTINS:
    register_method(
        _name,
        _target,
        defaults=_defaults,
        description=_description,
    )
for _name, _cls, _description in _ADAPTERS:
    register_method(_name, f"odtstudy.external:{_cls}", description=_description)
for _name, _target, _defaults, _exact, _description in _REGRESSORS:
    register_method(
        _name,
        _target,
        exact=_exact,
        defaults=_defaults,
        description=_description,
        tasks=("regression",),
    )
