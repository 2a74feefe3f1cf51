"""
A fit on numeric features
=========================

With ``thresholds="all"`` DL8.5 fits numeric columns directly: it searches
every midpoint between consecutive distinct training values of each column,
and the tree tests the original columns. No :class:`~odtstudy.datasets.Binarizer`
is needed, and the tree is optimal over all axis-aligned trees of its depth.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_iris

from odtstudy.cart import CARTClassifier
from odtstudy.dl85 import DL85Classifier, export_text

iris = load_iris(as_frame=True)
X = iris.data[["sepal length (cm)", "sepal width (cm)"]]
y = iris.target

exact = DL85Classifier(max_depth=2, thresholds="all").fit(X, y)
greedy = CARTClassifier(max_depth=2).fit(X, y)
print("DL8.5:", exact.objective_, "errors, proven optimal:", exact.optimal_)
print("CART: ", greedy.objective_, "errors")
print(export_text(exact))

# %%
# The two trees' partitions of the plane (the points are the training rows):
xx, yy = np.meshgrid(
    np.linspace(X.iloc[:, 0].min() - 0.2, X.iloc[:, 0].max() + 0.2, 300),
    np.linspace(X.iloc[:, 1].min() - 0.2, X.iloc[:, 1].max() + 0.2, 300),
)
grid = pd.DataFrame(np.column_stack([xx.ravel(), yy.ravel()]), columns=X.columns)
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
for ax, model, title in ((axes[0], exact, "DL8.5, optimal"), (axes[1], greedy, "CART")):
    regions = model.predict(grid).reshape(xx.shape)
    ax.contourf(
        xx, yy, regions, alpha=0.25, cmap="viridis", levels=[-0.5, 0.5, 1.5, 2.5]
    )
    ax.scatter(X.iloc[:, 0], X.iloc[:, 1], c=y, cmap="viridis", s=12, edgecolor="k")
    ax.set_title(f"{title}: {model.objective_:.0f} training errors")
    ax.set_xlabel(X.columns[0])
axes[0].set_ylabel(X.columns[1])
fig.tight_layout()
plt.show()
