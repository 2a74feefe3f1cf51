"""Inputs of an unexpected type get a result or a message naming the fix,
never a bare NumPy or Cython error."""

import numpy as np
import pandas as pd
import pytest

from odtstudy.cart import CARTClassifier
from odtstudy.dl85 import DL85Classifier


@pytest.mark.parametrize(
    "option, value",
    [
        ("wipe_strategy", "reuses"),
        ("branching", "asc"),
        ("cache", "hash"),
        ("algorithm", "dl8"),
    ],
)
def test_numpy_string_options_are_taken_as_strings(option, value):
    # np.str_ passes the parameter check (a str subclass); the core takes it too
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (40, 4)), rng.integers(0, 2, 40)
    kwargs = {"max_depth": 2, "max_cache_size": 100}
    plain = DL85Classifier(**kwargs, **{option: value}).fit(X, y)
    numpy = DL85Classifier(**kwargs, **{option: np.str_(value)}).fit(X, y)
    assert numpy.objective_ == plain.objective_ and numpy.optimal_


def test_string_categorical_column_with_thresholds_names_the_fix():
    X = pd.DataFrame(
        {"size": [1.0, 2, 3, 4, 5, 6], "colour": pd.Categorical(list("rgbrgb"))}
    )
    with pytest.raises(ValueError, match=r"thresholds='all' needs numeric columns"):
        DL85Classifier(max_depth=2, thresholds="all").fit(X, [0, 1, 0, 1, 1, 0])


@pytest.mark.parametrize("learner", [DL85Classifier, CARTClassifier])
@pytest.mark.parametrize(
    "labels",
    [np.array([0, "a", 1.5, "b"], dtype=object), pd.Series([0.0, "a", 1.5, "b"])],
    ids=["object-array", "series"],
)
def test_labels_of_mixed_types_name_the_fix(learner, labels):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match=r"y mixes label types.*astype\(str\)"):
        learner(max_depth=2).fit(X, labels)


def test_labels_all_strings_in_an_object_array_are_fine():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    y = np.array(["a", "b", "a", "b"], dtype=object)
    assert list(DL85Classifier(max_depth=2).fit(X, y).classes_) == ["a", "b"]
