"""Column generation (OptimalBoostClassifier) against full masters and brute force."""

import numpy as np
import pytest
from forest_bruteforce import T11_X, T11_Y, all_columns
from sklearn.base import clone

from odtstudy.datasets import load_dataset
from odtstudy.naiveforest import OptimalBoostClassifier
from odtstudy.naiveforest._master import make_master
from odtstudy.naiveforest._pricing import column_of

LP_T11 = [(1 / 11, 5 / 11), (0.125, 0.25), (0.25, 0.0), (1.0, 0.0)]
MD_T11 = [(0.5, 1.765), (1.0, 2.967949), (3.0, 4.35)]


def _full_master(objective, reg, X, y, n_classes, depth):
    master = make_master(objective, len(y), reg, lp_solver="highspy")
    for a in all_columns(X, y, n_classes, depth):
        master.add_column(a)
    return master.solve()


@pytest.mark.parametrize(
    ("objective", "reg", "expected"),
    [("lpboost", r, e) for r, e in LP_T11] + [("mdboost", r, e) for r, e in MD_T11],
)
def test_t11_column_generation_reaches_the_oracle(objective, reg, expected):
    clf = OptimalBoostClassifier(objective, reg, max_depth=1, pricing="exhaustive")
    clf.fit(T11_X, T11_Y)
    assert clf.objective_ == pytest.approx(expected, abs=1e-5)
    assert clf.optimal_ and clf.status_ == "optimal"
    assert clf.stats_["stop_reason"] == "no_violated_constraint"
    assert clf.stats_["dual_objective"] == pytest.approx(clf.objective_, abs=1e-5)
    # the Lagrangian bound from the last exact pricing closes the gap
    assert clf.stats_["upper_bound"] == pytest.approx(clf.objective_, abs=1e-5)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("objective", "reg"),
    [("lpboost", 0.2), ("lpboost", 0.5), ("mdboost", 1.0), ("mdboost", 6.0)],
)
def test_depth2_column_generation_equals_full_master(seed, objective, reg):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(10, 3))
    y = rng.integers(0, 2, size=10)
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[1]
    clf = OptimalBoostClassifier(
        objective, reg, max_depth=2, pricing="exhaustive", lp_solver="highspy"
    ).fit(X, y)
    full = _full_master(objective, reg, X, y, 2, 2)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(full.objective, abs=1e-5)
    # no tree of depth <= 2 violates a dual constraint (brute-force re-pricing)
    u = clf.sample_weights_
    beta = clf.stats_["beta"][-1]
    worst = max(u @ a for a in all_columns(X, y, 2, 2))
    assert worst <= beta + 1e-6


@pytest.mark.parametrize("reg", [12.0, 50.0])
def test_mdboost_negative_weights_t11_depth2_equals_full_master(reg):
    clf = OptimalBoostClassifier("mdboost", reg, max_depth=2, pricing="exhaustive").fit(
        T11_X, T11_Y
    )
    full = _full_master("mdboost", reg, T11_X, T11_Y, 2, 2)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(full.objective, abs=1e-5)
    u = clf.sample_weights_
    worst = max(u @ a for a in all_columns(T11_X, T11_Y, 2, 2))
    assert worst <= clf.stats_["beta"][-1] + 1e-6


def test_multiclass_column_generation_equals_full_master():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(9, 3))
    y = np.array([0, 1, 2] * 3)
    for objective, reg in (("lpboost", 0.25), ("mdboost", 3.0)):
        clf = OptimalBoostClassifier(
            objective, reg, max_depth=2, pricing="exhaustive"
        ).fit(X, y)
        full = _full_master(objective, reg, X, y, 3, 2)
        assert clf.optimal_
        assert clf.objective_ == pytest.approx(full.objective, abs=1e-5)


@pytest.fixture(scope="module")
def vote_subset():
    data = load_dataset("vote")
    rng = np.random.default_rng(0)
    rows = rng.choice(len(data.y), size=120, replace=False)
    return data.X[rows], data.y[rows]


