"""Study 2's benchmarks and tables, without training (the notebook smoke run trains), and one tiny run scored
on the evaluation suite."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from kit.evaluation.rows import load_outputs, score_run
from kit.evaluation.sts import BIOSSES_TEST
from kit.params import ParameterError
from kit.studies.augmented_sbert import report
from kit.studies.augmented_sbert.method import CONDITIONS
from kit.studies.augmented_sbert.params import BENCHMARKS, AugSBERTParams
from kit.studies.augmented_sbert.study import STARTING, Study, suite_file, suite_row
from kit.study import ARTEFACTS, artefact_digests


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


def test_each_bi_encoder_is_scored_on_the_suite_and_silver_compared_with_gold(tmp_path):
    """One tiny run: each condition's final bi-encoder has its own suite outputs in the run folder (the saved
    gold model gives them again); the report compares each silver condition with gold and gold with the
    starting model, with paired intervals; a condition whose outputs are gold's differs by exactly zero."""
    params = AugSBERTParams.from_dict(
        {
            "model": "tiny-random-bert",
            "benchmarks": ["biosses_blurb"],
            "seeds": [0, 1],
            "epochs": 1,
            "batch_size": 8,
            "max_length": 32,
            "cross_epochs": 1,
            "suite": ["biosses-test", "rqe-test"],
        }
    )
    study = Study(params, tmp_path)
    study.run("biosses_blurb", 0, 0)
    study.run("biosses_blurb", 0, 1)
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
