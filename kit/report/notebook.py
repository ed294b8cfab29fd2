"""The first call of every study notebook: the report's look, quiet libraries in batch runs, and the run record."""

from __future__ import annotations

from pathlib import Path

from kit.core.progress import quiet_libraries
from kit.params import Params
from kit.paths import REPORTS
from kit.report.plots import use_style
from kit.report.record import RunRecord


def start(notebook: str, params: Params, report_dir: str | Path | None = None) -> RunRecord:
    """Set the figures' style, silence library progress bars in batch runs, show the run's description,
    and open the run's record; its ``report_dir`` defaults to ``reports/<notebook>/interactive``."""
    from IPython.display import Markdown, display

    use_style()
    quiet_libraries()
    if params.description:
        display(Markdown(f"**This run**: {params.description.strip()}"))
    return RunRecord(notebook, Path(report_dir or REPORTS / notebook / "interactive"), params.to_dict())
