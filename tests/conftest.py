"""Shared fixtures. This folder is on sys.path, so tests can ``import bruteforce``."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(config, items):
    """A ``ci_slow`` test is a ``slow`` one that CI runs: out of the default
    run (``-m 'not slow'``), in ``pytest -m ci_slow``."""
    for item in items:
        if item.get_closest_marker("ci_slow") is not None:
            item.add_marker(pytest.mark.slow)
