"""One contract for every learner: what ``fit`` stores, what the registry
reads from the class, and what the study worker records."""

import numpy as np
import pytest
from contract_params import SLOW, SMALL, package_methods
from sklearn.tree import DecisionTreeClassifier

from odtstudy._deadline import now
from odtstudy.base import STATUSES, FitResult
from odtstudy.naiveforest._base import BaseForestClassifier
from odtstudy.study._worker import _fitted_outcome
from odtstudy.study.registry import Method, _preflight_data, get_method
from odtstudy.tree import Tree

BUILTINS = package_methods()

#: What ``odtstudy methods`` listed when the registry still repeated it:
#: name -> (data kind, exactness, objective family).
DECLARED = {
    "cart": ("numeric", False, "misclassification"),
    "dl85": ("binary", True, "misclassification"),
    "dl85-numeric": ("numeric", True, "misclassification"),
    "dl8": ("binary", True, "misclassification"),
    "binoct": ("numeric", True, "misclassification"),
    "oct": ("numeric", True, "misclassification"),
    "flowoct": ("binary", True, "misclassification"),
    "bendersoct": ("binary", True, "misclassification"),
    "cpsat": ("binary", True, "misclassification"),
    "tao": ("numeric", False, "misclassification"),
    "tmo": ("numeric", False, "misclassification"),
    "dl8forest": ("binary", False, "forest-misclassification"),
    "optiboost-lp": ("binary", False, "lpboost"),
    "optiboost-md": ("binary", False, "mdboost"),
    "lpboost-cart": ("binary", False, "lpboost"),
    "mdboost-cart": ("binary", False, "mdboost"),
    "random-forest": ("binary", False, "forest-misclassification"),
    "gradient-boosting": ("binary", False, "forest-misclassification"),
    "adaboost": ("binary", False, "forest-misclassification"),
    "pystreed": ("binary", True, "misclassification"),
    "pydl85": ("binary", True, "misclassification"),
    "gosdt": ("binary", True, "misclassification"),
    "pycontree": ("numeric", True, "misclassification"),
    "licketysplit": ("binary", False, "misclassification"),
    "pytrees-dl85": ("binary", True, "misclassification"),
    "pytrees-dl85-lds": ("binary", True, "misclassification"),
    "pytrees-contree": ("numeric", True, "misclassification"),
    "pytrees-contree-lds": ("numeric", True, "misclassification"),
}


def _fitted(name):
    return get_method(name).preflight(2, SMALL.get(name, {}), time_limit=10)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in BUILTINS],
)
def test_every_learner_stores_the_contract(name):
    start = now()
    est = _fitted(name)
    wall = now() - start
    assert est.status_ in STATUSES and isinstance(est.stats_, dict)
    assert isinstance(est.optimal_, bool) and 0 < est.fit_time_ <= wall
    assert est.objective_ is None or np.isfinite(est.objective_)
    assert isinstance(est.n_trees_, int) and est.n_trees_ >= 1
    if isinstance(est, BaseForestClassifier):
        assert est.tree_ is None
        if hasattr(est, "estimators_"):  # odtstudy's own forests
            assert est.n_trees_ == len(est.estimators_) == len(est.weights_)
            assert all(t.classes is est.classes_ for t in est.estimators_)
        else:  # a wrapped scikit-learn ensemble (AdaBoost may stop early)
            assert est.n_trees_ == np.size(est.estimator_.estimators_)
            assert est.n_trees_ <= SMALL[name]["n_estimators"]
    else:
        assert isinstance(est.tree_, Tree) and est.n_trees_ == 1


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_registry_reads_data_kind_exactness_and_family_from_the_class(name):
    if name not in BUILTINS:
        pytest.skip(f"{name} is not installed")
    method = get_method(name)
    assert (method.data, method.exact, method.objective_family()) == DECLARED[name]
    if name not in ("dl85", "dl85-numeric", "dl8"):  # DL85Classifier does not yet
        assert method.declared_data is None and method.declared_exact is None
        assert method.family is None


def test_the_family_follows_the_parameters():
    assert get_method("oct").objective_family({"alpha": 0.1}) == (
        "misclassification+split-penalty"
    )
    assert get_method("lpboost-cart").objective_family({"objective": "mdboost"}) == (
        "mdboost"
    )


def test_the_data_kind_follows_the_parameters():
    dl85, numeric = get_method("dl85"), get_method("dl85-numeric")
    assert numeric.defaults == {"thresholds": "all"}
    assert dl85.data_for({"thresholds": 8}) == "numeric"
    assert numeric.data_for({"thresholds": None}) == "binary"
    assert get_method("cart").data_for({"max_depth": 2}) == "numeric"


def test_a_class_can_declare_its_data_kind_per_parameters():
    class Numbers:
        _requires_binary = True

        @classmethod
        def study_data(cls, params):
            return "numeric" if params.get("raw") else "binary"

    method = Method("numbers", Numbers, defaults={"raw": True})
    assert method.data == "numeric" and method.data_for({"raw": False}) == "binary"


def test_make_rejects_a_parameter_the_learner_does_not_take():
    with pytest.raises(TypeError, match=r"takes no parameter 'n_trees'.*n_estimators"):
        get_method("dl8forest").make(max_depth=2, n_trees=3)


def test_milp_fit_takes_no_sample_weight():
    from sklearn.utils.validation import has_fit_parameter

    from odtstudy.milp import BinOCTClassifier, OCTClassifier

    for cls in (BinOCTClassifier, OCTClassifier):
        assert not has_fit_parameter(cls(), "sample_weight")


def test_fit_result_counts_trees():
    leaf = Tree(
        np.array([-1]),
        np.array([-2.0]),
        np.array([-1]),
        np.array([-1]),
        np.array([[1.0, 0.0]]),
        np.array([1]),
    )
    assert FitResult(leaf, 0.0).count_trees() == 1
    assert FitResult(None, None, status="infeasible").count_trees() == 0
    assert FitResult(None, 1.0, estimators=[leaf, leaf]).count_trees() == 2
    assert FitResult(None, 1.0, n_trees=7).count_trees() == 7


def test_worker_reads_the_contract_of_trees_forests_and_plain_classifiers():
    X, y = _preflight_data("numeric")
    tree = _fitted("cart")
    out = _fitted_outcome(tree, tree.predict(X), y)
    assert out["n_leaves"] == tree.tree_.n_leaves and "n_trees" not in out["stats"]
    forest = _fitted("dl8forest")
    out = _fitted_outcome(forest, forest.predict(X), y)
    assert out["stats"]["n_trees"] == 3 and out["n_leaves"] is None
    assert out["claimed_optimal"] is False
    plain = DecisionTreeClassifier(max_depth=1).fit(X, 1 - y)
    out = _fitted_outcome(plain, plain.predict(X), y)
    assert out["objective"] == len(y) and out["claimed_optimal"] is False
    assert out["n_leaves"] == 2 and out["learner_status"] is None
