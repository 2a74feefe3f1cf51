"""The published numbers of a paper, transcribed into ``papers/<name>/published.toml``.

A reproduction ``<name>`` is the folder ``papers/<name>/`` of this package
(:func:`papers_dir`): its study ``study.toml``, the published numbers
``published.toml`` and the claims module ``claims.py``.

Layout of a data file (one per paper)::

    [paper]
    citation = "Aglin, Nijssen & Schaus (2020). Learning optimal ... AAAI."
    source = "dl85-aaai2020-caching-branch-and-bound.txt"
    protocol = "data sets, depths, time limit, folds, repetitions"
    hardware = "the machine the paper reports, or 'not stated'"
    time_limit = 600         # optional: the paper's seconds per fit (or a text)

    [[values]]               # one transcribed number
    where = "Table 2"        # the table or figure it comes from
    dataset = "anneal"       # odtstudy's dataset name
    method = "dl85"          # the method label in the study
    paper_method = "DL8.5"   # the paper's name for it
    depth = 3
    metric = "fit_time_s"    # a results column, or a quantity named in note
    value = 0.12             # omit when the paper shows a time-out
    timeout = false          # true: the paper reports a time-out (no value)
    note = ""

    [[claims]]               # one claim the report gives a verdict on
    id = "dl85-faster-than-dl8"
    statement = "DL8.5 is faster than DL8 on every set and depth"
    where = "Table 2"
    figure_only = false      # true: the paper gives no number for it

    [[checks]]               # an implementation invariant: pass / fail,
    id = "optimum-kept"      # never counted as a reproduced claim
    statement = "every bounded run keeps the unbounded optimum"
    where = "Algorithm 2"

    [rules]                  # how each verdict is decided, shown in the report
    prose = '''
    Markdown; {partly:.0%} is the value of the threshold partly (str.format).
    '''

    [sensitivity]
    margin = 0.1             # each threshold moved by ± 10 % of its value

    [thresholds]             # every number of every rule (see _rules.py)
    partly = 0.5
    alpha = 0.05

    [history]                # from git: when the thresholds were set, and the
                             # first commit of the report's records
    thresholds_set = {commit = "bdf8dbb", date = "2026-11-26"}
    first_records = {commit = "b1ee3ee", date = "2026-11-23"}

Every key of ``[[values]]`` but ``where``, ``metric`` and ``value`` /
``timeout`` is optional (a value may be a mean over data sets).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib import resources

import pandas as pd

from odtstudy.reproduce._rules import Rules, parse_thresholds
from odtstudy.study.report._speed import MIN_UNITS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "Published",
    "data_file_label",
    "list_reproductions",
    "load_published",
    "papers_dir",
]

_VALUE_COLUMNS = [
    "where", "dataset", "method", "paper_method", "depth", "metric", "value",
    "timeout", "note",
]  # fmt: skip
_PAPER_KEYS = {"citation", "source", "protocol", "hardware"}
_CLAIM_KEYS = {"id", "statement", "where", "figure_only"}


@dataclass
class Published:
    """A paper's transcribed numbers and the claims a reproduction judges.

    Attributes
    ----------
    name : str
        The reproduction's name.
    paper : dict
        ``citation``, ``source``, ``protocol`` and ``hardware``.
    values : DataFrame
        One row per transcribed number, columns as in the module docstring.
    claims : list of dict
        ``id``, ``statement``, ``where`` and ``figure_only`` per claim.
    checks : list of dict
        The same per implementation check (``check`` True).
    thresholds : dict
        Name -> :class:`~odtstudy.reproduce._rules.Threshold`.
    margin : float or None
        The relative margin of the sensitivity lines.
    prose : str
        How each verdict is decided (``[rules] prose``: Markdown with
        ``{threshold}`` fields, see :meth:`rules_text`).
    history : dict
        ``[history]``: ``thresholds_set`` and ``first_records``, each
        ``{commit, date}`` (empty when the file has none).
    """

    name: str
    paper: dict
    values: pd.DataFrame
    claims: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    thresholds: dict = field(default_factory=dict)
    margin: float | None = None
    prose: str = ""
    history: dict = field(default_factory=dict)

    def rules_text(self) -> str:
        """The rules' prose with each ``{threshold}`` field filled with its value.

        ``{min_units}`` is :data:`~odtstudy.study.report._speed.MIN_UNITS`, the
        fewest independent units of any test (not a threshold of the file).

        Raises
        ------
        KeyError
            For a field that names no threshold of the data file.
        """
        values = {"min_units": MIN_UNITS}
        values.update((name, t.value) for name, t in self.thresholds.items())
        return self.prose.format_map(values)

    def rules(self) -> Rules:
        """A fresh :class:`~odtstudy.reproduce._rules.Rules` on the thresholds."""
        return Rules(self.thresholds, data_file_label(self.name))

    def claim(self, claim_id: str) -> dict:
        """The claim (or check) with this id (KeyError naming the known ids
        otherwise)."""
        for claim in [*self.claims, *self.checks]:
            if claim["id"] == claim_id:
                return claim
        known = ", ".join(c["id"] for c in [*self.claims, *self.checks])
        raise KeyError(f"{self.name}: no claim {claim_id!r} (claims: {known})")


def papers_dir():
    """The folder of the reproductions: one folder ``<name>/`` each."""
    return resources.files("odtstudy.reproduce").joinpath("papers")


def data_file_label(name: str) -> str:
    """How messages and reports name the data file of reproduction ``name``."""
    return f"papers/{name}/published.toml"


def list_reproductions() -> list:
    """Names of the built-in reproductions (one per folder with a data file)."""
    return sorted(
        p.name
        for p in papers_dir().iterdir()
        if p.is_dir() and p.joinpath("published.toml").is_file()
    )


def _problem(name, where, text) -> ValueError:
    return ValueError(f"{data_file_label(name)} {where}: {text}")


def load_published(name: str) -> Published:
    """Read and check ``papers/<name>/published.toml``.

    Raises
    ------
    ValueError
        For an unknown name (listing the known ones) or a file that breaks
        the layout (naming the table, the entry and the key).
    """
    known = list_reproductions()
    if name not in known:
        raise ValueError(
            f"no reproduction named {name!r}; the reproductions are: "
            f"{', '.join(known) or '(none yet)'} (odtstudy reproduce list)"
        )
    data = tomllib.loads(
        papers_dir().joinpath(name).joinpath("published.toml").read_text()
    )
    paper = data.get("paper", {})
    missing = _PAPER_KEYS - set(paper)
    if missing:
        raise _problem(name, "[paper]", f"missing {', '.join(sorted(missing))}")
    rows = []
    for i, entry in enumerate(data.get("values", [])):
        unknown = set(entry) - set(_VALUE_COLUMNS)
        if unknown:
            raise _problem(name, f"[[values]] #{i + 1}", f"unknown {sorted(unknown)}")
        for key in ("where", "metric"):
            if key not in entry:
                raise _problem(name, f"[[values]] #{i + 1}", f"missing {key}")
        if ("value" in entry) == bool(entry.get("timeout", False)):
            raise _problem(
                name, f"[[values]] #{i + 1}", "give either value or timeout = true"
            )
        rows.append(entry)
    values = pd.DataFrame(rows, columns=_VALUE_COLUMNS)
    values["timeout"] = [v is True for v in values["timeout"]]
    claims = _entries(name, data, "claims")
    checks = [{**c, "check": True} for c in _entries(name, data, "checks")]
    ids = [c["id"] for c in [*claims, *checks]]
    if len(set(ids)) != len(ids) or not claims:
        raise _problem(
            name, "[[claims]]", "claim and check ids must be present and distinct"
        )
    thresholds = parse_thresholds(data.get("thresholds", {}), data_file_label(name))
    margin = data.get("sensitivity", {}).get("margin")
    if margin is not None and not (isinstance(margin, (int, float)) and margin > 0):
        raise _problem(name, "[sensitivity]", "margin must be a number > 0")
    rules = data.get("rules", {})
    prose = rules.get("prose") if isinstance(rules, dict) else None
    if set(rules) != {"prose"} or not isinstance(prose, str) or not prose.strip():
        raise _problem(
            name,
            "[rules]",
            "needs exactly prose = '''...''': how each verdict is decided "
            "(Markdown; {name} is the value of threshold name)",
        )
    published = Published(
        name, paper, values, claims, checks, thresholds, margin, prose,
        _history(name, data.get("history", {})),
    )  # fmt: skip
    try:
        published.rules_text()
    except (KeyError, IndexError, ValueError) as exc:
        raise _problem(
            name,
            "[rules] prose",
            f"cannot fill in {exc}: each {{field}} names a threshold of "
            "[thresholds] (write a literal brace twice: {{ }})",
        ) from None
    return published


def _entries(name, data, table) -> list:
    """The ``[[claims]]`` or ``[[checks]]`` of a data file, checked."""
    entries = []
    for i, entry in enumerate(data.get(table, [])):
        missing = {"id", "statement", "where"} - set(entry)
        unknown = set(entry) - _CLAIM_KEYS
        if missing or unknown:
            raise _problem(
                name,
                f"[[{table}]] #{i + 1}",
                f"missing {sorted(missing)}, unknown {sorted(unknown)}",
            )
        entries.append({"figure_only": False, **entry})
    return entries


_HISTORY_KEYS = ("thresholds_set", "first_records")


def _history(name, table) -> dict:
    """``[history]`` of a data file, checked: each entry ``{commit, date}``."""
    unknown = set(table) - set(_HISTORY_KEYS)
    if unknown:
        raise _problem(name, "[history]", f"unknown {sorted(unknown)}")
    history = {}
    for key, entry in table.items():
        if not (isinstance(entry, dict) and set(entry) == {"commit", "date"}):
            raise _problem(
                name,
                f"[history] {key}",
                'give {commit = "<hash>", date = "YYYY-MM-DD"} (from git log)',
            )
        history[key] = {k: str(v) for k, v in entry.items()}
    return history
