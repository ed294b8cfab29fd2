"""Result tables: "mean ± std" cells, signed intervals and durations in words, one row per method over seeds, the
titled tables file, and the HTML the notebooks show tables with (text left-aligned, numbers right-aligned)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.files import write_text_atomic
from kit.evaluation.inference import NOT_ESTIMABLE, beyond_scale


def mean_std(values, digits: int = 2) -> str:
    """ "mean ± std" with the sample std (ddof 1); a single value is shown alone."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}" if len(v) > 1 else f"{v[0]:.{digits}f}"


def number(value, digits: int = 2, scale: float = 1) -> str:
    """``value`` x ``scale`` with ``digits`` decimals; "n/a" for a missing one (None, as strict JSON writes NaN,
    or NaN)."""
    return "n/a" if value is None or value != value else f"{value * scale:.{digits}f}"


def signed_interval(estimate: float, low: float, high: float, digits: int = 1) -> str:
    """A difference and its interval with their signs, minus as the typographic minus: ``+2.2 [−0.4, +4.9]``; an
    interval past the widest range of a difference (``kit.evaluation.inference.beyond_scale``) is not printed."""
    if beyond_scale(low, high):
        return f"{estimate:+.{digits}f} [{NOT_ESTIMABLE}]".replace("-", "−")
    return f"{estimate:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]".replace("-", "−")


def duration(seconds: float) -> str:
    """A time in words: ``42 s`` under a minute, ``9 min`` under an hour, else ``2 h 05 min``."""
    if seconds < 59.5:
        return f"{round(seconds)} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


TASK_CONSTANTS = ("chance",)
"""Metrics of the task, not the model: the same for every row and seed."""


def summarize(results: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per ``method`` (in row order, labelled by its ``label``): the number of seeds and each
    metric as mean ± std over seeds; Spearman, hit rates and chance x100 with 2 decimals, others with 3. A metric
    of the task alone (``TASK_CONSTANTS``: a random ranking's hit rate) is the same for every seed: shown alone."""
    out = []
    for _, grp in results.groupby("method", sort=False):
        row = {"method": grp["label"].iloc[0], "seeds": len(grp)}
        for m in metrics:
            percent = m.startswith(("spearman", "hit_at", "chance"))
            values = grp[m].to_numpy() * (100 if percent else 1)
            row[m] = mean_std(values[:1] if m in TASK_CONSTANTS else values, 2 if percent else 3)
        out.append(row)
    return pd.DataFrame(out)


# A metric's field name (``results.json``'s key, stable for scripts) -> its column title in what a person reads.
COLUMN_TITLES = {
    "spearman_test": "Spearman test",
    "spearman_all": "Spearman all pairs",
    "spearman_dev": "Spearman dev",
    "spearman_entity": "Spearman entity pairs",
    "spearman_medsts": "Spearman MedSTS",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "focus_accuracy": "focus accuracy",
    "hit_at_1": "hit@1",
}


def column_title(key) -> str:
    """The title a table shows for the column ``key``: ``COLUMN_TITLES``' name for a metric field, else ``key``."""
    return COLUMN_TITLES.get(key, key)


def write_tables(report_dir: Path, tables: dict[str, pd.DataFrame]) -> dict:
    """``results_table.txt`` (every table, titled, its metric columns by ``column_title``; the batch runner prints
    it) and the tables as records for ``results.json`` (keyed by the field names)."""
    tables = {title: _labels_as_columns(table) for title, table in tables.items()}
    text = "\n\n".join(
        f"{title}\n{table.rename(columns=column_title).to_string(index=False)}" for title, table in tables.items()
    )
    write_text_atomic(Path(report_dir) / "results_table.txt", text)
    return {title: table_records(table) for title, table in tables.items()}


def table_records(table: pd.DataFrame) -> list[dict]:
    """A table as ``results.json`` keeps it: its rows as records, meaningful row labels as the first columns."""
    return _labels_as_columns(table).to_dict("records")


def _labels_as_columns(table: pd.DataFrame) -> pd.DataFrame:
    """A table whose row labels mean something (not 0, 1, ...) with them as its first columns."""
    return table if isinstance(table.index, pd.RangeIndex) else table.reset_index()


NUMBER_CELL = re.compile(r"[\s\d.,+\-−±%()\[\]x×/eE]*|nan|None")  # numbers, "mean ± std", intervals
_table_ids = itertools.count()


def dataframe_html(df: pd.DataFrame) -> str:
    """pandas' own HTML for ``df`` with a rule that left-aligns its text columns (a column with any cell that is not
    a number, "mean ± std" or an interval); JupyterLab's style, which the reports use, right-aligns every cell,
    which makes sentences hard to read; a number column does not wrap ("+1.8 [−3.7,⏎+8.2]"). Row labels that
    mean something become the first columns, in bold, as in ``results_table.txt`` (one header row, not pandas'
    second row of index names); a default 0, 1, ... index says nothing and is left out. Metric columns show their
    ``column_title``."""
    table_id = f"kit-table-{next(_table_ids)}"
    labels = 0 if isinstance(df.index, pd.RangeIndex) else df.index.nlevels
    df = _labels_as_columns(df).rename_axis(columns=None).rename(columns=column_title)  # a named axis adds a cell
    body = df.to_html(
        table_id=table_id,
        index=False,
        max_rows=pd.get_option("display.max_rows"),
        max_cols=pd.get_option("display.max_columns"),
    )
    text = [
        i + 1
        for i, column in enumerate(df.columns)
        if not all(NUMBER_CELL.fullmatch(str(v)) for v in df[column].head(50))
    ]
    numbers = [i for i in range(1, len(df.columns) + 1) if i not in text]

    def cells(columns, kinds=("td",)) -> str:
        return ", ".join(f"#{table_id} {kind}:nth-child({i})" for i in columns for kind in kinds)

    rules = [f"{cells(text, ('td', 'thead th'))} {{text-align: left}}"] if text else []
    rules += [f"{cells(numbers)} {{white-space: nowrap}}"] if numbers else []
    rules += [f"{cells(range(1, labels + 1))} {{font-weight: bold}}"] if labels else []
    return f"<style>{' '.join(rules)}</style>{body}"


def family_table(title: str) -> bool:
    """A record's table of a corrected family (``kit.evaluation.rows.group_tables``), by its title."""
    return title.endswith(": main metric x100 [95% interval]")


def split_family_table(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A family's table (``kit.evaluation.rows.table``, indexed by task and method, or its records: per row its score,
    and for a comparison its baseline ``vs`` and the columns after ``score``) as two that fit a 1024 px screen: the
    scores (each task and method once, the columns up to ``score``) and the comparisons (the rows with a baseline:
    task, method and the columns after ``score``), both with a default index."""
    table = _labels_as_columns(table)
    columns = list(table.columns)
    cut = columns.index("score") + 1
    scores = table[columns[:cut]].drop_duplicates(subset=columns[:2]).reset_index(drop=True)
    compared = table[table["vs"].astype(str).str.len() > 0]
    return scores, compared[columns[:2] + columns[cut:]].reset_index(drop=True)
