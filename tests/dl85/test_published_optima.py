"""DL8.5 against the exact optima other solvers publish in their own tests.

A published optimum needs no external solver to check: each table below
transcribes one source's values (one place for each fact) and every entry is
a test asserting that DL8.5 proves it (``optimal_``), that ``objective_``
equals it, and, for classification, that ``predict`` makes as many training
errors as ``objective_`` says.

Sources
-------
CONTREE_OPTIMA
    ConTree's published optima, in the package
    (:mod:`odtstudy.datasets._published`, with their source), as the study
    reports print them beside each proof.
PYDL85_OPTIMA
    aia-uclouvain/pydl8.5@a7f0fee72b4c17bbcb727050ba102db7dda10119
    ``tests/test_DL85Classifier.py``, lines 37 (depth 2) and 57 (depth 3):
    one value per file of ``datasets/*.txt`` in sorted order, ``compas``
    excluded (lines 39-40); ``DL85Classifier(max_depth=depth,
    time_limit=600)`` with the default ``min_sup=1``. Those files are the
    vendored ``cp4im/<name>`` byte for byte. PyDL8.5 asserts ``error_ <=
    value`` (lines 52 and 74), and at depth 3 skips six files (line 64:
    ionosphere, letter, mushroom, pendigits, splice-1, vehicle); the values
    listed for them are tested here all the same. ``letter`` (d2 599, d3
    369) is not vendored, so it is not tested.
STREED_AIRFOIL_MSE
    AlgTUDelft/pystreed@11cdc8d029242fda7fc0142e628c3a602c3328a9
    ``test/correct_solution_test.cpp`` (last changed in 153d11d), lines
    303-305: ``{file, max-depth, max-num-nodes, MSE}`` on
    ``data/regression/airfoil.csv``, checked to within 1e-2 (line 196). The
    score is the training SSE / n (``include/tasks/regression/regression.h``
    line 45: ``train_value / train_summary.size``), no complexity cost,
    min-leaf-node-size 1. That file is ``osrt/airfoil`` exactly (same 1503
    rows in the same order, the same 17 0/1 columns, the same targets;
    checked against the file's blob cdf33ad), so ``DL85Regressor`` on
    ``osrt/airfoil`` solves the same problem. The depth-3 row (38.26) has
    ``max-num-nodes=5``, fewer than the 7 branching nodes of a full depth-3
    tree: a size limit DL8.5 lacks, so it cannot be checked here.
"""

from functools import cache

import numpy as np
import pytest

from odtstudy.datasets import load_dataset
from odtstudy.datasets._published import CONTREE_OPTIMA
from odtstudy.dl85 import DL85Classifier, DL85Regressor

PYDL85_OPTIMA = {
    2: {
        "anneal": 137,
        "audiology": 10,
        "australian-credit": 87,
        "breast-wisconsin": 22,
        "diabetes": 177,
        "german-credit": 267,
        "heart-cleveland": 60,
        "hepatitis": 16,
        "hypothyroid": 70,
        "ionosphere": 32,
        "kr-vs-kp": 418,
        "lymph": 22,
        "mushroom": 252,
        "pendigits": 153,
        "primary-tumor": 58,
        "segment": 9,
        "soybean": 55,
        "splice-1": 508,
        "tic-tac-toe": 282,
        "vehicle": 75,
        "vote": 17,
        "yeast": 437,
        "zoo-1": 0,
    },
    3: {
        "anneal": 112,
        "audiology": 5,
        "australian-credit": 73,
        "breast-wisconsin": 15,
        "diabetes": 162,
        "german-credit": 236,
        "heart-cleveland": 41,
        "hepatitis": 10,
        "hypothyroid": 61,
        "ionosphere": 22,
        "kr-vs-kp": 198,
        "lymph": 12,
        "mushroom": 8,
        "pendigits": 47,
        "primary-tumor": 46,
        "segment": 0,
        "soybean": 29,
        "splice-1": 224,
        "tic-tac-toe": 216,
        "vehicle": 26,
        "vote": 12,
        "yeast": 403,
        "zoo-1": 0,
    },
}

