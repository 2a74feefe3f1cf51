"""The README's figures: the studies' (:mod:`odtstudy.study.readme_figures`)
and the reproductions' verdicts, from the committed reference records.

One command rewrites them all (``--check`` changes nothing and exits with 1
when a region differs from its records)::

    python -m odtstudy.reproduce.readme_figures [--check]
        [--readme FILE ...] [--reports docs/reference-reports]

(``--readme``: by default every file with a region, ``READMES`` of
:mod:`odtstudy.study.readme_figures`.)
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from odtstudy.reproduce._claims import VERDICTS, legend_text
from odtstudy.reproduce._published import list_reproductions, load_published
from odtstudy.reproduce._report import evaluate_claims
from odtstudy.study import readme_figures as study_figures
from odtstudy.study.readme_figures import newest_records

__all__ = ["figures", "main"]


#: The verdicts whose claims the README names (the claims not reproduced,
#: for whatever reason).
NAMED = ("inconclusive", "not reproduced", "not comparable")


def _verdicts(name: str, records) -> str:
    """One cell: a reproduction's count of each of the five verdicts (zeros
    included, so the rows compare), the claims not reproduced by name, and
    its implementation checks."""
    _, results, error = evaluate_claims(name, records, load_published(name))
    if error:
        return f"the claims module failed: {error}"
    claims = [r for r in results if not r.check]
    counts = [f"{sum(r.verdict == v for r in claims)} {v}" for v in VERDICTS]
    text = f"{len(claims)} claims: {', '.join(counts)}"
    for verdict in NAMED:
        ids = [r.claim for r in claims if r.verdict == verdict]
        if ids:
            text += f"; {verdict}: {', '.join(f'`{i}`' for i in ids)}"
    checks = [r for r in results if r.check]
    if checks:
        passed = sum(r.verdict == "pass" for r in checks)
        text += f"; checks: {passed} of {len(checks)} pass"
    return text


@functools.lru_cache(maxsize=None)
def _folder_verdicts(folder: Path) -> str | None:
    """The verdicts cell of a report folder (None: not a reproduction)."""
    if folder.name not in list_reproductions():
        return None
    return _verdicts(folder.name, newest_records(folder))


def _reproductions(reports: Path) -> str:
    """The README's reproductions table: one row per committed report."""
    lines = [
        "| reproduction | paper | verdicts at default scale |",
        "|---|---|---|",
    ]
    for name in list_reproductions():
        folder = Path(reports) / name
        if not (folder / "results.jsonl").exists():
            continue
        citation = load_published(name).paper["citation"].replace("|", "/")
        verdicts = _folder_verdicts(folder)
        lines.append(f"| `odtstudy reproduce {name}` | {citation} | {verdicts} |")
    return "\n".join(lines)


def figures(reports: Path) -> dict:
    """Every README figure by region name, from the records under ``reports``."""
    values = study_figures.figures(reports, verdicts=_folder_verdicts)
    values["reproductions"] = _reproductions(Path(reports))
    values["verdict-legend"] = legend_text()
    return values


def main(argv=None) -> int:
    """Rewrite (or ``--check``) every README region from the records."""
    return study_figures.main(argv, make_figures=figures)


if __name__ == "__main__":
    sys.exit(main())
