"""Batch runs: ``python -m kit.batch PARAM_FILES_OR_FOLDERS... [--reports DIR] [--jobs N] [--ray [ADDRESS]]``.

Each YAML run file, ``params/<notebook>/<run>.yaml``, holds the parameters of one run of a notebook.
Every file is validated first, before any notebook starts (keys, types, values, sizes that must fit
the data, models that must load here). Then, run file by run file, the trainings its notebook will
read (rows, seeds, sweep points: its study's ``planned_runs``) are computed into the file's run cache,
and the notebook is executed by papermill into ``reports/<notebook>/<run>/<notebook>.ipynb`` with every
parameter set, finds them cached and is exported to ``report.html`` (code hidden) by nbconvert;
``reports/index.html`` is rewritten at the end. The console gets a line per training and per run,
with the time remaining (``kit.report.progress``). A failing run does not stop the others; the
command exits 1 and names the failures. ``--jobs N`` (N > 1) and ``--ray [ADDRESS]`` run the trainings
and then the notebooks as Ray tasks, N at once per machine, on a local cluster or the one at ADDRESS
(``kit.cluster``); every run still writes its own report folder.

The study of a notebook is the package ``kit.studies.<notebook>``: its ``Params`` declare the
notebook's parameters and its ``Study`` (for notebooks that train) lists and computes the runs.
``--describe NOTEBOOK`` prints the parameters; ``--sync-notebooks`` regenerates every notebook's
papermill ``parameters`` cell from them.
"""

from __future__ import annotations

import fcntl
import importlib
import os
import pkgutil
import re
import shutil
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import kit.studies
from kit.cluster import INSTALL, ClusterError, import_ray
from kit.core.cli import Parser, integer, output_folder
from kit.core.files import write_text_atomic
from kit.core.progress import quiet_libraries
from kit.params import ParameterError, Params, read_run_file
from kit.paths import NOTEBOOKS, PROJECT_ROOT, REPORTS
from kit.report.index import LAST_GOOD, PREVIOUS, StudyAbout, headline, write_index
from kit.report.progress import BatchProgress
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


RUN_FILE_MARK = ".run_file"
"""In a report folder: the run file whose report it holds (relative to the project when inside it)."""
EXECUTING = ".executing"
"""In a report folder: the lock an execution holds, so that a second one into the same folder is refused."""
KEPT = ("runs", "models", RUN_FILE_MARK, EXECUTING, PREVIOUS, LAST_GOOD)
"""What an execution leaves in place in its report folder: the run cache, saved models and the kept reports."""


def run_file_name(file: Path) -> str:
    """``file`` as the report folder's mark names it: relative to the project when inside it, else absolute."""
    file = Path(file).resolve()
    return str(file.relative_to(PROJECT_ROOT)) if file.is_relative_to(PROJECT_ROOT) else str(file)


def foreign_report_folders(runs: list[Run], reports: Path) -> list[str]:
    """A message for every run whose report folder holds another run file's report (an earlier call's)."""
    messages = []
    for run in runs:
        mark = run.report_dir(reports) / RUN_FILE_MARK
        owner = mark.read_text(encoding="utf-8").strip() if mark.is_file() else None
        if owner is not None and owner != run_file_name(run.file):
            messages.append(
                f"{run.file}: its report folder {run.report_dir(reports)} holds the report of {owner}; rename one "
                "of the files, give another --reports, or remove the folder"
            )
    return messages


def set_last_report_aside(out_dir: Path) -> None:
    """Before an execution: a finished execution's report (``results.json`` present) moves into ``PREVIOUS``,
    so that the folder shows only this one; a failed or killed execution's files are removed, and the
    ``PREVIOUS`` it set aside stays (it holds the last finished report)."""
    report = [p for p in out_dir.iterdir() if p.name not in KEPT]
    if (out_dir / "results.json").is_file():
        shutil.rmtree(out_dir / PREVIOUS, ignore_errors=True)
        (out_dir / PREVIOUS).mkdir()
        for path in report:
            path.rename(out_dir / PREVIOUS / path.name)
        return
    for path in report:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def keep_last_report(out_dir: Path, failed: bool) -> Path | None:
    """After an execution: when it failed, the report set aside before it (if any) becomes ``LAST_GOOD``,
    which is returned; when it finished, the reports kept from earlier executions are removed."""
    previous, last_good = out_dir / PREVIOUS, out_dir / LAST_GOOD
    if not failed:
        shutil.rmtree(previous, ignore_errors=True)
        shutil.rmtree(last_good, ignore_errors=True)
        return None
    if previous.is_dir():
        shutil.rmtree(last_good, ignore_errors=True)
        previous.rename(last_good)
    return last_good if last_good.is_dir() else None


