"""BendersOCT (Aghaei, Gómez & Vayanos, Operations Research 2024): FlowOCT's
Benders decomposition, solved by a cutting-plane loop.

The master problem keeps the tree variables of
:mod:`odtstudy.milp._flow_tree` and replaces each distinct row's flow by
``g[i]`` in ``[0, 1]`` (row ``i`` is correctly classified), minimising
``n - sum_i weight_i g[i]``. Row ``i``'s max-flow subproblem is bounded by
any of its cuts, so ``g[i] <= capacity of a cut`` is valid; with every cut
the master is FlowOCT.

PuLP reaches no lazy-constraint callback of CBC or HiGHS, so
:func:`cutting_planes` re-solves the master: each integral solution routes
every row to the node that predicts for it; a row the master counts as
correct (``g[i] > 0``) but that node labels otherwise gets the cut of its
path (:meth:`TreeVariables.cut`), which is 0 at that solution; the other
rows get theirs too (valid, and what the next masters would otherwise
violate). The loop stops when the master's bound proves the best tree
found, when no cut is violated, or at the deadline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from odtstudy._deadline import Deadline, DeadlineReached
from odtstudy.milp._common import BuildClock, variable_dicts
from odtstudy.milp._flow_tree import (
    FlowTree,
    StrongModel,
    errors,
    from_splits,
    relabel,
    terminals,
)
from odtstudy.milp._pulp_api import add_constraint

__all__ = ["BendersMaster", "BendersOutcome", "cutting_planes"]

#: A row the master counts as correct by more than this needs its cut.
_G_TOL = 1e-6
#: Seconds a master solve needs at least to be worth starting.
_MIN_SOLVE_SECONDS = 0.05


class BendersMaster(StrongModel):
    """BendersOCT's master problem for one training set (parameters:
    :class:`StrongModel`).

    Attributes
    ----------
    n_cuts : int
        Cuts added so far.
    incumbent : FlowTree or None
        The warm start given by :meth:`set_warm_start`.
    """

    name = "BendersOCT"

    def __init__(self, X, y, n_classes, depth, deadline=None):
        self.n_cuts = 0
        self.incumbent = None
        self._cuts = set()
        super().__init__(X, y, n_classes, depth, deadline)
        self._cut_clock = BuildClock(self._deadline, "while adding BendersOCT cuts")

    def _build(self):
        rows = range(len(self.data.y))
        self.g = variable_dicts(self.prob, self._clock, "g", rows, 0, 1)
        self._minimise_errors(self.g)

    def add_cuts(self, tree: FlowTree, rows) -> int:
        """Add the cut of each row in ``rows`` along its path in ``tree``;
        returns how many were new."""
        reached = terminals(self.data, tree)
        added = 0
        for i in np.asarray(rows, dtype=np.int64).tolist():
            self._cut_clock.tick(self.data.n_features + 2 * self.depth)
            key = (i, int(reached[i]))
            if key in self._cuts:
                continue
            self._cuts.add(key)
            terms, constant = self.tree.cut(self.data.X[i], int(self.data.y[i]), key[1])
            terms = [(var, -coef) for var, coef in terms]
            add_constraint(self.prob, [(self.g[i], 1.0), *terms], "<=", constant)
            added += 1
        self.n_cuts += added
        return added

    def violated(self, tree: FlowTree) -> np.ndarray:
        """Rows the master's values count as correct that ``tree`` (its tree,
        labels included) misclassifies."""
        reached = terminals(self.data, tree)
        labels = np.array([tree.labels.get(int(n), -1) for n in reached])
        counted = np.array([self.g[i].varValue or 0.0 for i in range(len(reached))])
        return np.flatnonzero((counted > _G_TOL) & (labels != self.data.y))

    def set_warm_start(self, splits) -> float:
        """Take the tree of ``splits`` (``{t: (feature, threshold)}``, CART's)
        as the incumbent and add the cuts of all its rows' paths; returns its
        errors."""
        self.incumbent = from_splits(self.data, splits)
        self.add_cuts(self.incumbent, range(len(self.data.y)))
        return errors(self.data, self.incumbent)

    def start(self, tree: FlowTree) -> None:
        """Set the master's start to ``tree`` (each row's ``g`` its
        correctness, which every cut allows)."""
        self.tree.start(tree)
        reached = terminals(self.data, tree)
        for i, n in enumerate(reached.tolist()):
            self._clock.tick()
            self.g[i].setInitialValue(int(tree.labels[n] == self.data.y[i]))

    def read(self) -> FlowTree:
        """The master's tree, labels as its values give them."""
        return self.tree.read()


