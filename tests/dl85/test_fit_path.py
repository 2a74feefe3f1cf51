"""DL85Predictor and DL85Cluster go through the common fit path (_timed_fit)."""

import time
import warnings

import numpy as np
import pandas as pd
import pytest

from odtstudy._deadline import now
from odtstudy.dl85 import DL85Classifier, DL85Cluster, DL85Predictor
from odtstudy.dl85.estimators._predictor import fit_classifier_general

SLOW_S = 0.2


def _binary(rng, n=40, m=5):
    return rng.integers(0, 2, size=(n, m)).astype(np.uint8)


def _cost_error(weights):
    losses = np.array([[0.0, 4.0], [1.0, 0.0]]) @ weights
    label = int(np.argmin(losses))
    return float(losses[label]), label


def _slowed(monkeypatch, cls, name, static=False):
    """Make ``cls.<name>`` sleep ``SLOW_S`` seconds before running."""
    original = getattr(cls, name)

    def slow(*args, **kwargs):
        time.sleep(SLOW_S)
        return original(*args, **kwargs)

    monkeypatch.setattr(cls, name, staticmethod(slow) if static else slow)


def _timed(learner, *args, **kwargs):
    start = now()
    learner.fit(*args, **kwargs)
    return now() - start


# --------------------------------------------------------------- predictor
@pytest.mark.parametrize("mode", ["error_function", "fast_error_function"])
def test_predictor_fit_time_is_the_common_clock_around_fit(rng, monkeypatch, mode):
    X = _binary(rng)
    y = rng.integers(0, 2, size=len(X))
    params = (
        {"error_function": lambda rows: float(len(rows) % 3)}
        if mode == "error_function"
        else {"fast_error_function": _cost_error}
    )
    calls = []
    timed_fit = DL85Predictor._timed_fit

    def counted(self, *args):
        calls.append(args)
        return timed_fit(self, *args)

    monkeypatch.setattr(DL85Predictor, "_timed_fit", counted)
    _slowed(monkeypatch, DL85Predictor, "_fit")
    pred = DL85Predictor(max_depth=2, **params)
    wall = _timed(pred, X, y)
    assert len(calls) == 1
    assert SLOW_S <= pred.fit_time_ <= wall
    assert pred.status_ == "optimal" and pred.tree_.n_leaves >= 1


def test_predictor_fast_function_matches_the_classifier(rng):
    # one search for a Python loss of the class supports: same tree
    X = _binary(rng, n=60, m=6)
    y = rng.integers(0, 2, size=60)
    pred = DL85Predictor(max_depth=3, fast_error_function=_cost_error).fit(X, y)
    clf = DL85Classifier(max_depth=3, fast_error_function=_cost_error).fit(X, y)
    assert pred.objective_ == clf.objective_
    assert pred.tree_.to_dict() == clf.tree_.to_dict()
    np.testing.assert_array_equal(pred.predict(X), clf.predict(X))


def test_general_search_matches_the_weighted_classifier(rng):
    X = _binary(rng, n=50, m=5)
    y = rng.integers(0, 3, size=50)
    w = rng.uniform(0.5, 2.0, size=50)
    clf = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w)
    gen = fit_classifier_general(X, y, 3, w, max_depth=2)
    assert gen.objective == pytest.approx(clf.objective_, rel=1e-12)
    assert gen.tree.feature.tolist() == clf.tree_.feature.tolist()
    assert gen.status == clf.status_ == "optimal"


def test_general_search_without_a_tree_speaks_of_the_loss(rng):
    X = _binary(rng, n=30, m=3)
    y = rng.integers(0, 2, size=30)
    gen = fit_classifier_general(X, y, 2, None, max_depth=1, max_error=0.5)
    clf = DL85Classifier(max_depth=1, max_error=0.5).fit(X, y)
    assert gen.tree is None and gen.status == "infeasible"
    assert "with loss < max_error=0.5" in gen.reason
    assert clf._no_tree_reason == gen.reason.replace("loss", "error")


# ----------------------------------------------------------------- cluster
def test_cluster_fit_time_includes_the_centres(rng, monkeypatch):
    X = _binary(rng)
    _slowed(monkeypatch, DL85Cluster, "_centres", static=True)
    cl = DL85Cluster(max_depth=2)
    wall = _timed(cl, X)
    assert SLOW_S <= cl.fit_time_ <= wall
    assert cl.fit_time_ >= cl.predictor_.fit_time_ + SLOW_S
    assert len(cl.cluster_centers_) == cl.tree_.n_leaves


def test_cluster_on_a_dataframe_keeps_its_column_names(rng):
    columns = ["a", "b", "c", "d"]
    X = pd.DataFrame(_binary(rng, n=30, m=4), columns=columns)
    cl = DL85Cluster(max_depth=2).fit(X)
    assert cl.n_features_in_ == 4
    assert cl.feature_names_in_.tolist() == columns
    assert cl.tree_.feature_names == columns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cl.predict(X), cl.labels_)
    with pytest.raises(ValueError, match="feature names"):
        cl.predict(X.rename(columns={"a": "z"}))


def test_cluster_refuses_other_features_than_it_was_fitted_on(rng):
    cl = DL85Cluster(max_depth=1).fit(_binary(rng, m=4))
    with pytest.raises(ValueError, match="4 features"):
        cl.predict(_binary(rng, m=3))


def test_cluster_names_itself_when_x_is_not_binary(rng):
    X = _binary(rng) * 2
    with pytest.raises(ValueError, match=r"DL85Cluster needs a 0/1 .*Binarizer"):
        DL85Cluster(max_depth=1).fit(X)


def test_cluster_centres_are_the_means_of_its_clusters(rng):
    X = _binary(rng, n=50, m=4)
    E = rng.normal(size=(50, 3))
    cl = DL85Cluster(max_depth=2).fit(X, X_error=E)
    for c, centre in enumerate(cl.cluster_centers_):
        np.testing.assert_allclose(centre, E[cl.labels_ == c].mean(axis=0))
    assert sorted(set(cl.labels_.tolist())) == list(range(cl.tree_.n_leaves))
