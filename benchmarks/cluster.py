"""Scheduling overhead of Ray (``kit.batch --ray``) against the serial path, on smoke run files.

In one process, each with a fresh reports folder (so every training is computed): the serial path
(``execute_all`` in this process, the reference), the same files as Ray tasks on a local cluster one
task at a time (``--ray --jobs 1``: each task gets every CPU, so the work is the serial path's and the
difference is the scheduling: the cluster's start, worker processes, their imports, task submission),
and two at a time (``--jobs 2``). The overhead per task is (Ray, one at a time - serial) / tasks, where
the tasks are the trainings and the notebooks. ``--quick`` runs the explorer's smoke file (one notebook,
no training) serially and one task at a time, without timing the cluster's start apart, and writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from _common import record

from kit.batch import execute_all
from kit.paths import PARAMS
from kit.runner import plan, prepare


def timed(files: list[Path], jobs: int | None, ray: str | None) -> float:
    with tempfile.TemporaryDirectory() as folder:
        runs = [prepare(f) for f in files]
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # the progress lines
            failures = execute_all(runs, Path(folder), jobs, ray)
        seconds = time.perf_counter() - t
    assert not failures, failures
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    notebooks = ["explore_augmentations"] if args.quick else ["augmented_sbert", "medse_entity_definitions"]
    files = [PARAMS / n / "smoke.yaml" for n in notebooks]
    with tempfile.TemporaryDirectory() as folder:
        trainings = sum(len(plan(prepare(f), Path(folder)).trainings) for f in files)
    tasks = trainings + len(files)

    start = None
    if not args.quick:  # the Ray rows include it anyway
        import ray

        t = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False)
        ray.shutdown()
        start = time.perf_counter() - t

    serial = timed(files, None, None)
    one = timed(files, 1, "")
    two = None if args.quick else timed(files, 2, "")  # --jobs 2 is the test suite's (tests/test_cluster.py)
    rows = [
        "| path | seconds | ratio to serial | overhead per task, s |",
        "|---|---:|---:|---:|",
        f"| serial, in this process (reference) | {serial:.1f} | 1.00 | |",
        f"| Ray, local cluster, one task at a time (`--ray --jobs 1`) | {one:.1f} | {one / serial:.2f} "
        f"| {(one - serial) / tasks:.2f} |",
        f"| Ray, local cluster, two at a time (`--jobs 2`) | {two:.1f} | {two / serial:.2f} | |"
        if two is not None
        else "| Ray, local cluster, two at a time (`--jobs 2`) | not run (`--quick`) | | |",
    ]
    table = "\n".join(
        [
            f"smoke files of {', '.join(notebooks)}: {trainings} trainings and {len(files)} notebooks = {tasks} tasks; "
            + (
                f"a local Ray cluster starts and stops in {start:.1f} s (part of each Ray row)"
                if start is not None
                else "the cluster's start not timed apart (`--quick`; part of the Ray row)"
            ),
            "",
            *rows,
        ]
    )
    record("cluster.py: Ray scheduling overhead against the serial path", table, args.quick)


if __name__ == "__main__":
    main()
