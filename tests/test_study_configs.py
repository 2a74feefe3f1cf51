"""Every built-in study config loads at every scale (the reproductions run
end to end in tests/test_reproduce_*.py)."""

import pytest

from odtstudy.study import list_studies, load_config


@pytest.mark.parametrize("name", list_studies())
@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_every_config_loads_at_every_scale(name, scale):
    config = load_config(name, scale=scale)
    assert config.datasets and config.methods and config.depths
