import numpy as np
import pandas as pd
import pytest

from kit.data import (
    CHINESEBLUE,
    MalformedDataError,
    SplitNotAvailableError,
    chineseblue_corpus,
    load_chineseblue,
)
from kit.evaluation.probes import linear_probe, pair_features
from kit.evaluation.retrieval import paraphrase_hit_at_1
from kit.studies.simcse_augmentations.chineseblue import ChineseBlueEval, chineseblue_table, cmedqq_pairs


@pytest.mark.parametrize(
    "task, split, size, columns",
    [("cMedQQ", "test", 1935, 2), ("cMedIC", "train", 1683, 1), ("cMedQA", "dev", 5475, 2), ("cMedTC", "dev", 1550, 1)],
)
def test_loaders_read_every_row(task, split, size, columns):
    data = load_chineseblue(task, split)
    assert len(data) == size and len(data.texts) == columns and all(len(c) == size for c in data.texts)


def test_unavailable_splits_say_so():
    with pytest.raises(SplitNotAvailableError, match="train on dev, test on test"):
        load_chineseblue("cMedQA", "train")
    with pytest.raises(SplitNotAvailableError, match="not available"):
        load_chineseblue("cMedQNLI", "test")
    assert CHINESEBLUE["cMedQQ"].metric == "f1" and CHINESEBLUE["cMedIC"].metric == "weighted_f1"


def test_malformed_line_names_file_and_line(tmp_path):
    f = tmp_path / "test.txt"
    f.write_text("1\t问题一\t问题二\n0\t只有一列\n", encoding="utf-8")
    with pytest.raises(MalformedDataError, match=f"{f}:2: expected 3 tab-separated columns, got 2"):
        load_chineseblue("cMedQQ", "test", f)


def synthetic(n, d=16, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, d))
    x[:, 0] += 20.0 * y  # classes 10 sigma apart from the boundary along one axis: separable
    return x, y.astype(str)


def test_probe_reaches_f1_one_on_separable_embeddings():
    res = linear_probe(synthetic(300, seed=0), synthetic(100, seed=1), synthetic(200, seed=2), "weighted_f1")
    assert res["test"] == 1.0 and res["dev"] == 1.0


def test_probe_stays_near_chance_on_shuffled_labels():
    train, dev, test = synthetic(600, seed=0), synthetic(200, seed=1), synthetic(600, seed=2)
    shuffled = (train[0], np.random.default_rng(9).permutation(train[1]))
    res = linear_probe(shuffled, dev, test, "macro_f1")
    assert res["test"] < 0.45  # chance is about 1/3 for three balanced classes


def test_pair_features_are_senteval_layout():
    u, v = np.array([[1.0, 2.0]]), np.array([[3.0, -1.0]])
    assert pair_features(u, v).tolist() == [[1, 2, 3, -1, 2, 3, 3, -2]]


def test_unlabeled_corpus_is_deduplicated_train_text_without_any_evaluation_sentence():
    corpus = chineseblue_corpus()
    assert len(corpus) == len(set(corpus)) > 30_000
    held_out = {
        t
        for name, task in CHINESEBLUE.items()
        for split in task.splits
        if split != "train"
        for col in load_chineseblue(name, split).texts
        for t in col
    }
    assert not held_out & set(corpus)
    train = {t for name in ("cMedQQ", "cMedIC", "cMedTC") for col in load_chineseblue(name, "train").texts for t in col}
    assert set(corpus) <= train and len(corpus) == len(train - held_out)


def test_probe_tasks_are_capped_seeded_and_keep_cmedqa_selection_apart():
    a, b = ChineseBlueEval(50, 20, seed=3), ChineseBlueEval(50, 20, seed=3)
    assert [t.name for t in a.tasks] == ["cMedQQ", "cMedIC", "cMedQA", "cMedTC"] and a.texts == b.texts
    for t in a.tasks:
        assert len(t.train) == 50 and len(t.dev) == 20 and len(t.test) == 20
    qa = a.tasks[2]
    assert qa.train.split == "dev[:80%]" and qa.dev.split == "dev[80%:]" and qa.test.split == "test"
    assert not set(zip(*qa.train.texts)) & set(zip(*qa.dev.texts))
    described = a.describe().set_index("task")
    assert described.loc["cMedQNLI", "note"].endswith("it is not available.") and "probe train" in described


def test_probe_scores_every_available_task(tiny_encoder):
    scores = ChineseBlueEval(60, 30, seed=0).evaluate(tiny_encoder, seed=0)
    assert set(scores) == {f"{t}{s}" for t in ("cMedQQ", "cMedIC", "cMedQA", "cMedTC") for s in ("", "_dev")}
    assert all(0.0 <= v <= 1.0 for v in scores.values())


def test_table_marks_unavailable_cells_and_formats_mean_std():
    results = pd.DataFrame(
        [
            {"method": "simcse", "label": "SimCSE", "cMedQQ": 0.5, "cMedIC": 0.6, "cMedQA": 0.7, "cMedTC": 0.1},
            {"method": "simcse", "label": "SimCSE", "cMedQQ": 0.7, "cMedIC": 0.6, "cMedQA": 0.7, "cMedTC": 0.1},
        ]
    )
    row = chineseblue_table(results).iloc[0]
    assert row["cMedQQ (F1)"] == "60.00 ± 14.14" and row["cMedQNLI (F1)"] == "not available" and row["seeds"] == 2


def test_cosine_view_uses_dev_and_test_pairs_with_binary_scores():
    pairs = cmedqq_pairs(40, seed=0)
    assert (pairs.split == "dev").sum() == 40 and (pairs.split == "test").sum() == 40
    assert set(pairs.scores) <= {0.0, 1.0}


def test_paraphrase_hit_at_1_counts_partners_ranked_first():
    emb = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, 0.2]])
    perfect = paraphrase_hit_at_1(emb, {0: {1}, 1: {0}, 2: {3}, 3: {2}})
    assert perfect == {"hit_at_1": 1.0, "queries": 4, "chance": 0.25}
    assert paraphrase_hit_at_1(emb, {0: {2}, 2: {0}})["hit_at_1"] == 0.0
    tied = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # rows 1 and 2 tie as neighbours of 0
    assert paraphrase_hit_at_1(tied, {0: {1}})["hit_at_1"] == 0.5
