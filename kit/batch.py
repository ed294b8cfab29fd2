"""Batch runs: ``python -m kit.batch PARAM_FILES_OR_FOLDERS... [--reports DIR] [--jobs N]``.

Each YAML run file, ``params/<notebook>/<run>.yaml``, holds the parameters of one run of a notebook.
Every file is validated first, before any notebook starts (keys, types, values, sizes that must fit
the data, models that must load here); then each run is executed by papermill into
``reports/<notebook>/<run>/<notebook>.ipynb`` with every parameter set, exported to ``report.html``
(code hidden) by nbconvert, and ``reports/index.html`` is rewritten. A failing run does not stop the
others; the command exits 1 and names the failures. ``--jobs N`` uses N processes, each pinned to
one GPU (round-robin over the visible GPUs) or, without GPUs, to an equal share of the CPU threads:
first the trainings of each run file (rows, seeds, sweep points: its study's ``planned_runs``) are
spread over them into the file's run cache, then N notebooks execute at once and read those results;
every run still writes its own report folder.

The study of a notebook is the package ``kit.studies.<notebook>``: its ``Params`` declare the
notebook's parameters and its ``Study`` (for notebooks that train) lists and computes the runs.
``--describe NOTEBOOK`` prints the parameters; ``--sync-notebooks`` regenerates every notebook's
papermill ``parameters`` cell from them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import kit.studies
from kit.core.files import write_text_atomic
from kit.params import ParameterError, Params, read_run_file
from kit.paths import NOTEBOOKS, PROJECT_ROOT, REPORTS
from kit.report.index import RECORD_FILES, write_index
from kit.study import Study


def notebooks() -> list[str]:
    """Every notebook with a study package (``kit/studies/<notebook>/``)."""
    return sorted(m.name for m in pkgutil.iter_modules(kit.studies.__path__) if m.ispkg)


def study_module(notebook: str) -> ModuleType:
    """``kit.studies.<notebook>``: its ``Params`` and, for a notebook that trains, its ``Study``."""
    if notebook not in notebooks():
        raise ParameterError(f"unknown notebook '{notebook}'; notebooks: {notebooks()}")
    return importlib.import_module(f"kit.studies.{notebook}")


def study_params(notebook: str) -> type[Params]:
    """The parameter declaration of a notebook."""
    return study_module(notebook).Params


@dataclass
class Run:
    file: Path
    notebook: str
    name: str
    parameters: dict  # every parameter, defaults filled in

    def report_dir(self, reports: Path) -> Path:
        return reports / self.notebook / self.name


def collect(paths: list[str]) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.rglob("*.yaml"))
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"no such run file or folder: {p}")
    return files


def prepare(file: Path) -> Run:
    """Read and check one run file: keys, types, values, then the models (raises ParameterError naming the file)."""
    run_file = read_run_file(file)
    try:
        params = study_params(run_file.notebook).from_dict(run_file.parameters)
        params.check_resources()
    except (ParameterError, OSError, ValueError) as err:  # OSError: a data file that is missing or malformed
        raise ParameterError(f"{file}: {err}") from None
    return Run(file, run_file.notebook, run_file.name, params.to_dict())


class RunFailed(Exception):
    """A run's notebook failed; the message is one line (the error and its cell), the full log is ``log``."""

    def __init__(self, reason: str, log: Path):
        super().__init__(reason, log)  # both in args: it crosses process boundaries (--jobs) by pickling
        self.reason, self.log = reason, log

    def __str__(self) -> str:
        return self.reason


def failure_reason(err: BaseException) -> str:
    """One line: the exception's type and message and, for an error inside the notebook, the cell."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(err, PapermillExecutionError):
        message, where = f"{err.ename}: {err.evalue}", f" (notebook cell In [{err.exec_count}])"
    else:
        message, where = f"{type(err).__name__}: {err}", ""
    message = " ".join(message.split())
    return (message[:600] + " ..." if len(message) > 600 else message) + where


def failure_log(err: BaseException) -> str:
    """The full story of a failure: the reason, the failing cell's source and the traceback, without colour codes."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(err, PapermillExecutionError):
        cell = f"--- the failing cell (In [{err.exec_count}]) ---\n{err.source}\n"
        trace = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", "\n".join(err.traceback))  # the kernel's colour codes
    else:
        cell, trace = "", "".join(traceback.format_exception(err))
    return f"{failure_reason(err)}\n\n{cell}--- traceback ---\n{trace}\n"


