"""The opening section of a reproduction's report: "Paper vs odtstudy".

:func:`paper_section` opens the report of a study that reproduces a paper
(``papers/<study>/published.toml`` exists): :func:`paper_preface` hands it to
:func:`odtstudy.study.make_report` as its ``preface``. It writes the paper's
citation, the paper's protocol beside ours (hardware, time limit, scale),
the rules (``[rules]`` of the data file) and its thresholds, the verdict
table (one row per claim of the data file, checked complete, each with its
sensitivity to the thresholds), a count of the verdicts, the checks of the
implementation (pass / fail, never counted as claims), and every published
value beside our matching value.

A claims module is ``papers/<name>/claims.py``, loaded from its file by
:func:`claims_module`; it exposes ``evaluate(records, published)``
returning one :class:`~odtstudy.reproduce.ClaimResult` per claim id, then per
check id, in file order. It may
also expose ``our_value(records, row) -> str | None``: our value beside one
published ``[[values]]`` row (``row`` a dict), for a metric that is not a
results column; ``None`` falls back to the default (the mean of the column over
the matching cell's runs with a tree).

Nothing raised by a claims module loses the report: the error is logged, and
the claims are shown as "not comparable" with the error in their reason.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from odtstudy.reproduce._claims import (
    CHECK_VERDICTS,
    VERDICTS,
    ClaimResult,
    legend_text,
)
from odtstudy.reproduce._published import (
    Published,
    data_file_label,
    list_reproductions,
    load_published,
    papers_dir,
)
from odtstudy.study import study_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "PAPER_HEADING",
    "claims_module",
    "evaluate_claims",
    "our_values",
    "paper_preface",
    "paper_section",
    "thresholds_history",
    "verdict_table_complete",
    "verdict_table_problems",
]

log = logging.getLogger("odtstudy.reproduce")

PAPER_HEADING = "Paper vs odtstudy"
VERDICT_COLUMNS = [
    "claim", "where", "published", "odtstudy", "verdict", "reason", "sensitivity",
]  # fmt: skip
CHECK_COLUMNS = ["check", "where", "published", "odtstudy", "result", "reason"]
CHECKS_HEADING = "Checks of the implementation"
_INCOMPLETE = "VERDICT TABLE INCOMPLETE"
_NAME_LINE = re.compile(r"Reproduction `([^`]+)`")
_CLAIM_CELL = re.compile(r"^\*\*(.+?)\*\*")


def module_name(name: str) -> str:
    """The name a reproduction's claims module is loaded under (in ``sys.modules``)."""
    return f"odtstudy.reproduce.papers.{name}.claims"


def claims_file(name: str) -> str:
    """How reports and messages name the claims module of reproduction ``name``."""
    return f"odtstudy/reproduce/papers/{name}/claims.py"


def claims_module(name: str):
    """The claims module of reproduction ``name``, loaded from its file once.

    Raises
    ------
    ValueError
        When there is none (naming the file to write), or when it lacks
        ``evaluate``.
    """
    key = module_name(name)
    module = sys.modules.get(key)
    if module is None:
        path = papers_dir().joinpath(name).joinpath("claims.py")
        if not path.is_file():
            raise ValueError(
                f"reproduction {name!r} has no claims module: write "
                f"{claims_file(name)} (evaluate(records, published))"
            )
        spec = importlib.util.spec_from_file_location(key, str(path))
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # dataclasses look their module up there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
    if not hasattr(module, "evaluate"):
        raise ValueError(f"claims module {claims_file(name)} lacks evaluate")
    return module


def _not_comparable(published: Published, why: str) -> list:
    return [
        ClaimResult(
            claim=c["id"],
            statement=c["statement"],
            where=c["where"],
            published="figure only" if c.get("figure_only") else "see the values",
            ours="—",
            verdict="not comparable",
            reason=why,
            check=bool(c.get("check", False)),
        )
        for c in [*published.claims, *published.checks]
    ]


