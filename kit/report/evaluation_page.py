"""What ``python -m kit.evaluate`` writes: the console's text table and the self-contained HTML page.

The page holds the suite table (every comparison, with intervals, corrected as a family), every metric, the models
and the task declarations; plain HTML, no scripts, links relative to the page (``evaluation.json`` beside it).
"""

from __future__ import annotations

import html
from collections.abc import Callable

from kit.evaluation.suite import SuiteResult

NUMERIC = ("items", "score", "difference", "family interval", "p", "resolves")


def numeric_column(column: str) -> bool:
    """Whether a column of the suite's tables holds numbers: one of ``NUMERIC``, or an adjusted p (``p (holm)``)."""
    return column in NUMERIC or column.startswith("p (")


def text_table(rows: list[dict], numeric: Callable[[str], bool] = numeric_column) -> str:
    """Rows as aligned text columns: those ``numeric`` names right-aligned, the others left-aligned."""
    if not rows:
        return ""
    columns = list(rows[0])
    cells = [[str(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]

    def line(values):
        return "  ".join(v.rjust(w) if numeric(c) else v.ljust(w) for c, v, w in zip(columns, values, widths)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def all_metric_rows(result: SuiteResult, scale: float = 100.0, digits: int = 2) -> list[dict]:
    """One row per (task, metric, model): every metric with its interval, and per comparison of the model its
    difference with the interval and p-value of the comparison alone (the family is the main metrics')."""
    rows = []
    for r in result.tasks:
        for metric in r.task.metrics:
            for model in result.models:
                row = {
                    "task": r.task.name,
                    "metric": r.task.metric_labels[metric],
                    "model": model,
                    "score": f"{r.estimates[model][metric].scaled(scale):.{digits}f}",
                    "vs": "",
                    "difference": "",
                }
                pairs = [pair for pair in result.pairs if pair[0] == model]
                rows += (
                    [row]
                    if not pairs
                    else [
                        {**row, "vs": b, "difference": f"{r.comparisons[(a, b)][metric].scaled(scale):.{digits}f}"}
                        for a, b in pairs
                    ]
                )
    return rows


def numeric_cell(column: str, text: str) -> bool:
    """Whether a cell of the suite's tables holds a number: whether its column does (``numeric_column``)."""
    return numeric_column(column)


def html_table(rows: list[dict], numeric: Callable[[str, str], bool] = numeric_cell) -> str:
    """Rows as an HTML table: a cell ``numeric`` says holds a number (given its column and its text) is right-aligned
    on one line (``td.num``), the others left-aligned and wrapped (``td.text``)."""
    if not rows:
        return "<p>(no rows)</p>"
    columns = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)

    def cell(column, value):
        text = str(value)
        return f'<td class="{"num" if numeric(column, text) else "text"}">{html.escape(text)}</td>'

    body = "".join("<tr>" + "".join(cell(c, r[c]) for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def title(models: list[str]) -> str:
    return f"kit.evaluate: {models[0]} (baseline)" + "".join(f" vs {m}" for m in models[1:])


def legend(result: SuiteResult) -> str:
    """What ``*``, p and resolves mean in the table."""
    conf = f"{result.confidence:.0%}"
    family = len(result.pairs) * sum(not r.within for r in result.tasks)
    if result.correction == "none" or family <= 1:
        star = f"* p < {1 - result.confidence:.2g} (the paired {conf} interval excludes zero); no correction"
    else:
        star = (
            f"* significant after {'Holm' if result.correction == 'holm' else 'Benjamini-Hochberg'}'s correction "
            f"over the {family} comparisons on the tasks' main metrics (p ({result.correction}) < "
            f"{1 - result.confidence:.2g}); family interval: at the family's level"
            + (
                " (Bonferroni's, which can reach zero where Holm's step-down rejects)"
                if result.correction == "holm"
                else ""
            )
        )
    within = [r for r in result.tasks if r.within]
    regimes = [line for line in (result.regime(m) for m in result.models) if line]
    anchors = (
        " Lexical anchors (TF-IDF cosine, BM25: kit.evaluation.lexical) are fixed rows on the tasks they apply to; "
        "each model is compared with the best of them per task, alpha not corrected and outside the family: "
        + " ".join(regimes)
        if regimes
        else ""
    )
    return (
        f"{star}. p: from the same t distribution as the {conf} interval, so p < {1 - result.confidence:.2g} "
        "exactly when the interval excludes zero. resolves: the smallest difference found with 80% power at the "
        "family's level."
        + (
            " Not in the family: "
            + "; ".join(f"`{r.task.name}`, whose items lie within `{r.within}`" for r in within)
            + " (part of that task's finding)."
            if within
            else ""
        )
        + anchors
    )


def render_html(result: SuiteResult, about: list[dict]) -> str:
    """The report page: the suite table, every metric, the models and the task declarations. Plain HTML,
    no scripts, links relative to the page (evaluation.json beside it)."""
    conf = f"{result.confidence:.0%}"
    method = (
        f"Scores x100 with {conf} intervals ({result.resamples:,} draws of the task's items, seed {result.seed}). "
        f"Every model after the first is compared with the first, {html.escape(result.baseline)}, and each pair "
        "asked for with --compare: the paired difference (both models scored on the same item draws) with its "
        f"{conf} interval and p-value from one t test (a single model is a fixed artefact: its items are the "
        "variation; a model given as several seeds adds their run-to-run spread; kit.evaluation.inference). "
        + html.escape(legend(result))
    )
    models = "".join(
        f"<li><b>{html.escape(a['name'])}</b>: {html.escape(a.get('description', ''))}; pooler "
        f"{html.escape(str(a.get('pooler', '')))}, max length {a.get('max_length', '')}, "
        f"{html.escape(str(a.get('precision', '')))}, backend {html.escape(str(a.get('backend', 'torch')))}</li>"
        for a in about
    )
    declarations = [
        {
            "task": r.task.name,
            "type": r.task.type,
            "data": r.task.dataset.name,
            "split": r.task.split,
            "items": r.task.items,
            "metric": r.task.metric_labels[r.task.main_metric],
            "positive": r.task.positive,
            "seen by": ", ".join(r.task.seen_by) or "-",
            "source": r.task.dataset.source,
        }
        for r in result.tasks
    ]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}"
        "table{border-collapse:collapse;margin:1em 0}th,td{padding:3px 10px;border-bottom:1px solid #ddd;"
        "vertical-align:top}th{text-align:left}td.text{text-align:left}td.num{text-align:right;"
        "white-space:nowrap;font-variant-numeric:tabular-nums}"
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title(result.models))}'
        f"</title><style>{style}</style></head><body>\n<h1>{html.escape(title(result.models))}</h1>\n"
        f"<p>{method}</p>\n{html_table(result.rows())}\n"
        "<p>A task is 'seen by' the studies that train on its data: report it apart for them.</p>\n"
        f"<h2>Every metric</h2>\n{html_table(all_metric_rows(result))}\n"
        f"<h2>Models</h2>\n<ul>{models}</ul>\n<h2>Tasks</h2>\n{html_table(declarations)}\n"
        f'<p>Every number, the settings and the versions: <a href="evaluation.json">evaluation.json</a>. '
        f"Suite time {result.seconds:.0f} s.</p>\n</body></html>\n"
    )
