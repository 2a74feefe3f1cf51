"""The leaf-penalty objective of GOSDT and LicketySPLIT.

Both minimise ``misclassifications / n + regularization * leaves``. With a
penalty below ``1 / (n * 2**depth)``, all leaves of a tree of the depth cost
less than one misclassification, so the optimum has the fewest
misclassifications: the objective family is then plain
``"misclassification"``. A larger penalty is another family, whose
``objective_`` is ``misclassifications + n * regularization * leaves``.
"""

from __future__ import annotations

PENALTY_FAMILY = "misclassification+leaf-penalty"

__all__ = ["PENALTY_FAMILY", "LeafPenaltyMixin"]


class LeafPenaltyMixin:
    """Penalty choice and objective family for an adapter with a
    ``regularization`` parameter (``None``: ``0.5 / (n * 2**max_depth)``)."""

    @classmethod
    def objective_family(cls, params=None) -> str:
        """``"misclassification"`` with the default penalty, else (before the
        data is known) ``"misclassification+leaf-penalty"``."""
        if (params or {}).get("regularization") is None:
            return cls._objective_family
        return PENALTY_FAMILY

    def _leaf_penalty(self, n_rows) -> float:
        """The penalty per leaf for ``n_rows`` rows; sets ``objective_family_``."""
        small = 1.0 / (n_rows * 2**self.max_depth)
        penalty = 0.5 * small if self.regularization is None else self.regularization
        self.objective_family_ = (
            self._objective_family if penalty < small else PENALTY_FAMILY
        )
        return penalty

    def _penalised(self, result, n_rows, penalty):
        """``result`` with the leaves' cost added to its objective when the
        family is the penalised one."""
        if self.objective_family_ == PENALTY_FAMILY:
            result.objective += n_rows * penalty * result.tree.n_leaves
        return result
