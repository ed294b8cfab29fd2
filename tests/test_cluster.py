"""Planned runs as Ray tasks (``kit.cluster``): shares of the nodes, the shared-filesystem check, a sweep on a
local cluster of 2 CPU workers against the serial path, a failing run retried and reported, and a driver
killed mid-sweep whose rerun recomputes only the unfinished runs."""

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kit.batch import main as batch_main
from kit.cluster import ClusterError, Share, _sees, at_once, run_share
from kit.paths import PARAMS, PROJECT_ROOT
from kit.runner import plan, prepare
from kit.study import ARTEFACTS

SWEPT = ["augmented_sbert", "medse_entity_definitions"]  # two studies' smoke files


def test_a_task_gets_its_share_of_the_smallest_node():
    cpu = {"CPU": 16.0, "memory": 1e10}
    assert run_share([cpu], 2) == Share(cpus=8, gpus=0.0)
    assert run_share([cpu, {"CPU": 4.0}], None) == Share(cpus=4, gpus=0.0)  # one run per CPU node by default
    assert run_share([{"CPU": 2.0}], 3) == Share(cpus=1, gpus=0.0)  # at least one CPU
    gpu = {"CPU": 64.0, "GPU": 8.0}
    assert run_share([gpu], None) == Share(cpus=8, gpus=1.0)  # one run per GPU by default
    assert run_share([gpu], 16) == Share(cpus=4, gpus=0.5)
    assert run_share([gpu], 4) == Share(cpus=16, gpus=1.0)  # a whole GPU at most
    assert run_share([{"CPU": 2.0}, gpu], None) == Share(cpus=8, gpus=1.0)  # a CPU-only head node is not a GPU node
    with pytest.raises(ClusterError, match="no node"):
        run_share([{"CPU": 0.0}], 1)
    assert at_once([cpu, {"CPU": 4.0}], Share(cpus=4, gpus=0.0)) == 5
    assert at_once([{"CPU": 2.0}, gpu, gpu], Share(cpus=8, gpus=1.0)) == 16  # GPU-bound; the head runs none
    assert at_once([gpu], Share(cpus=4, gpus=0.5)) == 16


@pytest.mark.slow
@pytest.mark.xdist_group("smoke")
def test_a_local_sweep_starts_its_own_cluster_even_with_ray_address_set_and_checks_the_address(
    killed_then_swept, capsys
):
    out, _, lines, _ = killed_then_swept  # swept with RAY_ADDRESS at a cluster that does not answer
    for notebook in SWEPT:
        assert any(f"{notebook}/smoke finished in" in x for x in lines)
        assert (out / notebook / "smoke" / "report.html").exists()
    with pytest.raises(SystemExit):
        batch_main([str(PARAMS / "explore_augmentations" / "smoke.yaml"), "--ray", "params/typo.yaml"])
    assert "not a Ray address" in capsys.readouterr().err  # a mistyped run file is not an address


def test_without_ray_the_command_fails_at_once_with_the_install_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    bad = tmp_path / "simcse_augmentations" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("steps: -1\n")  # invalid, but Ray is checked first
    for flags in (["--ray"], ["--jobs", "2"], ["--ray", "localhost:6379"]):
        with pytest.raises(SystemExit) as exit_:
            batch_main([str(bad), *flags])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert 'pip install -e ".[cluster]"' in err and "steps" not in err


def test_a_node_that_does_not_share_the_project_or_the_reports_says_what_it_lacks(tmp_path):
    token = tmp_path / "token"
    token.write_text("abc")
    assert _sees(str(token), "abc", str(PROJECT_ROOT), str(tmp_path)) is None
    assert "cannot read the reports folder" in _sees(str(tmp_path / "elsewhere"), "abc", str(PROJECT_ROOT), "/")
    assert "reads another" in _sees(str(token), "xyz", str(PROJECT_ROOT), "/")
    assert "not from the driver's /other/kit" in _sees(str(token), "abc", "/other/kit", "/")
    assert "working folder" in _sees(str(token), "abc", str(PROJECT_ROOT), str(tmp_path / "gone"))


