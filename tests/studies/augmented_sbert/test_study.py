"""Study 2's benchmarks and tables, without training (the notebook smoke run trains), and the smoke run file's
BIOSSES BLURB runs (trained once for the module) scored on the evaluation suite, with the positive control."""

import dataclasses
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kit.core.models import model_fingerprint
from kit.evaluation.pair_classification import RQE_TEST
from kit.evaluation.rows import Control, load_outputs, score_run
from kit.evaluation.sts import BIOSSES_TEST
from kit.evaluation.task import cosines, within_ranks
from kit.evaluation.tasks import TASKS
from kit.params import ParameterError, read_run_file
from kit.studies.augmented_sbert import report
from kit.studies.augmented_sbert.method import CONDITIONS
from kit.studies.augmented_sbert.params import BENCHMARKS, CROSS_ENCODER, AugSBERTParams
from kit.studies.augmented_sbert.study import (
    PREMISE,
    STARTING,
    Study,
    cross_encoder_outputs,
    pair_tasks,
    suite_file,
    suite_row,
)
from kit.study import ARTEFACTS, artefact_digests

SMOKE = Path(__file__).parents[3] / "params" / "augmented_sbert" / "smoke.yaml"
BLURB_CROSS, BLURB_GOLD = suite_row("biosses_blurb", CROSS_ENCODER), suite_row("biosses_blurb", "gold")


