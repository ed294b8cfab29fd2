"""Faults, class 6: a run that fails inside its notebook does not stop the batch; its reason (the error and
the cell) is printed on the terminal and kept in ``error.log`` beside its report, its executed notebook is
still exported, and the index keeps every earlier run's entry."""

import shutil

import pytest

from kit.batch import main as batch_main
from kit.paths import PARAMS


def good_run_file(tmp_path, name="explore"):
    run_file = tmp_path / "explore_augmentations" / f"{name}.yaml"
    run_file.parent.mkdir(exist_ok=True)
    shutil.copy(PARAMS / "explore_augmentations" / "smoke.yaml", run_file)
    return run_file


def test_a_failing_run_says_why_on_the_terminal_and_the_others_finish(tmp_path, capsys, failing_run_file):
    """In this process; tests/test_cluster.py checks the same of a notebook failing in a Ray task (``--jobs 2``)."""
    reports = tmp_path / "reports"
    code = batch_main([str(failing_run_file(tmp_path)), str(good_run_file(tmp_path)), "--reports", str(reports)])
    out = capsys.readouterr()
    assert code == 1
    failed = reports / "medse_entity_definitions" / "broken"
    line = next(x for x in out.out.splitlines() if "medse_entity_definitions/broken FAILED after" in x)
    assert "ValueError: only 0 evaluation pairs mention a linked entity" in line and "(notebook cell In [" in line
    log = (failed / "error.log").read_text()
    assert log.startswith("ValueError: only 0 evaluation pairs") and "the failing cell" in log and "\x1b[" not in log
    assert "only 0 evaluation pairs" in (failed / "report.html").read_text(encoding="utf-8")  # the error in place
    assert not (failed / "results.json").exists()
    assert (reports / "explore_augmentations" / "explore" / "results.json").exists()
    assert not list(reports.glob("*/*/.executing"))  # neither a finished nor a failed execution leaves its lock
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert "only 0 evaluation pairs" in index and "explore_augmentations/explore/report.html" in index


def test_the_index_keeps_earlier_runs_and_shows_each_runs_latest_execution(tmp_path, capsys, failing_run_file):
    reports = tmp_path / "reports"
    assert batch_main([str(good_run_file(tmp_path, "first")), "--reports", str(reports)]) == 0
    broken = failing_run_file(tmp_path)
    assert batch_main([str(broken), "--reports", str(reports)]) == 1
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert "explore_augmentations/first/report.html" in index and "medse_entity_definitions/broken" in index

    # the failed run fixed and rerun: its failure leaves the index, its report and record replace the error
    broken.write_text("\n".join(x for x in broken.read_text().splitlines() if "ontology_path" not in x) + "\n")
    (reports / "explore_augmentations" / "first" / "results.json").write_text("{truncated")
    assert batch_main([str(broken), "--reports", str(reports)]) == 0
    assert "explore_augmentations/first/results.json is unreadable" in capsys.readouterr().err
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert (
        "only 0 evaluation pairs" not in index
        and not (reports / "medse_entity_definitions" / "broken" / "error.log").exists()
    )
    assert "explore_augmentations/first" in index and "unreadable" in index  # a damaged record is shown, not fatal


def test_a_damaged_suite_file_is_recomputed_and_a_failed_rerun_keeps_the_last_finished_report(
    tmp_path, capsys, failing_run_file
):
    """A truncated ``suite.npz`` made every rerun fail with ``BadZipFile`` naming no file, and each failed rerun
    first deleted the run's good ``results.json`` and ``results_table.txt``."""
    (tmp_path / "broken").mkdir()
    broken = failing_run_file(tmp_path / "broken").read_text()  # fails in the notebook: its ontology_path
    run_file = tmp_path / "medse_entity_definitions" / "run.yaml"
    run_file.parent.mkdir()
    run_file.write_text("".join(x for x in broken.splitlines(keepends=True) if not x.startswith("ontology_path")))
    reports = tmp_path / "reports"
    folder = reports / "medse_entity_definitions" / "run"
    assert batch_main([str(run_file), "--reports", str(reports)]) == 0
    finished = (folder / "results_table.txt").read_text()
    capsys.readouterr()

    (suite,) = [f for f in (folder / "runs").glob("simcse-*/suite.npz")]
    suite.write_bytes(suite.read_bytes()[:10])
    assert batch_main([str(run_file), "--reports", str(reports)]) == 0
    assert f"{suite} is unreadable (its bytes differ from what the run wrote); set aside" in capsys.readouterr().err
    assert len(list(suite.parent.glob("suite.npz.damaged-*"))) == 1
    assert (folder / "results_table.txt").read_text() == finished  # recomputed to the same numbers

    run_file.write_text(broken)  # the same run file, now with data that fails in the notebook
    assert batch_main([str(run_file), "--reports", str(reports)]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "FAILED after" in x)
    assert f"the last finished report is kept in {folder / 'last_good'}" in line
    assert not (folder / "results.json").exists() and (folder / "error.log").exists()
    assert (folder / "last_good" / "results_table.txt").read_text() == finished
    assert (folder / "last_good" / "report.html").exists() and (folder / "last_good" / "figures").is_dir()
    assert "medse_entity_definitions/run/last_good/report.html" in (reports / "index.html").read_text()


