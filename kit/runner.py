"""Running one run file: its notebook's study, its planned trainings, and the execution of its notebook.

What ``kit.batch`` (in its own process) and ``kit.cluster`` (as Ray tasks) both do with a run file, below
both of them: a ``Run`` is a checked run file (``prepare``); ``plan`` builds its study and lists the
trainings its notebook will read; ``train`` computes them into the run cache; ``execute`` runs the notebook
with papermill into ``reports/<notebook>/<run>/`` and exports ``report.html`` with nbconvert, keeping the
last finished report when an execution fails or is interrupted; ``render`` is ``execute`` timed, its error
returned. The study of a notebook is the package ``kit.studies.<notebook>``.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import logging
import os
import pkgutil
import re
import shutil
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import kit.studies
from kit.core.compute import Work
from kit.core.files import write_text_atomic
from kit.params import ParameterError, Params, read_run_file
from kit.paths import NOTEBOOKS, PROJECT_ROOT
from kit.registry import Registry
from kit.report.export import report_html
from kit.report.index import LAST_GOOD, PREVIOUS, RUN_FILE_MARK, finished_report
from kit.study import STUDIES, Study, StudyEntry


def studies() -> Registry[StudyEntry]:
    """Every notebook's registration (``kit.study.STUDIES``): each study package (``kit/studies/<notebook>/``)
    registers itself when it is imported, and this imports them all."""
    for module in pkgutil.iter_modules(kit.studies.__path__):
        if module.ispkg:
            importlib.import_module(f"kit.studies.{module.name}")
    return STUDIES


def notebooks() -> list[str]:
    """Every notebook with a study package, by name."""
    return sorted(studies())


def study_entry(notebook: str) -> StudyEntry:
    """A notebook's registration: its ``Params``, its ``Study`` (None for a notebook that trains nothing) and
    what the index says of it; ``ParameterError`` listing the notebooks for an unknown name."""
    try:
        return studies()[notebook]
    except KeyError as err:
        raise ParameterError(err.args[0]) from None


def study_params(notebook: str) -> type[Params]:
    """The parameter declaration of a notebook."""
    return study_entry(notebook).params


def planned_work(file: Path) -> tuple[str, list[Work]]:
    """A run file's notebook and the compute it plans (its study's ``workload``, work of no sequence left out), from
    its parameters and data alone: no model is loaded, so a paper file is estimated on a machine without its
    models. ParameterError naming the file for a bad file or a notebook that trains nothing."""
    run_file = read_run_file(file)
    entry = study_entry(run_file.notebook)
    if entry.study is None:
        raise ParameterError(f"{file}: notebook {run_file.notebook} trains nothing: no GPU time to estimate")
    try:
        params = entry.params.from_dict(run_file.parameters)
        with warnings.catch_warnings():  # the data's own warnings (a dropped pair) belong to the runs
            warnings.simplefilter("ignore")
            work = [w for w in entry.study.workload(params) if w.sequences]
    except (ParameterError, OSError, ValueError) as err:
        raise ParameterError(f"{file}: {err}") from None
    return run_file.notebook, work


@dataclass
class Run:
    file: Path
    notebook: str
    name: str
    parameters: dict  # every parameter, defaults filled in

    def report_dir(self, reports: Path) -> Path:
        return reports / self.notebook / self.name


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


EXECUTING = ".executing"
"""In a report folder: the lock an execution holds, so that a second one into the same folder is refused."""


STAGING = f".{LAST_GOOD}.staging"
"""In a report folder, briefly: a finished report on its way to ``LAST_GOOD`` (``set_last_report_aside``)."""
REPLACED = f".{LAST_GOOD}.replaced"
"""In a report folder, briefly: the ``LAST_GOOD`` a newer finished report replaces, removed once it has."""
KEPT = ("runs", RUN_FILE_MARK, EXECUTING, PREVIOUS, LAST_GOOD, STAGING, REPLACED)
"""What an execution leaves in place in its report folder: the run cache and the kept reports (the published models
are the report's, set aside with it: the runs keep their own)."""


def run_file_name(file: Path) -> str:
    """``file`` as the report folder's mark names it: relative to the project when inside it, else absolute."""
    file = Path(file).resolve()
    return str(file.relative_to(PROJECT_ROOT)) if file.is_relative_to(PROJECT_ROOT) else str(file)


def set_last_report_aside(out_dir: Path) -> None:
    """Before an execution: a finished execution's report (``finished_report``) becomes ``LAST_GOOD``, replacing an
    older one, so that the folder shows only this execution and no kill, at any moment, leaves the user without the
    last finished report: its files are gathered in ``STAGING`` (the record and the page last), which then takes
    ``LAST_GOOD``'s place by renames, and a kill amid either step is completed by the next call. A failed or killed
    execution's files are removed, and the ``LAST_GOOD`` it left stays. A ``PREVIOUS`` folder (where kit versions
    before 2026-11-28 set the report aside while executing: present only when such an execution was killed) is the
    newest finished report: it becomes ``LAST_GOOD``."""
    last_good, staging, replaced = out_dir / LAST_GOOD, out_dir / STAGING, out_dir / REPLACED
    if replaced.is_dir():  # killed amid a replacement: the old one back if the new one had not taken its place
        replaced.rename(last_good) if not last_good.exists() else shutil.rmtree(replaced)
    if (out_dir / PREVIOUS).is_dir():
        _replace(last_good, out_dir / PREVIOUS, replaced)
    report = [p for p in out_dir.iterdir() if p.name not in KEPT]
    if staging.is_dir() or finished_report(out_dir):
        staging.mkdir(exist_ok=True)
        for path in sorted(report, key=lambda p: p.name in ("results.json", "report.html")):
            path.rename(staging / path.name)
        _replace(last_good, staging, replaced)
        return
    for path in report:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _replace(target: Path, source: Path, replaced: Path) -> None:
    """``source`` renamed to ``target``; an existing ``target`` is renamed to ``replaced`` first, then removed."""
    if target.is_dir():
        target.rename(replaced)
    source.rename(target)
    shutil.rmtree(replaced, ignore_errors=True)


def keep_last_report(out_dir: Path, failed: bool) -> Path | None:
    """After an execution: when it failed, the last finished report (``LAST_GOOD``, if any) is returned; when it
    finished, that kept report is removed."""
    last_good = out_dir / LAST_GOOD
    if not failed:
        shutil.rmtree(last_good, ignore_errors=True)
        return None
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
    with report_lock(out_dir):
        return _execute(run, out_dir)


@contextlib.contextmanager
def report_lock(out_dir: Path):
    """Hold ``out_dir``'s ``EXECUTING`` lock (RuntimeError at once when another execution holds it), and remove the
    file before releasing it, so that a finished folder holds none. A lock taken on a file that an ending execution
    removed meanwhile is taken again on the new one."""
    path = out_dir / EXECUTING
    while True:
        with open(path, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RuntimeError(
                    f"another kit.batch is executing this run into {out_dir}; rerun when it ends"
                ) from None
            if path.exists() and os.stat(path).st_ino == os.fstat(lock.fileno()).st_ino:
                try:
                    yield
                finally:
                    path.unlink(missing_ok=True)
                return


def _execute(run: Run, out_dir: Path) -> Path:
    import nbformat
    import papermill

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
            # the kernel's own log (not the notebook's output, which the report and error.log keep): its
            # warning about TCP on every run and its socket errors when Ctrl-C stops it are noise here
            extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
        )
    except Exception as err:  # the kernel's error, or papermill's own
        failure = err
    except KeyboardInterrupt:  # Ctrl-C: recorded and the last finished report kept, as after a failure
        # the kernel dies with the Ctrl-C; nbclient's cell task then holds DeadKernelError, which asyncio would
        # print as a traceback ("Task exception was never retrieved") when the task is collected
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        keep_last_report(out_dir, failed=True)
        write_text_atomic(out_dir / "error.log", "interrupted (Ctrl-C) before the notebook finished; rerun it\n")
        raise
    html_file = out_dir / "report.html"
    if executed.exists():
        notebook = nbformat.read(executed, as_version=4)
        title = f"{study_entry(run.notebook).about.title}: run {run.name}"
        record = None  # this execution's results.json (the last one's was set aside); unreadable: no verdict
        with contextlib.suppress(OSError, ValueError):
            record = json.loads((out_dir / "results.json").read_text(encoding="utf-8")) if failure is None else None
        write_text_atomic(html_file, report_html(notebook, title, record))
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
    entry = study_entry(run.notebook)
    if entry.study is None:
        return None
    return entry.study(entry.params.from_dict(run.parameters), run.report_dir(reports))


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
    """Train (or find cached) each planned run in turn; ``emit`` gets ("done", label, seconds, cached, trains)
    per run, or on the first failure ("failed", label, reason, runs, training-free runs), counting the failed run
    and those after it, which are left to the notebook: it meets the failure again and reports it in full."""
    for i, args in enumerate(planned):
        label, before, t0 = study.run_label(*args), len(study.computed_runs), time.monotonic()
        try:
            study.run(*args)
        except Exception as err:
            free = sum(not study.run_trains(*later) for later in planned[i:])
            emit(("failed", label, failure_reason(err), len(planned) - i, free))
            return
        emit(("done", label, time.monotonic() - t0, len(study.computed_runs) == before, study.run_trains(*args)))


def shown_path(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (shorter in logs), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)
