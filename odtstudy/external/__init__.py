"""Adapters for published optimal decision tree solvers.

Each adapter is an odtstudy learner (a :class:`~odtstudy.base.BaseTreeClassifier`,
or a :class:`~odtstudy.base.BaseTreeRegressor` for a regression solver):
the solver's tree becomes the common :class:`~odtstudy.tree.Tree`, so
``predict``, the exporters and the study reports work unchanged, and
``objective_`` is recounted on that tree. A solver's package is imported only
when the adapter fits; install them all with ``pip install "odtstudy[external]"``.

======================================== ============ ======= ===== =================
class                                    package      data    exact objective family
======================================== ============ ======= ===== =================
:class:`STreeDClassifier`                pystreed     0/1     yes   misclassification
:class:`STreeDCostClassifier`            pystreed     0/1     yes   cost@<matrix>
:class:`PyDL85Classifier`                pydl8.5      0/1     yes   misclassification
:class:`GOSDTClassifier`                 gosdt        0/1     yes   misclassification
                                                                    (default penalty)
:class:`ConTreeClassifier`               pycontree    numeric yes   misclassification
:class:`LicketySplitClassifier`          licketysplit 0/1     no    misclassification
                                                                    (default penalty)
:class:`PyTreesDL85Classifier`           pytrees-rs   0/1     yes   misclassification
:class:`PyTreesDL85AnytimeClassifier`    pytrees-rs   0/1     yes   misclassification
                                                                    (anytime trace)
:class:`PyTreesConTreeClassifier`        pytrees-rs   numeric yes   misclassification
:class:`PyTreesConTreeAnytimeClassifier` pytrees-rs   numeric yes   misclassification
                                                                    (anytime trace)
:class:`STreeDRegressor`                 pystreed     0/1     yes   squared-error
:class:`OSRTRegressor`                   osrt         0/1     yes   squared-error
                                                                    +leaf-penalty
======================================== ============ ======= ===== =================
"""

from odtstudy.external._contree import ConTreeClassifier
from odtstudy.external._gosdt import GOSDTClassifier
from odtstudy.external._licketysplit import LicketySplitClassifier
from odtstudy.external._osrt import OSRTRegressor
from odtstudy.external._pydl85 import PyDL85Classifier
from odtstudy.external._pytrees_contree import (
    PyTreesConTreeAnytimeClassifier,
    PyTreesConTreeClassifier,
)
from odtstudy.external._pytrees_dl85 import (
    PyTreesDL85AnytimeClassifier,
    PyTreesDL85Classifier,
)
from odtstudy.external._streed import (
    STreeDClassifier,
    STreeDCostClassifier,
    STreeDRegressor,
)

__all__ = [
    "ConTreeClassifier",
    "GOSDTClassifier",
    "LicketySplitClassifier",
    "OSRTRegressor",
    "PyDL85Classifier",
    "PyTreesConTreeAnytimeClassifier",
    "PyTreesConTreeClassifier",
    "PyTreesDL85AnytimeClassifier",
    "PyTreesDL85Classifier",
    "STreeDClassifier",
    "STreeDCostClassifier",
    "STreeDRegressor",
]
