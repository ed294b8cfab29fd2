"""Run provenance: ``results.json`` with metrics, parameters, seeds, versions, device, commit, time."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from kit.data import PROJECT_ROOT

PACKAGES = ("kit-medcse", "torch", "transformers", "sentence-transformers", "numpy", "scikit-learn", "scipy", "papermill")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_commit() -> str:
    """HEAD of the project checkout, with ``-dirty`` when tracked files differ; 'unknown' outside git."""
    try:
        run = lambda *a: subprocess.run(["git", *a], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout.strip()  # noqa: E731
        return run("rev-parse", "HEAD") + ("-dirty" if run("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class RunRecord:
    """Collects what a report needs to be traced, and writes it as ``results.json``."""

    def __init__(self, notebook: str, report_dir: str | Path, parameters: dict):
        self.notebook, self.report_dir, self.parameters = notebook, Path(report_dir), parameters
        self.started = time.time()
        self.commit = git_commit()  # at the start: the code that ran, even if the tree changes later

    def write(self, metrics: dict, headline: dict, **extra) -> Path:
        """``headline`` = {"name": ..., "value": ...}: the number the reports index shows."""
        import torch

        from kit.devices import describe, resolve_device

        record = {
            "notebook": self.notebook,
            "headline": headline,
            "metrics": metrics,
            "parameters": self.parameters,
            "versions": versions(),
            "device": describe(resolve_device(self.parameters.get("device", "auto"))),
            "torch_threads": torch.get_num_threads(),
            "git_commit": self.commit,
            "wall_seconds": round(time.time() - self.started, 1),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
            **extra,
        }
        self.report_dir.mkdir(parents=True, exist_ok=True)
        out = self.report_dir / "results.json"
        out.write_text(json.dumps(record, indent=1, default=str))
        return out


def mean_std(values, digits: int = 2) -> str:
    """"mean ± std" with the sample std (ddof 1); a single value is shown alone."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}" if len(v) > 1 else f"{v[0]:.{digits}f}"


def cached_run(run_dir: Path, compute, seconds: dict[str, float]) -> dict:
    """A study's finished run: ``run_dir/result.json`` if it exists, else ``compute()`` (a dict),
    timed into its ``seconds`` field and saved there. The compute time of every run used, cached
    or not, is recorded in ``seconds`` under the folder's name (the reports sum it). An exclusive
    lock on the folder makes a process that wants a run another is computing (``kit.batch --jobs``)
    wait for its result instead of training it a second time."""
    import fcntl

    run_dir = Path(run_dir)
    result_file = run_dir / "result.json"
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result_file.exists():
            result = json.loads(result_file.read_text())
        else:
            t0 = time.perf_counter()
            result = compute()
            result["seconds"] = time.perf_counter() - t0
            result_file.write_text(json.dumps(result))
    seconds[run_dir.name] = result["seconds"]
    return result


def write_tables(report_dir: Path, tables: dict) -> dict:
    """``results_table.txt`` (every table, titled; the batch runner prints it) and the tables as
    records for ``results.json``."""
    text = "\n\n".join(f"{title}\n{table.to_string(index=False)}" for title, table in tables.items())
    (Path(report_dir) / "results_table.txt").write_text(text, encoding="utf-8")
    return {title: table.to_dict("records") for title, table in tables.items()}
