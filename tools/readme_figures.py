"""The README's figures, computed from the committed reference reports' records.

A maintenance script, not part of the package: one command rewrites every
figures region of the README and the guide pages from the records::

    python tools/readme_figures.py [--check]
        [--readme FILE ...] [--reports docs/reference-reports]

``--readme`` defaults to :data:`READMES`, every file that holds a region.
Each figure sits in the README (or a guide page) between ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->``; the text between is replaced by what the records
give (:func:`figures`), indented as the closing marker is. ``--check``
changes nothing and exits with 1 when a region differs, naming it, so a test
can hold the README to its records; both modes exit with 1 on a region that
:func:`figures` does not write.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from odtstudy.reproduce._claims import VERDICTS, legend_text
from odtstudy.reproduce._published import list_reproductions, load_published
from odtstudy.reproduce._report import claims_module, evaluate_claims
from odtstudy.study.report import newest_records
from odtstudy.study.report._proofs import proof_table
from odtstudy.study.report._provenance_text import _parsed
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.report._speed import MIN_UNITS, speed_table
from odtstudy.study.report._tiers import tier_groups

#: Every file with figures regions, from the clone root: the README, the
#: guide pages its sections moved to, and the reference reports' index.
READMES = (
    Path("README.md"),
    Path("docs/guide/published-solvers.md"),
    Path("docs/guide/reproductions.md"),
    Path("docs/guide/benchmarks.md"),
    Path("docs/reference-reports/README.md"),
)

#: The published tools compared in the README's headline, with their names.
TOOLS = {
    "pydl85": "the C++ PyDL8.5",
    "pystreed": "STreeD",
    "pycontree": "ConTree",
    "gosdt": "GOSDT",
    "pytrees-dl85-lds": "pytrees-rs DL8.5, LDS",
    "pytrees-contree-lds": "pytrees-rs ConTree, LDS",
}
REFERENCE = "dl85"
_REGION = re.compile(
    r"(?P<open><!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)"
    r"(?P<indent>[ \t]*)(?P<close><!-- /figures:(?P=name) -->)",
    re.DOTALL,
)


def _ratio_column(table: pd.DataFrame) -> str:
    return next(c for c in table.columns if c.startswith("time to proof"))


def _ratios(records: StudyRecords) -> pd.DataFrame:
    """Per depth and published tool: its time to proof over dl85's."""
    exact = records.exact_methods
    table, _ = speed_table(records.frame, exact, REFERENCE, records.depths)
    if table.empty:
        return table
    return table[table["method"].isin(list(TOOLS))].reset_index(drop=True)


def _headline(records: StudyRecords) -> str:
    """One clause per published tool: the lowest and highest over depths of
    its geometric-mean time-to-proof ratio to dl85, with their 95 %
    intervals (an interval holding 1 shows no difference)."""
    table = _ratios(records)
    parts = []
    for tool, name in TOOLS.items():
        rows = table[table["method"] == tool]
        column = _ratio_column(table) if not table.empty else None
        cells = [
            (int(r["depth"]), r[column])
            for _, r in rows.iterrows()
            if not str(r[column]).startswith("no common")
        ]
        if not cells:
            continue
        numbers = [(d, float(text.split("×")[0]), text) for d, text in cells]
        low = min(numbers, key=lambda x: x[1])
        high = max(numbers, key=lambda x: x[1])
        parts.append(
            f"{name} takes {low[2]} (depth {low[0]}) to {high[2]} (depth "
            f"{high[0]}) DL8.5's time"
        )
    if not parts:
        return "no published tool proved an instance DL8.5 proved"
    return "; ".join(parts)


