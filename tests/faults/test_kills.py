"""Faults, class 3: a run killed (SIGKILL, no clean-up) at random points resumes from its last checkpoint
and ends with exactly the result of an uninterrupted run."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).with_name("kill_worker.py")
KILL_WITHIN = 0.8  # seconds; the worker's 40 steps take about 4 s here, so four kills cannot let it finish


def start(report_dir: Path) -> subprocess.Popen:
    """The worker, its stdout piped (it prints one line before training), its stderr into a log beside the report."""
    report_dir.mkdir(parents=True, exist_ok=True)
    with open(report_dir.with_suffix(".stderr"), "a") as log:
        env = {**os.environ, "KIT_PROGRESS": "0"}
        return subprocess.Popen(
            [sys.executable, str(WORKER), str(report_dir)], stdout=subprocess.PIPE, stderr=log, env=env, text=True
        )


def stderr(report_dir: Path) -> str:
    return report_dir.with_suffix(".stderr").read_text()[-3000:]


def finished_run(report_dir: Path) -> tuple[dict, np.ndarray]:
    (run,) = (report_dir / "runs").iterdir()
    return json.loads((run / "result.json").read_text()), np.load(run / "example_embeddings.npy")


def test_kills_at_random_points_resume_to_the_uninterrupted_result(tmp_path):
    reference = start(tmp_path / "reference")
    assert reference.wait(timeout=300) == 0, stderr(tmp_path / "reference")
    expected, expected_embeddings = finished_run(tmp_path / "reference")

    rng = random.Random(15)
    runs = tmp_path / "killed" / "runs"
    for after_checkpoint in (False, True, False, True):
        worker = start(tmp_path / "killed")
        assert worker.stdout.readline().strip() == "training", stderr(tmp_path / "killed")
        if after_checkpoint:  # half the kills land while a resumed run trains on
            while not any(runs.glob("*/checkpoint.pt")) and worker.poll() is None:
                time.sleep(0.01)
        time.sleep(rng.uniform(0.0, KILL_WITHIN))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=60)
    assert not list(runs.glob("*/result.json")), "the run finished before a kill: lower KILL_WITHIN"

    worker = start(tmp_path / "killed")
    assert worker.wait(timeout=300) == 0, stderr(tmp_path / "killed")
    result, embeddings = finished_run(tmp_path / "killed")
    assert result["metrics"] == expected["metrics"]
    assert result["history"]["rows"] == expected["history"]["rows"]
    assert result["history"]["best_step"] == expected["history"]["best_step"]
    np.testing.assert_array_equal(embeddings, expected_embeddings)
    assert not list((tmp_path / "killed").rglob("*.damaged-*"))  # atomic writes: nothing was left half-written


@pytest.fixture(scope="module")
def finished_explorer(tmp_path_factory):
    """The explorer's smoke file (a copy outside the project) and a reports folder where kit.batch finished it."""
    from kit.paths import PARAMS

    tmp = tmp_path_factory.mktemp("finished")
    run_file = tmp / "explore_augmentations" / "run.yaml"
    run_file.parent.mkdir()
    run_file.write_text((PARAMS / "explore_augmentations" / "smoke.yaml").read_text())
    env = {**os.environ, "KIT_PROGRESS": "0"}
    first = subprocess.run(
        [sys.executable, "-m", "kit.batch", str(run_file), "--reports", str(tmp / "reports")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0 and "IPKernelApp" not in first.stderr, first.stderr[-3000:]  # the kernel's log
    return run_file, tmp / "reports"


@pytest.mark.xdist_group("finished_explorer")  # one worker makes the fixture for both stops
@pytest.mark.parametrize("stop", ["ctrl-c", "kill -9"])
def test_a_stop_during_a_report_keeps_the_last_finished_one_linked(tmp_path, finished_explorer, stop):
    """Ctrl-C amid a notebook printed a 68-line traceback and left the last report in a hidden folder, with the
    index linking a report.html that was not there; kill -9 left it there until the next rerun."""
    import shutil

    from kit.report.index import write_index

    run_file, finished_reports = finished_explorer
    shutil.copytree(finished_reports, tmp_path / "reports")  # each stop on its own copy of the finished run
    command = [sys.executable, "-m", "kit.batch", str(run_file), "--reports", str(tmp_path / "reports")]
    env = {**os.environ, "KIT_PROGRESS": "0"}
    folder = tmp_path / "reports" / "explore_augmentations" / "run"
    finished = (folder / "report.html").read_bytes()

    batch = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    while not (folder / "last_good").exists():  # the execution has begun: the last report is set aside
        assert batch.poll() is None, batch.communicate()[1][-3000:]
        time.sleep(0.01)
    time.sleep(1.0)
    if stop == "ctrl-c":
        batch.send_signal(signal.SIGINT)
    else:
        os.killpg(batch.pid, signal.SIGKILL)  # kit.batch (its kernel, in a session of its own, ends when it sees)
    _, err = batch.communicate(timeout=120)
    assert (folder / "last_good" / "report.html").read_bytes() == finished
    if stop == "ctrl-c":
        assert batch.returncode in (130, -signal.SIGINT), err[-3000:]
        assert "[kit.batch] interrupted; the same command resumes (finished trainings are cached)" in err.splitlines()
        assert "Traceback" not in err and "IPKernelApp" not in err, err[-3000:]  # neither the kit's nor the kernel's
    else:
        write_index(tmp_path / "reports", {})  # what any later kit.batch writes, before this run is rerun
    assert "explore_augmentations/run/last_good/report.html" in (tmp_path / "reports" / "index.html").read_text()
    assert subprocess.run(command, env=env, capture_output=True, text=True).returncode == 0
    assert (folder / "results.json").exists() and not (folder / "last_good").exists()
