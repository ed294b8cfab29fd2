"""Study 2's held-out task (``kit.studies.augmented_sbert.held_out``): every BIOSSES pair scored by the k-fold model
that held it out. The assembly on made-up outputs, then the smoke model's k-fold runs (2 folds x 2 seeds, trained
once for the module) read into the suite report, its positive control on the 100 held-out pairs."""

import re

import numpy as np
import pytest

from kit.evaluation.rows import Control, Evidence, load_outputs
from kit.evaluation.sts import BIOSSES_ALL, BIOSSES_TEST
from kit.evaluation.task import nested
from kit.params import ParameterError
from kit.studies.augmented_sbert.held_out import ALL_PAIRS, HELD_OUT, cross_fitted, held_out_task
from kit.studies.augmented_sbert.method import CONDITIONS
from kit.studies.augmented_sbert.params import CROSS_ENCODER
from kit.studies.augmented_sbert.study import PREMISE, STARTING, Study, suite_file, suite_row
from tests.studies.augmented_sbert.test_study import smoke_params

KFOLD_GOLD, KFOLD_CROSS = suite_row("biosses_kfold", "gold"), suite_row("biosses_kfold", CROSS_ENCODER)
PRIMARY = "biosses_kfold: gold + semantic silver - biosses_kfold: gold on biosses-cv"