def execute(run: Run, reports: Path) -> Path:
    """papermill execution and HTML export; returns the report's HTML path. An execution holds the report
    folder's lock: a second one into the same folder, by another ``kit.batch``, fails at once and touches
    nothing. The previous execution's report is set aside first (``set_last_report_aside``), so the
    folder shows only this one. When the notebook fails, the executed notebook is still exported (the
    error shows in its cell), the failure is written to ``error.log`` beside it, the last finished report
    is kept in ``LAST_GOOD``, and ``RunFailed`` (its one-line reason) is raised."""
    out_dir = run.report_dir(reports)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / EXECUTING, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"another kit.batch is executing this run into {out_dir}; rerun when it ends") from None
        return _execute(run, out_dir)


def _execute(run: Run, out_dir: Path) -> Path:
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    write_text_atomic(out_dir / RUN_FILE_MARK, run_file_name(run.file) + "\n")
    set_last_report_aside(out_dir)
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
    except KeyboardInterrupt:  # Ctrl-C: recorded and the last finished report kept, as after a failure
        keep_last_report(out_dir, failed=True)
        write_text_atomic(out_dir / "error.log", "interrupted (Ctrl-C) before the notebook finished; rerun it\n")
        raise
    html_file = out_dir / "report.html"
    if executed.exists():
        notebook = nbformat.read(executed, as_version=4)
        notebook.metadata["title"] = f"{study_module(run.notebook).ABOUT.title}: run {run.name}"  # the page title
        body, _ = HTMLExporter(
            exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
        ).from_notebook_node(notebook)
        write_text_atomic(html_file, body)
    last_good = keep_last_report(out_dir, failed=failure is not None)
    if failure is not None:
        log = write_text_atomic(out_dir / "error.log", failure_log(failure))
        kept = f"; the last finished report is kept in {shown_path(last_good)}" if last_good else ""
        raise RunFailed(failure_reason(failure) + kept, log) from failure
    return html_file


def render(run: Run, reports: Path) -> tuple[Path | None, float, Exception | None]:
    """``execute`` timed, its error returned instead of raised: (report, seconds, None) or (None, seconds,
    the error), so one failing notebook does not stop the others (in this process or a Ray task)."""
    t0 = time.monotonic()
    try:
        return execute(run, reports), time.monotonic() - t0, None
    except Exception as err:
        return None, time.monotonic() - t0, err


def build_study(run: Run, reports: Path) -> Study | None:
    """The run file's study, or None for a notebook that trains nothing (the explorer)."""
    module = study_module(run.notebook)
    if not hasattr(module, "Study"):
        return None
    return module.Study(module.Params.from_dict(run.parameters), run.report_dir(reports))


@dataclass
class Plan:
    """A run file's study and the trainings its notebook will read; no study when the notebook trains
    nothing, or when its study cannot be built here (``broken``: bad data found only now; the notebook
    meets the error and reports it in full)."""

    study: Study | None
    trainings: list[tuple]
    broken: str | None = None


def plan(run: Run, reports: Path) -> Plan:
    try:
        study = build_study(run, reports)
    except Exception as err:
        return Plan(None, [], failure_reason(err))
    return Plan(study, study.planned_runs() if study else [])


def train(study: Study, planned: list[tuple], emit: Callable[[tuple], None]) -> None:
    """Train (or find cached) each planned run in turn; ``emit`` gets ("done", label, seconds, cached) per
    run, or on the first failure ("failed", label, reason, runs left) and the rest is left to the notebook,
    which meets the failure again and reports it in full."""
    for i, args in enumerate(planned):
        label, before, t0 = study.run_label(*args), len(study.computed_runs), time.monotonic()
        try:
            study.run(*args)
        except Exception as err:
            emit(("failed", label, failure_reason(err), len(planned) - i - 1))
            return
        emit(("done", label, time.monotonic() - t0, len(study.computed_runs) == before))


def _record(progress: BatchProgress, name: str, event: tuple) -> None:
    kind, label, *rest = event
    if kind == "done":
        progress.training_done(name, label, *rest)
    else:
        reason, left = rest
        progress.training_failed(name, label, reason)
        progress.trainings_skipped(left + 1)


