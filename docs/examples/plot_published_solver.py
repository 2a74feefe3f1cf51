"""
A published solver through the same interface
=============================================

The ``[external]`` extra adds adapters for the field's published solvers
(:mod:`odtstudy.external`). Each is an odtstudy learner like the others: the
solver's tree becomes the common :class:`~odtstudy.tree.Tree`,
``objective_`` is recounted on that tree, and ``optimal_`` is True only when
the solver says it proved it. Here ConTree and STreeD solve the same problems
as DL8.5: numeric data with every threshold, and 0/1 data.
"""

import importlib.util

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier

missing = [
    name for name in ("pycontree", "pystreed") if importlib.util.find_spec(name) is None
]
if missing:
    print(f"not installed: {', '.join(missing)}; pip install 'odtstudy[external]'")
else:
    from odtstudy.external import ConTreeClassifier, STreeDClassifier

    numeric, binary = load_dataset("uci/iris"), load_dataset("anneal")
    problems = [
        ("uci/iris, every threshold", numeric, "all", ConTreeClassifier),
        ("anneal, 0/1 features", binary, None, STreeDClassifier),
    ]
    for title, data, thresholds, Solver in problems:
        ours = DL85Classifier(max_depth=3, thresholds=thresholds).fit(data.X, data.y)
        theirs = Solver(max_depth=3, time_limit=60).fit(data.X, data.y)
        print(title)
        for model in (ours, theirs):
            print(
                f"  {type(model).__name__:<18} errors {model.objective_:>4.0f}  "
                f"proven {model.optimal_}  {model.fit_time_:.3f} s"
            )
    # The published solver's tree is an odtstudy Tree: the same exporters,
    # predict and reports work on it.
    print(theirs.tree_.export_text(feature_names=binary.feature_names))
