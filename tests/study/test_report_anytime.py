"""Anytime traces: DL8.5 records them at the root; primal integrals by hand."""

import numpy as np
import pytest

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.study.report._anytime import primal_integral


def test_primal_integral_by_hand():
    # no incumbent for 1 s, then gap |10 - 5| / 10 for 2 s, then optimal
    assert primal_integral([1.0, 3.0], [10.0, 5.0], best=5.0, horizon=10.0) == 2.0
    assert primal_integral([], [], best=5.0, horizon=10.0) == 10.0
    assert primal_integral([0.0], [0.0], best=0.0, horizon=10.0) == 0.0
    # points after the horizon do not count
    assert primal_integral(
        [2.0, 20.0], [8.0, 4.0], best=4.0, horizon=4.0
    ) == pytest.approx(2.0 + 2 * 0.5)


@pytest.mark.parametrize(("name", "depth"), [("anneal", 3), ("vote", 3), ("zoo-1", 2)])
@pytest.mark.parametrize("algorithm", ["dl85", "dl8"])
def test_dl85_trace_improves_and_ends_in_the_proof(name, depth, algorithm):
    data = load_dataset(name)
    clf = DL85Classifier(max_depth=depth, algorithm=algorithm).fit(data.X, data.y)
    trace = np.array(clf.stats_["anytime"])
    assert trace.shape[1] == 3 and len(trace) >= 2
    times, objective, bound = trace.T
    assert np.all(np.diff(times) >= 0) and times[-1] <= clf.fit_time_
    assert np.all(np.diff(objective) <= 0) and np.all(np.diff(bound) >= 0)
    assert objective[-1] == bound[-1] == clf.objective_
    leaf = len(data.y) - np.bincount(data.y).max()
    assert objective[0] == leaf  # the root leaf is the first incumbent
    steps = (np.diff(objective) < 0) | (np.diff(bound) > 0)
    assert steps.all()  # a point only when the incumbent or the bound improves


def test_dl85_trace_under_a_time_limit_keeps_the_bound_below():
    data = load_dataset("vehicle")
    clf = DL85Classifier(max_depth=6, time_limit=0.05).fit(data.X, data.y)
    trace = np.array(clf.stats_["anytime"])
    assert not clf.optimal_ and trace[-1, 1] == clf.objective_
    assert trace[-1, 2] <= clf.lower_bound_ < clf.objective_
