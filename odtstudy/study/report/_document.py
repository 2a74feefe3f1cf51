"""A report as blocks, rendered to Markdown and to a self-contained HTML page.

Table cells are strings or numbers; ``**text**`` marks a bold cell (the best
of a row). The HTML page embeds the figures (as SVG text, or PNG where no SVG
was written) and sorts a table by a click on a column header (numbers by
value).
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

__all__ = ["Document", "format_cell", "markdown_table"]

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")

_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px;color:#222}"
    "table{border-collapse:collapse;font-size:0.82em;margin:0.5em 0 1em}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    "th{background:#f3f3f3;cursor:pointer;user-select:none}"
    "th.asc::after{content:' ▲'}th.desc::after{content:' ▼'}"
    ".alert{color:#c00;font-weight:bold}figure{margin:0.5em 0 1.2em}"
    "img{max-width:100%}figcaption{font-size:0.85em;color:#555}"
    "details{margin:0.5em 0}summary{cursor:pointer;font-weight:600}"
    ".grid{display:flex;flex-wrap:wrap;gap:8px}.grid figure{width:48%;margin:0}"
)
_SORT_JS = """
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = !th.classList.contains('asc');
    th.parentNode.querySelectorAll('th').forEach(function (h) {
      h.classList.remove('asc', 'desc'); });
    th.classList.add(asc ? 'asc' : 'desc');
    function key(row) {
      var text = row.children[col].textContent.trim();
      var num = parseFloat(text.replace(/^[(]/, ''));
      return isNaN(num) ? text : num;
    }
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (typeof x === typeof y) {
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      }
      return typeof x === 'number' ? -1 : 1;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def format_cell(value, floatfmt: str = ".3f") -> str:
    """A table cell as text (NaN -> empty)."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else format(value, floatfmt)
    return "" if value is None else str(value)


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """Render a DataFrame as a GitHub Markdown table."""
    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        cells = (format_cell(v, floatfmt).replace("|", "\\|") for v in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _html_cell(value, floatfmt) -> str:
    return _BOLD.sub(r"<b>\1</b>", html.escape(format_cell(value, floatfmt)))


def _html_table(frame: pd.DataFrame, floatfmt: str) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_html_cell(v, floatfmt)}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f"<table class='sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


class Document:
    """Blocks (headings, text, tables, figures) rendered twice.

    Parameters
    ----------
    title : str
    folder : Path
        Where the figures are (the HTML page embeds them).
    """

    def __init__(self, title: str, folder: Path):
        self.title = title
        self.folder = Path(folder)
        self.blocks: list = []

    def heading(self, text: str, level: int = 2) -> None:
        self.blocks.append(("h", (level, text)))

    def text(self, text: str, alert: bool = False) -> None:
        self.blocks.append(("alert" if alert else "p", text))

    def table(self, frame: pd.DataFrame, floatfmt: str = ".3f") -> None:
        self.blocks.append(("table", (frame, floatfmt)))

    def figure(self, filename: str | None, caption: str) -> None:
        if filename:
            self.blocks.append(("img", (filename, caption)))

    def begin_details(self, summary: str) -> None:
        """Start a collapsed block (``<details>``) ending at :meth:`end_details`."""
        self.blocks.append(("details", summary))

    def end_details(self) -> None:
        self.blocks.append(("/details", None))

    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for kind, payload in self.blocks:
            if kind == "h":
                out += ["#" * payload[0] + " " + payload[1], ""]
            elif kind == "p":
                out += [payload, ""]
            elif kind == "alert":
                out += [f'<span style="color:red">**{payload}**</span>', ""]
            elif kind == "table":
                out += [markdown_table(*payload), ""]
            elif kind == "img":
                out += [f"![{payload[1]}]({payload[0]})", ""]
            elif kind == "details":
                out += [f"<details><summary>{html.escape(payload)}</summary>", ""]
            else:
                out += ["</details>", ""]
        return "\n".join(out)

    def _image(self, filename: str) -> str:
        path = self.folder / filename
        if not path.exists():
            return html.escape(filename)
        svg = path.with_suffix(".svg")
        if svg.exists():  # text: a tenth of the PNG's size once compressed
            return "data:image/svg+xml," + quote(svg.read_text(), safe="/:=,;.-_()")
        data = base64.b64encode(path.read_bytes()).decode()
        return f"data:image/png;base64,{data}"

    def html(self) -> str:
        out = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{html.escape(self.title)}</title><style>{_CSS}</style>",
            f"</head><body><h1>{html.escape(self.title)}</h1>",
        ]
        for kind, payload in self.blocks:
            if kind == "h":
                level = payload[0]
                out.append(f"<h{level}>{html.escape(payload[1])}</h{level}>")
            elif kind == "p":
                text = _BOLD.sub(r"<b>\1</b>", html.escape(payload))
                text = _CODE.sub(r"<code>\1</code>", text)
                out.append(f"<p>{text}</p>")
            elif kind == "alert":
                out.append(f"<p class='alert'>{html.escape(payload)}</p>")
            elif kind == "table":
                out.append(_html_table(*payload))
            elif kind == "img":
                src, caption = payload[0], html.escape(payload[1])
                out.append(
                    f"<figure><img src='{self._image(src)}' alt='{caption}'>"
                    f"<figcaption>{caption}</figcaption></figure>"
                )
            elif kind == "details":
                out.append(f"<details><summary>{html.escape(payload)}</summary>")
            else:
                out.append("</details>")
        out.append(f"<script>{_SORT_JS}</script></body></html>")
        return "\n".join(out)
