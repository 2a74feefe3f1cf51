"""Hardening of the common Tree, CART and the Binarizer: conversion in
O(rows x depth) time and O(nodes) memory, and clear errors for bad tables.

Each reproducer runs in a child interpreter (``subproc.run_snippet``), so a
crash or a hang fails the test instead of the test run.
"""

import numpy as np
from subproc import run_ok

from odtstudy.cart import CARTClassifier

HEADER = """
import numpy as np
import pandas as pd
from odtstudy.datasets import Binarizer
"""


def _run(body, timeout=60):
    return run_ok(HEADER + body, timeout)


def test_cart_on_40000_rows_fits_in_little_memory_and_time():
    # was: 22 s and 4.7 GB (a rows x nodes indicator matrix)
    lines = _run(
        """
import resource, time
from odtstudy.cart import CARTClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(40_000, 10))
y = rng.integers(0, 2, size=40_000)
resource.setrlimit(resource.RLIMIT_AS, (1_200 * 2**20, 1_200 * 2**20))
start = time.perf_counter()
clf = CARTClassifier().fit(X, y)
print(clf.tree_.node_count > 10_000, time.perf_counter() - start < 15)
print(int(clf.tree_.n_samples[0]), clf.objective_)
""",
        timeout=90,
    )
    assert lines == ["True True", "40000 0.0"]


def test_node_totals_match_the_rows_through_each_node(rng):
    X = rng.normal(size=(500, 4))
    y = rng.integers(0, 3, size=500)
    w = rng.uniform(0.5, 2.0, size=500)
    tree = CARTClassifier(max_depth=6).fit(X, y, sample_weight=w).tree_
    # reference: walk each row down from the root
    value = np.zeros((tree.node_count, 3))
    counts = np.zeros(tree.node_count, dtype=np.int64)
    for row, label, weight in zip(X, y, w):
        node = 0
        while True:
            value[node, label] += weight
            counts[node] += 1
            if tree.feature[node] < 0:
                break
            go_left = row[tree.feature[node]] <= tree.threshold[node]
            node = tree.left[node] if go_left else tree.right[node]
    np.testing.assert_allclose(tree.value, value)
    np.testing.assert_array_equal(tree.n_samples, counts)
    np.testing.assert_array_equal(tree.node_counts(X), counts)


def test_binarizer_rejects_what_it_used_to_drop_or_ignore():
    lines = _run(
        """
import scipy.sparse as sp
dup = pd.DataFrame([[1, 2], [3, 4], [5, 6]], columns=["a", "a"])
ok = dup.set_axis(["a", "b"], axis=1)
attempt(lambda: Binarizer().fit(dup))
attempt(lambda: Binarizer(categorical_features="abc").fit(ok))
attempt(lambda: Binarizer(categorical_features=["zz"]).fit(ok))
attempt(lambda: Binarizer().fit(sp.csr_matrix(np.eye(3))), TypeError)
attempt(lambda: Binarizer().fit(np.ones((4, 2))))
print(list(Binarizer(categorical_features=["b"]).fit(ok).get_feature_names_out()))
"""
    )
    assert lines[0].startswith("RAISED X has duplicate column names ('a')")
    assert "categorical_features" in lines[1] and "'auto'" in lines[1]
    assert lines[2].startswith("RAISED categorical_features names ['zz']")
    # scikit-learn's own message for sparse input (check_array)
    assert "Sparse data" in lines[3] and "toarray()" in lines[3]
    assert lines[4].startswith("RAISED the Binarizer found no test to make")
    assert lines[5] == "['a<=2', 'a<=4', 'b=2', 'b=4', 'b=6']"


def test_learners_name_empty_or_sparse_input():
    lines = _run(
        """
import scipy.sparse as sp
from odtstudy.dl85 import DL85Classifier
attempt(lambda: DL85Classifier().fit(np.ones((3, 0)), [0, 1, 1]))
attempt(lambda: DL85Classifier().fit(sp.csr_matrix(np.eye(3)), [0, 1, 1]), TypeError)
"""
    )
    assert lines[0].startswith("RAISED X has no columns") and "Binarizer" in lines[0]
    assert "toarray()" in lines[1]
