"""Faults, class 6: a run that fails inside its notebook does not stop the batch; its reason (the error and
the cell) is printed on the terminal and kept in ``error.log`` beside its report, its executed notebook is
still exported, and the index keeps every earlier run's entry."""

import json
import os
import shutil

import pytest

from kit.batch import main as batch_main
from kit.paths import PARAMS


def failing_run_file(tmp_path):
    """A valid MED-SE run file whose data fails only inside the notebook: an ontology none of whose entities
    occurs in BIOSSES, so the study has no entity-centric evaluation pairs (found after linking the corpus)."""
    ontology = tmp_path / "ontology.tsv"
    ontology.write_text("id\tname\tdefinition\nDOID:0\txyzzyitis\tAn illness that no sentence mentions.\n")
    run_file = tmp_path / "medse_entity_definitions" / "broken.yaml"
    run_file.parent.mkdir()
    run_file.write_text(
        (PARAMS / "medse_entity_definitions" / "smoke.yaml").read_text() + f"ontology_path: {ontology}\n"
    )
    return run_file


def good_run_file(tmp_path, name="explore"):
    run_file = tmp_path / "explore_augmentations" / f"{name}.yaml"
    run_file.parent.mkdir(exist_ok=True)
    shutil.copy(PARAMS / "explore_augmentations" / "smoke.yaml", run_file)
    return run_file


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_run_says_why_on_the_terminal_and_the_others_finish(tmp_path, capsys, jobs):
    reports = tmp_path / "reports"
    code = batch_main(
        [str(failing_run_file(tmp_path)), str(good_run_file(tmp_path)), "--reports", str(reports)]
        + ["--jobs", str(jobs)]
    )
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
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert "only 0 evaluation pairs" in index and "explore_augmentations/explore/report.html" in index
    if jobs == 2:  # two runs at once on this machine: each kernel got its share of the CPU threads
        record = json.loads((reports / "explore_augmentations" / "explore" / "results.json").read_text())
        assert record["torch_threads"] == max(1, (os.cpu_count() or 1) // 2)


def test_the_index_keeps_earlier_runs_and_shows_each_runs_latest_execution(tmp_path, capsys):
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