def evaluate_claims(name: str, records, published: Published) -> tuple:
    """``(rules, results, error)`` of reproduction ``name`` on ``records``.

    Any exception raised by the rules' prose or the claims module (import,
    ``evaluate``) is logged and turned into one "not comparable" result per
    claim whose reason names the error; ``error`` is then its text, else None.
    """
    try:
        module = claims_module(name)
        rules = published.rules_text()
        results = list(module.evaluate(records, published))
        bad = [r for r in results if not isinstance(r, ClaimResult)]
        if bad:
            raise TypeError(
                f"evaluate returned {type(bad[0]).__name__} items, not ClaimResult"
            )
    except Exception as exc:  # a claims module must never lose the report
        log.exception("claims module of reproduction %r failed", name)
        error = f"{type(exc).__name__}: {exc}"
        return (
            "",
            _not_comparable(published, f"the claims module failed: {error}"),
            error,
        )
    return rules, results, None


def verdict_table_problems(results_or_text, published: Published | None = None) -> list:
    """What is wrong with a verdict table; empty when it is complete.

    Parameters
    ----------
    results_or_text : list of ClaimResult, str or Path
        The claims module's results, or a report (its Markdown text or file):
        the tables under "Paper vs odtstudy" are parsed, and the
        reproduction's name is read from the section.
    published : Published, default=None
        The paper's data file (default: read by the name in the report).

    Complete means: exactly one row per claim id of the data file, in file
    order, every verdict one of :data:`VERDICTS`; the same for the checks
    (:data:`CHECK_VERDICTS`); and (for a report) no incompleteness alert.
    """
    problems = []
    if isinstance(results_or_text, (str, Path)):
        text = results_or_text
        if isinstance(text, Path) or (
            "\n" not in str(text) and str(text).endswith(".md") and Path(text).exists()
        ):
            text = Path(text).read_text()
        rows, checks, name, alert = _parse_section(text)
        if name is None:
            return [f"no '{PAPER_HEADING}' section naming its reproduction"]
        if alert:
            problems.append(f"the report says: {alert}")
        if published is None:
            published = load_published(name)
    else:
        if published is None:
            raise ValueError("give published= with a list of ClaimResult")
        rows = [(r.claim, r.verdict) for r in results_or_text if not r.check]
        checks = [(r.claim, r.verdict) for r in results_or_text if r.check]
    problems += _rows_problems(rows, published.claims, VERDICTS, "claim")
    problems += _rows_problems(checks, published.checks, CHECK_VERDICTS, "check")
    return problems


def _rows_problems(rows, entries, allowed, kind) -> list:
    """Rows (id, verdict) against the data file's entries of one kind."""
    problems = []
    ids = [claim for claim, _ in rows]
    expected = [c["id"] for c in entries]
    missing = [i for i in expected if i not in ids]
    extra = [i for i in ids if i not in expected]
    doubled = sorted({i for i in ids if ids.count(i) > 1})
    if missing:
        problems.append(f"no row for {kind}(s) {', '.join(missing)}")
    if extra:
        problems.append(f"row(s) for unknown {kind}(s) {', '.join(extra)}")
    if doubled:
        problems.append(f"several rows for {kind}(s) {', '.join(doubled)}")
    if not (missing or extra or doubled) and ids != expected:
        problems.append(f"{kind} rows are not in the data file's order")
    for claim, verdict in rows:
        if verdict not in allowed:
            problems.append(f"{kind} {claim}: verdict {verdict!r} not in {allowed}")
    return problems


def verdict_table_complete(results_or_text, published: Published | None = None) -> bool:
    """True when :func:`verdict_table_problems` finds nothing."""
    return not verdict_table_problems(results_or_text, published)


