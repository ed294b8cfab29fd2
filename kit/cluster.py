"""Planned runs as Ray tasks: ``python -m kit.batch FILES --ray [ADDRESS]``, and ``--jobs N`` on one machine.

Every training a run file's notebook reads (its study's ``planned_runs``) is one Ray task, then every
run file's notebook is one (papermill and nbconvert, ``kit.runner.execute``), submitted as soon as its
own trainings are done; the notebook finds its trainings in the run cache. Without an address the
tasks run on a local Ray cluster started for the sweep, so ``--jobs N`` and ``--ray`` are one scheduling
path; ``--jobs 1`` without ``--ray`` stays in-process and needs no Ray (``make demo``).

**Resources.** ``--jobs N`` is the number of runs at once on each machine: a task asks for 1/N of the
smallest node's CPUs (at least one) and, on a GPU cluster, 1/N of a GPU node's GPUs (at most one whole
GPU); ``--ray`` without ``--jobs`` runs one task per GPU on GPU nodes, one per node otherwise. A task
uses as many torch threads as CPUs it was given; Ray sets its ``CUDA_VISIBLE_DEVICES``.

**Failures.** A task that fails (an exception, or its worker or node lost) is submitted once more; a
second failure is reported and the other runs go on (its notebook meets the error and reports it).

**The run cache lives on a shared filesystem.** Workers need the project's code and ``../shared/data``
(or ``$KIT_DATA``) anyway, and runs read other runs through the cache (study 2's bi-encoders wait for
the cross-encoder that one of them trains, under the cache's per-run lock), so each node must mount the
project at the driver's path, as the home or project folders of a Slurm cluster are, or a shared
volume of a Kubernetes cluster. ``check_shared_filesystem`` runs a task on every node before any
training: a node that cannot read a file the driver has just written under the reports folder stops
the sweep with the list of nodes and what they lack. Returning run folders to the driver instead
would ship checkpoints and models that the tasks of the same sweep need again.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kit.paths import PROJECT_ROOT
from kit.runner import build_study, failure_reason, render

INSTALL = 'pip install -e ".[cluster]"'
FORWARDED_ENV = ("KIT_", "HF_", "TRANSFORMERS_", "TOKENIZERS_")
"""Prefixes of the driver's environment variables that every task gets (data folder, offline hub)."""


class ClusterError(RuntimeError):
    """Ray is missing, or the cluster cannot run the sweep; the message says what to do."""


def import_ray():
    """The ``ray`` module, or ``ClusterError`` with the install command."""
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray and --jobs N > 1 run on Ray, an optional extra: {INSTALL}") from None
    return ray


def _host_port(address: str) -> tuple[str, str]:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    return host, port


def ray_address_problem(address: str) -> str | None:
    """What is wrong with a Ray address (``auto``, ``host:port`` or ``ray://host:port``, port 1 to 65535), or None."""
    if address == "auto":
        return None
    host, port = _host_port(address)
    if ":" not in address.removeprefix("ray://") or not host:
        return "not a Ray address: give host:port, ray://host:port or auto"
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        return f"port {port!r} is not an integer from 1 to 65535"
    return None


def unreachable(address: str, seconds: float = 5.0) -> str | None:
    """Why nothing answers at ``address`` (``host:port`` or ``ray://host:port``, checked by ``ray_address_problem``)
    within ``seconds``, or None: a TCP connection tried first, because Ray retries an address nothing answers for
    about a minute, deaf to SIGTERM."""
    import socket

    host, port = _host_port(address)
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as err:
        return err.strerror or str(err) or type(err).__name__
    return None


@dataclass(frozen=True)
class Share:
    """What one task asks of the cluster: ``cpus`` (also its torch threads) and ``gpus``."""

    cpus: int
    gpus: float


