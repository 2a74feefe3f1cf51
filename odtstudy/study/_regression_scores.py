"""What a regression run records: MSE, MAE, R² and the pinball loss at the
tau of a ``pinball@<tau>`` objective family, on the training and test rows,
and the training loss a family sums (the objective of a learner that does not
report one).

A family of several quantiles (``pinball@0.1,0.5,0.9``: one tree per tau,
``predict`` one column per tau) sums the pinball losses of its taus; its
MSE, MAE and R² are None (no single prediction per row)."""

from __future__ import annotations

import numpy as np

from odtstudy._regression_loss import pinball_family, summed_loss

__all__ = [
    "REGRESSION_COLUMNS",
    "family_loss",
    "pinball_tau",
    "pinball_taus",
    "regression_scores",
]

#: Record columns of a regression run (null in classification records).
REGRESSION_COLUMNS = [
    "train_mse", "test_mse", "train_mae", "test_mae", "train_r2", "test_r2",
    "train_pinball", "test_pinball",
]  # fmt: skip


def pinball_taus(family) -> tuple | None:
    """The taus of a ``"pinball@<tau>"`` or ``"pinball@<tau>,<tau>,..."``
    family (penalised or not), in order, else None."""
    base = str(family or "").split("+")[0]
    if not base.startswith("pinball@"):
        return None
    try:
        return tuple(float(tau) for tau in base[len("pinball@") :].split(","))
    except ValueError:
        return None


def pinball_tau(family) -> float | None:
    """The tau of a ``"pinball@<tau>"`` family (penalised or not), else None
    (also for a family of several quantiles)."""
    taus = pinball_taus(family)
    return taus[0] if taus is not None and len(taus) == 1 else None


def _quantiles_loss(taus, y, pred) -> float:
    """The pinball losses of the columns of ``pred``, one per tau, summed."""
    return sum(
        summed_loss(pinball_family(tau), y, pred[:, k]) for k, tau in enumerate(taus)
    )


def _r2(y, pred) -> float | None:
    """1 - SSE / SST; None when the target is constant (R² undefined)."""
    total = float(np.sum((y - np.mean(y)) ** 2))
    if total == 0.0:
        return None
    return 1.0 - float(np.sum((y - pred) ** 2)) / total


def regression_scores(family, y_train, train_pred, y_test, test_pred) -> dict:
    """The :data:`REGRESSION_COLUMNS` of a run from its predictions (one
    column per tau for a family of several quantiles: the pinball losses
    summed over the taus, per row, and no MSE, MAE or R²)."""
    tau = pinball_tau(family)
    taus = pinball_taus(family)
    scores = {}
    for rows, y, pred in (
        ("train", y_train, train_pred),
        ("test", y_test, test_pred),
    ):
        y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(pred, dtype=np.float64)
        if pred.ndim == 2:
            for measure in ("mse", "mae", "r2"):
                scores[f"{rows}_{measure}"] = None
            scores[f"{rows}_pinball"] = _quantiles_loss(taus, y, pred) / len(y)
            continue
        scores[f"{rows}_mse"] = summed_loss("squared-error", y, pred) / len(y)
        scores[f"{rows}_mae"] = summed_loss("absolute-error", y, pred) / len(y)
        scores[f"{rows}_r2"] = _r2(y, pred)
        scores[f"{rows}_pinball"] = (
            None if tau is None else summed_loss(pinball_family(tau), y, pred) / len(y)
        )
    return {column: scores[column] for column in REGRESSION_COLUMNS}


def family_loss(family, y, pred) -> float | None:
    """The training loss ``family`` sums (squared error when the family is
    not a regression loss; a family of several quantiles: the pinball losses
    of the columns of ``pred``, one per tau, summed); None for a penalised
    family (the penalty is the learner's to report)."""
    if "+" in str(family or ""):
        return None
    pred = np.asarray(pred, dtype=np.float64)
    if pred.ndim == 2:
        return _quantiles_loss(pinball_taus(family), y, pred)
    tau = pinball_tau(family)
    if tau is not None:
        return summed_loss(pinball_family(tau), y, pred)
    if family == "absolute-error":
        return summed_loss("absolute-error", y, pred)
    return summed_loss("squared-error", y, pred)