@pytest.mark.parametrize(
    ("objective", "reg"),
    [("lpboost", 0.125), ("lpboost", 0.25), ("mdboost", 3.0), ("mdboost", 25.0)],
)
def test_exact_pricing_objective_at_least_cart(vote_subset, objective, reg):
    """Thesis Table 6.2 claim on a CP4IM set: OptiXBoost >= XBoost at equal reg."""
    X, y = vote_subset
    exact = OptimalBoostClassifier(
        objective, reg, max_depth=2, pricing="exhaustive", lp_solver="highspy"
    ).fit(X, y)
    cart = OptimalBoostClassifier(
        objective, reg, max_depth=2, pricing="cart", lp_solver="highspy", random_state=0
    ).fit(X, y)
    assert exact.optimal_ and not cart.optimal_
    assert exact.objective_ >= cart.objective_ - 1e-7
    assert cart.status_ == "feasible"


def _weighted_vote(clf, X):
    votes = np.zeros((X.shape[0], len(clf.classes_)))
    for w, tree in zip(clf.weights_, clf.estimators_):
        pred = tree.predict(X)  # labels, as the trees carry classes_
        for c, label in enumerate(clf.classes_):
            votes[pred == label, c] += w
    return clf.classes_[np.argmax(votes, axis=1)], votes


@pytest.mark.parametrize("objective", ["lpboost", "mdboost"])
def test_predictions_are_the_weighted_vote_of_estimators(vote_subset, objective):
    X, y = vote_subset
    labels = np.where(y == 1, "rep", "dem")
    clf = OptimalBoostClassifier(
        objective,
        0.25 if objective == "lpboost" else 3.0,
        max_depth=2,
        pricing="cart",
        random_state=0,
    )
    clf.fit(X, labels)
    expected, votes = _weighted_vote(clf, X)
    assert np.array_equal(clf.predict(X), expected)
    proba = clf.predict_proba(X)
    assert np.allclose(proba, votes / votes.sum(axis=1, keepdims=True))
    assert np.all(clf.weights_ > 0)
    assert len(clf.weights_) == len(clf.estimators_)
    assert clf.score(X, labels) == pytest.approx(clf.stats_["train_accuracy"][-1])


def test_stats_history_and_weights(vote_subset):
    X, y = vote_subset
    clf = OptimalBoostClassifier(
        "lpboost", 0.25, max_depth=1, pricing="exhaustive"
    ).fit(X, y)
    n = clf.stats_["n_iterations"]
    for key in ("objective", "n_trees", "reduced_cost", "train_accuracy", "beta"):
        assert len(clf.stats_[key]) == n
    # the LP objective never decreases when columns are added
    assert np.all(np.diff(clf.stats_["objective"]) >= -1e-9)
    assert clf.stats_["reduced_cost"][-1] <= 1e-6
    assert all(r > 1e-6 for r in clf.stats_["reduced_cost"][:-1])
    assert clf.weights_.sum() == pytest.approx(1.0)
    assert clf.lower_bound_ is None and clf.fit_time_ > 0


def test_mdboost_weights_sum_to_reg(vote_subset):
    X, y = vote_subset
    clf = OptimalBoostClassifier(
        "mdboost", 25.0, max_depth=1, pricing="exhaustive"
    ).fit(X, y)
    assert clf.optimal_
    assert clf.weights_.sum() == pytest.approx(25.0)
    assert clf.sample_weights_.sum() == pytest.approx(len(y))
    assert np.any(clf.sample_weights_ < 0)  # negative weights did occur


#: One stump on 4 rows: rows 0-2 right, row 3 wrong, so a = (1, 1, 1, -1),
#: 1^T a = 2 and a^T A a = M/(M-1) sum (a - mean)^2 = 4/3 * 3 = 4.
STUMP_X = np.array([[0], [1], [1], [1]])
STUMP_Y = np.array([0, 1, 1, 0])