def _cells(line: str) -> list:
    inner = line.strip()[1:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _table_rows(lines: list, columns: list) -> list:
    """(id, verdict) of the table whose header is ``columns``."""
    rows, header = [], None
    verdict_at = 4
    for line in lines:
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = _cells(line)
        if header is None:
            if cells == columns:
                header = cells
            continue
        if set(line.replace("|", "").strip()) <= {"-"}:
            continue
        claim = _CLAIM_CELL.match(cells[0])
        rows.append((claim.group(1) if claim else cells[0], cells[verdict_at]))
    return rows


def _parse_section(text: str) -> tuple:
    """(claim rows and check rows as (id, verdict), reproduction name, alert
    text) of a report."""
    start = text.find(f"## {PAPER_HEADING}")
    if start < 0:
        return [], [], None, None
    end = text.find("\n## ", start + 3)
    section = text[start : end if end >= 0 else len(text)]
    found = _NAME_LINE.search(section)
    name = found.group(1) if found else None
    alert = None
    for line in section.splitlines():
        if _INCOMPLETE in line:
            alert = re.sub(r"<[^>]+>|\*\*", "", line).strip()
    lines = section.splitlines()
    return (
        _table_rows(lines, VERDICT_COLUMNS),
        _table_rows(lines, CHECK_COLUMNS),
        name,
        alert,
    )


def _study_description(name: str) -> str:
    """The study's ``description`` (empty when there is none)."""
    path = study_file(name)
    if path is None:
        return ""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    return " ".join(str(data.get("study", {}).get("description", "")).split())


def _limits(records) -> dict:
    """Each time limit of the study -> the methods that run under it."""
    limits: dict = {}
    for method in records.method_order:
        limits.setdefault(records.time_limit(method), []).append(method)
    return dict(sorted(limits.items()))


def _seconds(limits: dict) -> str:
    if len(limits) == 1:
        return f"{next(iter(limits)):g} s"
    return "; ".join(f"{t:g} s ({', '.join(m)})" for t, m in limits.items())


def _recorded_machines(frame: pd.DataFrame) -> list:
    """CPU model and logical cores of each machine the records name (their
    ``provenance``), distinct, in order."""
    if "provenance" not in frame:
        return []
    machines = []
    for text in frame["provenance"].dropna().unique():
        try:
            record = json.loads(text) if isinstance(text, str) else dict(text)
        except (TypeError, ValueError):
            continue
        model = record.get("cpu_model")
        if not model:
            continue
        cores = record.get("logical_cores")
        machine = f"{model}, {cores} logical CPUs" if cores else str(model)
        if machine not in machines:
            machines.append(machine)
    return machines


def _our_hardware(frame: pd.DataFrame) -> str:
    hosts = sorted(frame["host"].dropna().unique()) if "host" in frame else []
    text = f"host {', '.join(hosts)}" if hosts else "host not recorded"
    machines = _recorded_machines(frame)
    # the machine that renders the report may not be the one that ran the
    # fits (a host name is reused by other VMs): only the records say which
    return text + (
        f" ({'; '.join(machines)})" if machines else " (CPU not in the records)"
    )


def _our_protocol(records, protocol: dict) -> str:
    folds = int(protocol.get("folds", 1))
    split = (
        f"{folds}-fold stratified CV"
        if folds > 1
        else "fitted on all rows (test accuracy = training accuracy)"
    )
    datasets = records.datasets
    listed = ", ".join(datasets) if len(datasets) <= 12 else f"{len(datasets)} sets"
    memory = protocol.get("memory_limit_mb")
    memory = f"{memory:g} MB" if memory else "none"
    return (
        f"{len(datasets)} datasets ({listed}); depths {records.depths}; "
        f"methods {', '.join(records.method_order)}; {split}; seeds "
        f"{protocol.get('seeds')}; memory limit {memory}"
    )


def _protocol_table(published: Published, records, scale: str) -> tuple:
    frame = records.frame
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    paper = published.paper
    ours_limits = _limits(records)
    paper_limit = paper.get("time_limit")
    rows = [
        ("protocol", paper["protocol"], _our_protocol(records, protocol)),
        ("hardware", paper["hardware"], _our_hardware(frame)),
        (
            "time limit per fit",
            f"{paper_limit:g} s"
            if isinstance(paper_limit, (int, float))
            else str(paper_limit or "see the protocol"),
            f"{_seconds(ours_limits)} (+ grace {protocol.get('grace_s', 0):g} s "
            "before the hard kill)",
        ),
        (
            "scale",
            "the paper's protocol (`--scale paper` follows it where the data "
            "are vendored)",
            f"`{protocol.get('scale', scale)}`: {len(frame)} runs recorded",
        ),
    ]
    table = pd.DataFrame(rows, columns=["", "paper", "odtstudy"])
    differences = []
    if isinstance(paper_limit, (int, float)):
        shorter = {t: m for t, m in ours_limits.items() if t < paper_limit}
        if shorter:
            which = (
                ""
                if len(shorter) == len(ours_limits)
                else " for "
                + ", ".join(m for methods in shorter.values() for m in methods)
            )
            factors = " to ".join(
                f"{paper_limit / t:.3g}×" for t in sorted({max(shorter), min(shorter)})
            )
            differences.append(
                f"our time limit{which} ({_seconds(shorter)}) is {factors} "
                f"shorter than the paper's ({paper_limit:g} s): a run that times "
                "out here may finish within the paper's limit, so read our "
                "time-outs as 'not within our limit'"
            )
        elif any(t > paper_limit for t in ours_limits):
            differences.append(
                f"our time limit ({_seconds(ours_limits)}) is longer than the "
                f"paper's ({paper_limit:g} s)"
            )
    differences.append(
        "the hardware differs: absolute times are compared only as ratios "
        "between methods measured on the same machine"
    )
    return table, differences


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.3g}"
        if value == int(value) and abs(value) >= 1:
            return f"{int(value)}"
        return f"{value:.4g}"
    return str(value)