@dataclass
class BendersOutcome:
    """What :func:`cutting_planes` found.

    Attributes
    ----------
    tree : FlowTree or None
        The best tree found (majority labels), ``None`` when none was.
    errors : float
        Its training errors (``inf`` without a tree).
    bound : float or None
        The best master bound: a lower bound on the optimal errors.
    proven : bool
        The bound proves ``tree`` optimal.
    iterations : int
        Master solves.
    infos : list of SolveInfo
        Each master solve's outcome.
    points : list of tuple
        ``(seconds since fit started, errors or None, bound or None)``: the
        masters' bounds as their solvers reported them, and each improving
        tree when its master solve ended.
    stopped : str
        Why the loop ended.
    """

    tree: FlowTree | None
    errors: float
    bound: float | None
    proven: bool
    iterations: int = 0
    infos: list = field(default_factory=list)
    points: list = field(default_factory=list)
    stopped: str = ""


def _trusted(info) -> bool:
    """Whether the master solve's bound is one: finite, and not above its
    own incumbent (a bound above it is not one)."""
    bound = info.bound
    if bound is None or not math.isfinite(bound):
        return False
    if info.objective is None:
        return info.proven_optimal
    return bound <= info.objective + 1e-6 * max(1.0, abs(info.objective))


def _proves(errors_found: float, bound: float | None) -> bool:
    if bound is None or not math.isfinite(bound):
        return False
    return errors_found <= math.ceil(bound - 1e-6) + 1e-9


def cutting_planes(
    master: BendersMaster, solve_master, deadline: Deadline, on_improve=None
) -> BendersOutcome:
    """Solve the master, add the violated cuts, repeat.

    Parameters
    ----------
    master : BendersMaster
        With its warm start (and its rows' cuts) if one was set.
    solve_master : callable
        ``solve_master(warm_start: bool) -> SolveInfo``: solves
        ``master.prob`` by ``deadline`` (the variables' ``varValue`` hold
        the solution); may raise ``DeadlineReached``.
    deadline : Deadline
    on_improve : callable, optional
        ``on_improve(tree, errors)`` at each better tree.

    Returns
    -------
    BendersOutcome
    """
    best = master.incumbent
    out = BendersOutcome(
        best, math.inf if best is None else errors(master.data, best), None, False
    )
    while not out.stopped:
        try:
            out.stopped = _iterate(master, solve_master, deadline, out, on_improve)
        except DeadlineReached:
            out.stopped = "time limit"
    return out


def _iterate(master, solve_master, deadline, out, on_improve) -> str:
    """One master solve and its cuts, recorded in ``out``: why the loop
    stops, or ``""``."""
    if deadline.expired(reserve=_MIN_SOLVE_SECONDS):
        return "time limit"
    if out.tree is not None:
        master.start(out.tree)
    info = solve_master(out.tree is not None)
    out.iterations += 1
    out.infos.append(info)
    out.points += [(at, None, bound) for at, _, bound, _ in info.trace]
    if _trusted(info):
        out.bound = info.bound if out.bound is None else max(out.bound, info.bound)
    if not info.has_solution:
        return "time limit" if info.timed_out else info.solver_status
    found = master.read()
    better = relabel(master.data, found)
    found_errors = errors(master.data, better)
    if found_errors < out.errors:
        out.tree, out.errors = better, found_errors
        out.points.append((deadline.elapsed(), found_errors, None))
        if on_improve is not None:
            on_improve(better, found_errors)
    if _proves(out.errors, out.bound):
        out.proven = True
        return "proven"
    violated = master.violated(found)
    if not len(violated) or not master.add_cuts(found, violated):
        return "no violated cut"
    # the other rows' paths too: not violated now, they keep the next
    # masters from relabelling this tree's leaves for free
    master.add_cuts(found, range(len(master.data.y)))
    return "time limit" if info.timed_out else ""
