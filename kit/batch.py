"""Batch runs: ``python -m kit.batch PARAM_FILES_OR_FOLDERS... [--reports DIR] [--jobs N]``.

Each YAML run file names a notebook and its parameters. Parameters are validated first
(all files, before any notebook starts); then each run is executed by papermill into
``reports/<notebook>/<run>/<notebook>.ipynb``, exported to ``report.html`` (code hidden)
by nbconvert, and ``reports/index.html`` is rewritten. A failing run does not stop the
others; the command exits 1 and names the failures. ``--jobs N`` uses N processes, each pinned to
one GPU (round-robin over the visible GPUs) or, without GPUs, to an equal share of the CPU
threads: first the trainings of each run file (rows, seeds, sweep points: its study's
``planned_runs``) are spread over them into the file's run cache, then N notebooks execute at
once and read those results; every run still writes its own report folder.
"""

from __future__ import annotations

import argparse
import html
import importlib
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from kit.data import PROJECT_ROOT
from kit.params import ParameterError, Params, load_run_file

NOTEBOOKS = PROJECT_ROOT / "notebooks"


STUDY_PARAMS = {
    "simcse_augmentations": ("kit.simcse", "StudyParams"),
    "augmented_sbert": ("kit.augsbert_study", "AugSBERTParams"),
    "qfcl_summarization": ("kit.qfcl_study", "QFCLParams"),
    "medse_entity_definitions": ("kit.medse_study", "MedSEParams"),
    "explore_augmentations": ("kit.widgets", "ExploreParams"),
}


# notebooks whose trainings --jobs spreads: module of the study class ``Study`` (with ``planned_runs`` and ``run``)
STUDIES = {notebook: STUDY_PARAMS[notebook][0]
           for notebook in ("simcse_augmentations", "augmented_sbert", "qfcl_summarization", "medse_entity_definitions")}


def study_params(notebook: str) -> type[Params]:
    """The parameter declaration of a notebook."""
    if notebook not in STUDY_PARAMS:
        raise ParameterError(f"unknown notebook '{notebook}'; notebooks: {sorted(STUDY_PARAMS)}")
    module, name = STUDY_PARAMS[notebook]
    return getattr(importlib.import_module(module), name)


@dataclass
class Run:
    file: Path
    notebook: str
    name: str
    parameters: dict

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
            raise FileNotFoundError(f"no such parameter file or folder: {p}")
    return files


def prepare(file: Path) -> Run:
    """Read and validate one run file (raises ParameterError naming the file and key)."""
    data = load_run_file(file)
    params = data.get("parameters") or {}
    try:
        study_params(data["notebook"]).from_dict(params)
    except ParameterError as err:
        raise ParameterError(f"{file}: {err}") from None
    return Run(file, data["notebook"], file.stem, params)


