"""
A fit and its tree
==================

Every learner is a scikit-learn classifier that returns the same
:class:`~odtstudy.tree.Tree` and the same fitted attributes: ``objective_``
(training misclassifications), ``lower_bound_``, ``optimal_`` (True only when
proven), ``status_``, ``fit_time_`` and ``stats_``. Here DL8.5 proves a
depth-3 tree optimal on a CP4IM 0/1 data set, where CART's greedy tree of the
same depth makes more errors.
"""

from odtstudy.cart import CARTClassifier
from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier, export_graphviz, export_text

data = load_dataset("anneal")  # CP4IM, 812 rows x 93 0/1 features
for clf in (CARTClassifier(max_depth=3), DL85Classifier(max_depth=3, time_limit=60)):
    clf.fit(data.X, data.y)
    print(
        f"{type(clf).__name__:<15} errors {clf.objective_:.0f}, "
        f"lower bound {clf.lower_bound_}, optimal {clf.optimal_}, "
        f"{clf.fit_time_:.3f} s"
    )

# %%
# The tree, as text (the feature names are those of the data set):
print(export_text(clf, feature_names=data.feature_names))

# %%
# and as Graphviz ``.dot`` source, for ``dot -Tpng``:
print(export_graphviz(clf, feature_names=data.feature_names)[:300], "...")
