"""Study 2's tasks and tables, without training (the notebook smoke run trains)."""

import numpy as np
import pandas as pd
import pytest

from kit.params import ParameterError
from kit.studies.augmented_sbert.params import TASKS, AugSBERTParams
from kit.studies.augmented_sbert.study import STARTING, Study


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
    assert TASKS["rqe"].classes[1] == "true"


def test_pubmed_sentences_extend_the_pool_of_sts_tasks_only(tmp_path):
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
        ({"tasks": ["stsb"]}, r"parameter 'tasks': unknown value\(s\) \['stsb'\]"),
        ({"folds": 1}, "folds"),
        ({"top_k": 0}, "top_k"),
        ({"seeds": []}, "seeds"),
    ],
)
def test_bad_parameters_fail_before_any_work(values, message):
    with pytest.raises(ParameterError, match=message):
        AugSBERTParams.from_dict(values)


def test_mednli_without_files_fails_with_the_places_tried(tmp_path, monkeypatch):
    from kit.data import DataNotFoundError

    monkeypatch.setenv("KIT_CACHE", str(tmp_path))
    study = Study(AugSBERTParams.from_dict({"tasks": ["mednli"], "model": "tiny-random-bert"}), tmp_path)
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
                        "task": "biosses_kfold",
                        "split": split,
                        "seed": seed,
                        "condition": condition,
                        "score": score + shift + (split == "fold 2") * (condition == "gold + semantic silver") * -3,
                    }
                )
        rows.append({"task": "biosses_kfold", "split": split, "seed": None, "condition": STARTING, "score": 75.0})
    return pd.DataFrame(rows)


def test_table_pools_folds_and_seeds_and_verdict_pairs_runs(tmp_path):
    study = Study(AugSBERTParams.from_dict({"tasks": ["biosses_kfold"], "model": "tiny-random-bert"}), tmp_path)
    results = _results()
    table = study.table(results).set_index("training data")["BIOSSES (k-fold CV, all 100 pairs)"]
    assert table[STARTING] == "75.00 ± 0.00"
    gold = results[results.condition == "gold"].score
    assert table["gold"] == f"{gold.mean():.2f} ± {gold.std(ddof=1):.2f}"
    text = study.verdict(results)
    assert "random silver -10.00 (worse in every run" in text
    assert "semantic silver -0.50 (better in 2 of 4 runs: no consistent effect" in text
    assert "starting model 75.00" in text and "below the gold bi-encoder" in text
    assert np.isclose(results[results.condition == "gold + semantic silver"].score.mean() - gold.mean(), -0.5)
