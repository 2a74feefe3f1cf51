"""Reproductions of the source papers' claims: ``odtstudy reproduce <name>``.

A reproduction ``<name>`` is one folder, ``odtstudy/reproduce/papers/<name>/``
(:func:`papers_dir`): the study ``study.toml`` (scales ``smoke``,
``default``, ``paper``; found by name once this package is imported), the
published numbers ``published.toml`` (:func:`load_published`) and the claims
module ``claims.py`` (:func:`claims_module`) with
``evaluate(records, published)`` returning one :class:`ClaimResult` per claim.
Its report opens with :func:`paper_section` (:func:`paper_preface` is the
``preface`` of :func:`odtstudy.study.make_report`).
"""

from odtstudy.reproduce._claims import VERDICTS, ClaimResult
from odtstudy.reproduce._published import (
    Published,
    list_reproductions,
    load_published,
    papers_dir,
)
from odtstudy.reproduce._report import (
    PAPER_HEADING,
    claims_module,
    evaluate_claims,
    our_values,
    paper_preface,
    paper_section,
    verdict_table_complete,
    verdict_table_problems,
)
from odtstudy.study import add_config_dir, list_studies

__all__ = [
    "PAPER_HEADING",
    "VERDICTS",
    "ClaimResult",
    "Published",
    "check_reproduction",
    "claims_module",
    "evaluate_claims",
    "list_reproductions",
    "load_published",
    "our_values",
    "paper_preface",
    "paper_section",
    "papers_dir",
    "verdict_table_complete",
    "verdict_table_problems",
]

add_config_dir(papers_dir())


def check_reproduction(name: str) -> None:
    """Raise a ``ValueError`` unless ``name`` is a whole reproduction.

    It needs its published numbers (an unknown name lists the reproductions),
    a study configuration of the same name and a claims module.
    """
    load_published(name)
    if name not in list_studies():
        raise ValueError(
            f"reproduction {name!r} has no study configuration: write "
            f"odtstudy/reproduce/papers/{name}/study.toml"
        )
    claims_module(name)
