"""Shared fixtures. This folder is on sys.path, so tests can ``import bruteforce``."""

import numpy as np
import pytest
from no_preflight import preflight_off


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


@pytest.fixture
def no_preflight():
    """Configs load without the preflight fit of each method
    (:func:`no_preflight.preflight_off`)."""
    with preflight_off():
        yield
