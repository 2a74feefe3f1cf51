"""What a regression run records: MSE, MAE, R² and the pinball loss at the
tau of a ``pinball@<tau>`` objective family, on the training and test rows,
and the training loss a family sums (the objective of a learner that does not
report one)."""

from __future__ import annotations

import numpy as np

from odtstudy._regression_loss import pinball_family, summed_loss

__all__ = ["REGRESSION_COLUMNS", "family_loss", "pinball_tau", "regression_scores"]

#: Record columns of a regression run (null in classification records).
REGRESSION_COLUMNS = [
    "train_mse", "test_mse", "train_mae", "test_mae", "train_r2", "test_r2",
    "train_pinball", "test_pinball",
]  # fmt: skip


def pinball_tau(family) -> float | None:
    """The tau of a ``"pinball@<tau>"`` family (penalised or not), else None
    (also for a family of several quantiles)."""
    base = str(family or "").split("+")[0]
    if not base.startswith("pinball@"):
        return None
    try:
        return float(base[len("pinball@") :])
    except ValueError:
        return None


def _r2(y, pred) -> float | None:
    """1 - SSE / SST; None when the target is constant (R² undefined)."""
    total = float(np.sum((y - np.mean(y)) ** 2))
    if total == 0.0:
        return None
    return 1.0 - float(np.sum((y - pred) ** 2)) / total


def regression_scores(family, y_train, train_pred, y_test, test_pred) -> dict:
    """The :data:`REGRESSION_COLUMNS` of a run from its predictions."""
    tau = pinball_tau(family)
    scores = {}
    for rows, y, pred in (
        ("train", y_train, train_pred),
        ("test", y_test, test_pred),
    ):
        y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(pred, dtype=np.float64)
        scores[f"{rows}_mse"] = summed_loss("squared-error", y, pred) / len(y)
        scores[f"{rows}_mae"] = summed_loss("absolute-error", y, pred) / len(y)
        scores[f"{rows}_r2"] = _r2(y, pred)
        scores[f"{rows}_pinball"] = (
            None if tau is None else summed_loss(pinball_family(tau), y, pred) / len(y)
        )
    return {column: scores[column] for column in REGRESSION_COLUMNS}


def family_loss(family, y, pred) -> float | None:
    """The training loss ``family`` sums (squared error when the family is
    not a regression loss); None for a penalised family (the penalty is the
    learner's to report)."""
    if "+" in str(family or ""):
        return None
    tau = pinball_tau(family)
    if tau is not None:
        return summed_loss(pinball_family(tau), y, pred)
    if family == "absolute-error":
        return summed_loss("absolute-error", y, pred)
    return summed_loss("squared-error", y, pred)