def _protocol(records: StudyRecords) -> str:
    frame = records.frame
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    provenance = {}
    if "provenance" in frame and frame["provenance"].notna().any():
        provenance = _parsed(frame["provenance"].dropna().iloc[0]) or {}
    repeats = int(protocol.get("repeats", 1))
    below = protocol.get("repeat_below_s")
    fits = f"{repeats} fit(s) per run (median time)"
    if repeats > 1 and below is not None:
        fits = f"up to {repeats} fits per run under {below:g} s (median time)"
    workers = provenance.get("workers", "?")
    cpu = provenance.get("cpu_model", "CPU not recorded")
    load = provenance.get("load_at_start")
    load_text = f"load {load[0]:.1f} at start" if load else "load not recorded"
    return (
        f"{len(frame)} runs, {fits}, "
        f"{workers} at a time, {protocol['time_limit']:g} s per fit, {cpu}, "
        f"{load_text}, revision {protocol.get('source_revision', 'not recorded')}"
    )


def _elapsed(records: StudyRecords) -> str:
    """Wall time of the runs: from the first run's start (its record's time,
    written when it ended, less its wall time) to the last record; the
    records' times are to the second."""
    frame = records.frame
    end = pd.to_datetime(frame["utc"])
    start = end - pd.to_timedelta(frame["wall_time_s"].fillna(0), unit="s")
    return f"{(end.max() - start.min()).total_seconds():.0f} s"


def _versus_table(records: StudyRecords) -> str:
    """Per depth and method: proven / instances, median fit time, and the
    time-to-proof ratio to dl85 with its interval."""
    cells = records.cells
    table = _ratios(records)
    ratio = {}
    if not table.empty:
        column = _ratio_column(table)
        ratio = {(r["depth"], r["method"]): r[column] for _, r in table.iterrows()}
    methods = records.method_order
    header = "| depth | " + " | ".join(f"`{m}`" for m in methods) + " |"
    lines = [header, "|---" * (len(methods) + 1) + "|"]
    for depth in records.depths:
        row = [str(depth)]
        for method in methods:
            part = cells[(cells["depth"] == depth) & (cells["method"] == method)]
            if part.empty:
                row.append("–")
                continue
            proven = int(part["proven"].sum()) if records.is_exact(method) else None
            times = records.frame[
                (records.frame["depth"] == depth) & (records.frame["method"] == method)
            ]["fit_time_s"]
            median = float(np.nanmedian(times)) if times.notna().any() else np.nan
            text = f"{'–' if proven is None else proven}/{len(part)}, {median:.2g} s"
            if (depth, method) in ratio:
                text += f", {ratio[(depth, method)]}"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _tool(method: str) -> str:
    return f"{TOOLS[method]} (`{method}`)" if method in TOOLS else f"`{method}`"


def _tier_rows(records: StudyRecords) -> list:
    """Per tier and depth of a tiered study: its label, its instance count,
    and per exact method (ours first) ``(method, proven, PAR-2, ratio)``,
    ``ratio`` the geometric-mean time to a proof over ours on the instances
    both prove, with its interval ("" for ours)."""
    rows = []
    for label, part in tier_groups(records.frame):
        group = records.subset(part)
        proofs = proof_table(group).set_index("method")
        exact = group.exact_methods
        ours = next(m for m in exact if m in records.speed_references)
        speed, _ = speed_table(group.frame, exact, ours, group.depths)
        ratio = {}
        if not speed.empty:
            ratio = dict(zip(speed["method"], speed[_ratio_column(speed)]))
        cells = [
            (m, proofs.loc[m, "proven"], proofs.loc[m, "PAR-2 (s)"], ratio.get(m, ""))
            for m in [ours, *(m for m in exact if m != ours)]
        ]
        rows.append((label, part["dataset"].nunique(), cells))
    return rows


def _tier_table(rows: list, ours: str, others: str) -> str:
    """A row per tier and depth of ``rows`` (:func:`_tier_rows`): the
    reference search's proofs and PAR-2 (column ``ours``), and each other
    exact method's with its time ratio to the reference (column ``others``)."""
    lines = [f"| tier, depth (data sets) | {ours} | {others} |", "|---|---|---|"]
    for label, n_sets, cells in rows:
        (reference, proven, par2, _), *rest = cells
        text = "; ".join(
            f"{_tool(m)} {p}, {t} s" + (f", {r}" if r else "") for m, p, t, r in rest
        )
        lines.append(
            f"| {label} ({n_sets}) | `{reference}` {proven}, {par2} s | {text} |"
        )
    return "\n".join(lines)


