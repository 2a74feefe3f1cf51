"""Fixtures of the study tests."""

import pytest


@pytest.fixture
def no_preflight(monkeypatch):
    """Configs load without the preflight fit of each method: for tests of
    what a config resolves to, not of whether its learners fit."""
    monkeypatch.setattr(
        "odtstudy.study.config._checks.preflight_check", lambda config, where: None
    )
