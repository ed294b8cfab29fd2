"""The project's folders: the checkout root and the folders the kit reads and writes."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = PROJECT_ROOT / "notebooks"
PARAMS = PROJECT_ROOT / "params"
REPORTS = PROJECT_ROOT / "reports"
