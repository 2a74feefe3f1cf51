"""TMO: memetic search of classification trees (Aldinucci), on DEAP.

Population from a random forest refined by TAO, node-wise stochastic
crossover on the fixed-length encoding, TAO on a bootstrap sample as local
search, parent-vs-offspring replacement (methods.md §5).
"""

from __future__ import annotations

import random
from numbers import Integral, Real

import numpy as np
from deap import base, creator, tools
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from odtstudy._limits import MAX_COMPLETE_DEPTH, check_complete_tree
from odtstudy.base import BaseTreeClassifier, FitResult
from odtstudy.cart import tree_from_sklearn
from odtstudy.memetic._encoding import (
    crossover,
    decode,
    encode,
    feature_midpoints,
    leaf_labels,
    random_branch_parameters,
)
from odtstudy.memetic._heap import HeapTree
from odtstudy.memetic._tao import collapse_pure_branches, tao_refine

__all__ = ["TMOClassifier"]

#: Trees of the initial random forest grown between two looks at the clock.
_FOREST_CHUNK = 10
#: Most individuals: each is a tree refined by TAO at least once.
MAX_POPULATION_SIZE = 100_000
#: Most node slots over the population (complete trees of ``max_depth``).
MAX_NODE_SLOTS = 2**24

# DEAP classes are created once, at import (style.md). ``labels`` is a
# class-valued attribute: DEAP instantiates a fresh dict per individual.
if not hasattr(creator, "FitnessMax"):
    creator.create("FitnessMax", base.Fitness, weights=(1.0,))
elif tuple(creator.FitnessMax.weights) != (1.0,):  # pragma: no cover
    raise RuntimeError("deap.creator.FitnessMax exists with weights other than (1,)")
if not hasattr(creator, "TreeInd"):
    creator.create("TreeInd", list, fitness=creator.FitnessMax, labels=dict)


# --------------------------------------------------------------------------
# Individuals <-> heap trees
# --------------------------------------------------------------------------
def individual_from_heap(heap: HeapTree):
    """A ``creator.TreeInd`` holding the encoding and the leaf classes."""
    ind = creator.TreeInd(encode(heap))
    ind.labels = leaf_labels(heap)
    return ind


def heap_from_individual(ind) -> HeapTree:
    return decode(list(ind), ind.labels)


def _individual_from_sklearn(estimator, X, y, n_classes, sample_weight, depth):
    tree = tree_from_sklearn(estimator.tree_, X, y, n_classes, sample_weight)
    return individual_from_heap(HeapTree.from_tree(tree, depth))


def _evaluate(ind, X, y, w):
    pred = heap_from_individual(ind).predict(X)
    return (float(w[pred == y].sum() / w.sum()),)


def _mate(first, second, rng, crossover_rate, midpoints):
    """Node-wise crossover returning one child (``second`` taken w.p. CR)."""
    parent = heap_from_individual(first)
    take = [rng.random() < crossover_rate for _ in range(len(first))]
    child = crossover(
        parent,
        heap_from_individual(second),
        take,
        lambda: random_branch_parameters(rng, midpoints),
    )
    return individual_from_heap(child)


def _local_search(ind, rows, weights, X, y, n_classes, deadline):
    """TAO on the bootstrap sample ``(X[rows], y[rows])`` weighted by ``weights``."""
    result = tao_refine(
        heap_from_individual(ind),
        X[rows],
        y[rows],
        n_classes,
        weights,
        deadline=deadline,
        prune=True,
    )
    return individual_from_heap(result.tree), result.timed_out


def _refine_initial(heap, X, y, n_classes, w, deadline):
    result = tao_refine(heap, X, y, n_classes, w, deadline=deadline, prune=True)
    return result.tree, result.timed_out


def _grow_population(toolbox, X, y, sample_weight, size, depth, seed, n_jobs, deadline):
    """The individuals of a random forest of ``size`` trees, grown while time is left.

    The forest grows by warm start in chunks, each turned into individuals
    before the clock is read again, so its trees are those of one fit with
    the same seed; when the deadline passes it stops with at least two
    trees. Returns the individuals and whether the deadline cut them short.
    """
    forest = RandomForestClassifier(
        n_estimators=0,
        max_depth=depth,
        random_state=seed,
        n_jobs=n_jobs,
        warm_start=True,
    )
    population = []
    while len(population) < size:
        if len(population) >= 2 and deadline.expired():
            return population, True
        forest.n_estimators = min(size, max(len(population) + _FOREST_CHUNK, 2))
        forest.fit(X, y, sample_weight=sample_weight)
        population += toolbox.population(forest.estimators_[len(population) :])
    return population, False


