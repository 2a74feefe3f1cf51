import gzip
import hashlib
import json
import lzma
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from odtstudy.datasets import Binarizer, dataset_info, list_datasets, load_dataset

CATALOG = json.loads(
    resources.files("odtstudy.datasets").joinpath("data/catalog.json").read_text()
)


@pytest.mark.parametrize(
    "entry", CATALOG, ids=[f"{e['collection']}/{e['name']}" for e in CATALOG]
)
def test_every_vendored_dataset_loads_with_its_manifest_shape(entry):
    ds = load_dataset(f"{entry['collection']}/{entry['name']}")
    assert ds.X.shape == (entry["rows"], entry["features"])
    assert len(ds.y) == entry["rows"]
    assert ds.task == entry.get("task", "classification")
    if ds.task == "classification":
        assert ds.n_classes == entry["classes"]
    else:
        assert ds.y.dtype == np.float64 and np.isfinite(ds.y).all()
    assert len(ds.feature_names) == entry["features"]
    assert ds.kind == entry["kind"]
    if ds.kind == "binary":
        assert np.isin(ds.X, (0, 1)).all()


@pytest.mark.parametrize(
    "name, shape, counts",
    [
        ("anneal", (812, 93), [187, 625]),
        ("zoo-1", (101, 36), [60, 41]),
        ("tic-tac-toe", (958, 27), [332, 626]),
    ],
)
def test_cp4im_oracles(name, shape, counts):
    ds = load_dataset(name)
    assert ds.X.shape == shape
    assert np.bincount(ds.y).tolist() == counts
    assert ds.X.dtype == np.uint8


def test_name_resolution_and_sklearn_sets():
    assert load_dataset("diabetes").name == "cp4im/diabetes"
    assert load_dataset("uci/diabetes").X.shape == (768, 8)
    assert load_dataset("iris").name == "sklearn/iris"
    assert load_dataset("breast_cancer").X.shape == (569, 30)
    assert load_dataset("sklearn/digits").X.shape == (1797, 64)
    assert "cp4im/anneal" in list_datasets(collection="cp4im")
    assert len(list_datasets()) == len(CATALOG) + 5
    assert "pydl8.5" in dataset_info("anneal")["source"]


CONTREE_SUITE = (
    "avila bank bidding eeg fault htru magic occupancy page raisin rice room "
    "segment wilt"
).split()


def test_contree_suite_is_the_papers_fourteen_numeric_sets_unchanged():
    assert list_datasets(collection="contree") == [
        f"contree/{n}" for n in CONTREE_SUITE
    ]
    assert load_dataset("segment").name == "cp4im/segment"
    for name in CONTREE_SUITE:
        entry = dataset_info(f"contree/{name}")
        assert entry["kind"] == "numeric"
        assert "ConSol-Lab/contree@61ebd49" in entry["source"]
        text = (
            resources.files("odtstudy.datasets").joinpath("data", entry["file"])
        ).read_bytes()
        digest = hashlib.sha256(lzma.decompress(text)).hexdigest()[:16]
        assert f"sha256 of the text {digest}" in entry["source"]
    bank = load_dataset("contree/bank")
    assert bank.X.dtype == np.float64
    assert np.bincount(bank.y).tolist() == [762, 610]


CONTREE_TRAIN = (*CONTREE_SUITE, "bean")


def test_contree_training_splits_are_the_published_optima_files_unchanged():
    assert list_datasets(collection="contree-train") == sorted(
        f"contree-train/{n}" for n in CONTREE_TRAIN
    )
    for name in CONTREE_TRAIN:
        entry = dataset_info(f"contree-train/{name}")
        assert entry["kind"] == "numeric"
        origin = f"ConSol-Lab/contree@61ebd49 train-datasets/{name}.txt"
        assert origin in entry["source"]
        packed = resources.files("odtstudy.datasets").joinpath("data", entry["file"])
        digest = hashlib.sha256(lzma.decompress(packed.read_bytes())).hexdigest()
        assert f"sha256 of the text {digest[:16]}" in entry["source"]
    assert load_dataset("contree/bank").X.shape == (1372, 4)
    bank = load_dataset("contree-train/bank")
    assert bank.X.shape == (1097, 4) and bank.X.dtype == np.float64
    bean = load_dataset("bean")
    assert bean.name == "contree-train/bean"
    assert bean.X.shape == (10888, 16) and bean.n_classes == 7


OSRT_SETS = (
    "airfoil airquality enb-cool enb-heat insurance optical real-estate "
    "seoul-bike servo sync yacht"
).split()