def untimed(value):
    """``value`` without its timings (keys ending in ``seconds``), which no two runs share."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not k.endswith("seconds")}
    return [untimed(v) for v in value] if isinstance(value, list) else value


def results(report_dir) -> dict[str, dict]:
    """Every finished run's result without its timings, by run folder; without its artefacts' digests too,
    since an artefact may hold a time (``history.json``'s ``train_seconds``)."""
    return {
        p.parent.name: untimed({k: v for k, v in json.loads(p.read_text()).items() if k != ARTEFACTS})
        for p in report_dir.glob("runs/*/result.json")
    }


@pytest.fixture(scope="module")
def serial_with_task_threads(request, tmp_path_factory):
    """The two smoke files through the serial path with the torch threads of one Ray task of ``--jobs 2``
    (one CPU of two), trainings and notebook kernels alike: float sums run in the same order, so the
    sweep's results can be compared bit for bit. Under ``pytest -n 2`` on two CPUs every worker already runs
    with those threads, so the session's smoke runs are the serial path's."""
    import torch

    threads, before = max(1, (os.cpu_count() or 1) // 2), torch.get_num_threads()
    if before == threads and all(
        os.environ.get(name) == str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
    ):
        return request.getfixturevalue("smoke_reports")
    out = tmp_path_factory.mktemp("serial")
    with pytest.MonkeyPatch.context() as env:
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setenv(name, str(threads))
        torch.set_num_threads(threads)
        try:
            assert batch_main([*(str(PARAMS / n / "smoke.yaml") for n in SWEPT), "--reports", str(out)]) == 0
        finally:
            torch.set_num_threads(before)
    return out


def kill_marked(marker: str, timeout: float = 60) -> None:
    """SIGKILL every process whose environment holds ``marker`` (``NAME=value``), until none is left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and marker.encode() in (proc / "environ").read_bytes().split(b"\0"):
                    pids.append(int(proc.name))
            except OSError:  # gone, or not ours
                continue
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    raise AssertionError(f"processes of the killed sweep still alive after {timeout} s")


def result_times(reports) -> dict[str, int]:
    """The modification time of every finished training's result under ``reports``, by its path there."""
    return {p.relative_to(reports).as_posix(): p.stat().st_mtime_ns for p in reports.glob("*/*/runs/*/result.json")}


@pytest.fixture(scope="module")
def killed_then_swept(serial_with_task_threads, tmp_path_factory, failing_run_file):
    """The slow Ray cases behind one sweep. Study 2's smoke file on two Ray workers by a driver (a subprocess) killed
    with SIGKILL once a training has finished; then both smoke files swept in this process with ``--jobs 2``,
    beside two failing run files: ``broken``, whose run cache is a file (every training fails), and
    ``failing_run_file``'s, whose notebook fails, with ``RAY_ADDRESS`` naming a cluster that does not answer.
    Returns the reports folder, the rerun's exit code and output lines, and the finished trainings' result times at
    the kill."""
    tmp = tmp_path_factory.mktemp("sweep")
    files = [PARAMS / notebook / "smoke.yaml" for notebook in SWEPT]
    out = tmp / "reports"
    tag = uuid.uuid4().hex  # in the environment of the driver, inherited by the local cluster's raylet and workers
    driver = subprocess.Popen(
        [sys.executable, "-m", "kit.batch", str(files[0]), "--reports", str(out), "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "KIT_SWEEP_UNDER_TEST": tag},
    )
    try:
        deadline = time.monotonic() + 600
        while not result_times(out) and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        driver.send_signal(signal.SIGKILL)  # the driver alone
        driver.wait(timeout=60)
    finally:
        # a worker amid a training would otherwise finish it after `finished` is read
        kill_marked(f"KIT_SWEEP_UNDER_TEST={tag}")
    finished = result_times(out)

    broken = tmp / "params" / "augmented_sbert" / "broken.yaml"
    broken.parent.mkdir(parents=True)
    shutil.copy(files[0], broken)
    (out / "augmented_sbert" / "broken").mkdir(parents=True)
    (out / "augmented_sbert" / "broken" / "runs").write_text("not a folder")
    failing = failing_run_file(tmp)
    with contextlib.redirect_stdout(io.StringIO()) as printed, pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_ADDRESS", "127.0.0.1:1")  # a cluster that does not answer: not used without --ray ADDRESS
        code = batch_main([*map(str, files), str(broken), str(failing), "--reports", str(out), "--jobs", "2"])
    return out, code, printed.getvalue().splitlines(), finished


@pytest.mark.slow
@pytest.mark.xdist_group("smoke")
def test_a_sweep_on_two_ray_workers_gives_the_serial_results(killed_then_swept, serial_with_task_threads):
    out, _, lines, _ = killed_then_swept
    for notebook in SWEPT:
        swept, serial = out / notebook / "smoke", serial_with_task_threads / notebook / "smoke"
        assert any(f"{notebook}/smoke finished in" in x for x in lines)
        assert results(serial) and results(swept) == results(serial)  # every run folder, every number
        record, reference = (json.loads((d / "results.json").read_text()) for d in (swept, serial))
        assert untimed(record["metrics"]) == untimed(reference["metrics"])
        assert record["torch_threads"] == reference["torch_threads"] == max(1, (os.cpu_count() or 1) // 2)


@pytest.mark.slow
@pytest.mark.xdist_group("smoke")
def test_a_driver_killed_mid_sweep_leaves_its_finished_runs_and_the_rerun_computes_only_the_rest(killed_then_swept):
    out, _, lines, finished = killed_then_swept
    killed = f"{SWEPT[0]}/smoke"  # the killed driver's run file; the other smoke file's own repeats are cached too
    planned = len(plan(prepare(PARAMS / SWEPT[0] / "smoke.yaml"), out).trainings)
    assert 1 <= len(finished) < planned, "the sweep finished before the kill"
    said = [x.split("] ", 1)[-1] for x in lines]
    cached = [x for x in said if x.startswith("training ") and f" {killed} " in x and ": cached;" in x]
    assert len(cached) == len(finished)
    now = {k: v for k, v in result_times(out).items() if k.startswith(f"{killed}/")}
    assert len(now) == planned and {k: now[k] for k in finished} == finished  # finished runs untouched


@pytest.mark.slow
@pytest.mark.xdist_group("smoke")
def test_a_run_whose_trainings_fail_on_ray_is_retried_then_reported_and_the_others_finish(killed_then_swept):
    out, code, lines, _ = killed_then_swept
    assert code == 1  # the two failing run files failed, the others finished
    planned = len(plan(prepare(PARAMS / "augmented_sbert" / "smoke.yaml"), out).trainings)
    retried = [x for x in lines if "augmented_sbert/broken" in x and "; retrying once" in x]
    failed = [x for x in lines if "augmented_sbert/broken" in x and "FAILED" in x and "(on both attempts)" in x]
    assert len(retried) == len(failed) == planned and "NotADirectoryError" in failed[0]
    assert any("augmented_sbert/broken FAILED after" in x for x in lines)


@pytest.mark.slow
@pytest.mark.xdist_group("smoke")
def test_a_notebook_failing_in_a_ray_task_says_why_and_leaves_no_lock(killed_then_swept):
    """What tests/faults/test_failed_runs.py checks of a failing notebook in this process, in a Ray task."""
    out, _, lines, _ = killed_then_swept
    failed = out / "medse_entity_definitions" / "broken"
    line = next(x for x in lines if "medse_entity_definitions/broken FAILED after" in x)
    assert "ValueError: only 0 evaluation pairs mention a linked entity" in line and "(notebook cell In [" in line
    assert (failed / "error.log").read_text().startswith("ValueError: only 0 evaluation pairs")
    assert "only 0 evaluation pairs" in (failed / "report.html").read_text(encoding="utf-8")
    assert not (failed / "results.json").exists() and not list(out.glob("*/*/.executing"))
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "only 0 evaluation pairs" in index and "augmented_sbert/smoke/report.html" in index


@pytest.mark.parametrize(
    "address, message",
    [
        ("nonsense:99999", "port '99999' is not an integer from 1 to 65535"),
        ("ray://head:0", "port '0' is not an integer from 1 to 65535"),
        ("head:port", "port 'port' is not an integer from 1 to 65535"),
        ("nonsense", "not a Ray address: give host:port, ray://host:port or auto"),
    ],
)
def test_a_ray_address_is_checked_before_any_connection(address, message, capsys):
    """``--ray nonsense:99999`` retried the connection for minutes."""
    with pytest.raises(SystemExit) as exit_:
        batch_main([str(PARAMS / "explore_augmentations" / "smoke.yaml"), "--ray", address])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and f"argument --ray: {address}: {message}" in line


def test_an_address_where_nothing_answers_is_refused_in_seconds(tmp_path, capsys):
    """A Ray address that nothing listens at was retried for about a minute, deaf to SIGTERM."""
    import time

    t0 = time.monotonic()
    code = batch_main(
        [str(PARAMS / "explore_augmentations" / "smoke.yaml"), "--reports", str(tmp_path), "--ray", "127.0.0.1:1"]
    )
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and line == "[kit.batch] cannot connect to a Ray cluster at 127.0.0.1:1: Connection refused"
    assert time.monotonic() - t0 < 30 and not (tmp_path / "explore_augmentations").exists()