def _headline_table(rows: list) -> str:
    """The README's headline (``rows`` of the headline records): a row per
    tier and depth, our search's proofs and PAR-2, and each published tool's
    with its time ratio to ours."""
    return _tier_table(
        rows,
        "ours: proven, PAR-2",
        "published tools: proven, PAR-2, time to a proof / ours where both "
        "prove [95 % CI]",
    )


def _losses(rows: list) -> str:
    """Where a published tool proves more than ours or has the lower PAR-2,
    said in words (the numbers of :func:`_headline_table`)."""
    parts = []
    for label, _, cells in rows:
        (_, proven, par2, _), *tools = cells
        for method, p, t, _ in tools:
            more = int(p.split("/")[0]) > int(proven.split("/")[0])
            if more or float(t) < float(par2):
                parts.append(
                    f"on {label}, {_tool(method)} proves {p} against our {proven} "
                    f"(PAR-2 {t} s against {par2} s)"
                )
    if not parts:
        return (
            "No published tool proves more than ours or has a lower PAR-2 on any tier."
        )
    return "Where we lose: " + "; ".join(parts) + "."


def _threads_table(rows: list) -> str:
    """The guide's threads table: per search, two threads against one."""
    return _tier_table(
        rows,
        "one thread: proven, PAR-2",
        "two threads: proven, PAR-2, time to a proof / one thread's where "
        "both prove [95 % CI]",
    )


def _headline_protocol(records: StudyRecords) -> str:
    """The headline's protocol line, with what a time ratio counts."""
    return (
        _protocol(records)
        + "; PAR-2: mean time to a proof, a run not proven counting twice the "
        f"limit; no interval below {MIN_UNITS} data sets proven by both"
    )


def _workers(frame: pd.DataFrame) -> str:
    if "provenance" not in frame or not frame["provenance"].notna().any():
        return "not recorded"
    values = {
        str((_parsed(text) or {}).get("workers", "?"))
        for text in frame["provenance"].dropna()
    }
    return ", ".join(sorted(values))


def _revision(records: StudyRecords) -> str:
    """The source revision of a report's records (its protocol's), short,
    with the date of its first run: every table names where it comes from."""
    frame = records.frame
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    revision = str(protocol.get("source_revision") or "not recorded")
    short = revision[:7] + (" (uncommitted tree)" if "-dirty-" in revision else "")
    first = str(frame["utc"].min())[:10]
    return f"`{short}`, {first}"


def _reference_reports(reports: Path, verdicts) -> str:
    """One row per committed reference report: its runs, their summed wall
    time, how many ran at once, and ``verdicts(folder)`` (none: "–")."""
    lines = [
        "| report | records at | methods | runs | wall time of the runs "
        "| runs at a time | verdicts |",
        "|---|---|---|---|---|---|---|",
    ]
    for folder in sorted(p for p in Path(reports).iterdir() if p.is_dir()):
        if not (folder / "results.jsonl").exists():
            continue
        records = newest_records(folder)
        frame = records.frame
        minutes = float(frame["wall_time_s"].fillna(0).sum()) / 60
        verdict = (verdicts(folder) if verdicts else None) or "–"
        lines.append(
            f"| [`{folder.name}`]({folder.name}/report.md) | {_revision(records)} | "
            f"{frame['method'].nunique()} | {len(frame)} | "
            f"{minutes:.1f} min | {_workers(frame)} | {verdict} |"
        )
    return "\n".join(lines)


