"""Reports built only from a study's stored records.

``report.md`` and a self-contained ``report.html`` (figures embedded, tables
sortable) are written next to the figures (PNG and SVG), ``results.csv`` and
``results.parquet`` in ``<output>/<study>/``. Each protocol gets its own
section (:func:`protocol_section`), which
:func:`odtstudy.study.report._compare.compare_studies` reuses to put two studies
side by side. The jobs are split: cells and completeness (``_records``,
``_solver_tree``), rank statistics (``_stats``), proofs of exact methods
(``_proofs``), their speed against a reference (``_speed``), run status
(``_status``), tables (``_tables``), anytime traces (``_anytime``),
cross-checks (``_checks``), a quantile family against its single fits
(``_quantile_family``), figures (``_figures``) and rendering
(``_document``).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pandas as pd

from odtstudy.study._tuning import tuned_text
from odtstudy.study.report import _figures as figures
from odtstudy.study.report import _tables as tables
from odtstudy.study.report._anytime import anytime_curves, primal_integrals
from odtstudy.study.report._checks import (
    below_optimum,
    consistency_violations,
    heuristic_gaps,
    with_problem,
)
from odtstudy.study.report._document import Document, markdown_table
from odtstudy.study.report._proofs import (
    PROOF_RULE,
    PUBLISHED_RULE,
    REGRESSION_PROOF_RULE,
    proof_table,
    published_table,
)
from odtstudy.study.report._provenance_text import provenance_text
from odtstudy.study.report._quantile_family import quantile_family_section
from odtstudy.study.report._records import (
    CELL_RULE,
    TEST_FILE_CELL_RULE,
    StudyRecords,
    complete_cells,
)
from odtstudy.study.report._regression import REGRESSION, RegressionRecords, study_task
from odtstudy.study.report._regression_report import consistency_count, error_tables
from odtstudy.study.report._speed import (
    MIN_UNITS,
    SPEED_RULE,
    assign_references,
    speed_table,
    startup_methods,
)
from odtstudy.study.report._stats import (
    rank_test,
    rank_verdict,
    score_matrix,
    win_tie_loss,
)
from odtstudy.study.report._status import STATUS_RULE, not_own_reasons, status_table
from odtstudy.study.report._tiers import TIER_RULE, tier_groups
from odtstudy.study.results import ResultsStore

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

_STATS_RULE = (
    "Per depth, each dataset ranks the methods by {measure} (the "
    "mean over its test folds; 1 = best, ties share the average rank). The "
    "Friedman test (scipy) asks whether the average ranks differ; when it "
    "rejects at α = 0.05, the Nemenyi post-hoc test (scikit-posthocs) calls "
    "two methods different when their average ranks differ by more than the "
    "critical difference CD. No test is run, and no CD diagram drawn, with "
    "fewer than 3 methods, with 10 datasets or fewer (the Friedman χ² "
    "p-value is not reliable there) or when CD ≥ k − 1 (no two average ranks "
    "can differ by more). Only complete cells count: a method complete on "
    "fewer than half the datasets is left out, then every dataset where a "
    "remaining method's cell is incomplete is dropped. In a CD diagram, "
    "methods joined by a bar are not significantly different."
)
STATS_RULE = _STATS_RULE.format(measure="held-out accuracy")
REGRESSION_STATS_RULE = _STATS_RULE.format(
    measure="held-out mean squared error, lower is better"
)


def _split_text(frame: pd.DataFrame, protocol: dict, regression: bool) -> tuple:
    """How the runs chose their test rows: folds or all rows, and a sentence
    naming the datasets tested on a held-out test file ("" if none)."""
    folds = protocol["folds"]
    if folds > 1:
        split = f"{folds}-fold CV" if regression else f"{folds}-fold stratified CV"
    else:
        same = (
            "error = training error" if regression else "accuracy = training accuracy"
        )
        split = f"fitted on all rows (test {same})"
    files = protocol.get("held_out_files", {})
    recorded = set(frame["dataset"])
    held_out = [
        f"{name}: fitted on the {entry['train_rows']} rows of "
        f"{Path(entry['train']).name}, tested on the {entry['test_rows']} rows "
        f"of {Path(entry['test']).name}"
        for name, entry in sorted(files.items())
        if name in recorded
    ]
    if not held_out:
        return split, ""
    sentence = f" Held-out test files, no folds: {'; '.join(held_out)}."
    if recorded <= set(files):
        return "every dataset tested on its held-out test file", sentence
    return f"{split} for the datasets without a test file", sentence


def _protocol_text(frame: pd.DataFrame, regression: bool = False) -> str:
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    split, held_out = _split_text(frame, protocol, regression)
    memory = protocol["memory_limit_mb"]
    limits = sorted({m["time_limit"] for m in protocol["methods"].values()})
    thresholds = protocol["max_thresholds"]
    binarised = (
        "at every midpoint"
        if thresholds in (None, "all")
        else f"with at most {thresholds} thresholds per feature"
    )
    return (
        f"Protocol `{frame['protocol_id'].iloc[0]}`: {protocol['scale']} scale, "
        f"{split}, seeds {protocol['seeds']}, time limit "
        f"{', '.join(f'{t:g}' for t in limits)} s per fit (+ grace "
        f"{protocol['grace_s']:g} s before the hard kill), memory limit "
        f"{f'{memory:g} MB' if memory else 'none'}, numeric data binarised "
        f"{binarised} for 0/1 learners.{held_out} {len(frame)} runs recorded; "
        f"{frame['dataset'].nunique()} datasets, {frame['method'].nunique()} "
        f"methods, depths {sorted(int(d) for d in frame['depth'].unique())}. "
        + provenance_text(frame, protocol)
    )


def _method_parameters(records: StudyRecords) -> pd.DataFrame:
    rows = []
    for label in records.method_order:
        spec = records.methods.get(label, {})
        params = spec.get("params", {})
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"
        if spec.get("tune"):
            shown += f"; {tuned_text(spec['tune'])}"
        rows.append(
            {
                "method": label,
                "learner": spec.get("method", label),
                "exact": "yes" if records.is_exact(label) else "no",
                **(
                    {"objective family": records.families[label]}
                    if isinstance(records, RegressionRecords)
                    else {}
                ),
                "time limit (s)": f"{records.time_limit(label):g}",
                "parameters": shown,
            }
        )
    return pd.DataFrame(rows)


def _rank_tests(records: StudyRecords) -> dict:
    """depth -> RankTest on held-out accuracy, or test MSE on regression
    records (none when a study fits on all rows: training accuracy is not
    ranked)."""
    if not records.held_out:
        return {}
    column, higher = (
        ("test_mse", False)
        if isinstance(records, RegressionRecords)
        else ("test_acc", True)
    )
    cells = records.cells
    tests = {}
    for depth in records.depths:
        part = cells[cells["depth"] == depth]
        present = [m for m in records.method_order if m in set(part["method"])]
        if len(present) < 2:
            continue
        matrix, left_out, dropped = score_matrix(part, column, present)
        tests[depth] = rank_test(
            matrix, higher, column, left_out=left_out, dropped=dropped
        )
    return tests


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name))


def _consistency(
    doc: Document, frame: pd.DataFrame, gaps: pd.DataFrame, regression=False
) -> None:
    doc.heading("Consistency of exact methods")
    violations = consistency_violations(frame)
    below = gaps[below_optimum(gaps)]
    if regression:
        consistency_count(doc, frame, len(violations))
    if violations.empty and below.empty:
        doc.text(
            "OK: every pair of methods that proved optimality on the same fold, "
            "data and objective family reports the same objective, and no "
            "method reports a better training objective than a proven optimum."
        )
    if not violations.empty:
        doc.text(
            "DISAGREEMENT: exact methods proved different optima on these runs "
            "(disagreements between two different tools first).",
            alert=True,
        )
        doc.table(violations)
    if not below.empty:
        doc.text(
            "BELOW THE PROVEN OPTIMUM: these runs report a training "
            "objective better than a proven optimum.",
            alert=True,
        )
        doc.table(below)


def _statistics(doc, records, tests, folder, prefix) -> None:
    doc.heading("Statistics: ranks, Friedman and Nemenyi across datasets")
    if not tests:
        doc.text(_no_ranks_note(records))
        return
    regression = isinstance(records, RegressionRecords)
    doc.text(REGRESSION_STATS_RULE if regression else STATS_RULE)
    accuracy = records.error_heading if regression else records.accuracy_heading
    for depth, test in tests.items():
        doc.heading(f"Depth {depth}", 3)
        doc.text(rank_verdict(test, depth, accuracy))
        if not test.tested:
            continue
        doc.figure(
            figures.cd_figure(
                test,
                folder,
                f"{prefix}cd-{test.measure}-d{depth}",
                f"{accuracy}, depth {depth}",
            ),
            f"Critical-difference diagram, {accuracy}, depth {depth}",
        )
        doc.begin_details(
            f"Wins/ties/losses of each row method against each column "
            f"method over {test.n_datasets} datasets ({accuracy})"
        )
        doc.table(win_tie_loss(test.scores, not regression).reset_index(names="method"))
        doc.end_details()


def _fits_on_all_rows(records: StudyRecords) -> str:
    if records.test_file_datasets:
        return "the study fits its datasets without a test file on all rows"
    return "the study fits on all rows"


def _no_ranks_note(records: StudyRecords) -> str:
    fits = _fits_on_all_rows(records)
    if isinstance(records, RegressionRecords):
        return (
            f"No ranks: {fits}, so there is no held-out "
            "error; the training error is not ranked (exact methods of one "
            "objective family reach the same optimum when they prove it). See "
            "the proofs of exact methods and the gaps to the proven optimum."
        )
    return (
        f"No ranks: {fits}, so there is no held-out "
        "accuracy; training accuracy is not ranked (exact methods of one "
        "objective family reach the same optimum when they prove it). See "
        "the proofs of exact methods and the gaps to the proven optimum."
    )


def _exact_methods(doc, records, reference) -> None:
    """Proofs per depth, and the speed of each exact method against
    ``reference``, or against the study's other DL8.5 method it shares
    instances with (:func:`~odtstudy.study.report._speed.assign_references`)."""
    exact = records.exact_methods
    if not exact:
        return
    doc.heading("Exact methods: proofs, time to a proof, gap at the limit")
    regression = isinstance(records, RegressionRecords)
    doc.text(REGRESSION_PROOF_RULE if regression else PROOF_RULE)
    groups = tier_groups(records.frame)
    if groups:
        doc.text(TIER_RULE)
        doc.table(_tier_proofs(records, groups))
    else:
        doc.table(proof_table(records))
    _published_optima(doc, records)
    if reference not in exact or len(exact) < 2:
        return
    references = [reference, *(m for m in records.speed_references if m != reference)]
    startup = startup_methods(records.frame)
    shown: set = set()
    for label, part in groups or [("", records.frame)]:
        _speed_of_group(doc, records.subset(part), references, startup, label, shown)


def _tier_proofs(records, groups) -> pd.DataFrame:
    """The proof table of each tier and depth, one block of rows each."""
    blocks = []
    for label, part in groups:
        table = proof_table(records.subset(part))
        table.insert(0, "tier", part["tier"].iloc[0])
        blocks.append(table)
    return pd.concat(blocks, ignore_index=True)


def _speed_of_group(doc, records, references, startup, label, shown) -> None:
    """Speed tables of the exact methods of ``records`` (a tier and depth
    when ``label`` names one) against their references; ``shown``: the
    references whose rule is already in the report."""
    exact = records.exact_methods
    assigned, unpaired = assign_references(records.frame, exact, references)
    for ref, methods in assigned.items():
        _speed_against(doc, records, ref, [ref, *methods], startup, label, shown)
    for method in unpaired:
        refs = ", ".join(r for r in references if r != method)
        doc.text(
            f"Not timed against a reference{f' ({label})' if label else ''}: "
            f"{method} (no run of the same problem in common with {refs})."
        )


def _published_optima(doc, records) -> None:
    table, sources = published_table(records)
    if table.empty:
        return
    doc.heading("Published optima", 3)
    doc.text(PUBLISHED_RULE)
    doc.table(table)
    doc.text(f"Source: {'; '.join(sources)}.")


def _speed_against(
    doc, records, reference, methods, startup, label="", shown=None
) -> None:
    table, not_compared = speed_table(records.frame, methods, reference, records.depths)
    if table.empty:
        return
    doc.heading(f"Speed against {reference}" + (f": {label}" if label else ""), 3)
    if shown is None or reference not in shown:
        doc.text(SPEED_RULE.format(reference=reference))
    if shown is not None:
        shown.add(reference)
    if startup:
        table["method"] = [m + (" †" if m in startup else "") for m in table["method"]]
    doc.table(table)
    notes = [
        f"† {m}: its fit time includes an interpreter start-up (median "
        f"{seconds:.2g} s per fit)."
        for m, seconds in startup.items()
        if m in methods
    ]
    for reason, names in not_compared.items():
        notes.append(f"Not compared ({reason} {reference}'s): {', '.join(names)}.")
    for note in notes:
        doc.text(note)


def _cost(doc, records, style, folder, prefix) -> None:
    frame = records.frame
    exact = records.exact_methods
    doc.heading("Cost: time and memory")
    if exact:
        doc.figure(
            figures.cactus_figure(
                frame, exact, style, folder, prefix + "cactus", tier_groups(frame)
            ),
            "Cactus plot: runs proven optimal within a fit time, exact methods, "
            "per depth (a tiered study: per tier and depth); dotted: all runs, "
            "which a method reaches only if it proves every one in its limit",
        )
        doc.figure(
            figures.profile_figure(
                frame, exact, style, folder, prefix + "performance_profile"
            ),
            "Performance profile (Dolan–Moré) of the time to a proof: share of "
            "runs a method proves within τ times the fastest proof (times "
            "under 10 ms count as 10 ms)",
        )
    doc.figure(
        figures.cost_figure(
            frame, records.method_order, style, folder, prefix + "cost_vs_depth"
        ),
        "Median fit time and fit memory per method vs depth (bars: "
        "interquartile range; a time-out counts at its limit, × with the count)",
    )


def _anytime(doc, records, style, folder, prefix) -> None:
    exact = records.exact_methods
    curves = anytime_curves(records.frame, exact)
    if curves.empty:
        return
    doc.heading("Anytime behaviour of exact methods")
    traced = sorted(set(curves["method"]), key=exact.index)
    missing = [m for m in exact if m not in traced]
    horizons = {m: records.time_limit(m) for m in exact}
    integrals = primal_integrals(records.frame, curves, horizons)
    doc.text(
        "Primal integral (Berthold 2013): the integral over the time limit of the "
        "relative gap of the incumbent to the best objective any method reached "
        "on the same run (1 before the first incumbent), in seconds; lower is "
        "better. Methods traced: "
        + ", ".join(traced)
        + (f"; no trace recorded by {', '.join(missing)}." if missing else ".")
    )
    doc.table(tables.primal_integral_table(integrals, records))
    first = curves[
        (curves["fold"] == curves["fold"].min())
        & (curves["seed"] == curves["seed"].min())
    ]
    horizon = max(horizons.values())
    names = []
    for (dataset, depth), part in first.groupby(["dataset", "depth"]):
        name = figures.anytime_figure(
            part,
            exact,
            style,
            folder,
            f"{prefix}anytime-{_safe(dataset)}-d{int(depth)}",
            f"{dataset}, depth {int(depth)}",
            horizon,
        )
        names.append((name, f"Anytime: {dataset}, depth {int(depth)} (first fold)"))
    doc.begin_details(
        f"{len(names)} anytime figures (one per dataset and depth, first fold): "
        "incumbent solid, lower bound dashed, log time"
    )
    for name, caption in names:
        doc.figure(name, caption)
    doc.end_details()


def _gaps(doc, records, gaps, style, folder, prefix) -> None:
    if gaps.empty:
        return
    doc.heading("Heuristics vs the proven optimum")
    relative = "relative_gap" in gaps
    doc.text(
        "Training objective minus the optimum an exact method proved on the "
        "same fold and data, for the runs that did not prove optimality "
        "(heuristics, and exact methods stopped by their limit); "
        + (
            "on the same objective family only (a penalised family is never "
            "compared with an unpenalised one); % of the optimum = "
            "100 × gap / proven optimum."
            if relative
            else "accuracy points = 100 × gap / training rows."
        )
    )
    doc.table(tables.gap_table(gaps, records))
    methods = [m for m in records.method_order if m in set(gaps["method"])]
    unit = "% of the proven optimum" if relative else "training accuracy points"
    doc.figure(
        figures.gap_figure(gaps, methods, style, folder, prefix + "optimality_gap"),
        f"Mean gap to the proven optimum per dataset ({unit})",
    )


def _run_status(doc: Document, frame: pd.DataFrame) -> None:
    doc.heading("Run status")
    doc.text(STATUS_RULE)
    doc.table(status_table(frame))
    reasons = not_own_reasons(frame)
    if reasons:
        doc.text(
            "Runs that returned a tree not their own: "
            + "; ".join(
                f"{method}: "
                + ", ".join(f"{why} ({n})" for why, n in sorted(counts.items()))
                for method, counts in reasons.items()
            )
            + ". Their cells are incomplete: never ranked, never in a gap table."
        )


def _study_records(frame) -> StudyRecords:
    """The records of one protocol, as :class:`RegressionRecords` when they
    are a regression study's (a mix of tasks is refused)."""
    records = (
        frame if isinstance(frame, StudyRecords) else StudyRecords.from_frame(frame)
    )
    if study_task(records.frame) != REGRESSION or isinstance(
        records, RegressionRecords
    ):
        return records
    return RegressionRecords(records.frame, records.expected, records.methods)


