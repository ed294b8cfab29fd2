"""The first call of every study notebook: the report's look (figures, tables), quiet libraries in batch
runs, and the run record.

Importing this module (every notebook's first cell does, before its parameters are checked) sets the
kernel's warning format to ``warning_line``, so that no warning in a report names a file of this machine."""

from __future__ import annotations

import warnings
from pathlib import Path

from kit.core.progress import quiet_libraries
from kit.params import Params
from kit.paths import REPORTS
from kit.report import plots
from kit.report.record import RunRecord
from kit.report.tables import dataframe_html, split_family_table


def warning_line(message, category, filename, lineno, line=None) -> str:
    """A warning as a report shows it: its category and message, without the source file's path."""
    return f"{category.__name__}: {message}\n"


warnings.formatwarning = warning_line


def start(notebook: str, params: Params, report_dir: str | Path | None = None) -> RunRecord:
    """Set the figures' and tables' style, silence library progress bars in batch runs, show the run's description,
    and open the run's record; its ``report_dir`` defaults to ``reports/<notebook>/interactive``."""
    import pandas as pd
    from IPython import get_ipython
    from IPython.display import Markdown, display

    plots.use_style()
    if shell := get_ipython():  # tables with their text left-aligned
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, dataframe_html)
    quiet_libraries()
    if params.description:
        display(Markdown(f"**This run**: {params.description.strip()}"))
    return RunRecord(notebook, Path(report_dir or REPORTS / notebook / "interactive"), params.to_dict())


def control_and_primary(*reports) -> str:
    """A report's opening (Markdown): the positive control of the first of ``reports`` (``SuiteReport``) that holds
    one, then the first primary comparison; a sentence for either when the run has none."""
    control = next((r.control_text() for r in reports if r.control_text()), "")
    primary = next((r.primary_text() for r in reports if r.primary_text()), "")
    return (
        f"**{control or 'No positive control: this run lacks the base method the control tests.'}**\n\n"
        f"**{primary or 'This run declares no primary comparison (`primary`): every comparison below is secondary.'}**"
    )


def show_family(family, figure: str, report_dir: str | Path) -> None:
    """Show a corrected family of comparisons (a ``kit.evaluation.rows.SuiteReport``: the suite's, QFCL's ROUGE):
    what it compares, its tables (each split in two: ``split_family_table``), its verdicts, and the forest plot of
    its tested comparisons (``plots.comparisons``), saved as ``figures/<figure>``."""
    from IPython.display import Markdown, display

    display(Markdown(family.about()))
    for title, table in family.tables().items():  # scores, then comparisons: each fits a 1024 px screen
        scores, compared = split_family_table(table)
        display(Markdown(f"**{title}: scores**"), scores)
        if len(compared):
            display(Markdown(f"**{title}: comparisons**"), compared)
    display(Markdown(family.verdict()))
    if (fig := plots.comparisons(family.record())) is not None:
        plots.save(fig, figure, report_dir)
