"""Turn numeric and categorical tables into the 0/1 matrices exact learners need."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import assert_all_finite, check_array, check_is_fitted

from odtstudy.base import check_exact_float64

__all__ = ["Binarizer"]


def _format_threshold(t: float) -> str:
    text = f"{t:.6g}"
    return text


def _midpoints(values: np.ndarray) -> np.ndarray:
    """A threshold ``t`` with ``a <= t < b`` between each two consecutive
    distinct values ``a < b``: their midpoint where it falls there, else
    ``a`` (the midpoint overflows to inf near the largest doubles and rounds
    onto ``b`` for adjacent doubles)."""
    distinct = np.unique(values)
    lo, hi = distinct[:-1], distinct[1:]
    with np.errstate(over="ignore"):
        mid = (lo + hi) / 2.0
    outside = ~((lo <= mid) & (mid < hi))
    if outside.any():
        halves = lo[outside] / 2.0 + hi[outside] / 2.0
        fits = (lo[outside] <= halves) & (halves < hi[outside])
        mid[outside] = np.where(fits, halves, lo[outside])
    return mid


def _quantile_thresholds(values: np.ndarray, k: int) -> np.ndarray:
    """At most ``k`` midpoints, those nearest the (i / (k + 1)) quantiles."""
    mids = _midpoints(values)
    if len(mids) <= k:
        return mids
    levels = np.quantile(values, np.arange(1, k + 1) / (k + 1))
    nearest = np.abs(mids[None, :] - levels[:, None]).argmin(axis=1)
    return np.unique(mids[nearest])


def _check_categories(series: pd.Series, position: int) -> None:
    """Raise a ``TypeError`` for a value that is no category (a dict, a list):
    categories are strings, numbers or booleans."""
    for value in series:
        if not isinstance(value, (str, bytes, Real, bool, np.generic)):
            raise TypeError(
                f"column {position} of X holds a {type(value).__name__}: every "
                "argument must be a string or a number (a category is a string, "
                "a number or a boolean)"
            )


class Binarizer(TransformerMixin, BaseEstimator):
    """Binarize a table: one-hot categorical columns, ``x <= t`` numeric tests.

    Numeric columns get one output column ``name<=t`` per threshold ``t``
    (all midpoints between consecutive distinct training values, or at most
    ``max_thresholds`` of them chosen near the quantiles). A numeric column
    that is already 0/1 is kept as one column. Categorical columns get one
    column ``name=value`` per training category (all of them, as CP4IM does);
    a category unseen in training gives all zeros. Constant columns are
    dropped. Thresholds are learned in ``fit`` and reused by ``transform``,
    so fit it on training data only. ``X`` is a dense array or a DataFrame
    with distinct column names, and at least one column must vary (else
    ``fit`` raises a ``ValueError``: the output would have no column). Bad
    input gets scikit-learn's own errors (``check_array``): sparse input
    raises a ``TypeError``, a 1-D array, no rows or no columns a
    ``ValueError``, and so do NaN (in any column) and infinity (in a numeric
    column).

    Parameters
    ----------
    max_thresholds : int, default=None
        Maximum number of thresholds per numeric column; ``None`` keeps all
        midpoints (optimality of an exact learner is then relative to the
        full set).
    categorical_features : "auto" or list of str or int, default="auto"
        Which columns are categorical (names or positions); "auto" takes
        every non-numeric column. An entry naming no column of ``X`` raises
        a ``ValueError``.

    Attributes
    ----------
    feature_names_in_ : ndarray of str
    n_features_in_ : int
    outputs_ : list of tuple
        One ``(input_column, op, value)`` per output column, ``op`` in
        ``{"<=", "=", "id"}``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"petal_length": [1.4, 1.4, 4.7, 5.1],
    ...                    "colour": ["red", "blue", "red", "red"]})
    >>> b = Binarizer().fit(df)
    >>> list(b.get_feature_names_out())
    ['petal_length<=3.05', 'petal_length<=4.9', 'colour=blue', 'colour=red']
    >>> b.transform(df).tolist()[1]
    [1, 1, 1, 0]
    """

    _parameter_constraints = {
        "max_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "categorical_features": ["array-like", StrOptions({"auto"})],
    }

    def __init__(self, max_thresholds=None, categorical_features="auto"):
        self.max_thresholds = max_thresholds
        self.categorical_features = categorical_features

    def _as_frame(self, X) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            duplicated = X.columns[X.columns.duplicated()].unique()
            if len(duplicated):
                raise ValueError(
                    "X has duplicate column names "
                    f"({', '.join(map(repr, duplicated.tolist()))}): the "
                    "Binarizer's output names would be ambiguous; rename them "
                    "first, e.g. X.columns = [f'{c}_{i}' for i, c in "
                    "enumerate(X.columns)]"
                )
        # scikit-learn's checks and messages: sparse, 1-D, empty input
        check_array(X, dtype=None, ensure_all_finite=False, accept_sparse=False)
        if isinstance(X, pd.DataFrame):
            frame = X
        else:
            arr = np.asarray(X, dtype=object)
            names = getattr(self, "feature_names_in_", None)
            if names is None or len(names) != arr.shape[1]:
                names = [f"x{j}" for j in range(arr.shape[1])]
            frame = pd.DataFrame(arr, columns=list(names))
            frame = frame.infer_objects()
        if frame.isna().to_numpy().any():
            raise ValueError(
                "Input X contains NaN (missing values); impute or drop them "
                "before binarizing"
            )
        return frame

    def _check_n_features(self, frame):
        if frame.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {frame.shape[1]} features, but Binarizer is expecting "
                f"{self.n_features_in_} features as input."
            )

    @staticmethod
    def _numeric(frame, position) -> np.ndarray:
        raw = pd.to_numeric(frame.iloc[:, position]).to_numpy()
        values = raw.astype(np.float64)
        check_exact_float64(raw, values, f"X column {frame.columns[position]!r}")
        assert_all_finite(values, input_name="X")
        return values

    def _check_categorical_features(self, frame):
        if isinstance(self.categorical_features, str):
            return
        columns = set(frame.columns)
        unknown = [
            c
            for c in self.categorical_features
            if c not in columns
            and not (isinstance(c, Integral) and 0 <= c < frame.shape[1])
        ]
        if unknown:
            raise ValueError(
                f"categorical_features names {unknown!r}, which are neither "
                f"columns nor positions of X (columns: {list(frame.columns)!r})"
            )

    def _is_categorical(self, frame, column, position):
        if self.categorical_features == "auto":
            series = frame.iloc[:, position]
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(
                series
            ):
                return False
            try:
                pd.to_numeric(series)
            except (ValueError, TypeError):
                return True
            return False
        chosen = set(self.categorical_features)
        return column in chosen or position in chosen

    def fit(self, X, y=None):
        """Learn the categories and thresholds of each column of ``X``."""
        self._validate_params()
        frame = self._as_frame(X)
        self.feature_names_in_ = np.asarray(
            [str(c) for c in frame.columns], dtype=object
        )
        self.n_features_in_ = frame.shape[1]
        self._check_categorical_features(frame)
        outputs = []
        for position, column in enumerate(frame.columns):
            if self._is_categorical(frame, column, position):
                _check_categories(frame.iloc[:, position], position)
                values = sorted({str(v) for v in frame.iloc[:, position]})
                if len(values) > 1:
                    outputs += [(position, "=", v) for v in values]
                continue
            values = self._numeric(frame, position)
            distinct = np.unique(values)
            if len(distinct) <= 1:
                continue
            if len(distinct) == 2 and set(distinct) == {0.0, 1.0}:
                outputs.append((position, "id", None))
                continue
            if self.max_thresholds is None:
                thresholds = _midpoints(values)
            else:
                thresholds = _quantile_thresholds(values, self.max_thresholds)
            outputs += [(position, "<=", float(t)) for t in thresholds]
        if not outputs:
            raise ValueError(
                "the Binarizer found no test to make: every column of X is "
                f"constant (one distinct value; n_samples={frame.shape[0]}), so "
                "the binarized data would have no column; drop the constant "
                "columns or check the data"
            )
        self.outputs_ = outputs
        return self

    def transform(self, X):
        """Return the 0/1 ``uint8`` matrix of the learned tests."""
        check_is_fitted(self, "outputs_")
        frame = self._as_frame(X)
        self._check_n_features(frame)
        out = np.zeros((frame.shape[0], len(self.outputs_)), dtype=np.uint8)
        columns = {}
        for k, (position, op, value) in enumerate(self.outputs_):
            if op == "=":
                col = columns.setdefault(
                    position, frame.iloc[:, position].astype(str).to_numpy()
                )
                out[:, k] = col == value
            else:
                if position not in columns:
                    columns[position] = self._numeric(frame, position)
                col = columns[position]
                out[:, k] = (col == 1.0) if op == "id" else (col <= value)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # one-hot encoded
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = []  # the output is 0/1 uint8
        return tags

    def get_feature_names_out(self, input_features=None):
        """Readable names of the output columns, e.g. ``petal_length<=2.45``."""
        check_is_fitted(self, "outputs_")
        names = (
            self.feature_names_in_ if input_features is None else list(input_features)
        )
        result = []
        for position, op, value in self.outputs_:
            base = str(names[position])
            if op == "id":
                result.append(base)
            elif op == "=":
                result.append(f"{base}={value}")
            else:
                result.append(f"{base}<={_format_threshold(value)}")
        return np.asarray(result, dtype=object)