def smoke_params(**changes) -> AugSBERTParams:
    """The smoke run file's parameters (its tiny random model), with ``changes``."""
    return AugSBERTParams.from_dict({**read_run_file(SMOKE).parameters, **changes})


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The smoke run file's study on its BIOSSES BLURB benchmark alone (the benchmark of its primary and of the
    positive control; the others take minutes more), both seeds run: (study, its suite report)."""
    study = Study(smoke_params(benchmarks=["biosses_blurb"]), tmp_path_factory.mktemp("augmented_sbert"))
    for job in study.planned_runs():
        study.run(*job)
    return study, study.suite_report()


@pytest.fixture
def study(tmp_path):
    params = AugSBERTParams.from_dict({"model": "tiny-random-bert", "folds": 5, "nli_train_size": 60})
    return Study(params, tmp_path)


def test_kfold_partitions_all_100_pairs_and_never_trains_on_a_test_pair(study):
    folds = study.splits("biosses_kfold")
    assert len(folds) == 5 and [len(f.test) for f in folds] == [20] * 5
    tested = [p for f in folds for p in f.test]
    assert len(tested) == len(set(tested)) == 100
    for f in folds:
        assert not set(f.train) & set(f.test) and len(f.train) == 80
        assert f.train_labels.max() <= 1.0 and f.test_labels.max() > 1.0  # train on score/4, test on 0-4 scores
        test_sentences = {s for pair in f.test for s in pair}
        assert not (set(study.pool("biosses_kfold", f)) - {s for pair in f.train for s in pair})
        assert test_sentences - set(study.pool("biosses_kfold", f))  # held-out sentences stay out of the pool


def test_folds_are_fixed_by_fold_seed_not_by_the_training_seed(tmp_path):
    a = Study(AugSBERTParams.from_dict({"seeds": [0], "model": "tiny-random-bert"}), tmp_path).splits("biosses_kfold")
    b = Study(AugSBERTParams.from_dict({"seeds": [7], "model": "tiny-random-bert"}), tmp_path).splits("biosses_kfold")
    c = Study(AugSBERTParams.from_dict({"fold_seed": 1, "model": "tiny-random-bert"}), tmp_path).splits("biosses_kfold")
    assert [f.test for f in a] == [f.test for f in b] != [f.test for f in c]


def test_blurb_split_is_64_train_20_test(study):
    (split,) = study.splits("biosses_blurb")
    assert len(split.train) == 64 and len(split.test) == 20


def test_rqe_split_is_a_seeded_gold_sample_with_class_indices(study):
    with pytest.warns(UserWarning, match="empty question"):
        (split,) = study.splits("rqe")
    assert len(split.train) == 60 and len(split.test) == 230
    assert set(split.train_labels) <= {0, 1} and split.test_labels.mean() == 0.5  # MEDIQA 2019 test is balanced
    assert BENCHMARKS["rqe"].classes[1] == "true"


def test_pubmed_sentences_extend_the_pool_of_sts_benchmarks_only(tmp_path):
    study = Study(
        AugSBERTParams.from_dict({"pool_pubmed": 50, "model": "tiny-random-bert", "nli_train_size": 20}), tmp_path
    )
    (blurb,) = study.splits("biosses_blurb")
    assert len(study.pool("biosses_blurb", blurb)) == 119 + 50
    with pytest.warns(UserWarning):
        (rqe,) = study.splits("rqe")
    assert len(study.pool("rqe", rqe)) == len({s for p in rqe.train for s in p})


@pytest.mark.parametrize(
    "values, message",
    [
        ({"benchmarks": ["stsb"]}, r"parameter 'benchmarks': unknown value\(s\) \['stsb'\]"),
        ({"folds": 1}, "folds"),
        ({"top_k": 0}, "top_k"),
        ({"seeds": []}, "seeds"),
        ({"suite": []}, "suite"),
        ({"suite": ["cmedqq-test"]}, "not English"),
    ],
)
def test_bad_parameters_fail_before_any_work(values, message):
    with pytest.raises(ParameterError, match=message):
        AugSBERTParams.from_dict(values)


def test_mednli_without_files_fails_with_the_places_tried(tmp_path, monkeypatch):
    from kit.data import DataNotFoundError

    monkeypatch.setenv("KIT_CACHE", str(tmp_path))
    study = Study(AugSBERTParams.from_dict({"benchmarks": ["mednli"], "model": "tiny-random-bert"}), tmp_path)
    with pytest.raises(DataNotFoundError, match="mednli"):
        study.splits("mednli")


def _results():
    rows = []
    for split in ("fold 1", "fold 2"):
        for seed, shift in ((0, 0.0), (1, 1.0)):
            for condition, score in (
                ("gold", 80),
                ("gold + random silver", 70),
                ("gold + semantic silver", 81),
                ("cross-encoder", 40),
            ):
                rows.append(
                    {
                        "benchmark": "biosses_kfold",
                        "split": split,
                        "seed": seed,
                        "condition": condition,
                        "score": score + shift + (split == "fold 2") * (condition == "gold + semantic silver") * -3,
                    }
                )
        rows.append({"benchmark": "biosses_kfold", "split": split, "seed": None, "condition": STARTING, "score": 75.0})
    return pd.DataFrame(rows)


def test_table_pools_folds_and_seeds_and_verdict_pairs_runs(tmp_path):
    study = Study(AugSBERTParams.from_dict({"benchmarks": ["biosses_kfold"], "model": "tiny-random-bert"}), tmp_path)
    results = _results()
    table = study.table(results).set_index("training data")["BIOSSES (k-fold CV, all 100 pairs)"]
    assert table[STARTING] == "75.00 ± 0.00"
    gold = results[results.condition == "gold"].score
    assert table["gold"] == f"{gold.mean():.2f} ± {gold.std(ddof=1):.2f}"
    text = report.verdict(study, results)
    assert "Silver minus gold, mean of 4 paired run(s): random silver -10.00 (std 0.00)" in text
    assert "semantic silver -0.50 (std 1.73)" in text  # +1, +1, -2, -2: no call by eye, the suite decides
    assert "evaluation-suite section" in text and "every run" not in text and "consistent" not in text
    assert "starting model 75.00" in text and "below the gold bi-encoder" in text
    assert np.isclose(results[results.condition == "gold + semantic silver"].score.mean() - gold.mean(), -0.5)


def test_the_suite_enters_the_run_folder(tmp_path):
    def folder(suite):
        params = AugSBERTParams.from_dict({"model": "tiny-random-bert", "suite": suite})
        return Study(params, tmp_path)._run_dir("biosses_blurb", 0, 0)

    assert folder(["biosses-test"]) != folder(["biosses-test", "rqe-test"])


def test_rows_that_trained_on_a_suite_tasks_pairs_are_left_out_of_it(tmp_path):
    """Every k-fold bi-encoder trains on BIOSSES test pairs (each fold on 80 of the 100 pairs): its rows are
    left out of biosses-test; biosses-all, declared as study 2's training data, keeps them (reported apart)."""
    params = AugSBERTParams.from_dict(
        {"model": "tiny-random-bert", "benchmarks": ["biosses_kfold"], "suite": ["biosses-all", "biosses-test"]}
    )
    assert Study(params, tmp_path).left_out() == {"biosses-test": ["biosses_kfold"]}


