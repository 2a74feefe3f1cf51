"""A user table whose header repeats a column name is refused: pandas would
rename the copy (``label.1``) and a repeated target would become a feature."""

import textwrap

import numpy as np
import pytest

from odtstudy.datasets import _user, register_dataset
from odtstudy.study import load_config, registry


@pytest.fixture(autouse=True)
def _isolated_registries(monkeypatch):
    monkeypatch.setattr(_user, "_USER", {})
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _leaky_csv(folder, header="label,a,b,label"):
    rng = np.random.default_rng(0)
    label = rng.integers(0, 2, size=30)
    a, b = rng.integers(0, 2, size=(2, 30))
    rows = "\n".join(f"{y},{p},{q},{y}" for y, p, q in zip(label, a, b))
    path = folder / "leaky.csv"
    path.write_text(f"{header}\n{rows}\n")
    return path


def test_loader_refuses_a_repeated_target_and_names_file_names_and_fix(tmp_path):
    path = _leaky_csv(tmp_path)
    with pytest.raises(ValueError) as caught:
        register_dataset("leaky", path, target="label")
    message = str(caught.value)
    assert "leaky.csv" in message
    assert "'label'" in message
    assert "distinct name" in message


def test_names_equal_after_stripping_spaces_are_refused(tmp_path):
    path = _leaky_csv(tmp_path, header="label,a, b ,b")
    with pytest.raises(ValueError, match=r"repeats column name.*'b'"):
        register_dataset("spaces", path, target="label")


def test_names_differing_in_case_are_kept(tmp_path):
    path = _leaky_csv(tmp_path, header="label,a,b,Label")
    register_dataset("cased", path, target="label")


def test_parquet_with_repeated_names_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = [pa.array([0, 1, 1, 0]), pa.array([1, 0, 1, 0]), pa.array([0, 1, 1, 0])]
    path = tmp_path / "leaky.parquet"
    pq.write_table(pa.Table.from_arrays(columns, names=["label", "a", "label"]), path)
    with pytest.raises(
        ValueError, match=r"leaky\.parquet.*repeats column name.*'label'"
    ):
        register_dataset("leaky-parquet", path, target="label")


def test_study_toml_naming_the_csv_is_refused(tmp_path):
    _leaky_csv(tmp_path)
    path = tmp_path / "study.toml"
    path.write_text(
        textwrap.dedent(
            """
            [study]
            name = "leak"
            datasets = ["leaky"]
            methods = ["dl85"]
            depths = [2]
            folds = 1

            [datasets.leaky]
            path = "leaky.csv"
            target = "label"
            """
        )
    )
    with pytest.raises(ValueError, match=r"leaky\.csv.*repeats column name.*'label'"):
        load_config(path)
