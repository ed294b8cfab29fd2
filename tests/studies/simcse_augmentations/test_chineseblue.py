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
from kit.evaluation.probes import chineseblue_probes
from kit.evaluation.retrieval import paraphrase_hit_at_1
from kit.studies.simcse_augmentations.chineseblue import (
    chineseblue_table,
    chineseblue_verdict,
    cmedqq_pairs,
    probe_setup,
)


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


def test_the_probe_setup_names_every_part_and_the_unavailable_task():
    described = probe_setup(chineseblue_probes(50, 20, seed=3)).set_index("task")
    assert list(described.index) == ["cMedQQ", "cMedIC", "cMedQA", "cMedTC", "cMedQNLI"]
    assert described.loc["cMedQNLI", "note"].endswith("it is not available.") and "probe train" in described
    assert described.loc["cMedQA", "probe train"] == "dev[:80%] (50)"


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


def test_the_chinese_verdict_names_the_best_row_as_the_table_does():
    results = pd.DataFrame(
        {
            "method": ["zero_shot", "swap_10", "swap_10"],
            "label": ["starting model (no training)", "+ random swap 10%", "+ random swap 10%"],
            "cMedQQ": [0.50, 0.60, 0.61],
        }
    )
    verdict = chineseblue_verdict(results)
    assert "best + random swap 10% 60.50" in verdict and "swap_10" not in verdict
