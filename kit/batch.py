"""Batch runs: ``python -m kit.batch PARAM_FILES_OR_FOLDERS... [--reports DIR] [--jobs N] [--ray [ADDRESS]]``.

Each YAML run file, ``params/<notebook>/<run>.yaml``, holds the parameters of one run of a notebook.
Every file is validated first, before any notebook starts (keys, types, values, sizes that must fit
the data, models that must load here). Then, run file by run file, the trainings its notebook will
read (rows, seeds, sweep points: its study's ``planned_runs``) are computed into the file's run cache,
and the notebook is executed by papermill into ``reports/<notebook>/<run>/<notebook>.ipynb`` with every
parameter set, finds them cached and is exported to ``report.html`` (code hidden) by nbconvert;
``reports/index.html`` is rewritten at the end. The console gets a line per training and per run,
with the time remaining (``kit.report.progress``), and a training of the kit's own loop (studies 1, 3
and 4) says every 5 minutes how far it is (``kit.core.progress.heartbeat``; not from Ray tasks, nor
study 2's Trainer). A failing run does not stop the others; the command exits 1 and names the
failures. ``--jobs N`` (N > 1) and ``--ray [ADDRESS]`` run the trainings
and then the notebooks as Ray tasks, N at once per machine, on a local cluster or the one at ADDRESS
(``kit.cluster``); every run still writes its own report folder.

The study of a notebook is the package ``kit.studies.<notebook>``: its ``Params`` declare the
notebook's parameters and its ``Study`` (for notebooks that train) lists and computes the runs.
``--describe NOTEBOOK`` prints the parameters; ``--sync-notebooks`` regenerates every notebook's
papermill ``parameters`` cell from them. ``--push-to-hub REPO`` then uploads every finished report's saved models
(``save_models``) to the Hugging Face Hub as ``REPO-<row>``, each with its model card
(``kit.report.model_card``); the token, the repository name and every run file's ``save_models`` are checked
before any work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from functools import partial
from pathlib import Path

from kit.cluster import INSTALL, ClusterError, import_ray, ray_address_problem
from kit.core.cli import Parser, integer, output_folder
from kit.core.progress import heartbeat, quiet_libraries
from kit.params import ParameterError
from kit.paths import NOTEBOOKS, REPORTS
from kit.report.index import StudyAbout, headline, run_file_of, write_index
from kit.report.progress import BatchProgress
from kit.runner import (
    Run,
    RunFailed,
    failure_reason,
    notebooks,
    plan,
    planned_work,
    prepare,
    render,
    run_file_name,
    shown_path,
    study_entry,
    study_params,
    train,
)


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


def foreign_report_folders(runs: list[Run], reports: Path) -> list[str]:
    """A message for every run whose report folder holds another run file's report (an earlier call's)."""
    messages = []
    for run in runs:
        owner = run_file_of(run.report_dir(reports))
        if owner is not None and owner != run_file_name(run.file):
            messages.append(
                f"{run.file}: its report folder {run.report_dir(reports)} holds the report of {owner}; rename one "
                "of the files, give another --reports, or remove the folder"
            )
    return messages


def hub_repo(text: str) -> str:
    """A ``type=`` for ``--push-to-hub``: an ``owner/name`` repository prefix the Hub accepts."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError as err:
        raise argparse.ArgumentTypeError(f"not a Hugging Face repository name ({err})") from None
    if "/" not in text:
        raise argparse.ArgumentTypeError(f"must name its owner, owner/name, got {text!r}")
    return text


def push_problems(runs: list[Run], repo: str) -> list[str]:
    """Why ``--push-to-hub repo`` cannot work for these runs: no token, the hub offline, a run file that saves no
    model, a repository name (``repo-<row>``) the Hub refuses; one message each."""
    from huggingface_hub import get_token
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    from kit.report.model_card import repo_for

    problems = []
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE"):  # as huggingface_hub reads it
        problems.append("argument --push-to-hub: HF_HUB_OFFLINE is set; unset it to upload")
    if get_token() is None:
        problems.append("argument --push-to-hub: no Hugging Face token (huggingface-cli login, or set HF_TOKEN)")
    for run in runs:
        study = study_entry(run.notebook).study
        rows = study.saved_rows(study_params(run.notebook).from_dict(run.parameters)) if study else []
        if not rows:
            fix = "set save_models" if "save_models" in run.parameters else "its notebook saves none"
            problems.append(f"{run.file}: saves no model to push ({fix})")
        for row in rows:
            try:
                validate_repo_id(repo_for(repo, row))
            except HFValidationError as err:
                problems.append(f"argument --push-to-hub: {repo_for(repo, row)} (row {row} of {run.file}): {err}")
    return problems


def push_reports(runs: list[Run], reports: Path, repo: str, failures: dict[str, str]) -> list[str]:
    """Upload the saved models of every run that did not fail (``kit.report.model_card.push``); returns the
    uploads that failed, one line each."""
    from kit.report.model_card import push

    failed = []
    for run in runs:
        if f"{run.notebook}/{run.name}" in failures:
            continue
        try:
            for repo_id, card in push(run.report_dir(reports), repo):
                print(f"[kit.batch] pushed {shown_path(card.parent)} to https://huggingface.co/{repo_id}", flush=True)
        except Exception as err:  # the network, the token's rights: the reports stay, the upload is named
            failed.append(f"{run.notebook}/{run.name}: push to {repo}: {type(err).__name__}: {err}")
    return failed


