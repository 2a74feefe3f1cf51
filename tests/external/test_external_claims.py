"""No adapter passes on a solver's false claim of optimality; a study flags
two exact methods that prove different optima on one run (issue 32)."""

import itertools

import numpy as np
import pytest
from report_doubles import grid, protocol, run, write_study

from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._bounds import depth_one_errors
from odtstudy.external._convert import LEAF
from odtstudy.study import make_report


def _stump_errors_by_enumeration(X, y, min_sup):
    best = len(y) - np.bincount(y).max()
    for j in range(X.shape[1]):
        for t in np.unique(X[:, j])[:-1]:
            left = X[:, j] <= t
            if min(left.sum(), (~left).sum()) < min_sup:
                continue
            errors = sum(
                part.sum() - np.bincount(y[part]).max() for part in (left, ~left)
            )
            best = min(best, int(errors))
    return best


@pytest.mark.parametrize(
    "seed, numeric, min_sup", list(itertools.product(range(40), [False, True], [1, 3]))
)
def test_depth_one_errors_equals_enumeration(seed, numeric, min_sup):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 30)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, m)).round(1) if numeric else rng.integers(0, 2, (n, m))
    y = rng.integers(0, int(rng.integers(1, 4)), n)
    assert depth_one_errors(X, y, min_sup) == _stump_errors_by_enumeration(
        X, y, min_sup
    )


class _ClaimsALeaf(ExternalTreeClassifier):
    """A 'solver' that returns the majority leaf and calls it optimal."""

    _tool = "leafsolver"
    _module = "numpy"

    def __init__(self, max_depth=2, *, time_limit=None):
        self.max_depth = max_depth
        self.time_limit = time_limit

    def _fit(self, X, y, sample_weight):
        leaf = self._convert(None, lambda node: (LEAF, None), X, y)
        return self._result(leaf, X, y, proven=True)


@pytest.mark.parametrize("numeric", [False, True])
def test_a_false_optimum_is_not_passed_on(numeric):
    X = (
        np.array([[0.0], [0.0], [1.5], [1.5]])
        if numeric
        else np.array([[0], [0], [1], [1]])
    )
    y = np.array([0, 0, 1, 1])  # one split makes 0 errors; the leaf makes 2
    clf = _ClaimsALeaf(max_depth=2).fit(X, y)
    assert clf.objective_ == 2
    assert not clf.optimal_ and clf.status_ == "feasible"
    assert "a tree of depth 1 makes 0" in clf.stats_["claim_refuted"]


def test_a_true_optimum_stays_proven():
    X, y = np.array([[0], [1], [0], [1]]), np.array([0, 0, 0, 1])  # 1 error either way
    clf = _ClaimsALeaf(max_depth=2).fit(X, y)
    assert clf.optimal_ and clf.objective_ == 1 and "claim_refuted" not in clf.stats_


def test_report_flags_exact_methods_that_prove_different_optima(tmp_path):
    proto = protocol(folds=1)
    records = grid(datasets=("a",), depths=(2,), folds=1, proto=proto)
    records.append(run("a", 2, "dl85", proto=proto, objective=12.0, lower_bound=12.0))
    records = [
        r for r in records if not (r["method"] == "dl85" and r["objective"] == 10.0)
    ]
    write_study(tmp_path / "synthetic", records)
    make_report("synthetic", tmp_path)
    html = (tmp_path / "synthetic" / "report.html").read_text()
    assert "<p class='alert'>DISAGREEMENT" in html
    assert "DISAGREEMENT" in (tmp_path / "synthetic" / "report.md").read_text()