def _objective_note(frame: pd.DataFrame, exact: list, regression: bool) -> str:
    note = (
        "Training objective of the exact methods (the loss summed over the "
        "training rows, with the leaf penalty of a penalised family; mean over "
        "folds and seeds; `*`: not proven optimal in every run)."
        if regression
        else "Training objective of the exact methods (mean over folds and "
        "seeds; `*`: not proven optimal in every run)."
    )
    exact_runs = with_problem(frame[frame["method"].isin(exact)])
    if (exact_runs.groupby("dataset")["problem"].nunique() > 1).any():
        note += (
            " On numeric datasets a 0/1 learner given at most k thresholds per "
            "feature sees fewer splits than a numeric one (or one given every "
            "midpoint): their optima differ."
        )
    return note


def _accuracy_tables(doc, records, style, folder, prefix, objective_note) -> None:
    doc.heading(records.per_depth_heading("accuracy"))
    doc.text(
        "Mean ± std over folds and seeds; the best complete cell of a row in "
        "bold; (brackets): incomplete cell, never bolded or ranked; —: no tree "
        "of its own."
    )
    for depth in records.depths:
        doc.heading(f"Depth {depth}", 3)
        doc.table(tables.accuracy_table(records, depth))
        objectives = tables.objective_table(records, depth)
        if not objectives.empty:
            doc.text(objective_note)
            doc.table(objectives)
    doc.figure(
        figures.accuracy_figure(
            records.cells,
            records.method_order,
            style,
            folder,
            prefix + "test_accuracy",
            label=records.figure_label("accuracy"),
        ),
        f"{records.accuracy_heading} vs depth per dataset (complete cells; bars: std)",
    )
    if len(records.datasets) > 1:
        doc.figure(
            figures.accuracy_over_datasets_figure(
                records.cells,
                records.method_order,
                style,
                folder,
                prefix + "test_accuracy_over_datasets",
                label="test accuracy" if records.held_out else "training accuracy",
            ),
            f"{records.accuracy_heading} vs depth over datasets (the datasets "
            "where every method has a complete cell; bars: 95 % bootstrap "
            f"interval over them, none below {MIN_UNITS} datasets)",
        )