def estimate(files: list[Path]) -> int:
    """``--estimate``: every file checked first (one line each, exit 2), then its planned work and GPU hours."""
    from kit.core.compute import gpu_hours

    planned, invalid = {}, []
    for file in files:
        try:
            planned[file] = planned_work(file)
        except ParameterError as err:
            invalid.append(str(err))
    if invalid:
        for message in invalid:
            print(f"invalid: {message}", file=sys.stderr)
        return 2
    for file, (notebook, work) in planned.items():
        low, high = gpu_hours(work)
        total = sum(w.flops for w in work)
        print(
            f"{notebook}/{file.name}: {total / 1e15:,.1f} PFLOP, {low:.1f}-{high:.1f} GPU hours on one H100 (estimate)"
        )
        for w in work:
            how = f"{w.part}, " if w.part != "all" else ""
            print(f"  {w.what}: {w.sequences:,} x {w.tokens} tokens ({how}{'with' if w.train else 'no'} backward)")
    print("(FLOPs from the models' shapes at the rate of the kit's measured H100 step: docs/gpu.md says how)")
    return 0


def sizing(study, name: str, reports: Path) -> str | None:
    """The line said before training when the run's seeds cannot resolve its primary's declared effect
    (``kit.report.pilot.sizing_line``); a pilot that cannot be read is said so, never fatal."""
    from kit.report.pilot import sizing_line

    try:
        return sizing_line(study, name, reports)
    except Exception as err:  # a sizing is advice: the runs go on
        return f"its primary could not be sized ({type(err).__name__}: {err})"


def design(files: list[Path], reports: Path) -> int:
    """``--design``: every file checked first (one line each, exit 2), then its primary sized on its pilot."""
    from kit.report.pilot import design_report

    runs, invalid = [], []
    for file in files:
        try:
            runs.append(prepare(file))
        except (ParameterError, OSError, ValueError) as err:
            invalid.append(str(err))
    if invalid:
        for message in invalid:
            print(f"invalid: {message}", file=sys.stderr)
        return 2
    os.environ["KIT_PROGRESS"] = "0"
    for run in runs:
        p = plan(run, reports)
        print(f"{run.notebook}/{run.file.name}:")
        if p.study is None:
            print(f"  {p.broken or 'its notebook trains nothing: nothing to size'}")
            continue
        for line in design_report(p.study, run.name, reports):
            print(f"  {line}")
    return 0


def _record(progress: BatchProgress, name: str, event: tuple) -> None:
    kind, label, *rest = event
    if kind == "done":
        progress.training_done(name, label, *rest)
    else:
        reason, left, free = rest
        progress.training_failed(name, label, reason)
        progress.trainings_skipped(left, free)


def execute_all(
    runs: list[Run], reports: Path, jobs: int | None = None, ray_address: str | None = None
) -> dict[str, str]:
    """Train every run file's planned runs and execute its notebook, with progress lines
    (``kit.report.progress``): in this process, run file by run file, when ``jobs`` is 1 or None and
    ``ray_address`` is None; else as Ray tasks, ``jobs`` at once per machine (``kit.cluster``;
    ``ray_address`` "" or None starts a local cluster). Returns the failures, run name -> error."""
    # The console gets progress lines, which bars would garble (building a study may link a corpus, with a bar).
    os.environ["KIT_PROGRESS"] = "0"
    quiet_libraries()
    plans = [plan(run, reports) for run in runs]
    free = sum(not p.study.run_trains(*args) for p in plans for args in p.trainings)
    progress = BatchProgress(len(runs), sum(len(p.trainings) for p in plans), free)
    for run, p in zip(runs, plans):
        if p.study is not None and (line := sizing(p.study, run.name, reports)):
            progress.line(f"{run.notebook}/{run.name}: {line}")
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
        for k, (run, p) in enumerate(zip(runs, plans)):
            name = f"{run.notebook}/{run.name}"
            started.append(time.monotonic())
            progress.run_started(k + 1, name, len(p.trainings), str(run.file), p.broken)
            if p.study:  # trained ahead, in this process: the notebook then finds every run cached
                with heartbeat(partial(progress.training_beat, name)):
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
    about = {notebook: study_entry(notebook).about for notebook in notebooks()}
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
        "--push-to-hub",
        metavar="REPO",
        type=hub_repo,
        help="once the batch has run, upload each report's saved models (save_models) to the Hugging Face Hub as "
        "REPO-<row>, each with its model card; needs a token (huggingface-cli login or HF_TOKEN)",
    )
    ap.add_argument(
        "--estimate",
        action="store_true",
        help="print the compute each run file plans and its GPU hours on one H100 (an estimate from the kit's "
        "measured step, docs/gpu.md), and exit without running anything",
    )
    ap.add_argument(
        "--design",
        action="store_true",
        help="size each run file's primary comparison on a pilot (an earlier report of the same study, or a committed "
        "snapshot): the seeds and items it needs to find its declared effect with 80%% power; runs nothing",
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
    if args.ray and (problem := ray_address_problem(args.ray)):
        ap.error(f"argument --ray: {args.ray}: {problem}")
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
    if args.estimate:
        return estimate(files)
    if args.design:
        return design(files, reports)

    runs, invalid = [], []
    with warnings.catch_warnings():  # checks say one line per bad file; the notebooks show data warnings
        warnings.simplefilter("ignore")
        for file in files:
            try:
                runs.append(prepare(file))
            except (ParameterError, OSError, ValueError) as err:
                invalid.append(str(err))
    invalid += shared_report_folders(runs, reports) + foreign_report_folders(runs, reports)
    if args.push_to_hub:
        invalid += push_problems(runs, args.push_to_hub)
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
    pushes = push_reports(runs, reports, args.push_to_hub, failures) if args.push_to_hub else []
    for line in pushes:
        print(f"[kit.batch] {line}", file=sys.stderr)
    if failures:
        print(f"[kit.batch] {len(failures)} run(s) failed: {', '.join(failures)}", file=sys.stderr)
    return 1 if failures or pushes else 0


if __name__ == "__main__":
    sys.exit(main())
