"""``reports/index.html``: the latest execution of every run found under the reports folder.

The index is rebuilt from the report folders themselves, so a batch adds to it and never drops
earlier runs. Each run folder ``<notebook>/<run>/`` holds what its latest execution left:
``results.json`` when it finished, ``error.log`` when it failed (``RECORD_FILES``; ``kit.batch``
clears them before it executes the run again).
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

from kit.core.files import write_text_atomic

RECORD_FILES = ("results.json", "results_table.txt", "error.log")


def _row(folder: Path, reports: Path) -> tuple[bool, str] | None:
    """(failed, table row) for a run folder, or None when it holds no record of an execution."""
    rel = folder.relative_to(reports)
    run = f"<a href='{rel.as_posix()}/report.html'>{html.escape(rel.name)}</a>"
    cells = [html.escape(str(rel.parent)), run]
    if (folder / "error.log").exists():
        reason = (folder / "error.log").read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        log = f"<a href='{rel.as_posix()}/error.log'>log</a>"
        return True, _tr([*cells, "<b>failed</b>", f"{html.escape(reason)} ({log})", "", "", ""], "failed")
    if not (folder / "results.json").exists():
        return None
    try:
        r = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        head = r.get("headline", {})
        value = head.get("value")
        return False, _tr(
            [
                *cells,
                "finished",
                f"{html.escape(str(head.get('name', '')))}: {'' if value is None else f'{value:.2f}'}",
                html.escape(r.get("finished", "")),
                str(r.get("wall_seconds", "")),
                f"<code>{html.escape(r.get('git_commit', '')[:12])}</code>",
            ]
        )
    except (ValueError, AttributeError, TypeError) as err:  # a damaged record must not hide the others
        print(f"[kit.batch] {folder / 'results.json'} is unreadable ({err}); the index lists it so", file=sys.stderr)
        return True, _tr([*cells, "<b>unreadable</b>", html.escape(f"results.json: {err}"), "", "", ""], "failed")


def _tr(cells: list[str], css: str = "") -> str:
    return f"<tr class='{css}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def write_index(reports: Path) -> Path:
    """``reports/index.html``: one row per run folder (notebook, run, status, headline metric or failure
    reason, finished, seconds, commit), failed runs first."""
    rows = [_row(folder, reports) for folder in sorted(p for p in reports.glob("*/*") if p.is_dir())]
    rows = [html_row for _, html_row in sorted((r for r in rows if r), key=lambda r: not r[0])]
    page = (
        "<!doctype html><meta charset='utf-8'><title>medcse reports</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;border-bottom:1px solid #ddd;"
        "text-align:left}tr.failed{background:#fde8e8}</style>"
        "<h1>medcse study kit: reports</h1><table><tr><th>notebook</th><th>run</th><th>status</th>"
        f"<th>headline or failure</th><th>finished</th><th>seconds</th><th>commit</th></tr>{''.join(rows)}</table>"
    )
    return write_text_atomic(reports / "index.html", page)
