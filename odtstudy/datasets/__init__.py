"""Vendored benchmark datasets, loaders and the ``Binarizer`` transformer."""

from odtstudy.datasets._binarizer import Binarizer
from odtstudy.datasets._loaders import (
    Dataset,
    dataset_info,
    list_datasets,
    load_dataset,
)
from odtstudy.datasets._user import register_dataset

__all__ = [
    "Binarizer",
    "Dataset",
    "dataset_info",
    "list_datasets",
    "load_dataset",
    "register_dataset",
]