@pytest.mark.parametrize(
    ("reg", "objective", "normalized"),
    # master: D 1^T a - D^2 a^T A a / 2; normalised: that / D = 2 - 2 D
    [(0.5, 0.5, 1.0), (1.0, 0.0, 0.0), (2.0, -4.0, -2.0)],
)
@pytest.mark.parametrize("pricing", ["exhaustive", "cart"])
def test_mdboost_normalized_objective_by_hand(reg, objective, normalized, pricing):
    clf = OptimalBoostClassifier(
        "mdboost", reg, max_depth=1, pricing=pricing, max_iterations=1
    ).fit(STUMP_X, STUMP_Y)
    assert clf.n_trees_ == 1 and clf.weights_ == pytest.approx([reg])
    assert clf.objective_ == pytest.approx(objective)
    assert clf.stats_["normalized_objective"] == pytest.approx(normalized)


@pytest.mark.parametrize("reg", [0.25, 0.5, 1.0])
@pytest.mark.parametrize("pricing", ["exhaustive", "cart"])
def test_lpboost_normalized_objective_is_the_objective(vote_subset, reg, pricing):
    X, y = vote_subset
    clf = OptimalBoostClassifier(
        "lpboost", reg, max_depth=1, pricing=pricing, lp_solver="highspy"
    ).fit(X, y)
    assert clf.stats_["normalized_objective"] == clf.objective_


@pytest.mark.parametrize("reg", [0.5, 3.0, 25.0])
@pytest.mark.parametrize("pricing", ["exhaustive", "cart"])
def test_mdboost_normalized_objective_is_the_thesis_dual_scale(
    vote_subset, reg, pricing
):
    """Aglin's eq. 6.12, ``min r + (u - 1)^T A^-1 (u - 1) / (2 D)``, is the
    master's dual divided by D: the normalised objective is the master
    objective per unit of tree weight, ``1^T r - (D/2) r^T A r`` on the
    margins ``r`` of the weights rescaled to sum to 1 (the variance stays
    weighted by D, so it is not a function of ``r`` alone)."""
    X, y = vote_subset
    clf = OptimalBoostClassifier("mdboost", reg, max_depth=1, pricing=pricing).fit(X, y)
    value = clf.stats_["normalized_objective"]
    assert value == pytest.approx(clf.objective_ / reg)
    a = np.column_stack([column_of(t, X, y) for t in clf.estimators_])
    r = a @ (clf.weights_ / clf.weights_.sum())
    M = len(r)
    rAr = M / (M - 1) * np.sum((r - r.mean()) ** 2)
    assert value == pytest.approx(r.sum() - reg / 2 * rAr, abs=1e-6)
    if clf.optimal_:  # eq. 6.12 at the final sample weights: primal = dual
        u, beta = clf.sample_weights_, clf.stats_["beta"][-1]
        dual = beta + (M - 1) / (2 * M) * np.sum((u - 1) ** 2) / reg
        assert value == pytest.approx(dual, abs=1e-5)


def test_limits_stop_the_loop(vote_subset):
    X, y = vote_subset
    clf = OptimalBoostClassifier(
        "lpboost", 0.25, max_depth=2, pricing="exhaustive", max_iterations=3
    ).fit(X, y)
    assert clf.stats_["n_columns"] == 3 and not clf.optimal_
    assert clf.status_ == "feasible" and clf.stats_["stop_reason"] == "max_iterations"

    clf = OptimalBoostClassifier(
        "lpboost", 0.25, max_depth=2, pricing="exhaustive", stop_after_positive_margin=2
    ).fit(X, y)
    at = clf.stats_["positive_margin_at"]
    assert at is not None and clf.stats_["n_columns"] == at + 2
    assert clf.stats_["stop_reason"] == "stop_after_positive_margin"

    clf = OptimalBoostClassifier(
        "mdboost", 3.0, max_depth=3, pricing="exhaustive", time_limit=0.01
    ).fit(X, y)
    assert clf.status_ == "timeout" and not clf.optimal_
    assert clf.fit_time_ < 5
    assert clf.predict(X).shape == y.shape