def _heuristics(records: StudyRecords) -> str:
    """How often each heuristic reached the optimum an exact method proved."""
    from odtstudy.study.report._checks import heuristic_gaps

    gaps = heuristic_gaps(records.frame)
    parts = []
    for method in records.heuristic_methods:
        runs = gaps[gaps["method"] == method]
        if runs.empty:
            continue
        matched = int((runs["gap"].abs() <= 1e-9).sum())
        parts.append(
            f"`{method}` reached the proven optimum on {matched} of the "
            f"{len(runs)} instances where one was proven"
        )
    return "; ".join(parts) + "." if parts else "No heuristic ran."


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
        "| reproduction | paper | records at | verdicts at default scale |",
        "|---|---|---|---|",
    ]
    for name in list_reproductions():
        folder = Path(reports) / name
        if not (folder / "results.jsonl").exists():
            continue
        citation = load_published(name).paper["citation"].replace("|", "/")
        verdicts = _folder_verdicts(folder)
        revision = _revision(newest_records(folder))
        lines.append(
            f"| `odtstudy reproduce {name}` | {citation} | {revision} | {verdicts} |"
        )
    return "\n".join(lines)


def _optimal_or_greedy(reports: Path) -> str:
    """The README's one-sentence answer of the ``optimal-or-greedy`` records."""
    name = "optimal-or-greedy"
    records = newest_records(reports / name)
    thresholds = load_published(name).thresholds
    sentence = claims_module(name).answer(
        records, thresholds["alpha"].value, thresholds["min_sets"].value
    )
    return f"{sentence} (Records at {_revision(records)}.)"


def figures(reports: Path) -> dict:
    """Every README figure by region name, from the records under ``reports``."""
    verdicts = _folder_verdicts
    versus = newest_records(Path(reports) / "versus")
    values = {
        "versus-headline": _headline(versus),
        "versus-protocol": _protocol(versus),
        "versus-table": _versus_table(versus),
        "versus-heuristics": _heuristics(versus),
        "reference-reports": _reference_reports(Path(reports), verdicts),
    }
    headline = newest_records(Path(reports) / "headline")
    headline_rows = _tier_rows(headline)
    values |= {
        "headline-table": _headline_table(headline_rows),
        "headline-protocol": _headline_protocol(headline),
        "headline-losses": _losses(headline_rows),
    }
    threads = newest_records(Path(reports) / "threads")
    values |= {
        "threads-protocol": _protocol(threads),
        "threads-table": _threads_table(_tier_rows(threads)),
    }
    quick = newest_records(Path(reports) / "quick")
    values |= {
        "quick-protocol": _protocol(quick),
        "quick-elapsed": _elapsed(quick),
    }
    values["reproductions"] = _reproductions(Path(reports))
    values["optimal-or-greedy-answer"] = _optimal_or_greedy(Path(reports))
    values["verdict-legend"] = legend_text()
    return values


def regions(text: str) -> list:
    """The names of the figures regions of ``text``, in order."""
    return [match["name"] for match in _REGION.finditer(text)]


def update(text: str, values: dict) -> tuple[str, list]:
    """``text`` with each region replaced by its value, and the names of the
    regions that changed."""
    changed = []

    def replace(match):
        name = match["name"]
        if name not in values:
            return match[0]
        indent = match["indent"]
        lines = values[name].rstrip("\n").split("\n")
        body = "".join(f"{indent}{line}\n" for line in lines)
        if body != match["body"]:
            changed.append(name)
        return match["open"] + body + indent + match["close"]

    return _REGION.sub(replace, text), changed


def main(argv=None, make_figures=figures) -> int:
    """Rewrite (or ``--check``) the README regions with ``make_figures(reports)``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--readme",
        type=Path,
        nargs="+",
        default=list(READMES),
    )
    parser.add_argument("--reports", type=Path, default=Path("docs/reference-reports"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    values = make_figures(args.reports)
    differs = False
    for readme in args.readme:
        text = readme.read_text(encoding="utf-8")
        new, changed = update(text, values)
        orphans = [n for n in regions(text) if n not in values]
        for name in orphans:
            print(f"{readme}: region {name!r} has no generator in readme_figures")
        differs = differs or bool(orphans)
        if args.check:
            for name in changed:
                print(f"{readme}: region {name!r} differs from its records")
            differs = differs or bool(changed)
            continue
        readme.write_text(new, encoding="utf-8")
        print(f"{readme}: {len(changed)} region(s) rewritten: {', '.join(changed)}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
