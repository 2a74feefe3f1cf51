"""scikit-learn API compliance of the forests that accept any numeric X."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from odtstudy.naiveforest import OptimalBoostClassifier, RandomForestBaseline


@parametrize_with_checks(
    [
        OptimalBoostClassifier(
            "lpboost", pricing="cart", max_iterations=50, lp_solver="highspy"
        ),
        OptimalBoostClassifier("mdboost", pricing="cart", max_iterations=20),
        RandomForestBaseline(n_estimators=5),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
