"""
Quantile regression with several quantiles
==========================================

``DL85Regressor(criterion="quantile", quantile=[...])`` learns one optimal
tree per quantile τ (pinball loss, each leaf valued at its τ-quantile) in a
single search: the searches share the sorted rows and one cache. The fitted
``trees_``, ``objective_`` and ``optimal_per_quantile_`` hold one entry per τ
and ``predict`` returns one column per τ. Several quantiles search 0/1
columns: here ``thresholds=16`` candidate thresholds of ``x``.
"""

import matplotlib.pyplot as plt
import numpy as np

from odtstudy.dl85 import DL85Regressor, export_text

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(0, 10, 400))
y = np.sin(x) + (0.2 + 0.08 * x) * rng.standard_normal(x.size)  # growing noise
X = x.reshape(-1, 1)

taus = [0.1, 0.5, 0.9]
reg = DL85Regressor(criterion="quantile", quantile=taus, max_depth=3, thresholds=16)
reg.fit(X, y)
print("pinball loss per tau:", reg.objective_.round(2))
print("proven optimal per tau:", reg.optimal_per_quantile_)
print(export_text(reg.trees_[1], feature_names=["x"]))  # the median's tree

# %%
# Each τ's tree is a step function of ``x``; the band between the 0.1 and
# 0.9 trees widens with the noise.
grid = np.linspace(0, 10, 500).reshape(-1, 1)
predictions = reg.predict(grid)
fig, ax = plt.subplots(figsize=(8, 4))
ax.scatter(x, y, s=6, color="0.6", label="training rows")
for column, tau in enumerate(taus):
    ax.step(grid[:, 0], predictions[:, column], where="mid", label=f"τ = {tau}")
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.legend()
fig.tight_layout()
plt.show()