def _given(value) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))


def _default_value(records, row: dict) -> str:
    frame = records.frame
    metric = row["metric"]
    if not (_given(row.get("dataset")) and _given(row.get("method"))):
        return "— (not one cell: see the claims)"
    runs = frame[
        (frame["dataset"] == row["dataset"]) & (frame["method"] == row["method"])
    ]
    if _given(row.get("depth")):
        runs = runs[runs["depth"] == int(row["depth"])]
    if runs.empty:
        return "— (not run at this scale)"
    if metric not in frame.columns:
        return f"— ({metric} is not a results column)"
    trees = runs[runs["has_tree"]]
    exact = records.is_exact(row["method"])
    unproven = exact and not bool(runs["optimal"].all())
    if metric in ("fit_time_s", "wall_time_s") and unproven:
        return f"timeout ({_seconds([records.time_limit(row['method'])])})"
    if trees.empty:
        statuses = ", ".join(sorted(runs["status"].astype(str).unique()))
        return f"— (no tree: {statuses})"
    text = _fmt(pd.to_numeric(trees[metric], errors="coerce").mean())
    if unproven:
        text += " (not proven optimal)"
    return text


def our_values(records, published: Published, module=None) -> pd.DataFrame:
    """Every published ``[[values]]`` row with our matching value beside it.

    Ours: the claims module's ``our_value(records, row)`` when it gives one,
    else the mean of the metric over the matching cell's runs with a tree;
    "—" when the cell was not run at this scale; "timeout" for the time of an
    exact method that did not prove optimality in every run of the cell.
    """
    hook = getattr(module, "our_value", None)
    rows = []
    for row in published.values.to_dict("records"):
        ours = None
        if hook is not None:
            try:
                ours = hook(records, row)
            except Exception as exc:
                log.exception("our_value of %s failed", published.name)
                ours = f"— (our_value failed: {type(exc).__name__}: {exc})"
        if ours is None:
            ours = _default_value(records, row)
        paper = "timeout" if row["timeout"] else _fmt(row["value"])
        rows.append(
            {
                "where": row["where"],
                "dataset": row["dataset"] if _given(row["dataset"]) else "",
                "method": row["method"] if _given(row["method"]) else "",
                "paper method": row["paper_method"]
                if _given(row["paper_method"])
                else "",
                "depth": str(int(row["depth"])) if _given(row["depth"]) else "",
                "metric": row["metric"],
                "published": paper,
                "odtstudy": str(ours),
                "note": row["note"] if _given(row["note"]) else "",
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "where", "dataset", "method", "paper method", "depth", "metric",
            "published", "odtstudy", "note",
        ],
    )  # fmt: skip


