import numpy as np
import pytest

from kit.data import CHINESEBLUE, MalformedDataError, SplitNotAvailableError, load_chineseblue
from kit.metrics import linear_probe, pair_features


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