def report_files(folder) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


def execution(folder, outcome: str) -> None:
    """What an execution leaves in its report folder: a finished one its record, a failed one its log."""
    (folder / "report.html").write_text(outcome)
    (folder / ("results.json" if outcome.startswith("finished") else "error.log")).write_text(outcome)


@pytest.mark.parametrize(
    "outcomes, kept",
    [
        (["finished 1", "failed 2"], "finished 1"),
        (["finished 1", "failed 2", "failed 3"], "finished 1"),  # a second failure keeps the first finished report
        (["finished 1", "killed 2", "failed 3"], "finished 1"),  # a killed execution's files are not a report
        (["failed 1", "failed 2"], None),
        (["finished 1", "failed 2", "finished 3"], None),  # a finished execution removes the kept report
        (["finished 1", "finished 2"], None),
        (["finished 1", "unexported 2", "failed 3"], "finished 1"),  # killed after its record, before its page
        (["finished 1", "failed after its record 2", "failed 3"], "finished 1"),
        (["finished 1", "killed amid the set-aside 2", "failed 3"], "finished 2"),
        (["legacy .previous 1", "failed 2"], "legacy .previous 1"),  # an older kit's hidden set-aside, recovered
    ],
)
def test_the_last_finished_report_survives_failed_and_killed_executions(tmp_path, outcomes, kept):
    from kit.runner import keep_last_report, set_last_report_aside

    folder = tmp_path / "run"
    (folder / "runs").mkdir(parents=True)
    (folder / "runs" / "result.json").write_text("a cached run")
    for outcome in outcomes:
        if outcome.startswith("legacy"):
            (folder / ".previous").mkdir()
            for name in ("report.html", "results.json"):
                (folder / ".previous" / name).write_text(outcome)
            (folder / "report.html").write_text("killed")  # the killed execution's half report beside it
            continue
        if outcome.startswith("killed amid the set-aside"):  # a finished execution, then the next one's set-aside
            set_last_report_aside(folder)  # killed after it staged the report's first file, not the rest
            execution(folder, "finished" + outcome.removeprefix("killed amid the set-aside"))
            keep_last_report(folder, failed=False)
            (folder / ".last_good.staging").mkdir()
            (folder / "figure.png").write_text("a figure")
            (folder / "figure.png").rename(folder / ".last_good.staging" / "figure.png")
            continue
        set_last_report_aside(folder)
        assert not (folder / "results.json").exists() and not (folder / "error.log").exists()
        if outcome.startswith("killed"):
            (folder / "report.html").write_text(outcome)  # half an execution: no record
            continue
        if outcome.startswith("unexported"):
            (folder / "results.json").write_text(outcome)  # the record written, the page not yet
            continue
        if outcome.startswith("failed after its record"):
            execution(folder, outcome)
            (folder / "results.json").write_text(outcome)
            keep_last_report(folder, failed=True)
            continue
        execution(folder, outcome)
        keep_last_report(folder, failed=outcome.startswith("failed"))
    top = {name: text for name, text in report_files(folder).items() if "/" not in name}
    assert top["report.html"] == outcomes[-1] and (folder / "runs" / "result.json").exists()
    if kept is None:
        assert not (folder / "last_good").exists() and not (folder / ".previous").exists()
    else:
        files = report_files(folder / "last_good")
        assert (files["report.html"], files["results.json"]) == (kept, kept)
        assert not (folder / ".last_good.staging").exists() and not (folder / ".previous").exists()


def test_a_second_execution_into_a_folder_being_executed_fails_at_once_and_touches_nothing(tmp_path, capsys):
    """Two kit.batch calls executing one run at once moved each other's report files about."""
    import fcntl

    reports = tmp_path / "reports"
    folder = reports / "explore_augmentations" / "explore"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text("{}")
    with open(folder / ".executing", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another kit.batch, amid the execution
        assert batch_main([str(good_run_file(tmp_path)), "--reports", str(reports)]) == 1
    assert f"another kit.batch is executing this run into {folder}" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == [".executing", "results.json"]
