"""One front door to the DL8.5 searchers (issue 53, item 1).

The estimators describe their problem (data, candidate thresholds,
objective, options) and ``_door.fit_search`` decides how it is searched:
0/1 bitsets, threshold columns or the numeric search. Each of the three
gives the brute-force optimum for a classifier, a regressor and a user
objective; the options are merged with the defaults and unknown names
refused by one function, whichever searcher runs.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import bruteforce
import numpy as np
import pytest

import odtstudy.dl85 as dl85
import odtstudy.dl85.engine._door as door
from odtstudy.dl85 import DL85Classifier, DL85Predictor, DL85Regressor, LeafObjective
from odtstudy.dl85.engine._engine import SEARCH_OPTIONS, search
from odtstudy.dl85.engine._numeric_fit import candidate_thresholds, numeric_search

ENGINE_PICKERS = re.compile(r"numeric_search|bitset_encodes|NumericSearcher|Searcher\(")


def test_no_estimator_module_reaches_a_searcher_but_through_the_door():
    estimators = sorted((Path(dl85.__file__).parent / "estimators").glob("*.py"))
    assert {"_classes.py", "_regressor.py", "_predictor.py"} <= {
        p.name for p in estimators
    }
    for path in estimators:
        source = path.read_text(encoding="utf-8")
        assert ENGINE_PICKERS.findall(source) == [], path.name


#: The modules that are the door and what is behind it.
BEHIND_THE_DOOR = {"_door.py", "_engine.py", "_numeric_fit.py"}
SEARCH_IMPORT = re.compile(
    r"from odtstudy\.dl85\.engine\._(engine|numeric_fit) import[^\n]*\b"
    r"(search|search_quantiles|numeric_search)\b"
)


def test_no_module_outside_the_engine_imports_a_search_but_the_door():
    package = Path(dl85.__file__).parent.parent
    for path in package.rglob("*.py"):
        if path.parent.name == "engine" and path.name in BEHIND_THE_DOOR:
            continue
        source = path.read_text(encoding="utf-8")
        assert SEARCH_IMPORT.findall(source) == [], path


def test_the_search_import_pattern_catches_a_search_import():
    line = "from odtstudy.dl85.engine._engine import build_tree, search\n"
    assert SEARCH_IMPORT.findall(line)


def _data(engine, seed, n=24):
    """Rows whose thresholds go to ``engine``: 0/1 columns, few distinct
    values per column (threshold columns), or many (the numeric search)."""
    rng = np.random.default_rng(seed)
    if engine == "bitset":
        return rng.integers(0, 2, size=(n, 5)).astype(float), None
    if engine == "threshold_columns":
        return rng.integers(0, 4, size=(n, 3)).astype(float), "all"
    return np.round(rng.normal(size=(n, 3)), 3), "all"


@pytest.fixture
def engines(monkeypatch):
    """The engines the door picked during the test, in order."""
    picked = []
    decide = door._engine_of

    def spy(cuts):
        picked.append(decide(cuts))
        return picked[-1]

    monkeypatch.setattr(door, "_engine_of", spy)
    return picked


def _squared(y):
    def leaf(rows):
        return float(((y[rows] - y[rows].mean()) ** 2).sum()) if len(rows) else 0.0

    return leaf


class _SquaredError(LeafObjective):
    """The squared error as a user objective of ``(1, y, y**2)`` per row."""

    def row_stats(self, y, sample_weight):
        return np.column_stack([np.ones(len(y)), y, y * y])

    def loss(self, stats):
        n = np.maximum(stats[:, 0], 1.0)
        return np.maximum(stats[:, 2] - stats[:, 1] ** 2 / n, 0.0)

    def value(self, stats):
        return stats[1] / stats[0]


ALL_ENGINES = ("bitset", "threshold_columns", "numeric")


@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.parametrize("seed", range(2))
def test_the_classifier_gets_the_optimum_from_each_engine(engine, seed, engines):
    X, thresholds = _data(engine, seed)
    y = np.random.default_rng(100 + seed).integers(0, 3, size=len(X))
    clf = DL85Classifier(max_depth=2, thresholds=thresholds).fit(X, y)
    assert engines == [engine]
    assert clf.optimal_
    assert clf.objective_ == bruteforce.optimal_error(X, y, 2)
    assert clf.score(X, y) == pytest.approx(1 - clf.objective_ / len(y))


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_weighted_rows_reach_every_engine_as_the_classifier_gives_them(engine, engines):
    X, thresholds = _data(engine, 7, n=40)  # thresholds of the rows of weight > 0
    y = np.random.default_rng(7).integers(0, 2, size=len(X))
    w = np.random.default_rng(8).integers(0, 3, size=len(X)).astype(float)
    clf = DL85Classifier(max_depth=2, thresholds=thresholds)
    clf.fit(X, y, sample_weight=w)
    assert engines == [engine]
    assert clf.objective_ == bruteforce.optimal_error(X, y, 2, weights=w)
    # integer weights are repeated rows: the tree is the repeated data's
    assert clf.tree_.n_samples[0] == w.sum()


@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.parametrize("seed", range(2))
def test_the_regressor_gets_the_optimum_from_each_engine(engine, seed, engines):
    X, thresholds = _data(engine, seed, n=20)
    y = np.round(np.random.default_rng(200 + seed).normal(size=len(X)) * 3, 1)
    reg = DL85Regressor(max_depth=2, thresholds=thresholds).fit(X, y)
    assert engines[0] == engine
    assert reg.optimal_
    expected = bruteforce.optimal_loss(X, _squared(y), 2)
    assert reg.objective_ == pytest.approx(expected, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.parametrize("seed", range(2))
def test_a_user_objective_gets_the_optimum_from_each_engine(engine, seed, engines):
    X, thresholds = _data(engine, seed, n=20)
    y = np.round(np.random.default_rng(300 + seed).normal(size=len(X)) * 3, 1)
    est = DL85Predictor(max_depth=2, objective=_SquaredError(), thresholds=thresholds)
    est.fit(X, y)
    assert engines == [engine]
    assert est.optimal_
    expected = bruteforce.optimal_loss(X, _squared(y), 2)
    assert est.objective_ == pytest.approx(expected, rel=1e-9, abs=1e-9)
    # the tree tests the given columns, whichever matrix was searched
    leaves = est.tree_.apply(X)
    loss = sum(_squared(y)(np.flatnonzero(leaves == leaf)) for leaf in set(leaves))
    assert loss == pytest.approx(est.objective_, rel=1e-9, abs=1e-9)


def test_several_quantiles_have_no_numeric_search():
    X, _ = _data("numeric", 0)
    cuts = candidate_thresholds(X, "all")
    objective = {"kind": "quantile", "y": X[:, 0], "quantiles": [0.2, 0.8]}
    with pytest.raises(door.NumericUnavailable, match="several quantiles"):
        door.fit_search(X, cuts, objective, {"max_depth": 1})
    reg = DL85Regressor(criterion="quantile", quantile=[0.2, 0.8], thresholds="all")
    with pytest.raises(ValueError, match=r"quantile=\[0.2, 0.8\]: several quantiles"):
        reg.fit(X, X[:, 0])


def test_the_squared_errors_stable_form_runs_the_numeric_search_on_01_data():
    X, _ = _data("bitset", 3, n=12)
    y = np.arange(12.0)
    searched = door.fit_search(
        X, None, {"kind": "squared", "y": y}, {"max_depth": 2}, numeric=True
    )
    assert searched.engine == "numeric" and searched.searcher == "numeric"
    bitset = door.fit_search(X, None, {"kind": "squared", "y": y}, {"max_depth": 2})
    assert bitset.engine == "bitset" and bitset.searcher == "bitset"
    assert searched.out.loss == pytest.approx(bitset.out.loss, rel=1e-12)


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_an_unknown_option_is_refused_with_one_message(engine):
    X, thresholds = _data(engine, 0)
    cuts = None if thresholds is None else candidate_thresholds(X, thresholds)
    assert door._engine_of(cuts) == engine
    y = np.arange(len(X)) % 2
    objective = {"kind": "error", "y_class": y, "n_classes": 2}
    message = re.escape("unknown search options ['max_dept']")
    with pytest.raises(TypeError, match=message):
        door.fit_search(X, cuts, objective, {"max_dept": 2})


def test_both_searchers_refuse_an_unknown_option_alike():
    X = np.random.default_rng(0).integers(0, 2, size=(10, 3))
    y = np.arange(10) % 2
    message = re.escape("unknown search options ['wipe_factr']")
    with pytest.raises(TypeError, match=message):
        search(X, y_class=y, n_classes=2, wipe_factr=0.5)
    cuts = candidate_thresholds(X.astype(float), "all")
    with pytest.raises(TypeError, match=message):
        numeric_search(X, cuts, y_class=y, n_classes=2, wipe_factr=0.5)


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_every_searcher_takes_its_defaults_from_search_options(engine, monkeypatch):
    X, thresholds = _data(engine, 5)
    cuts = None if thresholds is None else candidate_thresholds(X, thresholds)
    y = np.random.default_rng(5).integers(0, 2, size=len(X))
    objective = {"kind": "error", "y_class": y, "n_classes": 2}
    monkeypatch.setitem(SEARCH_OPTIONS, "max_depth", 2)
    deep = door.fit_search(X, cuts, objective, {})
    monkeypatch.setitem(SEARCH_OPTIONS, "max_depth", 1)
    shallow = door.fit_search(X, cuts, objective, {})
    assert deep.out.loss == bruteforce.optimal_error(X, y, 2)
    assert shallow.out.loss == bruteforce.optimal_error(X, y, 1)
    assert deep.engine == shallow.engine == engine


def test_user_declarations_are_the_same_keywords_for_both_searchers():
    def objective_keywords(fn):
        parameters = inspect.signature(fn).parameters.values()
        return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}

    zero_one, numeric = objective_keywords(search), objective_keywords(numeric_search)
    assert {"row_stats", "worst", "monotone", "loss_name"} <= set(zero_one)
    assert {k: numeric[k] for k in zero_one} == zero_one
