"""``max_cache_fraction``: a DL8.5 bound set from an unbounded probe fit."""

import math
import time

import pytest

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.study.config import _cache_fraction


class _Sleeps:
    def fit(self, X, y):
        time.sleep(30)


class _NoStats:
    stats_ = {}

    def fit(self, X, y):
        return self


def test_bound_is_the_fraction_of_the_unbounded_peak_rounded_up():
    data = load_dataset("vote")
    peak = DL85Classifier(max_depth=3).fit(data.X, data.y).stats_["cache_peak_entries"]
    bound = _cache_fraction.resolve(
        0.3, lambda: DL85Classifier(max_depth=3), data.X, data.y, timeout=60
    )
    assert bound["probe_peak_entries"] == peak
    assert bound["max_cache_size"] == math.ceil(0.3 * peak)
    assert bound["max_cache_fraction"] == 0.3
    assert bound["probe_time_s"] > 0


@pytest.mark.parametrize(
    "learner, why", [(_Sleeps, "killed at its time limit"), (_NoStats, "gave no peak")]
)
def test_a_probe_without_a_peak_is_an_error_that_names_the_fix(learner, why):
    with pytest.raises(RuntimeError, match=f"{why}.*give max_cache_size in entries"):
        _cache_fraction.resolve(0.5, learner, [[0]], [0], timeout=0.5)


def test_split_keeps_the_learner_parameters():
    assert _cache_fraction.split({"a": 1}) == (None, {"a": 1})
    assert _cache_fraction.split({"a": 1, "max_cache_fraction": 0.5}) == (0.5, {"a": 1})