# --------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------
class TMOClassifier(BaseTreeClassifier):
    """Memetic search of a classification tree of bounded depth (TMO).

    A random forest of ``population_size`` trees of depth ``max_depth``,
    each refined by TAO, is the initial population. Each generation draws a
    bootstrap sample; then each individual ``t_i`` is crossed with a
    uniformly drawn other individual ``t_j`` (node-wise: each encoded node of
    ``t_j`` is taken with probability ``crossover_rate``), the child is
    refined by TAO on the bootstrap sample and replaces ``t_i`` when its
    training accuracy is strictly higher. The best tree ever seen is returned.

    Parameters
    ----------
    max_depth : int, default=3
        Maximum depth of the trees, at most 20. Each individual stores the
        complete tree, so ``population_size * 2**(max_depth + 1)`` node
        slots must not exceed ``2**24`` (a ``ValueError`` names the deepest
        feasible depth).
    population_size : int, default=100
        Number of individuals (trees of the initial random forest), at most
        100,000.
    n_generations : int, default=5
        Number of generations.
    crossover_rate : float, default=0.75
        Probability of taking the second parent's node at each position.
    time_limit : float, default=600
        Seconds for the whole fit; checked while the initial forest grows,
        before every initial TAO run and before every offspring. ``None``
        means no limit.
    random_state : int, RandomState instance or None, default=None
        Seeds the random forest, the bootstrap samples, the pairing and the
        crossover.
    n_jobs : int, default=1
        Parallel jobs (threads) for the random forest and the TAO refinement
        of the initial population. The generations stay sequential, as in the
        paper, so the result does not depend on ``n_jobs``.

    Attributes
    ----------
    tree_ : Tree
        The best individual (leaf classes as TAO set them on its bootstrap
        sample; branches whose leaves all predict one class collapsed).
    classes_ : ndarray
    objective_ : float
        Training misclassifications of ``tree_`` (weighted when
        ``sample_weight`` is given).
    lower_bound_ : None
    optimal_ : bool
        Always False.
    status_ : str
        ``"feasible"``, or ``"timeout"`` when the time limit stopped the search.
    fit_time_ : float
    stats_ : dict
        ``logbook`` (one record per generation, generation 0 being the
        initial population: ``gen``, ``nevals``, ``n_replaced``, ``max``,
        ``mean``, ``min``, ``std`` of the training accuracy, ``best`` (hall of
        fame), ``time``), ``best_fitness`` and ``mean_fitness`` (per
        generation), ``initial_best_fitness``, ``n_generations`` (completed),
        ``n_evaluations``, ``n_nodes``, ``n_leaves``.

    See Also
    --------
    TAOClassifier : the local search, on its own.

    Notes
    -----
    The loop is hand-written on a DEAP ``Toolbox`` built per fit
    (``individual``, ``population``, ``evaluate``, ``mate``,
    ``local_search``, ``clone``); ``tools.HallOfFame(1)`` keeps the best
    individual and ``tools.Statistics``/``tools.Logbook`` the per-generation
    statistics. All random draws come from a ``random.Random`` and a NumPy
    generator seeded from ``random_state``, so no global random state is
    touched and a fixed seed gives the same tree.

    The fitness sample weights are ``sample_weight``; a bootstrap sample's
    weights are multiplicities times ``sample_weight``. TAO prunes dead
    branches with respect to the bootstrap sample it ran on.

    The time limit is checked between chunks of 10 trees of the initial
    random forest (the forest grows by warm start, so its trees do not depend
    on the limit; a forest cut short by the limit keeps at least two trees
    and is the whole population), before every TAO run of the initial
    population and before every offspring (and inside TAO, before every
    depth level).

    References
    ----------
    T. Aldinucci. *A Novel Memetic Strategy for Optimized Learning of
    Classification Trees.*

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from odtstudy.memetic import TMOClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tmo = TMOClassifier(max_depth=2, population_size=10, n_generations=2,
    ...                     random_state=0).fit(X, y)
    >>> tmo.score(X, y) >= tmo.stats_["initial_best_fitness"]
    True
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "max_depth": [Interval(Integral, 1, MAX_COMPLETE_DEPTH, closed="both")],
        "population_size": [Interval(Integral, 2, MAX_POPULATION_SIZE, closed="both")],
        "n_generations": [Interval(Integral, 0, None, closed="left")],
        "crossover_rate": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        population_size=100,
        n_generations=5,
        crossover_rate=0.75,
        time_limit=600,
        random_state=None,
        n_jobs=1,
    ):
        self.max_depth = max_depth
        self.population_size = population_size
        self.n_generations = n_generations
        self.crossover_rate = crossover_rate
        self.time_limit = time_limit
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _toolbox(self, X, y, w, rng):
        n_classes = len(self.classes_)
        toolbox = base.Toolbox()
        toolbox.register(
            "individual",
            _individual_from_sklearn,
            X=X,
            y=y,
            n_classes=n_classes,
            sample_weight=w,
            depth=self.max_depth,
        )
        toolbox.register(
            "population",
            lambda estimators: [toolbox.individual(est) for est in estimators],
        )
        toolbox.register("evaluate", _evaluate, X=X, y=y, w=w)
        toolbox.register(
            "mate",
            _mate,
            rng=rng,
            crossover_rate=self.crossover_rate,
            midpoints=feature_midpoints(X),
        )
        toolbox.register("local_search", _local_search, X=X, y=y, n_classes=n_classes)
        return toolbox

    def _fit(self, X, y, sample_weight):
        deadline = self._fit_deadline()
        check_complete_tree(
            type(self).__name__,
            self.max_depth,
            2 * self.population_size,
            MAX_NODE_SLOTS,
            "two node slots per individual",
        )
        n, n_classes = X.shape[0], len(self.classes_)
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        rng = random.Random(seed)
        np_rng = np.random.default_rng(seed)
        toolbox = self._toolbox(X, y, w, rng)

        # -- initial population: a random forest, each tree refined by TAO on D
        population, timed_out = _grow_population(
            toolbox,
            X,
            y,
            sample_weight,
            self.population_size,
            self.max_depth,
            seed,
            self.n_jobs,
            deadline,
        )
        heaps = [heap_from_individual(ind) for ind in population]
        if self.n_jobs in (None, 1):
            refined = []
            for heap in heaps:
                if deadline.expired():
                    refined.append((heap, True))
                    continue
                refined.append(_refine_initial(heap, X, y, n_classes, w, deadline))
        else:
            refined = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(_refine_initial)(heap, X, y, n_classes, w, deadline)
                for heap in heaps
            )
        population = [individual_from_heap(heap) for heap, _ in refined]
        timed_out = timed_out or any(flag for _, flag in refined)
        for ind in population:
            ind.fitness.values = toolbox.evaluate(ind)

        hof = tools.HallOfFame(1)
        hof.update(population)
        stats = tools.Statistics(key=lambda ind: ind.fitness.values[0])
        for name, fn in (("max", np.max), ("mean", np.mean), ("min", np.min)):
            stats.register(name, lambda v, fn=fn: float(fn(v)))
        stats.register("std", lambda v: float(np.std(v)))
        logbook = tools.Logbook()
        logbook.header = ["gen", "nevals", "n_replaced", "best", "time", *stats.fields]

        def record(gen, nevals, n_replaced):
            logbook.record(
                gen=gen,
                nevals=nevals,
                n_replaced=n_replaced,
                best=float(hof[0].fitness.values[0]),
                time=deadline.elapsed(),
                **stats.compile(population),
            )

        record(0, len(population), 0)
        n_evaluations = len(population)
        completed = 0
        k = len(population)

        # -- generations
        for gen in range(1, self.n_generations + 1):
            if timed_out or deadline.expired():
                timed_out = True
                break
            counts = np.bincount(np_rng.integers(0, n, size=n), minlength=n)
            rows = np.flatnonzero(counts)
            boot_weights = counts[rows] * w[rows]
            nevals = n_replaced = 0
            for i in range(k):
                if deadline.expired():
                    timed_out = True
                    break
                j = rng.randrange(k - 1)
                j += j >= i
                child = toolbox.mate(population[i], population[j])
                child, stopped = toolbox.local_search(
                    child, rows, boot_weights, deadline=deadline
                )
                child.fitness.values = toolbox.evaluate(child)
                nevals += 1
                if child.fitness > population[i].fitness:
                    population[i] = child
                    n_replaced += 1
                hof.update([child])
                if stopped:
                    timed_out = True
                    break
            n_evaluations += nevals
            record(gen, nevals, n_replaced)
            if timed_out:
                break
            completed = gen

        best = heap_from_individual(hof[0])
        collapse_pure_branches(best)
        tree = best.to_tree(X, y, n_classes, sample_weight)
        wrong = tree.predict(X) != y
        return FitResult(
            tree=tree,
            objective=float(w[wrong].sum()),
            lower_bound=None,
            optimal=False,
            status="timeout" if timed_out else "feasible",
            stats={
                "logbook": [dict(r) for r in logbook],
                "best_fitness": logbook.select("best"),
                "mean_fitness": logbook.select("mean"),
                "initial_best_fitness": float(logbook[0]["max"]),
                "n_generations": completed,
                "n_evaluations": n_evaluations,
                "population_size": k,
                "seed": seed,
                "n_nodes": tree.node_count,
                "n_leaves": tree.n_leaves,
            },
        )