def execute(run: Run, reports: Path) -> Path:
    """papermill execution and HTML export; returns the report's HTML path."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out_dir = run.report_dir(reports)
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / f"{run.notebook}.ipynb"
    os.environ["KIT_PROGRESS"] = "0"
    papermill.execute_notebook(
        str(NOTEBOOKS / f"{run.notebook}.ipynb"), str(executed),
        parameters={"parameters": run.parameters, "report_dir": str(out_dir.resolve())},
        cwd=str(PROJECT_ROOT), progress_bar=False, kernel_name="python3",
    )
    body, _ = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True).from_notebook_node(
        nbformat.read(executed, as_version=4)
    )
    html_file = out_dir / "report.html"
    html_file.write_text(body, encoding="utf-8")
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

    if "OMP_NUM_THREADS" in env:
        torch.set_num_threads(int(env["OMP_NUM_THREADS"]))
    study = importlib.import_module(STUDIES[run.notebook]).Study(study_params(run.notebook).from_dict(run.parameters),
                                                                  run.report_dir(reports))
    for args in study.planned_runs()[slot::jobs]:
        study.run(*args)


def train_ahead(run: Run, reports: Path, jobs: int) -> None:
    """Spread the run file's trainings over ``jobs`` pinned processes (one per slot, so each
    process keeps its pinning); the notebook then finds them cached. A failure is only reported
    here: the notebook meets it again and fails with the full error."""
    import multiprocessing

    import torch

    if run.notebook not in STUDIES:
        return
    gpus, cpus = torch.cuda.device_count(), os.cpu_count() or 1
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_train_share, args=(run, reports, slot, jobs, job_environment(slot, jobs, gpus, cpus)))
               for slot in range(jobs)]
    t0 = time.time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    failed = sum(w.exitcode != 0 for w in workers)
    print(f"[kit.batch] {run.notebook}/{run.name}: trainings in {jobs} processes, {time.time() - t0:.0f}s"
          + (f", {failed} process(es) failed" if failed else ""), flush=True)


def execute_all(runs: list[Run], reports: Path, jobs: int) -> dict[str, str]:
    """Execute every run (``jobs`` at a time); returns the failures, run name -> error."""
    failures: dict[str, str] = {}

    def done(run: Run, t0: float, html_file: Path | None, err: BaseException | None) -> None:
        name = f"{run.notebook}/{run.name}"
        if err is not None:  # one failing run must not stop the batch
            failures[name] = "".join(traceback.format_exception_only(type(err), err))[-4000:]
            print(f"[kit.batch] {name}: FAILED after {time.time() - t0:.0f}s", flush=True)
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


def write_index(reports: Path, failures: dict[str, str]) -> Path:
    """``reports/index.html``: every report found, its headline metric, and the failed runs."""
    rows = []
    for res in sorted(reports.glob("*/*/results.json")):
        r = json.loads(res.read_text())
        rel = res.parent.relative_to(reports)
        head = r.get("headline", {})
        value = head.get("value")
        rows.append(
            f"<tr><td>{html.escape(str(rel.parent))}</td><td><a href='{rel}/report.html'>{html.escape(rel.name)}</a></td>"
            f"<td>{html.escape(str(head.get('name', '')))}</td><td>{'' if value is None else f'{value:.2f}'}</td>"
            f"<td>{html.escape(r.get('finished', ''))}</td><td>{r.get('wall_seconds', '')}</td>"
            f"<td><code>{html.escape(r.get('git_commit', '')[:12])}</code></td></tr>"
        )
    failed = "".join(f"<li><b>{html.escape(k)}</b>: <pre>{html.escape(v)}</pre></li>" for k, v in failures.items())
    page = (
        "<!doctype html><meta charset='utf-8'><title>medcse reports</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;border-bottom:1px solid #ddd}</style>"
        "<h1>medcse study kit: reports</h1><table><tr><th>notebook</th><th>run</th><th>headline</th><th>value</th>"
        f"<th>finished</th><th>seconds</th><th>commit</th></tr>{''.join(rows)}</table>"
        + (f"<h2>Failed in the last batch</h2><ul>{failed}</ul>" if failed else "")
    )
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "index.html").write_text(page, encoding="utf-8")
    return reports / "index.html"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.batch", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="YAML run files or folders of them")
    ap.add_argument("--reports", default=str(PROJECT_ROOT / "reports"), help="output folder (default: reports/)")
    ap.add_argument("--jobs", type=int, default=1, help="processes, each pinned to one GPU or a share of the CPUs: trainings of each run file, then notebooks")
    args = ap.parse_args(argv)
    reports = Path(args.reports)

    runs, failures = [], {}
    for file in collect(args.paths):
        try:
            runs.append(prepare(file))
        except (ParameterError, OSError, ValueError) as err:
            failures[str(file)] = str(err)
    if failures:  # bad parameters fail before anything is trained
        for message in failures.values():
            print(f"invalid: {message}", file=sys.stderr)
        return 2

    failures = execute_all(runs, reports, args.jobs)
    index = write_index(reports, failures)
    print(f"[kit.batch] index: {index}")
    if failures:
        print(f"[kit.batch] {len(failures)} run(s) failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