def test_each_bi_encoder_is_scored_on_the_suite_and_silver_compared_with_gold(smoke, tmp_path):
    """The smoke runs: each condition's final bi-encoder has its own suite outputs in the run folder (the saved
    gold model gives them again); the report compares each silver condition with gold and gold with the
    starting model, with paired intervals; a condition whose outputs are gold's differs by exactly zero (on a copy
    of the runs, whose files this test changes)."""
    shutil.copytree(smoke[0].report_dir, tmp_path, dirs_exist_ok=True)
    study = Study(smoke[0].p, tmp_path)
    run_dir = study._run_dir("biosses_blurb", 0, 0)
    saved = {c: load_outputs(run_dir / suite_file(c)) for c in CONDITIONS}
    assert all(set(outputs) == {"biosses-test", "rqe-test"} for outputs in saved.values())
    assert not np.array_equal(saved["gold"]["rqe-test"]["ap"], saved["gold + semantic silver"]["rqe-test"]["ap"])

    from sentence_transformers import SentenceTransformer

    gold = SentenceTransformer(str(study.models_dir("biosses_blurb") / "gold"), device="cpu")
    again = score_run(lambda texts: gold.encode(texts, convert_to_numpy=True), [BIOSSES_TEST])
    np.testing.assert_allclose(again["biosses-test"]["spearman"], saved["gold"]["biosses-test"]["spearman"])

    report = study.suite_report()
    assert [t.name for t in report.headline_tasks()] == ["biosses-test", "rqe-test"] and report.left_out == {}
    lines = report.compared.set_index(["task", "row"])
    for task in ("biosses-test", "rqe-test"):
        assert lines.loc[(task, suite_row("biosses_blurb", "gold"))].baseline == STARTING
        for condition in CONDITIONS[1:]:
            line = lines.loc[(task, suite_row("biosses_blurb", condition))]
            assert line.baseline == suite_row("biosses_blurb", "gold")
            if "same outputs" in line.reason:  # the tiny model: random silver can leave gold's outputs as they are
                assert line.difference == 0 and condition != "gold + semantic silver"
                continue
            assert line.low <= line.difference <= line.high
            assert line.seeds == 2 and len(line.variance["runs"]) == 2  # both trained rows carry their 2 runs
    assert report.comparison(suite_row("biosses_blurb", "gold + semantic silver"), "rqe-test").startswith(
        "Not a finding, as the positive control did not pass. "  # the smoke's teacher is no better than its student
        "Primary comparison (biosses_blurb: gold + semantic silver - biosses_blurb: gold on biosses-test): "
    )
    assert "no data: study 2 selects no checkpoint" in report.about() and report.record()["left_out"] == {}

    for seed in (0, 1):  # as if both runs had written gold's outputs
        folder = study._run_dir("biosses_blurb", 0, seed)
        shutil.copy(folder / suite_file("gold"), folder / suite_file("gold + random silver"))
        result = json.loads((folder / "result.json").read_text())
        (folder / "result.json").write_text(json.dumps({**result, ARTEFACTS: artefact_digests(folder)}))
    same = study.suite_report()
    for task in ("biosses-test", "rqe-test"):
        line = same.compared.set_index(["task", "row"]).loc[(task, suite_row("biosses_blurb", "gold + random silver"))]
        assert line.difference == 0 and "same outputs" in line.reason and not line.significant
    same_output = "gold + random silver (BIOSSES BLURB) vs gold (BIOSSES BLURB): the same output on every item"
    assert same_output in same.verdict()


def _embed(texts):
    """A fixed stand-in bi-encoder: 8 seeded random numbers per text."""
    return np.stack([np.random.default_rng(sum(map(ord, text))).normal(size=8) for text in texts])


