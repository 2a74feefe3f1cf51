"""What every adapter of a published regression solver shares.

A regression adapter is a :class:`~odtstudy.base.BaseTreeRegressor` with the
declarations and fit helpers of every adapter
(:class:`~odtstudy.external._base.ExternalSolverMixin`): the solver's tree
becomes a ``kind="regressor"`` :class:`~odtstudy.tree.Tree` and
``objective_`` is recomputed on it in the units of the shared interface —
the loss summed over the training rows, plus the leaf penalty in the same
units for a penalised family — whatever scaling the solver uses inside.
"""

from __future__ import annotations

from odtstudy._regression_loss import summed_loss
from odtstudy.base import BaseTreeRegressor
from odtstudy.external._base import ExternalSolverMixin
from odtstudy.external._bounds import greedy_squared_error
from odtstudy.external._convert import build_regression_tree

__all__ = ["ExternalTreeRegressor"]

#: Relative slack of the check against CART: a solver's tree and CART's are
#: summed in different orders (and some solvers work in single precision).
_CHECK_TOLERANCE = 1e-6


class ExternalTreeRegressor(ExternalSolverMixin, BaseTreeRegressor):
    """Base of the regression adapters in :mod:`odtstudy.external`.

    Subclasses set the class attributes of
    :class:`~odtstudy.external._base.ExternalSolverMixin` and implement
    ``_fit``; a penalised solver sets ``_penalty_per_leaf`` (in objective
    units) before calling :meth:`_result`.
    """

    _objective_family = "squared-error"
    _loss_family = "squared-error"  # the loss without a leaf penalty
    _study_tasks = ("regression",)
    _penalty_per_leaf = 0.0

    @staticmethod
    def _no_sample_weight(sample_weight, tool):
        if sample_weight is not None:
            raise ValueError(
                f"{tool} weighs every training row alike: sample_weight is not "
                "supported"
            )

    def _convert(self, root, describe, X, y, sample_weight=None):
        return build_regression_tree(root, describe, X, y, sample_weight)

    def _recount(self, tree, X, y, sample_weight) -> float:
        """The family's loss of ``tree`` summed over the training rows, plus
        ``_penalty_per_leaf`` per leaf."""
        loss = summed_loss(self._loss_family, y, tree.predict(X), sample_weight)
        return loss + self._penalty_per_leaf * tree.n_leaves

    def _max_leaves(self):
        """The most leaves the solver's trees may have (``None``: as many
        as the depth allows)."""
        return None

    def _refuted_claim(self, objective, X, y, sample_weight, min_sup) -> str:
        """Why the solver's claim that a tree of ``objective`` is optimal is
        false, or ``""``: a single leaf or one of CART's trees of depth at
        most ``max_depth`` (leaves of at least ``min_sup`` rows, at most
        :meth:`_max_leaves`) costs less
        (:func:`~odtstudy.external._bounds.greedy_squared_error`). Weighted
        rows are not checked this way."""
        if sample_weight is not None or self._loss_family != "squared-error":
            return ""
        greedy = greedy_squared_error(
            X, y, self.max_depth, min_sup, self._penalty_per_leaf, self._max_leaves()
        )
        if objective <= greedy + _CHECK_TOLERANCE * max(abs(greedy), 1.0):
            return ""
        return (
            f"{self._tool} called a tree of objective {objective:.6g} optimal; "
            f"CART finds a tree of depth at most {self.max_depth} with {greedy:.6g}"
        )

    def _fit(self, X, y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError
