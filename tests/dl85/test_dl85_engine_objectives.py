"""One DL8.5 engine for every objective: brute force for each objective and
search switch, bounded cache == unbounded, cost matrices, batched callbacks."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odtstudy.dl85.engine._cache_policy import WIPE_STRATEGIES
from test_dl85obj_bruteforce import (
    absolute_loss,
    brute,
    pinball_loss,
    squared_loss,
)

import odtstudy.dl85
from odtstudy.dl85 import DL85Classifier, DL85Predictor, DL85Regressor
from odtstudy.dl85.engine._engine import search

TOL = 1e-9

#: Every ablation switch, alone (the defaults are the first entry).
SWITCHES = [
    {},
    {"use_similarity_lb": False},
    {"use_depth2_solver": False},
    {"use_infeasibility_lb": False},
    {"branching": "asc"},
    {"branching": "desc"},
    {"cache": "hash"},
    {"algorithm": "dl8"},
]

#: Every objective: (name, estimator factory, leaf loss for brute force).
OBJECTIVES = [
    "error",
    "weighted",
    "cost",
    "cost_weighted",
    "py_class",
    "squared",
    "absolute",
    "quantile",
    "py_rows",
]


def _problem(kind, rng, n, m, k=3):
    """(X, fit(**options) -> estimator, brute-force leaf loss) for ``kind``."""
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    y[0], y[-1] = 0, 1
    y = np.unique(y, return_inverse=True)[1]
    k = int(y.max()) + 1
    w = rng.uniform(0.1, 3.0, size=n)
    yr = np.round(rng.normal(size=n) * 3, 1)
    cost = rng.uniform(0.5, 4.0, size=(k, k))
    np.fill_diagonal(cost, 0.0)
    ones = np.ones(n)

    def class_loss(weights, c=None):
        def loss(rows):
            v = np.bincount(y[rows], weights=weights[rows], minlength=k)
            return float((c @ v).min()) if c is not None else float(v.sum() - v.max())

        return loss

    def cost_fn(v):
        losses = cost @ v
        return float(losses.min()), int(np.argmin(losses))

    if kind == "error":
        return X, lambda **o: DL85Classifier(**o).fit(X, y), class_loss(ones)
    if kind == "weighted":
        return (
            X,
            lambda **o: DL85Classifier(**o).fit(X, y, sample_weight=w),
            class_loss(w),
        )
    if kind == "cost":
        return (
            X,
            lambda **o: DL85Classifier(cost_matrix=cost, **o).fit(X, y),
            class_loss(ones, cost),
        )
    if kind == "cost_weighted":
        return (
            X,
            lambda **o: DL85Classifier(cost_matrix=cost, **o).fit(
                X, y, sample_weight=w
            ),
            class_loss(w, cost),
        )
    if kind == "py_class":
        return (
            X,
            lambda **o: DL85Classifier(fast_error_function=cost_fn, **o).fit(X, y),
            class_loss(ones, cost),
        )
    if kind == "squared":
        return (
            X,
            lambda **o: DL85Regressor(**o).fit(X, yr, sample_weight=w),
            squared_loss(yr, w),
        )
    if kind == "absolute":
        return (
            X,
            lambda **o: DL85Regressor(criterion="absolute_error", **o).fit(X, yr),
            absolute_loss(yr, ones),
        )
    if kind == "quantile":
        return (
            X,
            lambda **o: DL85Regressor(criterion="quantile", quantile=0.3, **o).fit(
                X, yr, sample_weight=w
            ),
            pinball_loss(yr, w, 0.3),
        )
    assert kind == "py_rows"
    loss = squared_loss(yr, ones)
    return X, lambda **o: DL85Predictor(error_function=loss, **o).fit(X), loss


@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("switch", SWITCHES, ids=lambda s: ",".join(s) or "default")
def test_every_objective_and_switch_equals_bruteforce(kind, switch):
    rng = np.random.default_rng(abs(hash((kind, str(switch)))) % 2**32)
    for trial in range(3):
        n, m = int(rng.integers(6, 16)), int(rng.integers(2, 5))
        X, fit, leaf = _problem(kind, rng, n, m)
        depth = 1 + trial % 3
        min_sup = 1 if trial < 2 else 2
        est = fit(max_depth=depth, min_sup=min_sup, **switch)
        assert est.optimal_
        assert est.objective_ == pytest.approx(brute(X, depth, leaf, min_sup), abs=TOL)


@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("strategy", sorted(WIPE_STRATEGIES))
def test_every_objective_bounded_equals_unbounded(kind, strategy):
    """A bounded cache at 25 % of the unbounded peak keeps every optimum."""
    rng = np.random.default_rng(7)
    for depth in (3, 4):
        _, fit, _ = _problem(kind, rng, 60, 7)
        ref = fit(max_depth=depth)
        bound = max(ref.stats_["cache_peak_entries"] // 4, 1 + depth * (depth + 1) // 2)
        est = fit(max_depth=depth, max_cache_size=bound, wipe_strategy=strategy)
        assert est.optimal_
        assert est.objective_ == pytest.approx(ref.objective_, rel=1e-9, abs=TOL)
        assert est.stats_["cache_peak_entries"] <= bound


@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize(
    "switch", SWITCHES[1:], ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items())
)
def test_bounded_equals_unbounded_with_every_switch(kind, switch):
    rng = np.random.default_rng(11)
    _, fit, _ = _problem(kind, rng, 50, 6)
    ref = fit(max_depth=3, **switch)
    bound = max(ref.stats_["cache_peak_entries"] // 4, 7)
    est = fit(max_depth=3, max_cache_size=bound, **switch)
    assert est.optimal_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-9, abs=TOL)
    assert est.stats_["cache_peak_entries"] <= bound


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_every_objective_time_limit_is_anytime(kind):
    rng = np.random.default_rng(3)
    _, fit, _ = _problem(kind, rng, 300, 40)
    est = fit(max_depth=5, time_limit=0.05)
    assert est.status_ in ("optimal", "timeout")
    assert est.tree_ is not None and est.objective_ >= est.lower_bound_ - 1e-9


SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 14),
    m=st.integers(1, 4),
    k=st.integers(2, 4),
    depth=st.integers(1, 3),
    min_sup=st.sampled_from([1, 1, 2]),
    weighted=st.booleans(),
    integral=st.booleans(),
)
def test_cost_matrix_equals_bruteforce(
    seed, n, m, k, depth, min_sup, weighted, integral
):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    y[0], y[-1] = 0, 1
    y = np.unique(y, return_inverse=True)[1]
    k = int(y.max()) + 1
    cost = rng.uniform(0.0, 5.0, size=(k, k))
    if integral:
        cost = np.round(cost)
    w = rng.uniform(0.05, 3.0, size=n) if weighted else np.ones(n)

    def leaf(rows):
        return float((cost @ np.bincount(y[rows], weights=w[rows], minlength=k)).min())

    clf = DL85Classifier(max_depth=depth, min_sup=min_sup, cost_matrix=cost)
    clf.fit(X, y, sample_weight=w if weighted else None)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(brute(X, depth, leaf, min_sup), abs=TOL)
    # the objective is the cost of the tree's own predictions
    pred = clf.predict(X)
    assert np.sum(w * cost[pred, y]) == pytest.approx(clf.objective_, abs=TOL)


def test_zero_one_cost_matrix_is_the_misclassification():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(300, 12))
    y = rng.integers(0, 3, size=300)
    ref = DL85Classifier(max_depth=3).fit(X, y)
    clf = DL85Classifier(max_depth=3, cost_matrix=1 - np.eye(3)).fit(X, y)
    assert clf.objective_ == ref.objective_


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        (np.zeros((3, 3)), r"shape \(3, 3\).*2 classes"),
        ([[0, -1], [1, 0]], "negative"),
        ([[0, np.nan], [1, 0]], "NaN"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_cost_matrix_is_a_clear_error(cost, message):
    X = np.array([[0], [1], [0], [1]])
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=message) as info:
        DL85Classifier(max_depth=1, cost_matrix=cost).fit(X, y)
    assert "cost_matrix" in str(info.value)


def test_cost_matrix_and_fast_error_function_are_exclusive():
    X = np.array([[0], [1], [0], [1]])
    y = np.array([0, 0, 1, 1])
    clf = DL85Classifier(
        max_depth=1, cost_matrix=1 - np.eye(2), fast_error_function=lambda w: (0, 0)
    )
    with pytest.raises(ValueError, match="cost_matrix or fast_error_function"):
        clf.fit(X, y)


def test_python_class_loss_is_batched_and_memoised():
    """The engine prices each distinct vector of class supports once."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(400, 15))
    y = rng.integers(0, 2, size=400)
    seen = []

    def error(v):
        seen.append(tuple(v))
        return float(v.sum() - v.max()), int(np.argmax(v))

    clf = DL85Classifier(max_depth=3, fast_error_function=error).fit(X, y)
    assert clf.objective_ == DL85Classifier(max_depth=3).fit(X, y).objective_
    # labels are asked once per node after the search; the search itself
    # never prices a vector twice
    assert len(seen) - clf.tree_.node_count <= len(set(seen))


def test_objective_declarations():
    X = np.zeros((4, 2), dtype=np.uint8)
    out = search(X, kind="absolute", y=np.arange(4.0), max_depth=1)
    assert out.found and out.loss == 4.0
    from odtstudy.dl85.engine._bitset import pack_columns
    from odtstudy.dl85.engine._objective import Objective

    cols = pack_columns(X)
    y = np.array([0, 1, 0, 1])
    assert Objective(
        "cost", cols, 4, n_classes=2, y_class=y, cost=np.eye(2)
    ).describe()["pair_stats"]
    py = Objective("py_rows", cols, 4, callback=len).describe()
    assert not py["similarity"] and not py["pair_stats"] and py["python"]
    quantile = Objective("quantile", cols, 4, y=np.arange(4.0)).describe()
    assert quantile["similarity"] and not quantile["pair_stats"]


#: Each built-in objective kind and the one pricing declaration it makes.
PRICING = {
    "error": "error_counts",
    "weighted": "weighted_error",
    "cost": "cost_matrix",
    "squared": "squared",
    "absolute": "order_stats",
    "quantile": "pinball",
    "py_class": "python_batches",
    "py_rows": "python_rows",
    "py_stats": "python_stats",
}


def _objective_of(kind):
    from odtstudy.dl85.engine._bitset import pack_columns
    from odtstudy.dl85.engine._objective import Objective

    cols = pack_columns(np.zeros((4, 2), dtype=np.uint8))
    y_class = np.array([0, 1, 0, 1])
    args = {
        "error": {"n_classes": 2, "y_class": y_class},
        "weighted": {"n_classes": 2, "y_class": y_class, "weights": np.ones(4)},
        "cost": {"n_classes": 2, "y_class": y_class, "cost": np.eye(2)},
        "squared": {"y": np.arange(4.0)},
        "absolute": {"y": np.arange(4.0)},
        "quantile": {"y": np.arange(4.0), "quantile": 0.3},
        "py_class": {"n_classes": 2, "y_class": y_class, "callback": lambda v: 0.0},
        "py_rows": {"callback": len},
        "py_stats": {"callback": lambda s: 0.0, "row_stats": np.ones((4, 1))},
    }[kind]
    return Objective(kind, cols, 4, **args)


@pytest.mark.parametrize("kind", sorted(PRICING))
def test_each_kind_declares_how_it_is_priced(kind):
    described = _objective_of(kind).describe()
    declared = {name for name in PRICING.values() if described[name]}
    expected = {PRICING[kind]} | ({"order_stats"} if kind == "quantile" else set())
    assert declared == expected


def test_the_order_statistics_weights_are_declared_once():
    absolute = _objective_of("absolute")
    assert (absolute.order_tau, absolute.order_above, absolute.order_below) == (
        0.5,
        1.0,
        1.0,
    )
    quantile = _objective_of("quantile")
    assert (quantile.order_tau, quantile.order_above) == (0.3, 0.3)
    assert quantile.order_below == pytest.approx(0.7)
    quantile.select_tau(0.8)  # several quantiles: the search moves tau
    assert (quantile.order_tau, quantile.order_above) == (0.8, 0.8)
    assert quantile.order_below == pytest.approx(0.2)


def test_no_search_or_depth2_solver_tests_an_objective_kind():
    # the searches read the objective's declarations, never its kind
    engine = Path(odtstudy.dl85.__file__).parent / "engine"
    sources = [
        p
        for p in sorted(engine.glob("*.p*"))
        if p.suffix in (".pyx", ".pxd") and not p.stem.startswith("_objective")
    ]
    assert len(sources) > 10
    offenders = [p.name for p in sources if "OBJ_" in p.read_text()]
    assert offenders == []
