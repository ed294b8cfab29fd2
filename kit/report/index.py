"""``reports/index.html``: every report found under the reports folder, and the failures of the last batch."""

from __future__ import annotations

import html
import json
from pathlib import Path


def write_index(reports: Path, failures: dict[str, str]) -> Path:
    """``reports/index.html``: every report found, its headline metric, and the failed runs."""
    rows = []
    for res in sorted(reports.glob("*/*/results.json")):
        r = json.loads(res.read_text())
        rel = res.parent.relative_to(reports)
        head = r.get("headline", {})
        value = head.get("value")
        rows.append(
            f"<tr><td>{html.escape(str(rel.parent))}</td><td><a "
            f"href='{rel}/report.html'>{html.escape(rel.name)}</a></td>"
            f"<td>{html.escape(str(head.get('name', '')))}</td><td>{'' if value is None else f'{value:.2f}'}</td>"
            f"<td>{html.escape(r.get('finished', ''))}</td><td>{r.get('wall_seconds', '')}</td>"
            f"<td><code>{html.escape(r.get('git_commit', '')[:12])}</code></td></tr>"
        )
    failed = "".join(f"<li><b>{html.escape(k)}</b>: <pre>{html.escape(v)}</pre></li>" for k, v in failures.items())
    page = (
        "<!doctype html><meta charset='utf-8'><title>medcse reports</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;border-bottom:1px solid #ddd}</style>"
        "<h1>medcse study kit: reports</h1><table><tr><th>notebook</th><th>run</th><th>headline</th><th>value</th>"
        f"<th>finished</th><th>seconds</th><th>commit</th></tr>{''.join(rows)}</table>"
        + (f"<h2>Failed in the last batch</h2><ul>{failed}</ul>" if failed else "")
    )
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "index.html").write_text(page, encoding="utf-8")
    return reports / "index.html"
