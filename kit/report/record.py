"""Run provenance: ``results.json`` with metrics, parameters, seeds, versions, device, commit, time."""

from __future__ import annotations

import os
import platform
import subprocess
import time
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
        """``headline`` = {"name": ..., "value": ...}: the number the reports index shows."""
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
        return write_text_atomic(self.report_dir / "results.json", json_text(record, indent=1, default=str))
