"""The one tree model every single-tree learner of odtstudy returns.

A :class:`Tree` is a set of parallel node arrays (as in scikit-learn's
``tree_``). The test of an internal node is ``x[feature] <= threshold``: true
goes to the ``left`` child. On 0/1 data the threshold is 0.5, so value 0 goes
left and value 1 goes right.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["Tree", "TreeBuilder"]

_LEAF = -1


class Tree:
    """A binary decision tree stored as parallel node arrays.

    Parameters
    ----------
    feature : array-like of int, shape (n_nodes,)
        Feature tested at each node, ``-1`` for a leaf.
    threshold : array-like of float, shape (n_nodes,)
        A row goes left when ``x[feature] <= threshold``.
    left, right : array-like of int, shape (n_nodes,)
        Child node ids, ``-1`` for a leaf.
    value : array-like of float, shape (n_nodes, n_outputs)
        For a classifier, the class counts (or weights) of the training rows
        reaching each node; for a regressor, the value predicted at the node
        (one column).
    n_samples : array-like of int, shape (n_nodes,)
        Number of training rows reaching each node.
    label : array-like of int, shape (n_nodes,), default=None
        Index of the class predicted at each node (classifier only). Defaults
        to the argmax of ``value`` (ties go to the smallest class index).
    classes : array-like, default=None
        Labels that ``label`` indexes; ``predict`` returns them. When ``None``,
        ``predict`` returns class indices.
    feature_names : list of str, default=None
        Names used by the exporters.
    kind : {"classifier", "regressor"}, default="classifier"

    Attributes
    ----------
    node_count : int
    depth : int
        Length of the longest root-to-leaf path (a single leaf has depth 0).
    n_leaves : int
    """

    def __init__(
        self,
        feature,
        threshold,
        left,
        right,
        value,
        n_samples,
        label=None,
        classes=None,
        feature_names=None,
        kind="classifier",
    ):
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 1:
            value = value[:, None]
        self.value = value
        self.n_samples = np.asarray(n_samples, dtype=np.int64)
        if kind not in ("classifier", "regressor"):
            raise ValueError(f"kind must be 'classifier' or 'regressor', got {kind!r}")
        self.kind = kind
        if label is None:
            label = np.argmax(self.value, axis=1) if kind == "classifier" else None
        self.label = None if label is None else np.asarray(label, dtype=np.int64)
        self.classes = None if classes is None else np.asarray(classes)
        self.feature_names = None if feature_names is None else list(feature_names)
        self._check()

    def _check(self):
        n = self.feature.shape[0]
        if n == 0:
            raise ValueError("a Tree needs at least one node")
        arrays = [self.threshold, self.left, self.right, self.n_samples]
        if any(a.shape != (n,) for a in arrays) or self.value.shape[0] != n:
            raise ValueError("all node arrays of a Tree must have one entry per node")
        is_leaf = self.feature == _LEAF
        if np.any((self.left == _LEAF) != is_leaf) or np.any(
            (self.right == _LEAF) != is_leaf
        ):
            raise ValueError("a node is a leaf iff feature, left and right are all -1")
        children = np.concatenate([self.left[~is_leaf], self.right[~is_leaf]])
        if np.any(children <= 0) or np.any(children >= n):
            raise ValueError("child ids must point to existing non-root nodes")
        if len(np.unique(children)) != len(children):
            raise ValueError("a node has two parents: the arrays do not form a tree")

    # ------------------------------------------------------------------ shape
    @property
    def node_count(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.feature == _LEAF))

    @property
    def depth(self) -> int:
        stack = [(0, 0)]
        best = 0
        while stack:
            node, d = stack.pop()
            best = max(best, d)
            if self.feature[node] != _LEAF:
                stack.append((int(self.left[node]), d + 1))
                stack.append((int(self.right[node]), d + 1))
        return best

    @property
    def n_features_used(self) -> int:
        return len(np.unique(self.feature[self.feature != _LEAF]))

    def is_leaf(self, node: int) -> bool:
        return bool(self.feature[node] == _LEAF)

    # ------------------------------------------------------------- inference
    def apply(self, X) -> np.ndarray:
        """Return the id of the leaf each row of ``X`` reaches."""
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        used = self.feature[self.feature != _LEAF]
        if used.size and used.max() >= X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but the tree tests feature "
                f"{int(used.max())}"
            )
        node = np.zeros(X.shape[0], dtype=np.int64)
        rows = np.arange(X.shape[0])
        active = self.feature[node] != _LEAF
        while np.any(active):
            idx = rows[active]
            cur = node[idx]
            go_left = X[idx, self.feature[cur]] <= self.threshold[cur]
            node[idx] = np.where(go_left, self.left[cur], self.right[cur])
            active = self.feature[node] != _LEAF
        return node

    def predict(self, X) -> np.ndarray:
        """Predict a class (classifier) or a value (regressor) for each row."""
        leaves = self.apply(X)
        if self.kind == "regressor":
            return self.value[leaves, 0].copy()
        idx = self.label[leaves]
        return idx if self.classes is None else self.classes[idx]

    def predict_proba(self, X) -> np.ndarray:
        """Class frequencies of the training rows in each row's leaf.

        An empty leaf gives probability 1 to its label.
        """
        if self.kind != "classifier":
            raise ValueError("predict_proba is only defined for a classifier tree")
        leaves = self.apply(X)
        counts = self.value[leaves]
        totals = counts.sum(axis=1, keepdims=True)
        proba = np.zeros_like(counts)
        np.divide(counts, totals, out=proba, where=totals > 0)
        empty = totals[:, 0] <= 0
        proba[empty, self.label[leaves[empty]]] = 1.0
        return proba

    # ------------------------------------------------------------ re-fitting
    def with_training_values(self, X, y, n_classes=None, sample_weight=None):
        """Return a copy whose ``value``/``n_samples`` come from routing data.

        For a classifier, ``y`` holds class indices in ``[0, n_classes)``;
        every node's label becomes the (weighted) majority of its rows, and a
        node reached by no row keeps its label. For a regressor the values are
        left unchanged and only ``n_samples`` is refreshed. Takes
        O(rows x depth) time and O(rows + nodes x classes) memory.
        """
        leaves = self.apply(X)
        n_samples = self.node_totals(leaves).astype(np.int64)
        if self.kind == "regressor":
            return self._replace(n_samples=n_samples)
        y = np.asarray(y, dtype=np.int64)
        k = int(n_classes if n_classes is not None else self.value.shape[1])
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        value = self.node_totals(leaves, w, y, k)
        n = self.node_count
        label = np.where(value.sum(axis=1) > 0, np.argmax(value, axis=1), -1)
        old = self.label if self.label is not None else np.zeros(n, dtype=np.int64)
        label = np.where(label >= 0, label, np.minimum(old, k - 1))
        return self._replace(value=value, n_samples=n_samples, label=label)

    def node_totals(self, leaves, weights=None, y=None, n_classes=None):
        """Sum over the rows passing through each node, from their leaves.

        Parameters
        ----------
        leaves : ndarray of shape (n_rows,)
            Leaf of each row, as :meth:`apply` returns it.
        weights : ndarray of shape (n_rows,), default=None
            What each row adds (default 1: row counts).
        y, n_classes : ndarray of int and int, default=None
            With them, the sums are per class: shape (n_nodes, n_classes).

        Returns
        -------
        ndarray of shape (n_nodes,) or (n_nodes, n_classes)
        """
        n = self.node_count
        leaves = np.asarray(leaves, dtype=np.int64)
        if y is None:
            totals = np.bincount(leaves, weights=weights, minlength=n).astype(float)
        else:
            k = int(n_classes)
            flat = leaves * k + np.asarray(y, dtype=np.int64)
            totals = np.bincount(flat, weights=weights, minlength=n * k)
            totals = totals.astype(float).reshape(n, k)
        parent, levels = self._parents_and_levels()
        for level in reversed(levels[1:]):  # children before their parents
            np.add.at(totals, parent[level], totals[level])
        return totals

    def _parents_and_levels(self):
        """Parent of each node (-1 for the root) and the node ids per depth."""
        n = self.node_count
        parent = np.full(n, -1, dtype=np.int64)
        inner = np.flatnonzero(self.feature != _LEAF)
        parent[self.left[inner]] = inner
        parent[self.right[inner]] = inner
        levels, level = [], np.array([0], dtype=np.int64)
        while level.size:
            levels.append(level)
            level = level[self.feature[level] != _LEAF]
            level = np.concatenate([self.left[level], self.right[level]])
        return parent, levels

    def node_counts(self, X) -> np.ndarray:
        """Number of rows of ``X`` passing through each node."""
        return self.node_totals(self.apply(X)).astype(np.int64)

    def _replace(self, **changes) -> Tree:
        fields = self.to_arrays()
        fields.update(changes)
        return Tree(**fields)

    def to_arrays(self) -> dict:
        return dict(
            feature=self.feature.copy(),
            threshold=self.threshold.copy(),
            left=self.left.copy(),
            right=self.right.copy(),
            value=self.value.copy(),
            n_samples=self.n_samples.copy(),
            label=None if self.label is None else self.label.copy(),
            classes=self.classes,
            feature_names=self.feature_names,
            kind=self.kind,
        )

    # -------------------------------------------------------------- export
    def _feature_name(self, j, feature_names):
        names = feature_names if feature_names is not None else self.feature_names
        return str(names[j]) if names is not None else f"x[{j}]"

    def _leaf_text(self, node, class_names, decimals):
        if self.kind == "regressor":
            return f"value: {self.value[node, 0]:.{decimals}f}"
        lab = int(self.label[node])
        if class_names is not None:
            name = class_names[lab]
        elif self.classes is not None:
            name = self.classes[lab]
        else:
            name = lab
        return f"class: {name}"

    def _branch_texts(self, node, feature_names, decimals):
        """Texts of the left (test true) and right branches of a node.

        A 0/1 test on a named condition (a ``Binarizer`` column such as
        ``age<=42.5`` or ``colour=red``) reads as the condition and its
        negation rather than as ``age<=42.5 <= 0.50``.
        """
        name = self._feature_name(int(self.feature[node]), feature_names)
        threshold = self.threshold[node]
        if threshold == 0.5 and any(op in name for op in ("<=", "=", ">", "<")):
            return f"not ({name})", name
        test = f"{name} <= {threshold:.{decimals}f}"
        return test, test.replace(" <= ", " >  ", 1)

    def export_text(self, feature_names=None, class_names=None, decimals=2) -> str:
        """Render the tree as indented text, one line per branch and leaf."""
        lines = []

        def walk(node, indent):
            pad = "|   " * indent
            if self.feature[node] == _LEAF:
                lines.append(
                    f"{pad}|--- {self._leaf_text(node, class_names, decimals)}"
                    f" (samples: {int(self.n_samples[node])})"
                )
                return
            test, negated = self._branch_texts(node, feature_names, decimals)
            lines.append(f"{pad}|--- {test}")
            walk(int(self.left[node]), indent + 1)
            lines.append(f"{pad}|--- {negated}")
            walk(int(self.right[node]), indent + 1)

        walk(0, 0)
        return "\n".join(lines) + "\n"

    def export_graphviz(self, feature_names=None, class_names=None, decimals=2) -> str:
        """Return the tree as a Graphviz ``.dot`` string."""
        out = ["digraph Tree {", 'node [shape=box, fontname="helvetica"];']
        for node in range(self.node_count):
            if self.feature[node] == _LEAF:
                text = self._leaf_text(node, class_names, decimals)
                shape = ", style=rounded"
            else:
                text = self._branch_texts(node, feature_names, decimals)[0]
                shape = ""
            text += f"\\nsamples = {int(self.n_samples[node])}"
            text = text.replace('"', '\\"')
            out.append(f'{node} [label="{text}"{shape}];')
        for node in range(self.node_count):
            if self.feature[node] != _LEAF:
                out.append(f'{node} -> {int(self.left[node])} [label="True"];')
                out.append(f'{node} -> {int(self.right[node])} [label="False"];')
        out.append("}")
        return "\n".join(out) + "\n"

    # ---------------------------------------------------------- JSON / pickle
    def to_dict(self) -> dict:
        """A JSON-serialisable dict; :meth:`from_dict` inverts it exactly."""
        classes = None
        if self.classes is not None:
            classes = [c.item() if hasattr(c, "item") else c for c in self.classes]
        return {
            "format": "odtstudy.Tree/1",
            "kind": self.kind,
            "feature": self.feature.tolist(),
            "threshold": [float(t) for t in self.threshold],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
            "n_samples": self.n_samples.tolist(),
            "label": None if self.label is None else self.label.tolist(),
            "classes": classes,
            "feature_names": self.feature_names,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Tree:
        if data.get("format") != "odtstudy.Tree/1":
            raise ValueError("not an odtstudy Tree dict (missing format marker)")
        return cls(
            feature=data["feature"],
            threshold=data["threshold"],
            left=data["left"],
            right=data["right"],
            value=np.asarray(data["value"], dtype=np.float64),
            n_samples=data["n_samples"],
            label=data["label"],
            classes=data["classes"],
            feature_names=data["feature_names"],
            kind=data["kind"],
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> Tree:
        return cls.from_dict(json.loads(text))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None

    def __repr__(self) -> str:
        return (
            f"Tree(kind={self.kind!r}, nodes={self.node_count}, "
            f"depth={self.depth}, leaves={self.n_leaves})"
        )


class TreeBuilder:
    """Grow a :class:`Tree` node by node (handy for decoders and searches).

    Examples
    --------
    >>> b = TreeBuilder(n_outputs=2)
    >>> root = b.add_split(feature=0, threshold=0.5)
    >>> b.set_children(root, b.add_leaf([3, 0]), b.add_leaf([1, 4]))
    >>> b.build().predict([[0], [1]]).tolist()
    [0, 1]
    """

    def __init__(self, n_outputs=1):
        self.n_outputs = n_outputs
        self._feature, self._threshold = [], []
        self._left, self._right = [], []
        self._value, self._n_samples, self._label = [], [], []

    def _add(self, feature, threshold, value, n_samples, label):
        value = np.zeros(self.n_outputs) if value is None else np.asarray(value, float)
        self._feature.append(int(feature))
        self._threshold.append(float(threshold))
        self._left.append(_LEAF)
        self._right.append(_LEAF)
        self._value.append(value.reshape(self.n_outputs))
        self._n_samples.append(int(n_samples))
        self._label.append(label)
        return len(self._feature) - 1

    def add_leaf(self, value=None, n_samples=None, label=None) -> int:
        if n_samples is None:
            n_samples = 0 if value is None else round(float(np.sum(value)))
        return self._add(_LEAF, -2.0, value, n_samples, label)

    def add_split(self, feature, threshold=0.5, value=None, n_samples=0, label=None):
        return self._add(feature, threshold, value, n_samples, label)

    def set_children(self, node, left, right):
        self._left[node] = int(left)
        self._right[node] = int(right)

    def build(self, classes=None, feature_names=None, kind="classifier") -> Tree:
        values = np.vstack(self._value)
        label = None
        if kind == "classifier":
            label = [
                int(np.argmax(v)) if lab is None else int(lab)
                for v, lab in zip(values, self._label)
            ]
        return Tree(
            self._feature,
            self._threshold,
            self._left,
            self._right,
            values,
            self._n_samples,
            label=label,
            classes=classes,
            feature_names=feature_names,
            kind=kind,
        )
