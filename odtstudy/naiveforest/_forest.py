"""DL8-forests: bagging of optimal DL8.5 trees (Bosch's MSc thesis, ch. 3)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy._deadline import Deadline
from odtstudy.base import FitResult
from odtstudy.naiveforest._base import (
    BaseForestClassifier,
    _class_index,
    weighted_vote,
)
from odtstudy.tree import Tree, TreeBuilder

__all__ = ["DL8ForestClassifier"]

#: Most trees a forest takes: its predictions hold ``n_estimators x n_samples``
#: class indices, and every tree costs at least one DL8.5 search.
MAX_ESTIMATORS = 10_000


def _leaf_tree(y, n_classes) -> Tree:
    counts = np.bincount(y, minlength=n_classes).astype(float)
    builder = TreeBuilder(n_outputs=n_classes)
    builder.add_leaf(counts, n_samples=len(y))
    return builder.build()


def _fit_one(
    X, y, rows, columns, n_classes, max_depth, min_sup, time_limit, deadline=None
):
    """DL8.5 tree on ``X[rows][:, columns]``, features mapped back to ``X``'s.

    With ``deadline``, the tree gets at most the time it leaves, and ``None``
    is returned instead of a tree once it has passed.
    """
    from odtstudy.dl85 import DL85Classifier

    if deadline is not None:
        if deadline.expired():
            return None
        if deadline.limited:
            time_limit = max(min(time_limit, deadline.remaining()), 1e-3)
    ys = y[rows]
    clock = Deadline(None)
    if len(np.unique(ys)) < 2 or len(columns) == 0:
        return _leaf_tree(ys, n_classes), True, clock.elapsed()
    clf = DL85Classifier(max_depth=max_depth, min_sup=min_sup, time_limit=time_limit)
    clf.fit(X[np.ix_(rows, columns)], ys)
    fields = clf.tree_.to_arrays()
    internal = fields["feature"] >= 0
    fields["feature"][internal] = np.asarray(columns)[fields["feature"][internal]]
    # labels index clf.classes_, a subset of ours when the sample misses a class
    fields["label"] = np.asarray(clf.classes_)[fields["label"]].astype(np.int64)
    value = np.zeros((len(fields["feature"]), n_classes))
    value[:, clf.classes_] = fields["value"]
    fields["value"] = value
    fields["classes"] = None
    return Tree(**fields), bool(clf.optimal_), clock.elapsed()


class DL8ForestClassifier(BaseForestClassifier):
    """Bagged DL8.5 trees with majority vote: the naive DL8-forest.

    Every variant of Bosch's chapter 3 is available by combining a sample
    selection and an attribute selection; each tree is an optimal DL8.5
    tree of depth ``max_depth`` on its sample and attributes, and the forest
    predicts by (unweighted) majority vote.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (Bosch: 10), at most 10,000 (the forest's
        predictions take ``n_estimators * n_samples`` integers).
    max_depth : int, default=3
        Depth of every tree, at most 60 (as DL8.5's).
    sample_selection : {"random", "all", "progressive"}, default="random"
        ``"random"``: each tree gets an independent random subset of
        ``sample_fraction`` of the rows (with replacement when
        ``bootstrap``). ``"all"``: every tree sees every row.
        ``"progressive"``: like ``"random"``, but row ``i`` is drawn with
        probability proportional to ``1 +`` the number of earlier trees that
        misclassify it, so later trees focus on the rows the forest gets
        wrong (the thesis names this variant without defining it; this is
        our reading).
    attribute_selection : {"all", "progressive", "progressive_random", \
"random"}, default="all"
        ``"all"``: every feature. ``"progressive"``: the root feature of each
        tree is removed for all later trees. ``"progressive_random"``: a
        feature of each tree is removed for later trees, chosen by a walk
        from the root that stops at the current node, goes left or goes
        right with probability 1/3 each (a leaf sends back its parent), so
        features near the root are removed more often. ``"random"``: each
        tree gets an independent random subset of ``attribute_fraction`` of
        the features.
    sample_fraction : float in (0, 1], default=0.25
        Share of the rows per tree for ``"random"`` / ``"progressive"``
        sample selection (Bosch's script used 25%).
    attribute_fraction : float in (0, 1], default=0.25
        Share of the features kept per tree for ``attribute_selection=
        "random"`` (Bosch's script masked 75% of them).
    bootstrap : bool, default=True
        Draw the rows with replacement (as ``sklearn.utils.resample`` in
        Bosch's script).
    min_sup : int, default=1
        Minimum number of rows in each leaf, at most ``2**31 - 1`` (as
        DL8.5's).
    time_limit : float, default=None
        Seconds for the whole forest, shared evenly by the trees still to
        build; a tree stopped by its limit is DL8.5's best so far
        (``status_ = "timeout"``), and no tree after the first is started
        once the limit has passed (the forest then has fewer trees).
        ``None``: no limit.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int, default=None
        Trees fitted in parallel (threads) when no progressive selection
        makes them sequential. ``None`` means 1.

    Attributes
    ----------
    estimators_ : list of Tree
    weights_ : ndarray of shape (n_estimators,)
        All ones (majority vote).
    n_trees_ : int
        ``len(estimators_)``.
    tree_ : None
        A forest has no single tree (the common contract).
    classes_ : ndarray
    objective_ : float
        Training misclassifications of the forest.
    lower_bound_ : None
    optimal_ : bool
        Always False: a bagged forest optimises no global criterion.
    status_ : {"feasible", "timeout"}
    fit_time_ : float
    unanimity_ : float
        Share of the training rows on which all trees agree (Bosch, fig. 3.2).
    agreement_ : ndarray of shape (n_estimators + 1,)
        Share of the training rows on which exactly ``k`` trees agree with
        the forest's prediction (the histogram of fig. 3.2).
    feature_usage_ : dict
        ``{"root": ..., "overall": ...}``: for each feature, the share of
        trees that test it at the root / anywhere (fig. 3.3).
    stats_ : dict
        ``tree_fit_time``, ``tree_optimal``, ``removed_features``,
        ``n_trees``, ``trees_skipped`` (not started: the time limit had
        passed).
    n_features_in_ : int

    References
    ----------
    .. [1] S. Bosch. "Constructing optimal forests of decision trees", MSc
       thesis, UCLouvain, 2020, ch. 3.

    Examples
    --------
    >>> from odtstudy.datasets import load_dataset
    >>> from odtstudy.naiveforest import DL8ForestClassifier
    >>> data = load_dataset("zoo-1")
    >>> forest = DL8ForestClassifier(n_estimators=5, max_depth=2,
    ...                              random_state=0).fit(data.X, data.y)
    >>> len(forest.estimators_), 0 <= forest.unanimity_ <= 1
    (5, True)
    """

    _requires_binary = True

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, MAX_ESTIMATORS, closed="both")],
        "max_depth": [Interval(Integral, 1, 60, closed="both")],
        "sample_selection": [StrOptions({"random", "all", "progressive"})],
        "attribute_selection": [
            StrOptions({"all", "progressive", "progressive_random", "random"})
        ],
        "sample_fraction": [Interval(Real, 0, 1, closed="right")],
        "attribute_fraction": [Interval(Real, 0, 1, closed="right")],
        "bootstrap": ["boolean"],
        "min_sup": [Interval(Integral, 1, 2**31 - 1, closed="both")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        n_estimators=10,
        max_depth=3,
        *,
        sample_selection="random",
        attribute_selection="all",
        sample_fraction=0.25,
        attribute_fraction=0.25,
        bootstrap=True,
        min_sup=1,
        time_limit=None,
        random_state=None,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.sample_selection = sample_selection
        self.attribute_selection = attribute_selection
        self.sample_fraction = sample_fraction
        self.attribute_fraction = attribute_fraction
        self.bootstrap = bootstrap
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ sampling
    def _rows(self, rng, n, wrong_counts):
        if self.sample_selection == "all":
            return np.arange(n)
        size = max(1, round(self.sample_fraction * n))
        p = None
        if self.sample_selection == "progressive":
            p = 1.0 + wrong_counts
            p = p / p.sum()
        return np.sort(rng.choice(n, size=size, replace=self.bootstrap, p=p))

    def _columns(self, rng, p, allowed):
        if self.attribute_selection == "random":
            size = max(1, round(self.attribute_fraction * p))
            return np.sort(rng.choice(p, size=size, replace=False))
        return np.flatnonzero(allowed)

    @staticmethod
    def _random_walk_feature(tree: Tree, rng) -> int | None:
        node, parent = 0, None
        while True:
            if tree.feature[node] < 0:
                return None if parent is None else int(tree.feature[parent])
            move = rng.integers(3)
            if move == 0:
                return int(tree.feature[node])
            parent = node
            node = int(tree.left[node] if move == 1 else tree.right[node])

    # ---------------------------------------------------------------- fit
    def _fit(self, X, y) -> FitResult:
        X = np.ascontiguousarray(X, dtype=np.uint8)
        deadline = self._fit_deadline()
        n, p = X.shape
        k = len(self.classes_)
        rng = np.random.default_rng(
            check_random_state(self.random_state).randint(2**31 - 1)
        )
        sequential = (
            self.sample_selection == "progressive"
            or self.attribute_selection in ("progressive", "progressive_random")
        )
        per_tree = (
            None
            if self.time_limit is None
            else float(self.time_limit) / self.n_estimators
        )
        trees, optimal, times, removed = [], [], [], []
        skipped = 0
        if sequential:
            allowed = np.ones(p, dtype=bool)
            wrong = np.zeros(n)
            for t in range(self.n_estimators):
                budget = None
                if deadline.limited:
                    if deadline.expired() and trees:
                        break
                    budget = max(deadline.remaining() / (self.n_estimators - t), 1e-3)
                rows = self._rows(rng, n, wrong)
                cols = self._columns(rng, p, allowed)
                tree, opt, secs = _fit_one(
                    X, y, rows, cols, k, self.max_depth, self.min_sup, budget
                )
                trees.append(tree)
                optimal.append(opt)
                times.append(secs)
                wrong += tree.label[tree.apply(X)] != y
                drop = None
                if self.attribute_selection == "progressive" and tree.feature[0] >= 0:
                    drop = int(tree.feature[0])
                elif self.attribute_selection == "progressive_random":
                    drop = self._random_walk_feature(tree, rng)
                if drop is not None:
                    allowed[drop] = False
                    removed.append(drop)
        else:

            def tasks():
                # the first tree is always built; the others only while time
                # is left (samples drawn lazily: none past the deadline)
                for t in range(self.n_estimators):
                    if t > 0 and deadline.expired():
                        return
                    rows = self._rows(rng, n, None)
                    cols = self._columns(rng, p, np.ones(p, bool))
                    yield delayed(_fit_one)(
                        X,
                        y,
                        rows,
                        cols,
                        k,
                        self.max_depth,
                        self.min_sup,
                        per_tree,
                        None if t == 0 else deadline,
                    )

            results = Parallel(n_jobs=self.n_jobs, prefer="threads")(tasks())
            skipped = self.n_estimators - len(results)
            for result in results:
                if result is None:
                    skipped += 1
                    continue
                tree, opt, secs = result
                trees.append(tree)
                optimal.append(opt)
                times.append(secs)

        weights = np.ones(len(trees))
        preds = np.array([_class_index(t, X) for t in trees]).reshape(len(trees), n)
        forest = np.argmax(weighted_vote(preds, weights, k), axis=1)
        self.agreement_ = self._agreement(preds, forest)
        self.unanimity_ = float(np.mean(np.all(preds == preds[0], axis=0)))
        root = np.zeros(p)
        overall = np.zeros(p)
        for tree in trees:
            if tree.feature[0] >= 0:
                root[tree.feature[0]] += 1
            used = np.unique(tree.feature[tree.feature >= 0])
            overall[used] += 1
        self.feature_usage_ = {
            "root": root / len(trees),
            "overall": overall / len(trees),
        }
        return FitResult(
            tree=None,
            objective=float(np.sum(forest != y)),
            lower_bound=None,
            optimal=False,
            status="feasible" if all(optimal) and not skipped else "timeout",
            stats={
                "n_trees": len(trees),
                "trees_skipped": skipped,
                "tree_fit_time": times,
                "tree_optimal": optimal,
                "removed_features": removed,
            },
            estimators=trees,
            weights=weights,
        )

    @staticmethod
    def _agreement(preds, forest) -> np.ndarray:
        agree = np.sum(preds == forest[None, :], axis=0)
        return np.bincount(agree, minlength=preds.shape[0] + 1) / len(forest)

    def agreement(self, X) -> np.ndarray:
        """Share of the rows of ``X`` on which exactly ``k`` trees agree with the vote.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_estimators + 1,)
        """
        X = self._validate_X(X)
        preds = self._tree_predictions(X)
        forest = np.argmax(
            weighted_vote(preds, self.weights_, len(self.classes_)), axis=1
        )
        return self._agreement(preds, forest)
