"""What every adapter of a published solver shares.

An adapter is a :class:`~odtstudy.base.BaseTreeClassifier` (or, for a
regression solver, a :class:`~odtstudy.base.BaseTreeRegressor`, see
``_regression.py``): the base class validates the data, encodes the labels
as class indices, times the fit and stores ``tree_``, ``objective_``,
``lower_bound_``, ``optimal_``, ``status_`` and ``stats_``. The adapter
imports its solver's package only when it fits, so the class (and what it
declares: data kind, exactness, objective family, tool) is known even when
the package is not installed.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from functools import lru_cache

from odtstudy.base import BaseTreeClassifier, FitResult
from odtstudy.external._bounds import depth_one_errors
from odtstudy.external._convert import LEAF, build_tree, misclassifications

__all__ = ["ExternalSolverMixin", "ExternalTreeClassifier"]


@lru_cache(maxsize=None)
def _import(module: str):
    """Import ``module`` once. Logging is off meanwhile: some dependencies
    log the optional back-ends they cannot load (cvxpy, imported by pydl8.5,
    about the OR-Tools version)."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        return importlib.import_module(module)
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def _quiet():
    """Silence what a solver prints (Python ``print`` and C++ ``std::cout``)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # pragma: no cover - no file descriptor 1
        saved = None
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        if saved is not None:
            os.dup2(devnull, 1)
        with contextlib.redirect_stdout(open(os.devnull, "w")) as sink:
            try:
                yield
            finally:
                sink.close()
    finally:
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
        os.close(devnull)


class ExternalSolverMixin:
    """What every adapter declares and does, classifier or regressor.

    Subclasses set the class attributes below and implement ``_fit`` with
    :meth:`_solver`, ``_convert`` and :meth:`_result`; the classifier and
    regressor bases supply ``_convert`` (the solver's tree as a
    :class:`~odtstudy.tree.Tree`), ``_recount`` (a tree's objective on the
    training rows) and ``_refuted_claim``.

    Attributes
    ----------
    _tool : str
        The solver's distribution name on the package index (``"pystreed"``).
    _module : str
        Its import name (``"pystreed"``).
    _exact : bool
        True when the solver proves optimality.
    _objective_family : str
        What ``objective_`` measures, e.g. ``"misclassification"``: proven
        objectives are only compared within one family.
    _honours_time_limit : bool
        False when the adapter enforces the limit itself (forked child).
    _install_note : str
        Where the extra cannot install the package everywhere, how to get it.
    """

    _tool = ""
    _module = ""
    _exact = True
    _objective_family = "misclassification"
    _honours_time_limit = True
    _install_note = ""

    # ----------------------------------------------------- declarations
    @classmethod
    def installed(cls) -> bool:
        """True when the solver's package imports."""
        try:
            _import(cls._module)
        except Exception:
            return False
        return True

    @classmethod
    def install_hint(cls) -> str:
        """How to install the solver's package."""
        hint = f'pip install "odtstudy[external]" (or pip install {cls._tool})'
        return f"{hint}; {cls._install_note}" if cls._install_note else hint

    @classmethod
    def objective_family(cls, params=None) -> str:
        """The objective family of a learner built with ``params``."""
        return cls._objective_family

    # ---------------------------------------------------- fit helpers
    def _solver(self):
        """The solver's package, or an ``ImportError`` naming the extra."""
        try:
            return _import(self._module)
        except ImportError as exc:
            raise ImportError(
                f"{type(self).__name__} needs the {self._tool!r} package: "
                f"{self.install_hint()}; importing {self._module} failed: {exc}"
            ) from exc

    def _result(
        self,
        tree,
        X,
        y,
        sample_weight=None,
        proven=False,
        timed_out=False,
        lower_bound=None,
        stats=None,
        min_sup=1,
    ) -> FitResult:
        """A :class:`FitResult` for ``tree`` (``None``: the solver gave no tree
        in time; a leaf stands in for it, predicting the majority class or
        the mean target).

        ``objective`` is recounted on the converted tree (``_recount``), so
        it is exactly what ``predict`` scores; the solver's own figure stays
        in ``stats``.
        A claim of optimality that the recount refutes is not passed on
        (:meth:`_refuted_claim`): the status is then ``"feasible"``.
        """
        stats = dict(stats or {}, tool=self._tool)
        if tree is None:
            tree = self._convert(None, lambda node: (LEAF, None), X, y, sample_weight)
            stats["no_solver_tree"] = True
        objective = self._recount(tree, X, y, sample_weight)
        proven = bool(proven) and not timed_out
        if proven:
            refuted = self._refuted_claim(objective, X, y, sample_weight, min_sup)
            if refuted:
                stats["claim_refuted"] = refuted
                proven = False
        if proven:
            lower_bound = objective
        status = "optimal" if proven else ("timeout" if timed_out else "feasible")
        stats.setdefault("n_leaves", tree.n_leaves)
        return FitResult(
            tree=tree,
            objective=objective,
            lower_bound=None if lower_bound is None else float(lower_bound),
            optimal=proven,
            status=status,
            stats=stats,
        )

    def fit(self, X, y, sample_weight=None):
        """Fit the solver on ``X`` and ``y`` (see the class documentation)."""
        self.objective_family_ = self.objective_family(self.get_params())
        with _quiet():
            return super().fit(X, y, sample_weight)


class ExternalTreeClassifier(ExternalSolverMixin, BaseTreeClassifier):
    """Base of the classifier adapters in :mod:`odtstudy.external`.

    Subclasses set the class attributes of :class:`ExternalSolverMixin` and
    implement ``_fit`` with :meth:`_solver`, :meth:`_convert` and
    :meth:`_result`.
    """

    @staticmethod
    def _no_sample_weight(sample_weight, tool):
        if sample_weight is not None:
            raise ValueError(
                f"{tool} optimises plain misclassifications: sample_weight is "
                "not supported"
            )

    def _convert(self, root, describe, X, y, sample_weight=None):
        return build_tree(root, describe, X, y, len(self.classes_), sample_weight)

    def _recount(self, tree, X, y, sample_weight) -> float:
        """Misclassifications of ``tree`` on the training rows."""
        return misclassifications(tree, X, y, sample_weight)

    def _refuted_claim(self, objective, X, y, sample_weight, min_sup) -> str:
        """Why the solver's claim that a tree of ``objective`` errors is
        optimal is false, or ``""``: the best tree of depth at most 1 (leaves
        of at least ``min_sup`` rows) makes fewer errors. Penalised
        objectives and weighted rows are not checked this way."""
        if (
            sample_weight is not None
            or self.max_depth < 1
            or self.objective_family_ != self._objective_family
        ):
            return ""
        shallow = depth_one_errors(X, y, min_sup)
        if objective <= shallow:
            return ""
        return (
            f"{self._tool} called a tree with {objective:g} errors optimal; "
            f"a tree of depth 1 makes {shallow}"
        )

    def _fit(self, X, y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError
