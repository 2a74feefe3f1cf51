"""TMO: memetic search on DEAP (methods.md §5), and estimator API checks."""

import itertools

import bruteforce
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier

from odtstudy.cart import tree_from_sklearn
from odtstudy.memetic import TAOClassifier, TMOClassifier

SMALL = {"population_size": 8, "n_generations": 3}


def _non_decreasing(values):
    return all(b >= a - 1e-12 for a, b in itertools.pairwise(values))


@pytest.fixture(scope="module")
def heart():
    from odtstudy.datasets import load_dataset

    data = load_dataset("heart")
    return data.X, data.y


@pytest.mark.parametrize("depth", [2, 3])
def test_tmo_never_worse_than_its_initial_population(heart, depth):
    X, y = heart
    tmo = TMOClassifier(max_depth=depth, random_state=0, **SMALL).fit(X, y)
    log = tmo.stats_["logbook"]
    assert [r["gen"] for r in log] == [0, 1, 2, 3]
    assert tmo.stats_["n_generations"] == 3
    assert tmo.stats_["n_evaluations"] == 8 * 4
    # parent-vs-offspring strict replacement: every individual's fitness is
    # non-decreasing, hence so are the population's min and mean
    assert _non_decreasing([r["min"] for r in log])
    assert _non_decreasing([r["mean"] for r in log])
    assert _non_decreasing(tmo.stats_["best_fitness"])
    accuracy = tmo.score(X, y)
    assert accuracy == pytest.approx(tmo.stats_["best_fitness"][-1])
    assert accuracy >= tmo.stats_["initial_best_fitness"] == log[0]["max"]
    # ... and at least as good as every tree of the random forest it started from
    y_enc = np.unique(y, return_inverse=True)[1]
    forest = RandomForestClassifier(
        n_estimators=8, max_depth=depth, random_state=tmo.stats_["seed"]
    ).fit(X, y_enc)
    for est in forest.estimators_:
        tree = tree_from_sklearn(est.tree_, X, y_enc, 2)
        acc = np.mean(tmo.classes_[tree.predict(X)] == y)
        assert accuracy >= acc
    assert tmo.objective_ == tmo.training_error(X, y)
    assert tmo.tree_.depth <= depth
    assert tmo.status_ == "feasible" and not tmo.optimal_ and tmo.lower_bound_ is None


def test_tmo_same_seed_same_tree(heart):
    X, y = heart
    a = TMOClassifier(max_depth=3, random_state=11, **SMALL).fit(X, y)
    b = TMOClassifier(max_depth=3, random_state=11, **SMALL).fit(X, y)
    assert a.tree_ == b.tree_
    assert [r["mean"] for r in a.stats_["logbook"]] == [
        r["mean"] for r in b.stats_["logbook"]
    ]


def test_tmo_result_does_not_depend_on_n_jobs():
    X, y = load_iris(return_X_y=True)
    one = TMOClassifier(max_depth=2, random_state=3, n_jobs=1, **SMALL).fit(X, y)
    two = TMOClassifier(max_depth=2, random_state=3, n_jobs=2, **SMALL).fit(X, y)
    assert one.tree_ == two.tree_


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 2))
def test_tmo_never_below_the_optimum(seed, depth):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(14, 2)).astype(float)
    y = rng.integers(0, 2, size=14)
    y[:2] = [0, 1]
    tmo = TMOClassifier(
        max_depth=depth, population_size=4, n_generations=2, random_state=seed
    ).fit(X, y)
    assert tmo.objective_ >= bruteforce.optimal_error(X, y, depth)
    assert tmo.objective_ == tmo.training_error(X, y)


def test_tmo_time_limit():
    X, y = load_breast_cancer(return_X_y=True)
    tmo = TMOClassifier(
        max_depth=4,
        population_size=150,
        n_generations=50,
        time_limit=0.5,
        random_state=0,
    ).fit(X, y)
    assert tmo.status_ == "timeout"
    assert tmo.fit_time_ <= 0.5 * 1.1 + 1.0
    assert tmo.stats_["n_generations"] < 50
    assert tmo.objective_ == tmo.training_error(X, y)


def test_tmo_time_limit_covers_the_initial_forest():
    """A population whose forest alone takes far longer than the limit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 20))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    tmo = TMOClassifier(
        max_depth=6, population_size=1000, time_limit=1.0, random_state=0
    ).fit(X, y)
    assert tmo.fit_time_ <= 1.0 * 1.1 + 1.0
    assert tmo.status_ == "timeout" and tmo.stats_["n_generations"] == 0
    assert 2 <= tmo.stats_["population_size"] < 1000
    assert tmo.objective_ == tmo.training_error(X, y)


def test_tmo_forest_grown_in_chunks_is_the_forest_of_one_fit():
    X, y = load_breast_cancer(return_X_y=True)
    kwargs = dict(max_depth=3, population_size=25, n_generations=0, random_state=3)
    limited = TMOClassifier(time_limit=600, **kwargs).fit(X, y)
    unlimited = TMOClassifier(time_limit=None, **kwargs).fit(X, y)
    assert limited.stats_["population_size"] == 25
    assert (
        limited.stats_["logbook"][0]["mean"] == unlimited.stats_["logbook"][0]["mean"]
    )
    np.testing.assert_array_equal(limited.predict(X), unlimited.predict(X))


def test_tmo_sample_weight(heart):
    X, y = heart
    w = np.random.default_rng(0).integers(0, 3, size=len(y)).astype(float)
    tmo = TMOClassifier(max_depth=2, random_state=0, **SMALL).fit(X, y, w)
    assert tmo.objective_ == pytest.approx(tmo.training_error(X, y, w))
    assert tmo.score(X, y, w) >= tmo.stats_["initial_best_fitness"] - 1e-12


def test_tmo_zero_generations_returns_best_initial(heart):
    X, y = heart
    tmo = TMOClassifier(
        max_depth=2, population_size=6, n_generations=0, random_state=0
    ).fit(X, y)
    assert len(tmo.stats_["logbook"]) == 1
    assert tmo.score(X, y) == pytest.approx(tmo.stats_["initial_best_fitness"])


def test_tmo_string_labels_and_registry():
    from odtstudy.study.registry import get_method

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    tmo = TMOClassifier(max_depth=2, random_state=0, **SMALL).fit(X, names)
    assert set(tmo.predict(X)) <= set(names)
    for name, cls in (("tmo", TMOClassifier), ("tao", TAOClassifier)):
        assert get_method(name).estimator_class() is cls