#: Printed as published: the test compares at the printed precision.
STREED_AIRFOIL_MSE = {2: "40.0968", 4: "33.8628"}

#: Seconds of one fit per ConTree instance (``time.perf_counter`` around
#: ``fit`` with ``time_limit=600``, one process per fit, at e6f03f3 on a
#: 2-core machine shared with other jobs, so noisy; the depth-4 fits of wilt
#: to room ran beside the depth-3 fits of eeg, htru and magic). Every one
#: proves its published optimum. The default run takes those under
#: FAST_SECONDS; the rest are marked slow.
CONTREE_SECONDS = {
    ("avila", 3): 12.8,
    ("bank", 3): 0.03,
    ("bean", 3): 26.5,
    ("bidding", 3): 0.21,
    ("eeg", 3): 73.9,
    ("fault", 3): 12.0,
    ("htru", 3): 80.1,
    ("magic", 3): 35.6,
    ("occupancy", 3): 0.28,
    ("page", 3): 1.5,
    ("raisin", 3): 0.29,
    ("rice", 3): 5.3,
    ("room", 3): 0.96,
    ("segment", 3): 0.61,
    ("wilt", 3): 0.18,
    ("bank", 4): 0.04,
    ("bidding", 4): 20.8,
    ("occupancy", 4): 22.1,
    ("page", 4): 393.9,
    ("room", 4): 160.5,
    ("segment", 4): 136.1,
    ("wilt", 4): 11.4,
}
FAST_SECONDS = 3.0
#: The slow ones under this also carry ``ci_slow``: CI runs them (in its
#: Python 3.10 leg); the longer ones (eeg, htru at depth 3; segment, room
#: and page at depth 4: about 8 minutes) run with ``-m slow``.
CI_SECONDS = 30.0

#: Guards a hang: over four times the slowest fit measured (page, depth 4).
TIME_LIMIT = 1800


@cache
def _table(name):
    data = load_dataset(name)
    return data.X, data.y


def _contree_cases():
    cases = []
    for depth, optima in CONTREE_OPTIMA.items():
        for name, errors in optima.items():
            seconds = CONTREE_SECONDS[name, depth]
            marks = [] if seconds < FAST_SECONDS else [pytest.mark.slow]
            if FAST_SECONDS <= seconds < CI_SECONDS:
                marks.append(pytest.mark.ci_slow)
            cases.append(
                pytest.param(name, depth, errors, marks=marks, id=f"{name}-d{depth}")
            )
    return cases


def _pydl85_cases():
    return [
        pytest.param(name, depth, errors, id=f"{name}-d{depth}")
        for depth, optima in PYDL85_OPTIMA.items()
        for name, errors in optima.items()
    ]


def _assert_proven_errors(clf, X, y, published):
    assert clf.optimal_
    assert clf.objective_ == published
    assert np.sum(clf.predict(X) != y) == clf.objective_


@pytest.mark.parametrize("name, depth, published", _contree_cases())
def test_contree_published_optimum(name, depth, published):
    X, y = _table(f"contree-train/{name}")
    clf = DL85Classifier(max_depth=depth, thresholds="all", time_limit=TIME_LIMIT)
    _assert_proven_errors(clf.fit(X, y), X, y, published)


@pytest.mark.parametrize("name, depth, published", _pydl85_cases())
def test_pydl85_published_optimum(name, depth, published):
    X, y = _table(f"cp4im/{name}")
    clf = DL85Classifier(max_depth=depth, time_limit=TIME_LIMIT)
    _assert_proven_errors(clf.fit(X, y), X, y, published)


@pytest.mark.parametrize("depth, published", sorted(STREED_AIRFOIL_MSE.items()))
def test_streed_published_airfoil_mse(depth, published):
    X, y = _table("osrt/airfoil")
    reg = DL85Regressor(max_depth=depth, time_limit=TIME_LIMIT).fit(X, y)
    assert reg.optimal_
    decimals = len(published.split(".")[1])
    assert f"{reg.objective_ / len(y):.{decimals}f}" == published