def test_each_item_comes_from_the_fold_that_held_it_out():
    runs = [{ALL_PAIRS: {"spearman": np.full(6, float(f))}} for f in range(3)]
    held = [np.array([0, 3]), np.array([1, 4]), np.array([2, 5])]
    out = cross_fitted(runs, held, 6)
    np.testing.assert_array_equal(out[HELD_OUT]["spearman"], [0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="hold out 4 of 6 pairs exactly once"):
        cross_fitted(runs, [np.array([0, 3]), np.array([0, 4]), np.array([2, 5])], 6)
    with pytest.raises(ValueError, match="hold out 4 of 6 pairs exactly once"):
        cross_fitted(runs[:2], held[:2], 6)


def test_the_held_out_task_is_all_pairs_not_declared_as_training_data_and_nested_in_none_clustered_by_fold():
    folds = np.array_split(np.random.default_rng(0).permutation(100), 5)
    task = held_out_task(BIOSSES_ALL, folds)
    assert task.name == HELD_OUT and task.items == 100 and not task.seen("augmented_sbert")
    assert task.item_texts() == BIOSSES_ALL.item_texts() and "5-fold model that held it out" in task.description
    assert all((np.asarray(task.clusters)[idx] == f).all() for f, idx in enumerate(folds)) and not BIOSSES_ALL.clusters
    with pytest.raises(ValueError, match="hold out 80 of 100 pairs exactly once"):
        held_out_task(BIOSSES_ALL, folds[:4])
    # the same pairs, scored by other models: a comparison there is no part of one on biosses-all, nor the reverse
    assert nested([BIOSSES_ALL, task, BIOSSES_TEST]) == {"biosses-test": "biosses-all"}
    assert nested([task, BIOSSES_ALL]) == {}


def test_a_primary_on_the_held_out_task_needs_the_kfold_benchmark_and_all_pairs_in_the_suite():
    assert HELD_OUT in smoke_params(benchmarks=["biosses_kfold"], suite=[ALL_PAIRS], primary=None).primary_tasks()
    assert HELD_OUT not in smoke_params(suite=[ALL_PAIRS], benchmarks=["biosses_blurb"], primary=None).primary_tasks()
    with pytest.raises(ParameterError, match="parameter 'primary': 'biosses-cv' is not a task this run scores"):
        smoke_params(benchmarks=["biosses_kfold"], suite=["biosses-test"], primary=PRIMARY)


def test_only_the_kfold_rows_and_the_start_are_scored_on_it(tmp_path, monkeypatch):
    study = Study(
        smoke_params(benchmarks=["biosses_blurb", "biosses_kfold"], suite=[ALL_PAIRS], primary=None), tmp_path
    )
    monkeypatch.setattr(study, "trains_on", lambda benchmark, pairs: True)
    assert [t.name for t in study.report_tasks] == [ALL_PAIRS, HELD_OUT]
    assert study.rows_left_out() == {HELD_OUT: [suite_row("biosses_blurb", c) for c in (*CONDITIONS, CROSS_ENCODER)]}
    assert study.left_out() == {}  # the report's sentence on rows left out for their training pairs names none
    assert study.row_run_count(suite_row("biosses_blurb", "gold"), HELD_OUT) == 2  # its own runs: not a k-fold row
    no_primary = Study(smoke_params(benchmarks=["biosses_kfold"], suite=[ALL_PAIRS], primary=None), tmp_path)
    assert no_primary.control() == Control(KFOLD_CROSS, KFOLD_GOLD, HELD_OUT, PREMISE, "")
    assert Study(smoke_params(benchmarks=["biosses_kfold"], primary=None), tmp_path).held_out is None  # no biosses-all


def test_a_run_that_trained_on_a_held_out_pair_is_refused(tmp_path, monkeypatch):
    study = Study(smoke_params(benchmarks=["biosses_kfold"], suite=[ALL_PAIRS], primary=None), tmp_path)
    leaked = study.splits("biosses_kfold")[1].test[0]
    monkeypatch.setattr(
        study, "run", lambda b, split, seed: {"silver": {"semantic": {"pairs": [leaked] * (split == 1)}}}
    )
    with pytest.raises(ValueError, match="biosses_kfold split 1 seed 0 trained on 1 held-out pairs"):
        study.check_held_out()


def test_evidence_of_a_row_no_run_of_which_holds_a_task_is_refused():
    with pytest.raises(ValueError, match="no run of 'a' has outputs on biosses-all"):
        Evidence.of({"a": [{"other": {}}]}, [], [BIOSSES_ALL])


@pytest.fixture(scope="module")
def kfold(tmp_path_factory):
    """The smoke model's k-fold runs, 2 folds x 2 seeds, primary on the held-out task: (study, its suite report)."""
    params = smoke_params(
        benchmarks=["biosses_kfold"], kfold_seeds=[0, 1], suite=[ALL_PAIRS, "biosses-test"], primary=PRIMARY
    )
    study = Study(params, tmp_path_factory.mktemp("kfold"))
    for job in study.planned_runs():
        study.run(*job)
    return study, study.suite_report()


def test_each_seeds_folds_make_one_run_on_the_held_out_task(kfold):
    study, suite = kfold
    evidence = suite.evidence.outputs[HELD_OUT]
    trained = {suite_row("biosses_kfold", c) for c in (*CONDITIONS, CROSS_ENCODER)}
    assert set(evidence) == {STARTING, "tfidf", *trained}  # TF-IDF: the bag-of-words anchor, beside every row
    items = study.held_out_items()
    for row, condition in ((KFOLD_GOLD, "gold"), (KFOLD_CROSS, CROSS_ENCODER)):
        assert evidence[row].shape == (2, 100)
        for seed in (0, 1):
            for fold, idx in enumerate(items):
                saved = load_outputs(study._run_dir("biosses_kfold", fold, seed) / suite_file(condition))
                np.testing.assert_array_equal(evidence[row][seed, idx], saved[ALL_PAIRS]["spearman"][idx])
    held = next(t for t in suite.evidence.tasks if t.name == HELD_OUT)
    assert all((held.clusters[idx] == fold).all() for fold, idx in enumerate(items))
    assert suite.evidence.outputs[ALL_PAIRS][KFOLD_GOLD].shape == (4, 100)  # fold x seed runs, reported apart
    np.testing.assert_array_equal(evidence[STARTING], suite.evidence.outputs[ALL_PAIRS][STARTING])
    assert study.row_run_count(KFOLD_GOLD, HELD_OUT) == 2 and study.row_run_count(KFOLD_GOLD) == 4


def test_the_control_and_the_primary_are_on_the_held_out_pairs(kfold):
    study, suite = kfold
    lines = suite.compared.set_index(["task", "row"])
    assert study.control() == (control := suite.control)
    assert (control.row, control.baseline, control.task, control.premise) == (
        KFOLD_CROSS,
        KFOLD_GOLD,
        HELD_OUT,
        PREMISE,
    )
    assert lines.loc[(HELD_OUT, KFOLD_CROSS)].role == "control" and lines.loc[(HELD_OUT, KFOLD_CROSS)].seeds == 2
    primary = lines.loc[(HELD_OUT, suite_row("biosses_kfold", "gold + semantic silver"))]
    assert primary.role == "primary" and primary["items"] == 100
    # the report says how each declared difference on the held-out pairs spreads over the 2 folds
    spread = re.search(r"Fold by fold \(each fold's contribution to the difference, x100\): (.*)\.$", suite.about())
    assert (
        spread
        and spread.group(1).count("of 2 folds)") == 2
        and "gold + semantic silver (BIOSSES k-fold) −" in spread.group(1)
    )
    assert [t.name for t in suite.headline_tasks()] == ["biosses-test", HELD_OUT]
    assert f"On `{HELD_OUT}` a k-fold row is scored on every BIOSSES pair" in suite.about()