def protocol_section(
    doc: Document, frame: pd.DataFrame, folder: Path, prefix: str = "", reference=None
) -> None:
    """The whole report of one protocol's records (or of a comparison).

    Summary (method × depth, one verdict per depth on held-out accuracy),
    consistency of exact methods, their proofs and speed against
    ``reference``, a fit of several quantiles against one fit per quantile
    (when the records hold both), per-depth dataset × method tables, rank
    statistics with CD diagrams (only where a test can separate methods),
    cost (cactus plot, performance profile, time and memory vs depth),
    anytime traces with primal integrals, gaps to the proven optimum, run
    status, failed runs and every cell.

    Records of a regression study (``task == "regression"``) rank test MSE
    (lower is better), show test MSE / MAE / R² (and the pinball loss of
    quantile methods), compare exact methods within one objective family,
    and give gaps in percent of the proven optimum; a mix of tasks is
    refused with a ``ValueError``.
    """
    records = _study_records(frame)
    regression = isinstance(records, RegressionRecords)
    frame = records.frame
    style = figures.MethodStyle(records.method_order)
    exact = records.exact_methods
    if reference is None:
        reference = (records.speed_references or exact or [None])[0]
    if frame["protocol_id"].nunique() == 1:
        doc.text(_protocol_text(frame, regression))
    doc.table(_method_parameters(records))
    gaps = heuristic_gaps(frame)
    if not consistency_violations(frame).empty or below_optimum(gaps).any():
        doc.text(
            "Exact methods disagree on a proven optimum: see the consistency "
            "section below before reading any number.",
            alert=True,
        )
    tests = _rank_tests(records)

    doc.heading("Summary")
    if not tests:
        doc.text(_no_ranks_note(records))
    heading = records.error_heading if regression else records.accuracy_heading
    for depth, test in tests.items():
        doc.text(rank_verdict(test, depth, heading))
    measure = {"column": "test_mse", "heading": heading, "fmt": ".4g"}
    doc.table(tables.summary_table(records, tests, **(measure if regression else {})))
    if records.tuned_methods:
        doc.text(
            "Tuned methods (" + ", ".join(records.tuned_methods) + "): the fit "
            "time, memory, proof and anytime trace are those of the refit on "
            "the whole training fold with the chosen parameters; the tuning "
            "time is that of the inner fits before it. A tuned refit solves "
            "the problem of its chosen parameters, so it is compared (speed, "
            "consistency, anytime) only with runs tuned to the same choice, "
            "never with an untuned run at the nominal depth."
        )

    _consistency(doc, frame, gaps, regression)
    _exact_methods(doc, records, reference)
    quantile_family_section(doc, records)
    note = _objective_note(frame, exact, regression)
    if regression:
        error_tables(doc, records, style, folder, prefix, note)
    else:
        _accuracy_tables(doc, records, style, folder, prefix, note)

    _statistics(doc, records, tests, folder, prefix)
    _cost(doc, records, style, folder, prefix)
    _anytime(doc, records, style, folder, prefix)
    _gaps(doc, records, gaps, style, folder, prefix)

    _run_status(doc, frame)
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        doc.heading("Failed runs")
        shown = failed[["dataset", "method", "depth", "fold", "status", "error"]]
        doc.table(shown.head(50))
    doc.heading("All cells")
    doc.text(
        CELL_RULE + (f" {TEST_FILE_CELL_RULE}" if records.test_file_datasets else "")
    )
    doc.begin_details(f"{len(records.cells)} cells (dataset × depth × method)")
    means = {"means": tables.ERROR_CELL_MEANS} if regression else {}
    doc.table(tables.cells_table(records, **means))
    doc.end_details()