def _row(r: ClaimResult) -> list:
    return [f"**{r.claim}**: {r.statement}", r.where, r.published, r.ours, r.verdict,
            r.reason]  # fmt: skip


def _verdict_frame(results: list) -> pd.DataFrame:
    rows = [[*_row(r), r.sensitivity or "—"] for r in results if not r.check]
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _check_frame(results: list) -> pd.DataFrame:
    return pd.DataFrame([_row(r) for r in results if r.check], columns=CHECK_COLUMNS)


def verdict_counts(results: list) -> str:
    """One line: how many claims got each verdict (checks apart)."""
    claims = [r for r in results if not r.check]
    counts = {v: sum(r.verdict == v for r in claims) for v in VERDICTS}
    text = (
        f"Verdicts over {len(claims)} claims: "
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + "."
    )
    checks = [r for r in results if r.check]
    if checks:
        outcomes = {v: sum(r.verdict == v for r in checks) for v in CHECK_VERDICTS}
        text += (
            " Checks of the implementation (not counted as claims): "
            + ", ".join(f"{n} {v}" for v, n in outcomes.items() if n)
            + "."
        )
    return text


def _thresholds_frame(published: Published) -> pd.DataFrame:
    rows = [
        (f"`{t.name}`", _fmt(t.value) if t.moves else str(t.value), t.why or "")
        for t in published.thresholds.values()
    ]
    return pd.DataFrame(rows, columns=["threshold", "value", "why it departs"])


def _earliest_run(records) -> str | None:
    """The date (YYYY-MM-DD) of the earliest run of ``records`` (its ``utc``)."""
    frame = records.frame if records is not None else None
    if frame is None or "utc" not in frame or not frame["utc"].notna().any():
        return None
    return str(frame["utc"].dropna().astype(str).min())[:10]


def thresholds_history(published: Published, records=None) -> str:
    """When the thresholds were set, against the reproduction's first runs.

    The first runs are the earlier of the first commit of the
    reproduction's records (``[history] first_records``) and the earliest
    run of ``records``: thresholds set after either could have been chosen
    knowing results.

    Parameters
    ----------
    published : Published
        Its ``history`` (``[history]`` of the data file, from git).
    records : StudyRecords, default=None
        The report's records (their earliest ``utc``).

    Returns
    -------
    str
        The commit and date of the thresholds, the first records' commit and
        date, the date of the runs shown, then "fixed before the runs" only
        when the thresholds' date precedes every run; otherwise that they
        were set after (or on the day of) the first runs.
    """
    setting = published.history.get("thresholds_set")
    if setting is None:
        return (
            "When these thresholds were set is not recorded (no [history] in "
            "the data file): they may postdate the runs."
        )
    text = f"Thresholds set at {setting['commit']} ({setting['date'][:10]})"
    firsts = []
    first = published.history.get("first_records")
    if first:
        firsts.append(first["date"][:10])
        text += (
            f"; this reproduction's first records committed at "
            f"{first['commit']} ({first['date'][:10]})"
        )
    shown = _earliest_run(records)
    if shown:
        firsts.append(shown)
        text += f"; the runs shown here began {shown}"
    if not firsts:
        return text + "; no run recorded."
    earliest, day = min(firsts), setting["date"][:10]
    if day < earliest:
        return text + ": fixed before the runs."
    if day == earliest:
        return text + (
            ": set on the day of the first runs, so not shown to precede them."
        )
    return text + (
        ": set after the first runs, so they are not independent of the "
        "results they judge."
    )


def _thresholds_section(doc, published: Published, records=None) -> None:
    if not published.thresholds:
        doc.text("The data file states no threshold.")
        return
    doc.text(
        f"The thresholds of these rules, from `[thresholds]` of "
        f"`odtstudy/reproduce/{data_file_label(published.name)}` (a value that "
        "departs from the one the other reproductions use says why). "
        + thresholds_history(published, records)
    )
    doc.table(_thresholds_frame(published))
    if published.margin is not None:
        doc.text(
            f"Sensitivity (last column of the verdicts): the verdict again with "
            f"each threshold the rule read moved by ± {published.margin:.0%} of "
            "its value, one at a time (counts and settings with margin 0 are "
            "not moved; a threshold may state its own margin)."
        )


