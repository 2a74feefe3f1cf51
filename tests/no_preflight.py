"""Load study configs without the preflight fit of each method."""

import contextlib

import pytest


@contextlib.contextmanager
def preflight_off():
    """Within: ``load_config`` skips the preflight fits. For tests of what a
    config resolves to, not of whether its learners fit (that of every
    built-in study at every scale: tests/study/test_study_configs.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "odtstudy.study.config._checks.preflight_check", lambda config, where: None
        )
        yield
