"""Run provenance: ``results.json`` with metrics, parameters, seeds, versions, device, commit, time; its tables as
LaTeX beside it (``tables.tex``, ``kit.report.latex``)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
import warnings
from importlib import metadata
from pathlib import Path

from kit.core.files import json_text, write_text_atomic
from kit.paths import PROJECT_ROOT

PACKAGES = (
    "kit-medcse",
    "torch",
    "transformers",
    "sentence-transformers",
    "numpy",
    "scikit-learn",
    "scipy",
    "papermill",
    "onnxruntime",
)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout.strip()


def git_commit() -> str:
    """HEAD of the project checkout, with ``-dirty`` when tracked files differ; 'unknown' outside git.
    ``$KIT_COMMIT`` overrides it where the code runs from a copy of a clean checkout without its ``.git``
    (a GPU machine that receives the working tree)."""
    if os.environ.get("KIT_COMMIT"):
        return os.environ["KIT_COMMIT"] + " (copy)"
    try:
        return _git("rev-parse", "HEAD") + ("-dirty" if _git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class RunRecord:
    """Collects what a report needs to be traced, and writes it as ``results.json``."""

    def __init__(self, notebook: str, report_dir: str | Path, parameters: dict):
        self.notebook, self.report_dir, self.parameters = notebook, Path(report_dir), parameters
        self.started = time.time()
        self.commit = git_commit()  # at the start: the code that ran, even if the tree changes later

    def write(self, metrics: dict, headline: dict, **extra) -> Path:
        """``headline`` = {"name": ..., "value": ...}: the number the reports index shows. Writes ``results.json``
        and ``tables.tex`` (from the record as written, so the two hold the same numbers); returns the first."""
        import torch

        from kit.core.devices import describe, resolve_device

        record = {
            "notebook": self.notebook,
            "headline": headline,
            "metrics": metrics,
            "parameters": self.parameters,
            "versions": versions(),
            "device": describe(resolve_device(self.parameters.get("device", "auto"))),
            "torch_threads": torch.get_num_threads(),
            # the notebook's process, all runs it computed: what a GPU of this size must hold
            "cuda_peak_memory_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2)
            if torch.cuda.is_available()
            else None,
            "git_commit": self.commit,
            "wall_seconds": round(time.time() - self.started, 1),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
            **extra,
        }
        from kit.report.latex import tables_tex

        written = write_text_atomic(self.report_dir / "results.json", json_text(record, indent=1, default=str))
        try:  # the record is what the run must keep: a table LaTeX cannot render is a warning, never its failure
            tex = tables_tex(json.loads(written.read_text(encoding="utf-8")))
        except (KeyError, TypeError, ValueError) as err:
            warnings.warn(f"tables.tex not written ({type(err).__name__}: {err}); results.json holds every number")
        else:
            write_text_atomic(self.report_dir / "tables.tex", tex)
        return written


def beside_report(report_dir: str | Path) -> str:
    """What the record section says a report folder holds beside ``report.html``: its record files (``results.json``,
    ``results_table.txt``, ...) and its figures, each saved as PNG, SVG and PDF under ``figures/``."""
    folder = Path(report_dir)
    files = sorted(p.name for p in folder.glob("*.*") if p.is_file() and p.suffix in (".json", ".txt", ".tex"))
    figures = sorted({p.stem for p in (folder / "figures").glob("*.png")})
    said = f"Beside this report: {', '.join(files) or 'no record file'}"
    return said + (f"; under figures/, as PNG, SVG and PDF: {', '.join(figures)}." if figures else ".")