def paper_section(doc, name: str, records, scale: str = "default") -> list:
    """Write the "Paper vs odtstudy" section of reproduction ``name``.

    Parameters
    ----------
    doc : odtstudy.study.report._document.Document
    name : str
        The reproduction (= its study's name).
    records : StudyRecords
        The newest protocol's records.
    scale : str, default="default"

    Returns
    -------
    list of ClaimResult
        The verdicts as shown (one "not comparable" per claim when the claims
        module failed).
    """
    published = load_published(name)
    doc.heading(PAPER_HEADING)
    doc.text(
        f"Reproduction `{name}` of {published.paper['citation']} "
        f"(text: `{published.paper['source']}`). Published numbers: "
        f"`odtstudy/reproduce/{data_file_label(name)}`; verdicts: "
        f"`{claims_file(name)}`, computed from the records below, newest "
        "protocol only."
    )
    description = _study_description(name)
    if description:
        doc.text(f"The study `{name}`: {description}")
    table, differences = _protocol_table(published, records, scale)
    doc.table(table)
    doc.text("Differences: " + "; ".join(differences) + ".")
    rules, results, error = evaluate_claims(name, records, published)
    if error:
        doc.text(
            f"The claims module failed ({error}); every claim is shown as not "
            "comparable.",
            alert=True,
        )
    doc.heading("How each verdict is decided", 3)
    doc.text(rules or "(no rules: the claims module failed)")
    _thresholds_section(doc, published, records)
    doc.heading("Verdicts", 3)
    problems = verdict_table_problems(results, published)
    if problems:
        doc.text(f"{_INCOMPLETE}: " + "; ".join(problems) + ".", alert=True)
        log.error("reproduction %s: %s", name, "; ".join(problems))
    doc.table(_verdict_frame(results))
    doc.text(legend_text())
    doc.text(verdict_counts(results))
    doc.heading(CHECKS_HEADING, 3)
    if published.checks:
        doc.text(
            "Invariants that hold by construction when the implementation is "
            "right: a failure is a bug of odtstudy, not a finding about the "
            "paper. They are not counted among the claims."
        )
        doc.table(_check_frame(results))
    else:
        doc.text(
            "None: no statement of this paper holds by construction in "
            "odtstudy, so every claim above is a finding that can fail."
        )
    doc.heading("Published values beside ours", 3)
    if published.values.empty:
        doc.text("The data file transcribes no value (figures only).")
    else:
        module = None
        if error is None:
            module = claims_module(name)
        doc.text(
            "Ours: the mean over the matching cell's runs with a tree; —: not "
            "run at this scale; timeout: an exact method that did not prove "
            "optimality within our limit in every run of the cell; (not proven "
            "optimal): the best tree found by the limit."
        )
        table = our_values(records, published, module)
        unmatched = table["odtstudy"].str.startswith("—")
        if len(table) <= 40 or not unmatched.any():
            doc.table(table)
        else:
            doc.table(table[~unmatched])
            doc.begin_details(
                f"{int(unmatched.sum())} more published values with nothing of "
                "ours to compare at this scale"
            )
            doc.table(table[unmatched])
            doc.end_details()
    return results


def paper_preface(name: str) -> list:
    """The ``preface`` of :func:`odtstudy.study.make_report` for study ``name``.

    Returns
    -------
    list of (str, callable)
        For a reproduction, one section: "Paper vs odtstudy"
        (:func:`paper_section`), then the heading of the study behind the
        verdicts; for any other study, none.
    """
    if name not in list_reproductions():
        return []

    def write(doc, records, scale) -> None:
        paper_section(doc, name, records, scale)
        doc.heading("The study behind the verdicts")

    return [(PAPER_HEADING, write)]