def shown_path(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (shorter in logs), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def execute_all(
    runs: list[Run], reports: Path, jobs: int | None = None, ray_address: str | None = None
) -> dict[str, str]:
    """Train every run file's planned runs and execute its notebook, with progress lines
    (``kit.report.progress``): in this process, run file by run file, when ``jobs`` is 1 or None and
    ``ray_address`` is None; else as Ray tasks, ``jobs`` at once per machine (``kit.cluster``;
    ``ray_address`` "" or None starts a local cluster). Returns the failures, run name -> error."""
    plans = [plan(run, reports) for run in runs]
    progress = BatchProgress(len(runs), sum(len(p.trainings) for p in plans))
    failures: dict[str, str] = {}
    started = []  # when each run file's work began

    def finished(k: int, html: Path | None, report_seconds: float, err: Exception | None) -> None:
        run, seconds = runs[k], time.monotonic() - started[k]
        name = f"{run.notebook}/{run.name}"
        if err is not None:  # one failing run must not stop the batch
            reason = str(err) if isinstance(err, RunFailed) else failure_reason(err)
            failures[name] = reason
            log = shown_path(err.log) if isinstance(err, RunFailed) else None
            progress.run_failed(name, seconds, report_seconds, reason, log)
            return
        table = run.report_dir(reports) / "results_table.txt"
        if table.exists():
            print(table.read_text(encoding="utf-8"), flush=True)
        progress.run_finished(name, seconds, report_seconds, headline(run.report_dir(reports)), shown_path(html))

    if ray_address is None and (jobs or 1) == 1:
        os.environ["KIT_PROGRESS"] = "0"
        quiet_libraries()
        for k, (run, p) in enumerate(zip(runs, plans)):
            name = f"{run.notebook}/{run.name}"
            started.append(time.monotonic())
            progress.run_started(k + 1, name, len(p.trainings), str(run.file), p.broken)
            if p.study:  # trained ahead, in this process: the notebook then finds every run cached
                train(p.study, p.trainings, lambda event: _record(progress, name, event))
            finished(k, *render(run, reports))
    else:
        from kit import cluster

        ray, share, progress.at_once, shut_down = cluster.connect(ray_address or None, jobs)
        try:
            cluster.check_shared_filesystem(ray, reports)
            started.extend(time.monotonic() for _ in runs)
            cluster.sweep(ray, share, runs, plans, reports, progress, finished)
        finally:
            if shut_down:
                ray.shutdown()
    progress.summary(len(failures))
    return failures


def studies_about() -> dict[str, StudyAbout]:
    """Every notebook's ``StudyAbout``, in the order of their titles (Study 1 to 4, then the explorer)."""
    about = {notebook: study_module(notebook).ABOUT for notebook in notebooks()}
    return dict(sorted(about.items(), key=lambda item: item[1].title))


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
    ap = Parser(prog="python -m kit.batch", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="YAML run files or folders of them")
    ap.add_argument("--reports", type=output_folder, default=str(REPORTS), help="output folder (default: reports/)")
    ap.add_argument(
        "--jobs",
        type=integer(1),
        help="runs at once on each machine, as Ray tasks (N > 1 starts a local Ray cluster), each with 1/N of "
        "its CPUs and GPUs (a whole GPU at most); default 1 (in this process), with --ray one per GPU",
    )
    ap.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the trainings and notebooks as tasks on the Ray cluster at ADDRESS (host:port, ray://..., auto), "
        f"or on a local one without ADDRESS; needs {INSTALL} and a filesystem that every node shares",
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
    if args.ray and Path(args.ray).exists():  # `--ray FILE ...`: the file is a run file, the cluster local
        args.paths, args.ray = [args.ray, *args.paths], ""
    if args.ray and (args.ray.endswith((".yaml", ".yml")) or ("/" in args.ray and "://" not in args.ray)):
        ap.error(f"--ray {args.ray}: no such run file, and not a Ray address (host:port, ray://host:port, auto)")
    if args.ray is not None or (args.jobs or 1) > 1:
        try:
            import_ray()  # at once, before the run files are checked
        except ClusterError as err:
            ap.error(str(err))
    reports = Path(args.reports)
    try:
        files = collect(args.paths)
    except FileNotFoundError as err:
        ap.error(str(err))
    if not files:
        ap.error(f"no .yaml run files in {' '.join(args.paths)}")

    runs, invalid = [], []
    with warnings.catch_warnings():  # checks say one line per bad file; the notebooks show data warnings
        warnings.simplefilter("ignore")
        for file in files:
            try:
                runs.append(prepare(file))
            except (ParameterError, OSError, ValueError) as err:
                invalid.append(str(err))
    invalid += shared_report_folders(runs, reports) + foreign_report_folders(runs, reports)
    if invalid:  # bad parameters fail before anything is trained
        for message in invalid:
            print(f"invalid: {message}", file=sys.stderr)
        return 2

    try:
        failures = execute_all(runs, reports, args.jobs, args.ray)
    except ClusterError as err:
        print(f"[kit.batch] {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        write_index(reports, studies_about())
        print("[kit.batch] interrupted; the same command resumes (finished trainings are cached)", file=sys.stderr)
        return 130
    index = write_index(reports, studies_about())
    print(f"[kit.batch] index: {index}")
    if failures:
        print(f"[kit.batch] {len(failures)} run(s) failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