def shared_report_folders(runs: list[Run], reports: Path) -> list[str]:
    """A message for every report folder that two run files would write (same notebook, same file name)."""
    by_folder: dict[Path, list[Path]] = {}
    for run in runs:
        by_folder.setdefault(run.report_dir(reports), []).append(run.file)
    return [
        f"{' and '.join(map(str, files))} would write one report folder, {folder}; rename one of the files"
        for folder, files in by_folder.items()
        if len(files) > 1
    ]


def execute(run: Run, reports: Path) -> Path:
    """papermill execution and HTML export; returns the report's HTML path. A previous execution's
    record is removed first, so the folder always shows this one. When the notebook fails, the
    executed notebook is still exported (the error shows in its cell), the failure is written to
    ``error.log`` beside it, and ``RunFailed`` (its one-line reason) is raised."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out_dir = run.report_dir(reports)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in RECORD_FILES:
        (out_dir / stale).unlink(missing_ok=True)
    executed = out_dir / f"{run.notebook}.ipynb"
    os.environ["KIT_PROGRESS"] = "0"
    failure = None
    try:
        papermill.execute_notebook(
            str(NOTEBOOKS / f"{run.notebook}.ipynb"),
            str(executed),
            parameters={**run.parameters, "report_dir": str(out_dir.resolve())},
            cwd=str(PROJECT_ROOT),
            progress_bar=False,
            kernel_name="python3",
        )
    except Exception as err:  # the kernel's error, or papermill's own
        failure = err
    html_file = out_dir / "report.html"
    if executed.exists():
        body, _ = HTMLExporter(
            exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
        ).from_notebook_node(nbformat.read(executed, as_version=4))
        write_text_atomic(html_file, body)
    if failure is not None:
        log = write_text_atomic(out_dir / "error.log", failure_log(failure))
        raise RunFailed(failure_reason(failure), log) from failure
    return html_file


def job_environment(slot: int, jobs: int, gpus: int, cpus: int) -> dict[str, str]:
    """Environment of the ``slot``-th concurrent run: one GPU each (round-robin) when there are GPUs,
    else cpus // jobs threads each."""
    if gpus:
        return {"CUDA_VISIBLE_DEVICES": str(slot % gpus)}
    threads = str(max(1, cpus // jobs))
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def _execute_pinned(run: Run, reports: Path, env: dict[str, str]) -> Path:
    """``execute`` in a fresh worker process whose environment (inherited by the kernel) pins it."""
    os.environ.update(env)
    return execute(run, reports)


def _train_share(run: Run, reports: Path, slot: int, jobs: int, env: dict[str, str]) -> None:
    """Worker process: build the run file's study and train every ``jobs``-th of its planned runs,
    starting at ``slot``, into the study's run cache."""
    os.environ.update({**env, "KIT_PROGRESS": "0"})  # before CUDA starts: the pinning holds
    import torch

    from kit.core.progress import quiet_libraries

    quiet_libraries()
    if "OMP_NUM_THREADS" in env:
        torch.set_num_threads(int(env["OMP_NUM_THREADS"]))
    module = study_module(run.notebook)
    try:
        study: Study = module.Study(module.Params.from_dict(run.parameters), run.report_dir(reports))
        for args in study.planned_runs()[slot::jobs]:
            study.run(*args)
    except Exception as err:  # the notebook meets it again and reports it in full
        print(f"[kit.batch] {run.notebook}/{run.name}: training ahead stopped: {failure_reason(err)}", file=sys.stderr)
        sys.exit(1)


def train_ahead(run: Run, reports: Path, jobs: int) -> None:
    """Spread the run file's trainings over ``jobs`` pinned processes (one per slot, so each
    process keeps its pinning); the notebook then finds them cached. A failure is only reported
    here: the notebook meets it again and fails with the full error."""
    import multiprocessing

    import torch

    if not hasattr(study_module(run.notebook), "Study"):
        return
    gpus, cpus = torch.cuda.device_count(), os.cpu_count() or 1
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_train_share, args=(run, reports, slot, jobs, job_environment(slot, jobs, gpus, cpus)))
        for slot in range(jobs)
    ]
    t0 = time.time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    failed = sum(w.exitcode != 0 for w in workers)
    print(
        f"[kit.batch] {run.notebook}/{run.name}: trainings in {jobs} processes, {time.time() - t0:.0f}s"
        + (f", {failed} process(es) failed" if failed else ""),
        flush=True,
    )


