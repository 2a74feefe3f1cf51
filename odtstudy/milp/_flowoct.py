"""FlowOCT (Aghaei, Gómez & Vayanos, Operations Research 2024) as a PuLP model.

The max-flow formulation on 0/1 features: the tree variables of
:mod:`odtstudy.milp._flow_tree` and, for each distinct training row ``i``,
a flow ``z[i][n]`` into every node ``n`` and ``s[i][n]`` from every internal
node to the sink (a leaf of the complete tree sends all it gets to the
sink):

- ``z[i][n] = z[i][2n] + z[i][2n + 1] + s[i][n]`` (conservation);
- ``z[i][2n + side] <= sum(b[n][f] for f with x_if = side)``;
- ``s[i][n] <= w[n][y_i]``, and ``z[i][n] <= w[n][y_i]`` at a leaf;
- ``0 <= z <= 1``.

The flow into the root is 1 exactly when the tree classifies the row
correctly, so the model minimises ``n - sum_i weight_i z[i][1]``, the number
of training errors (a constant in the objective).
"""

from __future__ import annotations

import numpy as np

from odtstudy.milp._common import variable_dicts
from odtstudy.milp._flow_tree import (
    StrongModel,
    ancestry,
    errors,
    from_splits,
    terminals,
    to_splits,
)
from odtstudy.milp._pulp_api import add_constraint

__all__ = ["FlowOCTModel"]


class FlowOCTModel(StrongModel):
    """The FlowOCT MILP for one training set (parameters: :class:`StrongModel`)."""

    name = "FlowOCT"

    def _build(self):
        data, tree, prob, clock = self.data, self.tree, self.prob, self._clock
        rows = range(len(data.y))
        self.z = variable_dicts(prob, clock, "z", (rows, tree.nodes), 0, 1)
        self.s = variable_dicts(prob, clock, "s", (rows, tree.branches), 0, 1)
        z, s, w = self.z, self.s, tree.w
        self._minimise_errors({i: z[i][1] for i in rows})
        for i in rows:
            row, label = data.X[i], int(data.y[i])
            for n in tree.branches:
                clock.tick(data.n_features + 8)
                add_constraint(
                    prob,
                    [(z[i][n], 1), (z[i][2 * n], -1), (z[i][2 * n + 1], -1),
                     (s[i][n], -1)],
                    "==",
                    0,
                )  # fmt: skip
                for side in (0, 1):
                    terms, constant = tree.capacity(n, row, side)
                    terms = [(var, -coef) for var, coef in terms]
                    add_constraint(
                        prob, [(z[i][2 * n + side], 1.0), *terms], "<=", constant
                    )
                add_constraint(prob, [(s[i][n], 1), (w[n][label], -1)], "<=", 0)
            for n in tree.leaves:
                add_constraint(prob, [(z[i][n], 1), (w[n][label], -1)], "<=", 0)
            clock.tick(2 * len(tree.leaves))

    def errors(self) -> float:
        """Training errors of the solver's values: rows minus the flow."""
        flow = sum(
            weight * (self.z[i][1].varValue or 0.0)
            for i, weight in enumerate(self.data.weight.tolist())
        )
        return float(self.data.n_rows - flow)

    def set_warm_start(self, splits) -> float:
        """Start the solver from the tree of ``splits`` (``{t: (feature,
        threshold)}``, CART's); returns its number of errors."""
        data, tree = self.data, from_splits(self.data, splits)
        self.tree.start(tree)
        reached = terminals(data, tree)
        labels = np.array([tree.labels[int(n)] for n in reached])
        correct = (labels == data.y).astype(int).tolist()
        for i, (stop, flow) in enumerate(zip(reached.tolist(), correct)):
            path = set(ancestry(stop))
            self._clock.tick(len(self.tree.nodes) + len(self.tree.branches))
            for n in self.tree.nodes:
                self.z[i][n].setInitialValue(flow if n in path else 0)
            for n in self.tree.branches:
                self.s[i][n].setInitialValue(flow if n == stop else 0)
        return errors(data, tree)

    def decode(self):
        """Splits ``{t: (feature, 0.5)}`` of the solver's tree and its labels."""
        tree = self.tree.read()
        return to_splits(self.data, tree), dict(tree.labels)
