"""pytrees-rs's ConTree sees every split, however close two values are.

pytrees merges values closer than about 1e-15; the adapter gives it each
column's ranks (as the pycontree adapter does) and maps its thresholds back.
Skipped when pytrees-rs is not installed.
"""

import numpy as np
import pytest

from odtstudy.dl85 import DL85Classifier
from odtstudy.external import ConTreeClassifier, PyTreesConTreeClassifier

pytest.importorskip("pytrees")


def _tiny_gaps(seed):
    """Random rows whose columns take values a few 1e-16 apart (or one ulp
    apart around 1.0), with a label that depends on them."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(8, 31)), int(rng.integers(1, 4))
    steps = rng.integers(0, 4, size=(n, m)).astype(float)
    if seed % 2:
        X = steps * 1e-16
    else:
        X = np.vectorize(lambda k: 1.0 + k * np.spacing(1.0))(steps)
    y = (steps[:, 0] % 2 != (steps[:, -1] > 1)).astype(int)
    flip = rng.random(n) < 0.2
    return X, np.where(flip, 1 - y, y)


def test_values_1e16_apart_are_split():
    X = np.array([[0, 1e-16], [0, 2e-16], [1, 1e-16], [1, 2e-16]] * 2)
    y = np.array([0, 1, 1, 0] * 2)
    model = PyTreesConTreeClassifier(max_depth=2).fit(X, y)
    assert model.optimal_
    assert model.objective_ == 0
    np.testing.assert_array_equal(model.predict(X), y)


@pytest.mark.parametrize("seed", range(12))
def test_same_objective_as_exact_numeric_search(seed):
    X, y = _tiny_gaps(seed)
    ours = DL85Classifier(max_depth=2, thresholds="all", time_limit=20).fit(X, y)
    theirs = PyTreesConTreeClassifier(max_depth=2, time_limit=20).fit(X, y)
    assert ours.optimal_ and theirs.optimal_
    assert theirs.objective_ == ours.objective_
    assert np.sum(theirs.predict(X) != y) == theirs.objective_


def test_thresholds_map_back_between_distinct_values():
    from odtstudy.external._ranks import RankedColumns

    ranked = RankedColumns(np.array([[3.0], [1.0], [2.0], [1.0]]))
    np.testing.assert_array_equal(ranked.ranks[:, 0], [2, 0, 1, 0])
    assert ranked.threshold(0, 0.5) == 1.5
    assert ranked.threshold(0, 1) == 2.5
    assert ranked.threshold(0, 2) == 3.0  # every row left
    assert ranked.threshold(0, -1) < 1.0  # every row right


def test_pycontree_adapter_shares_the_encoding():
    pytest.importorskip("pycontree")
    X = np.array([[0, 1e-16], [0, 2e-16], [1, 1e-16], [1, 2e-16]] * 2)
    y = np.array([0, 1, 1, 0] * 2)
    model = ConTreeClassifier(max_depth=2).fit(X, y)
    assert model.optimal_ and model.objective_ == 0
