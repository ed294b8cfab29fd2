"""The project's folders: the checkout root and the folders the kit reads and writes."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = PROJECT_ROOT / "notebooks"
PARAMS = PROJECT_ROOT / "params"
REPORTS = PROJECT_ROOT / "reports"


def shown(path: str | os.PathLike) -> str:
    """``path`` as reports and records show it, naming no one's folders: ``$KIT_DATA/...`` under
    ``$KIT_DATA``; relative to the project when it lies in the folder that holds the project
    (``../shared/data/biosses/biosses.tsv``, ``reports/...``); else as given (a place the user chose)."""
    path = Path(os.path.abspath(path))  # not resolved: a linked data folder keeps the name it was found by
    data = os.environ.get("KIT_DATA")
    if data and path.is_relative_to(os.path.abspath(data)):
        return f"$KIT_DATA/{path.relative_to(os.path.abspath(data)).as_posix()}"
    if path.is_relative_to(PROJECT_ROOT.parent):
        return Path(os.path.relpath(path, PROJECT_ROOT)).as_posix()
    return str(path)
