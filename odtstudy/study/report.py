"""Reports built only from a study's stored records.

``report.md`` and a self-contained ``report.html`` (figures embedded, tables
sortable) are written next to the figures (PNG and SVG), ``results.csv`` and
``results.parquet`` in ``<output>/<study>/``. Each protocol gets its own
section (:func:`protocol_section`); :func:`compare_studies` puts two studies
side by side. The jobs are split: cells and completeness (``_records``),
rank statistics (``_stats``), tables (``_tables``), anytime traces
(``_anytime``), cross-checks (``_checks``), figures (``_figures``) and
rendering (``_document``).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from odtstudy.study import _figures as figures
from odtstudy.study import _tables as tables
from odtstudy.study._anytime import anytime_curves, primal_integrals
from odtstudy.study._checks import consistency_violations, heuristic_gaps, with_problem
from odtstudy.study._compare import compare_studies
from odtstudy.study._document import Document, markdown_table
from odtstudy.study._provenance_text import provenance_text
from odtstudy.study._records import CELL_RULE, StudyRecords, complete_cells
from odtstudy.study._stats import rank_test, score_matrix, win_tie_loss
from odtstudy.study.results import ResultsStore

__all__ = [
    "CELL_RULE",
    "compare_studies",
    "complete_cells",
    "consistency_violations",
    "heuristic_gaps",
    "make_report",
    "markdown_table",
    "protocol_section",
]

STATS_RULE = (
    "Per depth, each dataset ranks the methods by mean test accuracy (the "
    "training accuracy when a study fits on all rows; 1 = best, ties share "
    "the average rank). The Friedman test (scipy) asks "
    "whether the average ranks differ; when it rejects at α = 0.05, the "
    "Nemenyi post-hoc test (scikit-posthocs) calls two methods different "
    "when their average ranks differ by more than the critical difference "
    "CD. Only complete cells count: a method complete on fewer than half the "
    "datasets is left out, then every dataset where a remaining method's "
    "cell is incomplete is dropped. In a CD diagram, methods joined by a "
    "bar are not significantly different."
)


def _protocol_text(frame: pd.DataFrame) -> str:
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    folds = protocol["folds"]
    split = (
        f"{folds}-fold stratified CV"
        if folds > 1
        else "fitted on all rows (test accuracy = training accuracy)"
    )
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
        f"{binarised} for 0/1 learners. {len(frame)} runs recorded; "
        f"{frame['dataset'].nunique()} datasets, {frame['method'].nunique()} "
        f"methods, depths {sorted(int(d) for d in frame['depth'].unique())}. "
        + provenance_text(frame, protocol)
    )


def _method_parameters(records: StudyRecords) -> pd.DataFrame:
    rows = []
    for label in records.method_order:
        spec = records.methods.get(label, {})
        params = spec.get("params", {})
        rows.append(
            {
                "method": label,
                "learner": spec.get("method", label),
                "exact": "yes" if records.is_exact(label) else "no",
                "time limit (s)": f"{records.time_limit(label):g}",
                "parameters": ", ".join(f"{k}={v!r}" for k, v in params.items())
                or "defaults",
            }
        )
    return pd.DataFrame(rows)


def _coarse_seconds(times: pd.Series) -> pd.Series:
    """Times at two significant digits, 10 ms at least: closer ones tie."""
    times = np.maximum(times.astype(float), 0.01)
    digits = np.floor(np.log10(times))
    return np.round(times / 10**digits, 1) * 10**digits


def _rank_tests(records: StudyRecords, measure: str) -> dict:
    """depth -> RankTest on test accuracy (all methods) or time to a proof
    (exact methods; a cell not proven in every run ranks after every proof)."""
    cells = records.cells.assign(
        time_to_proof=_coarse_seconds(records.cells["fit_time"]).where(
            records.cells["all_proven"], np.inf
        )
    )
    if measure == "test_acc":
        methods, higher = records.method_order, True
    else:
        methods, higher = records.exact_methods, False
    tests = {}
    for depth in records.depths:
        part = cells[cells["depth"] == depth]
        present = [m for m in methods if m in set(part["method"])]
        if len(present) < 2:
            continue
        matrix, left_out, dropped = score_matrix(part, measure, present)
        tests[depth] = rank_test(
            matrix, higher, measure, left_out=left_out, dropped=dropped
        )
    return tests


def verdict(test, depth: int, what: str) -> str:
    """One sentence: best average rank, Friedman p and the significant pairs."""
    head = f"**Depth {depth}, {what}**: "
    notes = []
    if test.dropped:
        notes.append(
            f"{len(test.dropped)} dataset(s) dropped for incomplete or missing cells"
        )
    if test.left_out:
        notes.append(
            "left out: " + ", ".join(f"{m} ({why})" for m, why in test.left_out.items())
        )
    note = f" ({'; '.join(notes)})" if notes else ""
    if not test.tested:
        return (
            head + f"not tested: {test.n_datasets} dataset(s) with every compared "
            f"method complete and {len(test.ranks)} method(s) (the Friedman test "
            f"needs at least 3 of each){note}."
        )
    top = test.ranks.iloc[0]
    best = list(test.ranks.index[test.ranks - top < 1e-9])
    who = best[0] if len(best) == 1 else f"shared by {', '.join(best)}"
    text = (
        head + f"best average rank {top:.2f} ({who}) over "
        f"{test.n_datasets} datasets{note}; Friedman p = {test.pvalue:.3g}"
    )
    if test.pvalue >= test.alpha:
        return text + ": no significant difference between the methods."
    pairs = test.significant_pairs()
    if not pairs:
        return (
            text
            + f"; Nemenyi (CD = {test.cd:.2f}) finds no pair significantly different."
        )
    better, worse = {}, {}
    for a, b in pairs:
        better.setdefault(a, []).append(b)
        worse.setdefault(b, []).append(a)
    if len(worse) < len(better):
        listed = "; ".join(f"{b} worse than {', '.join(a)}" for b, a in worse.items())
    else:
        listed = "; ".join(f"{a} better than {', '.join(b)}" for a, b in better.items())
    return text + f"; Nemenyi (CD = {test.cd:.2f}): {listed}."


def _accuracy_label(records: StudyRecords, short: bool = False) -> str:
    if (records.frame["n_folds"] == 1).all():
        if short:
            return "Training accuracy"
        return "accuracy (fitted on all rows: training accuracy)"
    return "Test accuracy" if short else "test accuracy"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name))


def _consistency(doc: Document, frame: pd.DataFrame, gaps: pd.DataFrame) -> None:
    doc.heading("Consistency of exact methods")
    violations = consistency_violations(frame)
    below = gaps[gaps["gap"] < -1e-6]
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


def _statistics(doc, records, tests, time_tests, style, folder, prefix) -> None:
    doc.heading("Statistics: ranks, Friedman and Nemenyi across datasets")
    doc.text(STATS_RULE)
    for depth, test in tests.items():
        doc.heading(f"Depth {depth}", 3)
        doc.text(verdict(test, depth, _accuracy_label(records)))
        doc.figure(
            figures.cd_figure(
                test,
                folder,
                f"{prefix}cd-test_acc-d{depth}",
                f"{_accuracy_label(records, short=True)}, depth {depth}",
            ),
            f"Critical-difference diagram, {_accuracy_label(records, True).lower()}, "
            f"depth {depth}",
        )
        if test.n_datasets:
            doc.begin_details(
                f"Wins/ties/losses of each row method against each column "
                f"method over {test.n_datasets} datasets ({_accuracy_label(records)})"
            )
            doc.table(win_tie_loss(test.scores, True).reset_index(names="method"))
            doc.end_details()
    if time_tests:
        doc.heading("Time to a proof (exact methods)", 3)
        doc.text(
            "The same tests on the mean fit time of a cell whose runs were all "
            "proven optimal, at two significant digits and 10 ms at least "
            "(closer times tie); a cell with an unproven run ranks after every "
            "proof (ties among them)."
        )
        for depth, test in time_tests.items():
            doc.text(verdict(test, depth, "time to a proof"))
            doc.figure(
                figures.cd_figure(
                    test,
                    folder,
                    f"{prefix}cd-time-d{depth}",
                    f"Time to proof, depth {depth}",
                ),
                f"Critical-difference diagram, time to a proof, depth {depth}",
            )


def _cost(doc, records, style, folder, prefix, reference) -> None:
    frame = records.frame
    exact = records.exact_methods
    doc.heading("Cost: time and memory")
    if exact:
        doc.figure(
            figures.cactus_figure(frame, exact, style, folder, prefix + "cactus"),
            "Cactus plot: runs proven optimal within a fit time, exact methods "
            "(dotted: all runs)",
        )
        doc.figure(
            figures.profile_figure(
                frame, exact, style, folder, prefix + "performance_profile"
            ),
            "Performance profile (Dolan–Moré) of the time to a proof: share of "
            "runs a method proves within τ times the fastest proof (times "
            "under 10 ms count as 10 ms)",
        )
        if reference in exact:
            ratios = tables.time_ratio_table(records, reference)
            if not ratios.empty:
                doc.text(
                    f"Geometric mean of each exact method's fit time over "
                    f"{reference}'s, on the runs both proved optimal (< 1: faster "
                    f"than {reference})."
                )
                doc.table(ratios)
    doc.figure(
        figures.cost_figure(
            frame, records.method_order, style, folder, prefix + "cost_vs_depth"
        ),
        "Median fit time and fit memory per method vs depth "
        "(bars: interquartile range)",
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
    doc.text(
        "Training objective minus the optimum an exact method proved on the "
        "same fold and data, for the runs that did not prove optimality "
        "(heuristics, and exact methods stopped by their limit); accuracy "
        "points = 100 × gap / training rows."
    )
    doc.table(tables.gap_table(gaps, records))
    methods = [m for m in records.method_order if m in set(gaps["method"])]
    doc.figure(
        figures.gap_figure(gaps, methods, style, folder, prefix + "optimality_gap"),
        "Mean gap to the proven optimum per dataset (training accuracy points)",
    )


def protocol_section(
    doc: Document, frame: pd.DataFrame, folder: Path, prefix: str = "", reference=None
) -> None:
    """The whole report of one protocol's records (or of a comparison).

    Summary (method × depth, one verdict per depth), consistency of exact
    methods, per-depth dataset × method tables, rank statistics with CD
    diagrams, cost (cactus plot, performance profile, time ratios, time and
    memory vs depth), anytime traces with primal integrals, heuristic gaps,
    run status, failed runs and every cell.
    """
    records = (
        frame if isinstance(frame, StudyRecords) else StudyRecords.from_frame(frame)
    )
    frame = records.frame
    style = figures.MethodStyle(records.method_order)
    exact = records.exact_methods
    if reference is None:
        dl85 = [m for m in exact if records.methods.get(m, {}).get("method") == "dl85"]
        reference = (dl85 or exact or [None])[0]
    if frame["protocol_id"].nunique() == 1:
        doc.text(_protocol_text(frame))
    doc.table(_method_parameters(records))
    gaps = heuristic_gaps(frame)
    if not consistency_violations(frame).empty or (gaps["gap"] < -1e-6).any():
        doc.text(
            "Exact methods disagree on a proven optimum: see the consistency "
            "section below before reading any number.",
            alert=True,
        )
    tests = _rank_tests(records, "test_acc")
    time_tests = _rank_tests(records, "time_to_proof") if len(exact) > 1 else {}

    doc.heading("Summary")
    for depth, test in tests.items():
        doc.text(verdict(test, depth, _accuracy_label(records)))
    for depth, test in time_tests.items():
        doc.text(verdict(test, depth, "time to a proof (exact methods)"))
    doc.table(tables.summary_table(records, tests))

    _consistency(doc, frame, gaps)

    doc.heading("Test accuracy per depth")
    doc.text(
        "Mean ± std over folds and seeds; the best complete cell of a row in "
        "bold; (brackets): incomplete cell, never bolded or ranked; —: no tree."
    )
    objective_note = (
        "Training objective of the exact methods (mean over folds and seeds; "
        "`*`: not proven optimal in every run)."
    )
    exact_runs = with_problem(frame[frame["method"].isin(exact)])
    if (exact_runs.groupby("dataset")["problem"].nunique() > 1).any():
        objective_note += (
            " On numeric datasets a 0/1 learner given at most k thresholds per "
            "feature sees fewer splits than a numeric one (or one given every "
            "midpoint): their optima differ."
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
            records.cells, records.method_order, style, folder, prefix + "test_accuracy"
        ),
        "Test accuracy vs depth per dataset (complete cells; bars: std)",
    )

    _statistics(doc, records, tests, time_tests, style, folder, prefix)
    _cost(doc, records, style, folder, prefix, reference)
    _anytime(doc, records, style, folder, prefix)
    _gaps(doc, records, gaps, style, folder, prefix)

    doc.heading("Run status")
    doc.table(tables.status_table(frame))
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        doc.heading("Failed runs")
        shown = failed[["dataset", "method", "depth", "fold", "status", "error"]]
        doc.table(shown.head(50))
    doc.heading("All cells")
    doc.text(CELL_RULE)
    doc.begin_details(f"{len(records.cells)} cells (dataset × depth × method)")
    doc.table(tables.cells_table(records))
    doc.end_details()


def _protocols_newest_first(frame: pd.DataFrame) -> list:
    newest = frame.groupby("protocol_id")["utc"].max().sort_values(ascending=False)
    return list(newest.index)


def _environment(doc: Document, frame: pd.DataFrame) -> None:
    versions = frame["versions"].dropna()
    if not versions.empty:
        doc.heading("Environment")
        hosts = ", ".join(sorted(frame["host"].dropna().unique()))
        pairs = json.loads(versions.iloc[-1]).items()
        doc.text(f"Host(s): {hosts}. " + ", ".join(f"{k} {v}" for k, v in pairs))


def _paper_section(doc, study, frame, protocol_id, scale) -> None:
    """The "Paper vs odtstudy" section first, when ``study`` reproduces a paper."""
    from odtstudy.reproduce import list_reproductions, paper_section

    if study in list_reproductions():
        part = frame[frame["protocol_id"] == protocol_id]
        paper_section(doc, study, StudyRecords.from_frame(part), scale)
        doc.heading("The study behind the verdicts")


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
    study: str, output_dir="reports", scale: str = "default", reference=None
) -> Path:
    """Write ``report.md`` and ``report.html`` for a study from its records.

    Runs of different protocols (see :func:`odtstudy.study.protocol_of`) are
    never pooled: each protocol gets its own section, newest first, and the
    top of the report says how many there are. A study that reproduces a
    paper (``odtstudy/reproduce/published/<study>.toml`` exists) opens with
    :func:`odtstudy.reproduce.paper_section` on its newest protocol. Each
    section is described in :func:`protocol_section`. ``results.csv`` and
    ``results.parquet`` (every record, flat) are written beside it.

    Parameters
    ----------
    study : str
    output_dir : path, default="reports"
    scale : str, default="default"
    reference : str, default=None
        Exact method the others' fit times are compared with (default
        ``dl85`` when present, else the first exact method).

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
    _guarded(
        doc, "Paper vs odtstudy", _paper_section, doc, study, frame, protocols[0], scale
    )
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
