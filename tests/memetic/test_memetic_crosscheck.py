"""TAO and TMO against DL8.5's proven optimum on binarised data.

Skipped until ``odtstudy.dl85.DL85Classifier`` exists.
"""

import pytest

from odtstudy.memetic import TAOClassifier, TMOClassifier


def _dl85():
    try:
        from odtstudy.dl85 import DL85Classifier
    except ImportError:
        pytest.skip("odtstudy.dl85.DL85Classifier is not available yet")
    return DL85Classifier


@pytest.fixture(scope="module")
def binary_heart():
    from odtstudy.datasets import Binarizer, load_dataset

    data = load_dataset("heart")
    Xb = Binarizer(max_thresholds=3).fit_transform(data.X)
    return Xb.astype(float), data.y


@pytest.mark.parametrize("depth", [2, 3])
def test_memetic_never_below_dl85_optimum(binary_heart, depth):
    DL85Classifier = _dl85()
    X, y = binary_heart
    dl = DL85Classifier(max_depth=depth, time_limit=60).fit(X, y)
    if not dl.optimal_:
        pytest.skip("DL8.5 did not prove optimality within the limit")
    tao = TAOClassifier(max_depth=depth, random_state=0).fit(X, y)
    tmo = TMOClassifier(
        max_depth=depth, population_size=10, n_generations=2, random_state=0
    ).fit(X, y)
    assert tao.objective_ >= dl.objective_
    assert tmo.objective_ >= dl.objective_
    # TAO started from the optimal tree keeps its error
    kept = TAOClassifier(max_depth=depth, initial=dl.tree_).fit(X, y)
    assert kept.objective_ == dl.objective_
