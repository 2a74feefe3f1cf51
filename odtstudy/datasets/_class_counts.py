"""The smallest class of each vendored classification set, in the catalogue.

A study's config is checked before any run: every dataset must split into
its folds with every class in each. The check reads the catalogue's
``smallest_class`` (``[label, rows]``) instead of loading every table; this
module computes it from the data and rewrites the catalogue::

    python -m odtstudy.datasets._class_counts

and the tests hold the catalogue to the data.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

__all__ = ["refresh_catalog", "smallest_class"]


def smallest_class(y) -> list:
    """``[label, rows]`` of the smallest class of ``y`` (the first in sorted
    order among equals), the label as a plain JSON value."""
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    i = int(np.argmin(counts))
    label = labels[i]
    return [label.item() if hasattr(label, "item") else label, int(counts[i])]


def refresh_catalog() -> int:
    """Rewrite ``smallest_class`` of every classification entry of the
    catalogue from its data; the number of entries changed."""
    from odtstudy.datasets import load_dataset

    path = resources.files("odtstudy.datasets").joinpath("data/catalog.json")
    entries = json.loads(path.read_text())
    changed = 0
    for entry in entries:
        if entry.get("task", "classification") != "classification":
            continue
        y = load_dataset(f"{entry['collection']}/{entry['name']}").y
        value = smallest_class(y)
        if entry.get("smallest_class") != value:
            entry["smallest_class"] = value
            changed += 1
    with open(str(path), "w") as fh:
        fh.write(json.dumps(entries, indent=1) + "\n")
    return changed


if __name__ == "__main__":
    print(f"{refresh_catalog()} catalogue entries updated")