def test_osrt_regression_sets_are_the_papers_eleven_unchanged():
    assert list_datasets(collection="osrt") == [f"osrt/{n}" for n in OSRT_SETS]
    assert list_datasets(task="regression") == [
        *(f"osrt/{n}" for n in OSRT_SETS),
        "sklearn/diabetes",
    ]
    for name in OSRT_SETS:
        entry = dataset_info(f"osrt/{name}")
        assert entry["kind"] == "binary" and entry["task"] == "regression"
        assert "optimal-sparse-regression-tree-public@cc7961b" in entry["source"]
        packed = resources.files("odtstudy.datasets").joinpath("data", entry["file"])
        text = gzip.decompress(packed.read_bytes())
        digest = hashlib.sha256(text).hexdigest()[:16]
        assert f"sha256 of the text {digest}" in entry["source"]
    servo = load_dataset("servo")
    assert servo.name == "osrt/servo" and servo.X.dtype == np.uint8
    assert servo.y[:2].tolist() == [0.28125095, 0.5062525]
    with pytest.raises(AttributeError, match="regression table: its target"):
        servo.n_classes
    diabetes = load_dataset("sklearn/diabetes")
    assert diabetes.task == "regression" and diabetes.X.shape == (442, 10)
    assert load_dataset("diabetes").task == "classification"


def test_unknown_dataset_is_a_clear_key_error():
    with pytest.raises(KeyError, match="unknown dataset 'nope'"):
        load_dataset("nope")


def test_categorical_dataset_keeps_strings():
    ds = load_dataset("uci/tic-tac-toe")
    assert ds.kind == "categorical"
    assert set(np.unique(ds.X)) == {"b", "o", "x"}


def _mixed_table():
    return pd.DataFrame(
        {
            "petal_length": [1.4, 1.4, 4.7, 5.1, 6.0, 3.3],
            "colour": ["red", "blue", "red", "green", "red", "blue"],
            "flag": [0, 1, 1, 0, 1, 0],
            "constant": [7.0] * 6,
        }
    )


def test_binarizer_round_trip_numeric_and_categorical():
    table = _mixed_table()
    binarizer = Binarizer().fit(table)
    Xb = binarizer.transform(table)
    names = list(binarizer.get_feature_names_out())
    assert Xb.dtype == np.uint8 and Xb.shape == (6, len(names))
    assert names == [
        "petal_length<=2.35",
        "petal_length<=4",
        "petal_length<=4.9",
        "petal_length<=5.55",
        "colour=blue",
        "colour=green",
        "colour=red",
        "flag",
    ]
    # every categorical value is recovered from its one-hot block
    block = Xb[:, 4:7]
    assert (block.sum(axis=1) == 1).all()
    recovered = np.array(["blue", "green", "red"])[block.argmax(axis=1)]
    assert recovered.tolist() == table["colour"].tolist()
    # every numeric value lies in the interval its threshold bits describe
    thresholds = np.array([2.35, 4.0, 4.9, 5.55])
    for value, bits in zip(table["petal_length"], Xb[:, :4]):
        assert bits.tolist() == (value <= thresholds).astype(int).tolist()
    assert Xb[:, 7].tolist() == table["flag"].tolist()
    # transform of new rows reuses the training thresholds; unseen category -> 0s
    new = pd.DataFrame(
        {"petal_length": [10.0], "colour": ["purple"], "flag": [1], "constant": [1.0]}
    )
    assert binarizer.transform(new).tolist() == [[0, 0, 0, 0, 0, 0, 0, 1]]


def test_binarizer_max_thresholds_and_readable_names():
    ds = load_dataset("iris")
    frame = pd.DataFrame(
        ds.X, columns=["sepal_length", "sepal_width", "petal_length", "petal_width"]
    )
    binarizer = Binarizer(max_thresholds=3).fit(frame)
    names = binarizer.get_feature_names_out()
    assert len(names) <= 12
    assert all("<=" in n for n in names)
    full = Binarizer().fit(frame)
    assert "petal_length<=2.45" in set(full.get_feature_names_out())


def test_binarizer_rejects_nan():
    with pytest.raises(ValueError, match="NaN"):
        Binarizer().fit(np.array([[1.0], [np.nan]]))


def test_the_catalogues_smallest_classes_are_the_datas():
    # config validation reads them instead of loading every table
    from odtstudy.datasets._class_counts import smallest_class
    from odtstudy.datasets._loaders import _catalog

    checked = 0
    for key, entry in _catalog().items():
        if "smallest_class" not in entry:
            assert entry.get("task", "classification") != "classification" or (
                entry["collection"] == "sklearn"
            ), f"{key}: run python -m odtstudy.datasets._class_counts"
            continue
        assert entry["smallest_class"] == smallest_class(load_dataset(key).y), key
        checked += 1
    assert checked >= 60
