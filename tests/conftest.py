"""Shared fixtures. This folder is on sys.path, so tests can ``import bruteforce``."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)