def test_cross_encoder_outputs_have_the_shape_of_a_bi_encoders_on_the_pair_tasks_alone():
    """Scored by its cosines, a bi-encoder's outputs through ``cross_encoder_outputs`` are exactly its ``score_run``
    outputs: a task's main metric, the scores as ranks within its items. Retrieval (not a pair task) gets none."""
    retrieval = TASKS["doid-definition-name"]
    tasks = [BIOSSES_TEST, retrieval, RQE_TEST]
    assert pair_tasks(tasks) == [BIOSSES_TEST, RQE_TEST]

    def predict(pairs):
        return cosines(_embed([a for a, _ in pairs]), _embed([b for _, b in pairs]))

    outputs = cross_encoder_outputs(predict, tasks)
    expected = score_run(_embed, [BIOSSES_TEST, RQE_TEST])
    assert outputs.keys() == expected.keys() == {"biosses-test", "rqe-test"}
    for task in (BIOSSES_TEST, RQE_TEST):
        assert outputs[task.name].keys() == {task.main_metric}
        assert outputs[task.name][task.main_metric].shape == (task.items,)
        np.testing.assert_allclose(outputs[task.name][task.main_metric], expected[task.name][task.main_metric])
    with pytest.raises(ValueError, match="scores for 20 pairs"):
        cross_encoder_outputs(lambda pairs: np.zeros((len(pairs), 2)), [BIOSSES_TEST])


def test_an_nli_cross_encoder_scores_a_pair_by_the_probability_of_its_entailment_class():
    from kit.studies.augmented_sbert.method import cross_encoder, cross_scores, pair_scores

    assert [BENCHMARKS[b].positive for b in ("biosses_blurb", "biosses_kfold", "rqe", "mednli")] == [0, 0, 1, 1]
    assert BENCHMARKS["rqe"].classes[1] == "true" and BENCHMARKS["mednli"].classes[1] == "entailment"
    pairs = [("IL-6 rises", "IL-6 falls"), ("a cell divides", "cells divide"), ("x", "y")]
    nli = cross_encoder("tiny-random-bert", num_labels=3, max_length=32, device="cpu")
    probabilities = cross_scores(nli, pairs)
    np.testing.assert_array_equal(pair_scores(nli, pairs, 1), probabilities[:, 1])
    np.testing.assert_array_equal(pair_scores(nli, pairs, 2), probabilities[:, 2])
    sts = cross_encoder("tiny-random-bert", num_labels=1, max_length=32, device="cpu")
    np.testing.assert_array_equal(pair_scores(sts, pairs), cross_scores(sts, pairs))


def test_the_cross_encoder_outputs_of_a_run_give_its_own_score(smoke):
    """Each run keeps its cross-encoder's outputs on the suite's pair tasks (``suite-cross-encoder.npz``); on
    biosses-test, the BLURB test pairs, their Spearman is the table's cross-encoder score of that run."""
    study, _ = smoke
    results = study.results()
    for _, split, seed in study.planned_runs():
        outputs = load_outputs(study._run_dir("biosses_blurb", split, seed) / suite_file(CROSS_ENCODER))
        assert outputs.keys() == {"biosses-test", "rqe-test"}
        assert {k: {m: v.shape for m, v in o.items()} for k, o in outputs.items()} == {
            "biosses-test": {"spearman": (20,)},
            "rqe-test": {"ap": (230,)},
        }
        ranks = outputs["biosses-test"]["spearman"]
        spearman = 100 * BIOSSES_TEST.statistic("spearman")(ranks[None], np.arange(20)[None])[0, 0]
        table = results[(results.condition == "cross-encoder") & (results.seed == seed)].score
        assert len(table) == 1 and spearman == pytest.approx(table.iloc[0], abs=1e-6)
        assert not np.array_equal(ranks, within_ranks(np.arange(20)))  # not a constant output


def test_the_control_is_the_cross_encoder_against_gold_of_the_primarys_benchmark_on_its_task(smoke):
    study, _ = smoke
    assert study.control() == Control(BLURB_CROSS, BLURB_GOLD, "biosses-test", PREMISE, "")
    assert study.row_label(BLURB_CROSS) == "cross-encoder teacher (BIOSSES BLURB)"
    assert study.baseline_of(BLURB_CROSS) is None  # compared with nothing but as the control
    rows = [STARTING, *(suite_row("biosses_blurb", c) for c in (*CONDITIONS, CROSS_ENCODER))]
    assert [pair for pair in study.comparisons(rows) if BLURB_CROSS in pair] == [(BLURB_CROSS, BLURB_GOLD)]
    # no primary: the paper's task, on the first benchmark whose rows are scored there (k-fold trains on its pairs)
    either = Study(smoke_params(benchmarks=["biosses_kfold", "biosses_blurb"], primary=None), study.report_dir)
    assert either.control() == Control(BLURB_CROSS, BLURB_GOLD, "biosses-test", PREMISE, "")
    kfold = Study(smoke_params(benchmarks=["biosses_kfold"], primary=None), study.report_dir)
    assert kfold.control() is None  # every k-fold row is left out of biosses-test


