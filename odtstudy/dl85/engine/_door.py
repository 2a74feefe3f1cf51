"""The one front door from a DL8.5 estimator's problem to a searcher.

An estimator describes its problem: the data as given, the candidate
thresholds of its columns (or None: 0/1 data), the leaf objective and the
search options. :func:`fit_search` decides how it is searched (once, here,
as scikit-learn's ``BaseDecisionTree._fit`` picks its splitter):

* ``"bitset"``: 0/1 data, the bitset search (``_engine.search``);
* ``"threshold_columns"``: few candidate thresholds, encoded as 0/1 columns
  ``x > t`` for the bitset search, its tree decoded back to real thresholds;
* ``"numeric"``: many thresholds, the numeric search (``numeric_search``).

The options are merged with the defaults and unknown names refused by one
function (:func:`~odtstudy.dl85.engine._engine.search_options`) whichever searcher
runs, and the objective's arguments are the same keywords for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from odtstudy.dl85.engine._engine import (
    SearchOutput,
    search,
    search_options,
    search_quantiles,
)
from odtstudy.dl85.engine._numeric_fit import (
    bitset_encodes,
    candidate_thresholds,
    numeric_search,
    threshold_columns,
)

__all__ = ["ENGINES", "NumericUnavailable", "Searched", "fit_search"]

#: The ways a problem is searched, as :attr:`Searched.engine` names them.
ENGINES = ("bitset", "threshold_columns", "numeric")


class NumericUnavailable(ValueError):
    """The problem has no numeric search (several quantiles) and its
    candidate thresholds are too many for 0/1 threshold columns."""


@dataclass
class Searched:
    """What :func:`fit_search` returns.

    Attributes
    ----------
    outs : list of SearchOutput
        The search's outcome (one per quantile for several quantiles).
    X : ndarray
        The rows and columns the outcome's tree indexes (``node_rows``,
        ``build_tree``): the 0/1 matrix searched, its threshold columns,
        or the numeric data as given.
    engine : {"bitset", "threshold_columns", "numeric"}
    decode : callable or None
        Turns a ``Tree`` over ``X``'s columns into one over the given
        columns with real thresholds (threshold columns only).
    """

    outs: list
    X: np.ndarray
    engine: str
    decode: Callable | None = None

    @property
    def out(self) -> SearchOutput:
        """The outcome of a search of one objective."""
        (out,) = self.outs
        return out

    @property
    def searcher(self) -> str:
        """The searcher that ran: ``"bitset"`` or ``"numeric"``."""
        return "numeric" if self.engine == "numeric" else "bitset"

    def decoded(self, tree):
        """``tree`` (built on :attr:`X`) over the given columns (None stays None)."""
        if tree is None or self.decode is None:
            return tree
        return self.decode(tree)


def fit_search(X, cuts, objective: dict, options: dict, *, rows=None, numeric=False):
    """Search the problem ``(X, cuts, objective, options)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data as given: 0/1 (``cuts`` None), or numbers.
    cuts : list of ndarray or None
        The sorted candidate thresholds of each column
        (:func:`~odtstudy.dl85.engine._numeric_fit.candidate_thresholds`); None:
        ``X`` is 0/1.
    objective : dict
        The leaf objective, as the keywords of ``_engine.search`` and
        ``numeric_search``: ``kind``, ``y_class``, ``n_classes``,
        ``weights``, ``y``, ``cost``, ``quantile``, ``callback``,
        ``purity_tol``, ``row_stats``, ``worst``, ``monotone``,
        ``loss_name``; ``stats`` and ``values`` with ``numeric`` only.
        Several quantiles in one search: ``kind="quantile"``, ``y``,
        ``weights`` and ``quantiles`` (a sequence; one quantile is searched
        alone).
    options : dict
        The search options (``_engine.SEARCH_OPTIONS``; unknown names raise
        a TypeError before any search).
    rows : ndarray of int, default=None
        The rows of ``X`` searched, repeats allowed (None: every row);
        ``objective``'s per-row arrays are already those rows'.
    numeric : bool, default=False
        Search with the numeric search whatever the thresholds (0/1 columns
        split at 0.5): the squared error's stable form and exact leaves,
        which only it has.

    Returns
    -------
    Searched

    Raises
    ------
    NumericUnavailable
        Several quantiles on thresholds that need the numeric search.
    """
    options = search_options(options)
    objective = dict(objective)
    quantiles = objective.pop("quantiles", None)
    engine = "numeric" if numeric else _engine_of(cuts)
    if engine != "numeric":
        X, decode = _encoded(X, cuts)
        X = _rows(X, rows)
        return Searched(_search_01(X, objective, quantiles, options), X, engine, decode)
    if quantiles is not None:
        raise NumericUnavailable(
            "several quantiles search 0/1 data, and the thresholds are too "
            "many for 0/1 threshold columns"
        )
    if cuts is None:
        cuts = candidate_thresholds(np.asarray(X, dtype=np.float64), "all")
    X = _rows(X, rows)
    return Searched([numeric_search(X, cuts, **objective, **options)], X, engine)


def _search_01(X, objective, quantiles, options) -> list:
    """The bitset search's outcomes: one, or one per quantile of
    ``quantiles`` (a list of one quantile is that quantile's search)."""
    if quantiles is None:
        return [search(X, **objective, **options)]
    if len(quantiles) == 1:
        return [search(X, **{**objective, "quantile": float(quantiles[0])}, **options)]
    y, weights = objective["y"], objective.get("weights")
    return search_quantiles(X, y=y, quantiles=quantiles, weights=weights, **options)


def _engine_of(cuts) -> str:
    """How data with the candidate thresholds ``cuts`` is searched."""
    if cuts is None:
        return "bitset"
    return "threshold_columns" if bitset_encodes(cuts) else "numeric"


def _encoded(X, cuts):
    """The 0/1 matrix the bitset search runs on, and the decoder of its
    trees (None: ``X`` is 0/1 already)."""
    if cuts is None:
        return np.ascontiguousarray(X, dtype=np.uint8), None
    return threshold_columns(X, cuts)


def _rows(X, rows):
    """The rows ``rows`` of ``X`` (all of them for None)."""
    return X if rows is None else X[rows]