def _protocols_newest_first(frame: pd.DataFrame) -> list:
    newest = frame.groupby("protocol_id")["utc"].max().sort_values(ascending=False)
    return list(newest.index)


def newest_records(folder: Path) -> StudyRecords:
    """The records of the newest protocol in ``folder/results.jsonl``.

    Parameters
    ----------
    folder : Path
        A study's folder (a reference report's, say).

    Returns
    -------
    StudyRecords

    Raises
    ------
    ValueError
        When the folder holds no record.
    """
    frame = ResultsStore(folder).load()
    if frame.empty:
        raise ValueError(f"no records in {folder}/results.jsonl")
    newest = _protocols_newest_first(frame)[0]
    frame = frame[frame["protocol_id"] == newest].reset_index(drop=True)
    return StudyRecords.from_frame(frame)


def _environment(doc: Document, frame: pd.DataFrame) -> None:
    versions = frame["versions"].dropna()
    if not versions.empty:
        doc.heading("Environment")
        hosts = ", ".join(sorted(frame["host"].dropna().unique()))
        pairs = json.loads(versions.iloc[-1]).items()
        doc.text(f"Host(s): {hosts}. " + ", ".join(f"{k} {v}" for k, v in pairs))


def _preface(doc, sections, frame, protocol_id, scale) -> None:
    """The opening sections, each from the newest protocol's records; one that
    raises is reported in its place, and the others are still written."""
    part = frame[frame["protocol_id"] == protocol_id]
    for title, write in sections:
        _guarded(doc, title, _write_section, write, doc, part, scale)