def test_cross_encoder_rows_are_left_out_of_tasks_they_cannot_score_or_trained_on(tmp_path, monkeypatch):
    """A benchmark's cross-encoder row leaves a task with its bi-encoders' rows (k-fold trains on biosses-test's
    pairs), and every cross-encoder row leaves the tasks that are not pair tasks (retrieval); no run is needed."""
    study = Study(smoke_params(suite=["biosses-test", "rqe-test", "doid-definition-name"]), tmp_path)
    monkeypatch.setattr(study, "trains_on", lambda benchmark, pairs: benchmark == "biosses_kfold" and bool(pairs))
    assert [t.name for t in study.pair_tasks] == ["biosses-test", "rqe-test"]
    assert study.rows_left_out() == {
        "biosses-test": [suite_row("biosses_kfold", c) for c in (*CONDITIONS, CROSS_ENCODER)],
        "rqe-test": [suite_row("biosses_kfold", c) for c in (*CONDITIONS, CROSS_ENCODER)],
        "doid-definition-name": [suite_row(b, CROSS_ENCODER) for b in study.p.benchmarks],
    }


def test_the_smoke_report_opens_with_its_failing_control_and_withholds_every_finding(smoke):
    """The smoke's tiny random model: its cross-encoder teacher is no better than its gold student, so the control
    does not pass, and no comparison is a finding, even a primary made significant on the same evidence; with the
    teacher's outputs made perfect too, the control passes and that primary is one."""
    study, suite = smoke
    lines = suite.compared
    (control,) = lines[lines.role == "control"].itertuples()
    assert (control.task, control.row, control.baseline) == ("biosses-test", BLURB_CROSS, BLURB_GOLD)
    assert set(lines[lines.row == BLURB_CROSS].role) == {"control", "aside"}  # in no family
    record = suite.record()
    assert record["control"]["row"] == BLURB_CROSS and record["control"]["outcome"] != "passes"
    assert not lines.finding.any()
    assert suite.verdict().startswith(f"**Positive control ({PREMISE}): cross-encoder teacher (BIOSSES BLURB) − ")
    assert "This setting cannot test the paper's claim" in suite.control_text()
    assert "cross-encoder teacher of a benchmark" in suite.about()

    perfect = within_ranks(np.asarray(BIOSSES_TEST.data.scores, float))
    evidence = suite.evidence

    def with_perfect(*rows):
        outputs = {task: dict(by_row) for task, by_row in evidence.outputs.items()}
        for row in rows:
            outputs["biosses-test"][row] = np.tile(perfect, (len(outputs["biosses-test"][row]), 1))
        return study.report_of(dataclasses.replace(evidence, outputs=outputs), study.suite_tasks, "suite")

    semantic = suite_row("biosses_blurb", "gold + semantic silver")
    withheld = with_perfect(semantic)
    primary = withheld.compared[withheld.compared.role == "primary"].iloc[0]
    assert primary.significant and not primary.finding and not withheld.compared.finding.any()
    assert withheld.record()["control"]["outcome"] != "passes"
    passed = with_perfect(semantic, BLURB_CROSS)
    assert passed.record()["control"]["outcome"] == "passes"
    assert passed.compared[passed.compared.role == "primary"].iloc[0].finding


def test_the_workload_counts_the_cross_encoder_scoring_the_suites_pair_tasks():
    params = smoke_params()
    work = Study.workload(params)
    (scoring,) = [w for w in work if w.what == "the cross-encoder scores the suite's pair tasks"]
    assert scoring.sequences == len(Study(params, "/nonexistent").planned_runs()) * (20 + 230)


