"""scikit-learn API compliance of ``CPSATClassifier``."""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from odtstudy.cp import CPSATClassifier


class _BinaryCPSAT(CPSATClassifier):
    """CP-SAT on ``X > 0.5``, so scikit-learn's checks (real-valued X) run the
    whole estimator; the tree tests ``x <= 0.5``, so predicting on the raw X
    routes rows as their binarised copies."""

    _requires_binary = False

    def _fit(self, X, y, sample_weight):
        return super()._fit((np.asarray(X) > 0.5).astype(np.uint8), y, sample_weight)


EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": (
        "the check wants > 83% training accuracy on real-valued blobs; one "
        "fixed 0.5 cut per feature does not separate them"
    ),
}


@parametrize_with_checks(
    [_BinaryCPSAT(max_depth=1, time_limit=5, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_cp_sklearn_compatible(estimator, check):
    check(estimator)
