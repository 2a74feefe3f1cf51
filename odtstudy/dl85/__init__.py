"""DL8.5: caching branch-and-bound search for optimal decision trees."""

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

# The Cython modules of the engine (one per ``.pyx`` file), built by
# ``pip install .`` or, in the source tree, by ``pip install -e .``.
_EXTENSIONS = (
    "_bitset",
    "_boxcache",
    "_cache",
    "_cache_policy",
    "_covers",
    "_depth2",
    "_depth2_counts",
    "_depth2_order",
    "_numeric",
    "_numeric_pricing",
    "_objective",
    "_search",
    "_skeleton",
    "_weighted",
)


def _missing_extensions_error(exc: ModuleNotFoundError) -> ImportError:
    """Reword "No module named 'odtstudy.dl85.engine._bitset'" into what to do."""
    here = Path(__file__).resolve().parent / "engine"
    missing = [
        name
        for name in _EXTENSIONS
        if not any((here / f"{name}{suffix}").exists() for suffix in EXTENSION_SUFFIXES)
    ]
    return ImportError(
        f"odtstudy's compiled extensions are missing from {here.parents[1]} (no "
        f"odtstudy.dl85.engine module {', '.join(missing or [exc.name])} built for "
        "this Python). This usually means Python is importing the source tree "
        "(e.g. running from the clone root) instead of the installed package: "
        "run from another directory after `pip install .`, or build the "
        "extensions in place with `pip install -e .`.",
        name=exc.name,
    )


try:
    from odtstudy.base import export_graphviz, export_text
    from odtstudy.dl85.engine._leaf_objective import LeafObjective
    from odtstudy.dl85.estimators._classes import DL85Classifier
    from odtstudy.dl85.estimators._helpers import shallowest_perfect_tree
    from odtstudy.dl85.estimators._predictor import DL85Cluster, DL85Predictor
    from odtstudy.dl85.estimators._regressor import DL85Regressor
except ModuleNotFoundError as exc:
    if exc.name not in {f"{__name__}.engine.{name}" for name in _EXTENSIONS}:
        raise
    raise _missing_extensions_error(exc) from exc

__all__ = [
    "DL85Classifier",
    "DL85Cluster",
    "DL85Predictor",
    "DL85Regressor",
    "LeafObjective",
    "export_graphviz",
    "export_text",
    "shallowest_perfect_tree",
]