def execute_all(runs: list[Run], reports: Path, jobs: int) -> dict[str, str]:
    """Execute every run (``jobs`` at a time); returns the failures, run name -> error."""
    failures: dict[str, str] = {}

    def done(run: Run, t0: float, html_file: Path | None, err: BaseException | None) -> None:
        name = f"{run.notebook}/{run.name}"
        if err is not None:  # one failing run must not stop the batch
            reason = str(err) if isinstance(err, RunFailed) else failure_reason(err)
            failures[name] = reason
            log = f"\n[kit.batch]   full log: {err.log}" if isinstance(err, RunFailed) else ""
            print(f"[kit.batch] {name}: FAILED after {time.time() - t0:.0f}s: {reason}{log}", flush=True)
            return
        table = run.report_dir(reports) / "results_table.txt"
        if table.exists():
            print(table.read_text(encoding="utf-8"), flush=True)
        print(f"[kit.batch] {name}: done in {time.time() - t0:.0f}s, report: {html_file}", flush=True)

    if jobs <= 1:
        for run in runs:
            t0 = time.time()
            print(f"[kit.batch] {run.notebook}/{run.name}: running ({run.file})", flush=True)
            try:
                done(run, t0, execute(run, reports), None)
            except Exception as err:
                done(run, t0, None, err)
        return failures

    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import torch

    for run in runs:
        train_ahead(run, reports, jobs)
    gpus, cpus = torch.cuda.device_count(), os.cpu_count() or 1
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        started = {}
        for i, run in enumerate(runs):
            env = job_environment(i % jobs, jobs, gpus, cpus)
            print(f"[kit.batch] {run.notebook}/{run.name}: queued ({run.file}, {env})", flush=True)
            started[pool.submit(_execute_pinned, run, reports, env)] = (run, time.time())
        for future, (run, t0) in started.items():
            try:
                done(run, t0, future.result(), None)
            except Exception as err:
                done(run, t0, None, err)
    return failures


def sync_notebooks() -> list[str]:
    """Rewrite every notebook's ``parameters`` cell from its ``Params``; returns the notebooks changed."""
    import nbformat

    changed = []
    for notebook in notebooks():
        path = NOTEBOOKS / f"{notebook}.ipynb"
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        source = study_params(notebook).parameters_cell(notebook)
        if cell.source != source:
            cell.source = source
            nbformat.write(nb, path)
            changed.append(notebook)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.batch", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="YAML run files or folders of them")
    ap.add_argument("--reports", default=str(REPORTS), help="output folder (default: reports/)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes, each pinned to one GPU or a share of the CPUs: trainings of each run file, then notebooks",
    )
    ap.add_argument(
        "--describe",
        metavar="NOTEBOOK",
        choices=notebooks(),
        help="print the notebook's parameters (types, defaults, allowed values, help) and exit",
    )
    ap.add_argument(
        "--sync-notebooks",
        action="store_true",
        help="regenerate every notebook's papermill parameters cell from its declaration and exit",
    )
    args = ap.parse_args(argv)
    if args.describe:
        print(study_params(args.describe).describe())
        return 0
    if args.sync_notebooks:
        print(f"[kit.batch] parameters cells rewritten: {', '.join(sync_notebooks()) or 'none (all current)'}")
        return 0
    if not args.paths:
        ap.error("give run files or folders (or --describe NOTEBOOK)")
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, got {args.jobs}")
    reports = Path(args.reports)
    if reports.exists() and not reports.is_dir():
        ap.error(f"--reports {reports} is a file; give a folder (it is created if missing)")
    try:
        files = collect(args.paths)
    except FileNotFoundError as err:
        ap.error(str(err))
    if not files:
        ap.error(f"no .yaml run files in {' '.join(args.paths)}")

    runs, invalid = [], []
    for file in files:
        try:
            runs.append(prepare(file))
        except (ParameterError, OSError, ValueError) as err:
            invalid.append(str(err))
    invalid += shared_report_folders(runs, reports)
    if invalid:  # bad parameters fail before anything is trained
        for message in invalid:
            print(f"invalid: {message}", file=sys.stderr)
        return 2

    failures = execute_all(runs, reports, args.jobs)
    index = write_index(reports)
    print(f"[kit.batch] index: {index}")
    if failures:
        print(f"[kit.batch] {len(failures)} run(s) failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