def run_share(nodes: list[dict[str, float]], jobs: int | None) -> Share:
    """A task's share of the nodes' resources (Ray's resource dicts) with ``jobs`` runs at once per node:
    on GPU nodes min(1, GPUs / jobs) of a GPU and CPUs // jobs, ``jobs`` defaulting to the node's GPUs;
    without GPUs, the smallest node's CPUs // jobs (``jobs`` defaulting to 1). At least one CPU."""
    gpu_nodes = [n for n in nodes if n.get("GPU", 0) >= 1]
    pool = gpu_nodes or [n for n in nodes if n.get("CPU", 0) >= 1]
    if not pool:
        raise ClusterError("the Ray cluster has no node with a CPU or a GPU to run on")
    gpus = min(int(n["GPU"]) for n in gpu_nodes) if gpu_nodes else 0
    jobs = jobs or max(gpus, 1)
    cpus = min(int(n.get("CPU", 0)) for n in pool)
    return Share(cpus=max(1, cpus // jobs), gpus=min(1.0, gpus / jobs) if gpus else 0.0)


def at_once(nodes: list[dict[str, float]], share: Share) -> int:
    """How many tasks of ``share`` the nodes run at once."""
    by_gpu = [n.get("GPU", 0) // share.gpus if share.gpus else float("inf") for n in nodes]
    return max(1, int(sum(min(n.get("CPU", 0) // share.cpus, g) for n, g in zip(nodes, by_gpu))))


def connect(address: str | None, jobs: int | None):
    """Connect to the cluster at ``address``, or start a local one for this sweep (this machine's GPUs and
    max(CPUs, ``jobs``) CPUs, so that ``jobs`` tasks run at once); tasks get the driver's ``KIT_*`` and hub
    variables. Returns (ray, share, tasks at once, started): ``started`` when this call started Ray (the
    caller shuts it down)."""
    ray = import_ray()
    started = not ray.is_initialized()
    if address and address != "auto" and (problem := unreachable(address)):
        raise ClusterError(f"cannot connect to a Ray cluster at {address}: {problem}")
    if started:
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)} | {"KIT_PROGRESS": "0"}
        where = (
            {"address": address}
            if address
            else {  # "local": never an existing cluster (RAY_ADDRESS)
                "address": "local",
                "num_cpus": max(os.cpu_count() or 1, jobs or 1),
                "include_dashboard": False,
            }
        )
        try:
            ray.init(runtime_env={"env_vars": env}, log_to_driver=False, **where)
        except (ConnectionError, ValueError) as err:
            raise ClusterError(f"cannot connect to a Ray cluster at {address}: {err}") from None
    nodes = [n["Resources"] for n in ray.nodes() if n["Alive"]]
    share = run_share(nodes, jobs)
    return ray, share, at_once(nodes, share), started


def _sees(token_file: str, token: str, project: str, cwd: str) -> str | None:
    """On one node: None when it reads ``token`` in ``token_file`` and holds the project at the driver's
    path, else what it lacks."""
    import socket

    where = socket.gethostname()
    if str(PROJECT_ROOT) != project:
        return f"{where}: imports kit from {PROJECT_ROOT}, not from the driver's {project}"
    try:
        if Path(token_file).read_text(encoding="utf-8") != token:
            return f"{where}: reads another {token_file}"
    except OSError as err:
        return f"{where}: cannot read the reports folder ({err.strerror}: {token_file})"
    if not Path(cwd).is_dir():
        return f"{where}: has no {cwd} (the driver's working folder, against which run files' paths resolve)"
    return None


def check_shared_filesystem(ray, reports: Path) -> None:
    """One task on every live node: each must read a file the driver writes under ``reports`` and import
    kit from the driver's project folder; otherwise ``ClusterError`` names the nodes and what they lack."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    reports.mkdir(parents=True, exist_ok=True)
    token, token_file = uuid.uuid4().hex, reports / f".kit-cluster-check-{os.getpid()}"
    token_file.write_text(token, encoding="utf-8")
    try:
        sees = ray.remote(_sees)
        checks = [
            sees.options(
                num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(str(token_file.resolve()), token, str(PROJECT_ROOT), os.getcwd())
            for n in ray.nodes()
            if n["Alive"]
        ]
        problems = [p for p in ray.get(checks) if p]
    finally:
        token_file.unlink(missing_ok=True)
    if problems:
        raise ClusterError(
            "every Ray node must see the project, its data and the reports folder at the driver's paths "
            f"(a shared filesystem; README, 'Sweeps on Ray'): {'; '.join(problems)}"
        )


def _enter(cwd: str) -> None:
    """In a task: the driver's working folder, and as many torch (and kernel) threads as CPUs given."""
    import ray
    import torch

    from kit.core.progress import quiet_libraries

    os.chdir(cwd)
    threads = max(1, int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))
    os.environ.update({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "KIT_PROGRESS": "0"})
    torch.set_num_threads(threads)
    quiet_libraries()


_STUDIES: dict = {}  # a worker's studies, kept across its tasks: building one can take seconds (entity linking)


def _train(run, reports: Path, args: tuple, cwd: str) -> tuple[float, bool]:
    """Task: compute (or find cached) one planned run; returns (seconds, cached)."""
    _enter(cwd)
    key = (run.notebook, run.name, str(reports), repr(sorted(run.parameters.items())))
    if key not in _STUDIES:
        _STUDIES.clear()
        _STUDIES[key] = build_study(run, reports)
    study = _STUDIES[key]
    before, t0 = len(study.computed_runs), time.monotonic()
    study.run(*args)
    return time.monotonic() - t0, len(study.computed_runs) == before


def _render(run, reports: Path, cwd: str) -> tuple[Path | None, float, Exception | None]:
    """Task: execute and export the run file's notebook (``kit.runner.render``)."""
    _enter(cwd)
    return render(run, reports)


def task_error(err: BaseException) -> BaseException:
    """The user's exception inside a Ray task error (Ray wraps it), else the error itself (a lost worker)."""
    return getattr(err, "cause", None) or err


def sweep(ray, share: Share, runs: list, plans: list, reports: Path, progress, finished: Callable) -> None:
    """Every planned training of every run file (``plans``: ``kit.runner.Plan``) as a task, each run file's
    notebook as a task once its trainings are done; a failed task is submitted once more, then reported.
    ``finished(k, html, seconds, error)`` is called as the notebook of run file ``k`` ends."""
    options = {"num_cpus": share.cpus, "num_gpus": share.gpus, "max_retries": 0}
    train, render = ray.remote(**options)(_train), ray.remote(**options)(_render)
    cwd, pending, left = os.getcwd(), {}, [len(p.trainings) for p in plans]

    def submit(kind: str, k: int, args: tuple | None = None, attempt: int = 1) -> None:
        ref = render.remote(runs[k], reports, cwd) if kind == "render" else train.remote(runs[k], reports, args, cwd)
        pending[ref] = (kind, k, args, attempt)

    for k, (run, p) in enumerate(zip(runs, plans)):
        progress.run_started(k + 1, f"{run.notebook}/{run.name}", len(p.trainings), str(run.file), p.broken)
        for args in p.trainings:
            submit("train", k, args)
        if not p.trainings:
            submit("render", k)
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        kind, k, args, attempt = pending.pop(ref)
        name = f"{runs[k].notebook}/{runs[k].name}"
        training = plans[k].study.run_label(*args) if kind == "train" else ""
        what = f"training {training}" if kind == "train" else "its notebook"
        try:
            outcome = ray.get(ref)
        except Exception as err:  # the task raised, or its worker or node was lost
            reason = failure_reason(task_error(err))
            if attempt == 1:
                progress.line(f"{name} {what} failed ({reason}); retrying once")
                submit(kind, k, args, attempt=2)
                continue
            outcome = RuntimeError(f"{reason} (on both attempts)")
        failed = not isinstance(outcome, tuple)
        if kind == "render":
            finished(k, *((None, 0.0, outcome) if failed else outcome))
            continue
        trains = plans[k].study.run_trains(*args)
        if not failed:
            progress.training_done(name, training, *outcome, trains)
        else:
            progress.training_failed(name, training, str(outcome))
            progress.trainings_skipped(1, free=int(not trains))
        left[k] -= 1
        if not left[k]:
            submit("render", k)
