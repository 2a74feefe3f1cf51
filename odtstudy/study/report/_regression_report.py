"""The sections of a regression study's report that differ from a
classification report: the consistency count per objective family and the
per-depth tables of test errors.

Exact methods are compared only within one objective family
(``squared-error``, ``absolute-error``, ``pinball@tau``, their
``+leaf-penalty`` variants): a penalised family's objective is in other
units than an unpenalised one's, so its training objective has its own
table. Test MSE is the same measure for every method, so it is ranked across
all of them.
"""

from __future__ import annotations

from pathlib import Path

from odtstudy.study.report import _figures as figures
from odtstudy.study.report import _tables as tables
from odtstudy.study.report._checks import consistency_counts
from odtstudy.study.report._document import Document
from odtstudy.study.report._regression import RELATIVE_TOLERANCE, RegressionRecords

__all__ = ["consistency_count", "error_tables"]

_MSE_FORMAT = ".4g"


def consistency_count(doc: Document, frame, disagreements: int) -> None:
    """One line (runs compared, disagreements) and the count per family."""
    counts = consistency_counts(frame)
    compared = int(counts["runs compared"].sum())
    doc.text(
        f"{compared} run(s) where two or more exact methods of one objective "
        f"family proved an optimum on the same fold and data; {disagreements} "
        "disagreement(s). Two objectives (training losses summed over rows) "
        f"agree when they differ by at most {RELATIVE_TOLERANCE:g} × "
        "max(1, |objective|)."
    )
    if not counts.empty:
        doc.table(counts)


def error_tables(
    doc: Document,
    records: RegressionRecords,
    style,
    folder: Path,
    prefix: str,
    objective_note: str,
) -> None:
    """Per depth: test MSE (datasets × methods), the training objective of
    the exact methods of each objective family, and every test error per
    dataset and method; then the test-MSE figure."""
    doc.heading(records.per_depth_heading("MSE"))
    doc.text(
        "Mean squared error (lower is better), mean ± std over folds and "
        "seeds; the best complete cell of a row in bold; (brackets): "
        "incomplete cell, never bolded or ranked; —: no tree of its own. "
        + objective_note
        + " One objective table per objective family: a penalised family's "
        "objective is in other units than an unpenalised one's."
    )
    exact = records.exact_methods
    families = {}
    for method in exact:
        families.setdefault(records.families[method], []).append(method)
    for depth in records.depths:
        doc.heading(f"Depth {depth}", 3)
        doc.table(
            tables.measure_table(
                records, depth, None, "test_mse", "test_mse_std", False, _MSE_FORMAT
            )
        )
        for family, methods in sorted(families.items()):
            objectives = tables.objective_table(records, depth, methods)
            if objectives.empty:
                continue
            doc.text(f"Training objective, objective family `{family}`:")
            doc.table(objectives)
        doc.begin_details(
            f"Test MSE, MAE, R² (and the pinball loss of quantile methods, at "
            f"their τ) per dataset and method, depth {depth}"
        )
        doc.table(tables.errors_table(records, depth))
        doc.end_details()
    doc.figure(
        figures.mse_figure(
            records.cells,
            records.method_order,
            style,
            folder,
            prefix + "test_mse",
            label=records.figure_label("MSE"),
        ),
        f"{records.error_heading} vs depth per dataset (complete cells; bars: std)",
    )