def _write_section(write, doc, part, scale) -> None:
    write(doc, StudyRecords.from_frame(part), scale)


def _guarded(doc: Document, what: str, build, *args) -> None:
    """Run ``build(*args)``; when it raises, say so in the report and go on.

    The records are never at risk (they are written before any report), so a
    report that cannot draw one section still shows every other one and the
    failure, instead of leaving no report at all.
    """
    try:
        build(*args)
    except Exception as exc:
        message = (
            f"The section for {what} could not be built: "
            f"{type(exc).__name__}: {exc}. The records in results.jsonl are "
            "intact; please report this with the records attached."
        )
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        doc.text(message, alert=True)


def make_report(
    study: str,
    output_dir="reports",
    scale: str = "default",
    reference=None,
    preface=(),
) -> Path:
    """Write ``report.md`` and ``report.html`` for a study from its records.

    Runs of different protocols (see :func:`odtstudy.study.protocol_of`) are
    never pooled: each protocol gets its own section, newest first, and the
    top of the report says how many there are; the ``preface`` sections come
    before them. Each protocol's section is described in
    :func:`protocol_section`. ``results.csv`` and
    ``results.parquet`` (every record, flat) are written beside it.

    Parameters
    ----------
    study : str
    output_dir : path, default="reports"
    scale : str, default="default"
    reference : str, default=None
        Exact method the others' fit times are compared with (default
        ``dl85`` when present, else the first exact method).
    preface : sequence of (str, callable), default=()
        Sections that open the report, as ``(title, write)`` pairs:
        ``write(doc, records, scale)`` writes into the report's
        :class:`~odtstudy.study.report._document.Document` from the newest
        protocol's :class:`~odtstudy.study.report._records.StudyRecords`. A section
        that raises is replaced by an alert naming ``title``. A reproduction
        opens its report this way (:func:`odtstudy.reproduce.paper_preface`).

    Returns
    -------
    Path
        The Markdown report.
    """
    from odtstudy.study.runner import study_folder

    folder = study_folder(output_dir, study, scale)
    store = ResultsStore(folder)
    frame = store.load()
    if frame.empty:
        raise ValueError(f"no results recorded for study {study!r} in {folder}")
    study_task(frame)  # a mix of classification and regression runs: refused
    store.export_csv()
    store.export_parquet()
    doc = Document(
        f"Study {study}" + ("" if scale == "default" else f" ({scale})"), folder
    )
    if store.damaged_lines:
        doc.text(
            f"{len(store.damaged_lines)} damaged record(s) in {store.path.name} "
            f"(lines {store.damaged_lines[:10]}) were skipped; running the study "
            "again re-runs them.",
            alert=True,
        )
    protocols = _protocols_newest_first(frame)
    _preface(doc, preface, frame, protocols[0], scale)
    if len(protocols) > 1:
        doc.text(
            f"This folder holds runs of {len(protocols)} different protocols "
            f"({', '.join(protocols)}). Their numbers are never pooled: each "
            "protocol is reported in its own section below, newest first.",
            alert=True,
        )
    for protocol_id in protocols:
        part = frame[frame["protocol_id"] == protocol_id]
        if len(protocols) > 1:
            doc.heading(f"Protocol {protocol_id}", 1)
        prefix = f"{protocol_id}-" if len(protocols) > 1 else ""
        _guarded(
            doc,
            f"protocol {protocol_id}",
            protocol_section,
            doc,
            part,
            folder,
            prefix,
            reference,
        )
    _environment(doc, frame)
    path = folder / "report.md"
    path.write_text(doc.markdown())
    (folder / "report.html").write_text(doc.html())
    return path
