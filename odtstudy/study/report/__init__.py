"""Study reports: from the records to ``report.md`` / ``report.html``.

:func:`make_report` (in ``_build``) writes the sections in order; each
section's tables and figures come from one module: records and cells
(``_records``, ``_regression``), proofs and speed (``_proofs``, ``_speed``,
``_tiers``), statistics (``_stats``), consistency (``_checks``), anytime
curves (``_anytime``), run status (``_status``), provenance
(``_provenance_text``), the quantile family (``_quantile_family``), figures
and tables (``_figures``, ``_tables``, ``_plotstyle``) and the document itself
(``_document``); ``_compare`` sets two studies side by side.
"""

from odtstudy.study.report._build import (
    CELL_RULE,
    complete_cells,
    consistency_violations,
    heuristic_gaps,
    make_report,
    markdown_table,
    newest_records,
    protocol_section,
)

__all__ = [
    "CELL_RULE",
    "complete_cells",
    "consistency_violations",
    "heuristic_gaps",
    "make_report",
    "markdown_table",
    "newest_records",
    "protocol_section",
]