def test_master_stopped_by_the_time_limit_keeps_the_previous_forest(
    vote_subset, monkeypatch
):
    import time

    from odtstudy.naiveforest import _boost

    X, y = vote_subset
    real = _boost.make_master

    def slow_master(*args):
        master = real(*args)
        solve = master.solve

        def late_solve(time_limit=None):
            if master.n_columns >= 3:
                time.sleep(time_limit or 0)
                raise RuntimeError("time limit reached")
            return solve(time_limit)

        master.solve = late_solve
        return master

    monkeypatch.setattr(_boost, "make_master", slow_master)
    clf = OptimalBoostClassifier(
        "lpboost", 0.25, max_depth=1, pricing="exhaustive", time_limit=1.0
    ).fit(X, y)
    assert clf.status_ == "timeout" and not clf.optimal_
    assert clf.stats_["n_iterations"] == 2 == len(clf.stats_["objective"])
    assert len(clf.estimators_) <= 2
    assert clf.predict(X).shape == y.shape


def test_dl85_internal_error_falls_back_to_exhaustive_pricing(monkeypatch):
    from odtstudy.naiveforest import _boost

    def broken(*args, **kwargs):
        raise RuntimeError("DL8.5 internal error: simulated")

    monkeypatch.setattr(_boost, "price_dl85", broken)
    with pytest.warns(RuntimeWarning, match="simulated"):
        clf = OptimalBoostClassifier("mdboost", 1.0, max_depth=1).fit(T11_X, T11_Y)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(2.967949, abs=1e-5)


def test_sklearn_clone_and_feature_names(vote_subset):
    pd = pytest.importorskip("pandas")
    X, y = vote_subset
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    clf = OptimalBoostClassifier("mdboost", 1.0, max_depth=1, pricing="exhaustive")
    clf.fit(frame, y)
    assert clf.estimators_[0].feature_names[0] == "f0"
    assert clone(clf).get_params() == clf.get_params()


@pytest.mark.parametrize(("objective", "reg"), [("lpboost", 0.25), ("mdboost", 3.0)])
def test_dl85_pricing_matches_exhaustive_pricing(vote_subset, objective, reg):
    X, y = vote_subset
    dl = OptimalBoostClassifier(
        objective, reg, max_depth=2, pricing="dl85", lp_solver="highspy"
    ).fit(X, y)
    ex = OptimalBoostClassifier(
        objective, reg, max_depth=2, pricing="exhaustive", lp_solver="highspy"
    ).fit(X, y)
    assert dl.optimal_ and ex.optimal_
    assert dl.objective_ == pytest.approx(ex.objective_, abs=1e-5)


@pytest.mark.parametrize(
    ("params", "X", "y", "match"),
    [
        ({}, [[0, 1], [1, np.nan]], [0, 1], "NaN"),
        ({}, [[0, 1], [1, 0]], [1, 1], "one class"),
        ({"pricing": "exhaustive"}, [[0, 2], [1, 0]], [0, 1], "Binarizer"),
        ({"objective": "adaboost"}, [[0, 1], [1, 0]], [0, 1], "objective"),
        ({"reg": -1.0}, [[0, 1], [1, 0]], [0, 1], "reg"),
        ({"pricing": "gurobi"}, [[0, 1], [1, 0]], [0, 1], "pricing"),
        ({"reg": 0.1, "pricing": "cart"}, [[0, 1], [1, 0]], [0, 1], "1/n_samples"),
        (
            {"pricing": "exhaustive", "max_depth": 4},
            [[0, 1], [1, 0]],
            [0, 1],
            "max_depth <= 3",
        ),
        ({"max_iterations": 0}, [[0, 1], [1, 0]], [0, 1], "max_iterations"),
    ],
)
def test_bad_input_is_rejected(params, X, y, match):
    with pytest.raises(ValueError, match=match):
        OptimalBoostClassifier(**params).fit(np.array(X, dtype=float), y)


def test_cart_pricing_accepts_numeric_features():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = OptimalBoostClassifier(
        "mdboost", 3.0, max_depth=1, pricing="cart", random_state=0
    ).fit(X, y)
    assert clf.score(X, y) > 0.8


def test_predict_before_fit_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        OptimalBoostClassifier().predict([[0, 1]])
