"""``max_cache_fraction`` on an instance whose unbounded peak is a few
entries: the bound is raised to the smallest the DL8.5 cache accepts, and
the run's stats say so."""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
from odtstudy.dl85.engine._cache import TrieCache

from odtstudy.datasets import _user, load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.study import load_config, registry, run_study
from odtstudy.study.config import _cache_fraction


@pytest.fixture(autouse=True)
def _isolated_registries(monkeypatch):
    monkeypatch.setattr(_user, "_USER", {})
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _tiny(folder):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(16, 3))
    table = pd.DataFrame(X, columns=["a", "b", "c"])
    table["y"] = X[:, 0] ^ X[:, 1]
    table.to_csv(folder / "tiny.csv", index=False)


def test_study_with_a_small_fraction_at_depth_2_runs_and_records_the_clamp(tmp_path):
    _tiny(tmp_path)
    path = tmp_path / "study.toml"
    path.write_text(
        textwrap.dedent(
            """
            [study]
            name = "small-fraction"
            datasets = ["tiny"]
            methods = ["dl85-tenth"]
            depths = [2]
            folds = 1
            time_limit = 10

            [datasets.tiny]
            path = "tiny.csv"
            target = "y"

            [methods.dl85-tenth]
            method = "dl85"
            max_cache_fraction = 0.1
            """
        )
    )
    frame = run_study(load_config(path), output_dir=tmp_path / "out", quiet=True)
    frame = frame.load()
    assert (frame["status"] == "ok").all(), frame["error"].tolist()
    stats = json.loads(frame["stats"].iloc[0])
    minimum = TrieCache(2).min_size()
    assert stats["max_cache_size_clamped"] is True
    assert stats["fraction_entries"] < minimum
    assert stats["max_cache_size"] == minimum


def test_resolve_keeps_a_bound_above_the_minimum_unclamped():
    data = load_dataset("vote")
    bound = _cache_fraction.resolve(
        0.5, lambda: DL85Classifier(max_depth=3), data.X, data.y, timeout=60
    )
    assert bound["max_cache_size_clamped"] is False
    assert bound["max_cache_size"] == bound["fraction_entries"]


@pytest.mark.parametrize("cache", ["trie", "hash"])
def test_engine_minimum_is_the_cache_own(cache):
    estimator = DL85Classifier(max_depth=3, cache=cache)
    minimum = _cache_fraction.engine_minimum(estimator)
    X = np.random.default_rng(2).integers(0, 2, size=(30, 4))
    y = X[:, 0]
    DL85Classifier(max_depth=3, cache=cache, max_cache_size=minimum).fit(X, y)
    with pytest.raises(ValueError, match="too small"):
        DL85Classifier(max_depth=3, cache=cache, max_cache_size=minimum - 1).fit(X, y)