def test_a_teacher_of_its_own_keys_its_runs_is_named_in_the_report_and_is_checked_before_any_work(
    tmp_path, monkeypatch
):
    plain, own = Study(smoke_params(), tmp_path), Study(smoke_params(cross_model="minilm"), tmp_path)
    keyed = []
    monkeypatch.setattr(Study, "run_dir", lambda self, name, settings, data: keyed.append(settings) or tmp_path)
    plain._run_dir("biosses_blurb", 0, 0)
    own._run_dir("biosses_blurb", 0, 0)
    assert "cross_model" not in keyed[0]  # runs without one keep their folders
    assert keyed[1]["cross_model"] == {"name": "minilm", "weights": model_fingerprint("minilm")}  # its weights too
    assert own.row_label("biosses_blurb: cross-encoder") == "cross-encoder teacher from minilm (BIOSSES BLURB)"
    assert plain.row_label("biosses_blurb: cross-encoder") == "cross-encoder teacher (BIOSSES BLURB)"
    described = report.describe(own)
    assert "The cross-encoder teacher starts from `minilm`" in described and "all-MiniLM-L6-v2" in described
    cross = [w for w in Study.workload(own.p) if "cross-encoder" in w.what]
    assert len({w.what for w in cross}) == 4 and {w.model for w in cross} == {"minilm"}
    assert "minilm" not in {w.model for w in Study.workload(own.p) if "cross-encoder" not in w.what}
    for bad in ("", "tiny-random-bert"):  # empty, or the bi-encoders' own
        with pytest.raises(ParameterError, match="parameter 'cross_model': .* is not another model than model's"):
            smoke_params(cross_model=bad)
    with pytest.raises(ParameterError, match="cross_model"):
        smoke_params(cross_model="no/such-model-here").check_resources()


def test_a_warm_up_of_a_teacher_of_its_own_starts_from_it_and_keys_on_it(tmp_path, monkeypatch):
    warmed = []
    monkeypatch.setattr("kit.studies.augmented_sbert.study.warm_up", lambda model, *args: warmed.append(model))
    plain = Study(smoke_params(cross_warmup=4), tmp_path)
    own = Study(smoke_params(cross_warmup=4, cross_model="minilm"), tmp_path)
    assert own.teacher_start("biosses_blurb", 0) != plain.teacher_start("biosses_blurb", 0)
    assert warmed == ["minilm", "tiny-random-bert"]


def test_the_cross_encoders_warm_up_is_a_seeded_rqe_sample_for_sts_benchmarks_that_keys_its_runs(tmp_path):
    plain = Study(smoke_params(), tmp_path)
    warm = Study(smoke_params(cross_warmup=40), tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the parameters' check reported the pair the loader drops: not again
        pairs, labels = warm.warmup_pairs("biosses_blurb")
    assert len(pairs) == 40 == len(set(pairs)) and set(labels) == {0.0, 1.0}
    assert warm.warmup_pairs("rqe") is None and plain.warmup_pairs("biosses_blurb") is None  # NLI: not asked
    other = Study(smoke_params(cross_warmup=40, seeds=[5]), tmp_path).warmup_pairs("biosses_blurb")[0]
    assert other == pairs  # the sample is fixed by nli_seed, not by the training seed
    assert Study(smoke_params(cross_warmup=40, nli_seed=1), tmp_path).warmup_pairs("biosses_blurb")[0] != pairs
    assert warm._run_dir("biosses_blurb", 0, 0) != plain._run_dir("biosses_blurb", 0, 0)
    assert Study(smoke_params(cross_warmup=0), tmp_path)._run_dir("biosses_blurb", 0, 0) == plain._run_dir(
        "biosses_blurb", 0, 0
    )  # runs without a warm-up keep their folders
    (warming,) = [w for w in Study.workload(smoke_params(cross_warmup=40)) if w.what == "cross-encoder warm-up"]
    sts_seeds = {seed for benchmark, _, seed in warm.planned_runs() if BENCHMARKS[benchmark].kind == "sts"}
    assert warming.sequences == 40 * len(sts_seeds)  # once a seed, shared by its splits
    assert "first learns 40 (seeded sample, seed 1234) of the RQE training pairs" in report.describe(warm)
    start = Path(warm.teacher_start("biosses_blurb", 0))
    written = (start / "result.json").stat().st_mtime_ns
    assert (start / "model.safetensors").is_file() and (start / "config.json").is_file()  # digested as artefacts
    assert warm.teacher_start("biosses_blurb", 0) == str(start) != warm.teacher_start("biosses_blurb", 1)
    assert (start / "result.json").stat().st_mtime_ns == written  # computed once a seed
    assert not warm.run_seconds  # its time is the run's that computes it, not counted again apart
    assert plain.teacher_start("biosses_blurb", 0) is None
