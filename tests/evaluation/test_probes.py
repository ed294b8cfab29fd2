"""The probe task type: a SentEval-style probe that separates what it can and nothing else, ChineseBLUE's
seeded parts, and F1 over bootstrap draws exactly as scikit-learn computes it."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from kit.evaluation.bootstrap import F1
from kit.evaluation.inference import score_interval
from kit.evaluation.probes import chineseblue_probes, linear_probe, pair_features


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


def test_probe_tasks_are_capped_seeded_and_keep_cmedqa_selection_apart():
    a, b = chineseblue_probes(50, 20, seed=3), chineseblue_probes(50, 20, seed=3)
    assert [t.name for t in a] == ["cmedqq-probe", "cmedic-probe", "cmedqa-probe", "cmedtc-probe"]
    assert [t.texts() for t in a] == [t.texts() for t in b]
    for t in a:
        assert (len(t.parts.train), len(t.parts.dev), len(t.parts.test), t.items) == (50, 20, 20, 20)
        assert t.item_texts() == list(zip(*t.parts.test.texts))
    qa = a[2].parts
    assert qa.train.split == "dev[:80%]" and qa.dev.split == "dev[80%:]" and qa.test.split == "test"
    assert not set(zip(*qa.train.texts)) & set(zip(*qa.dev.texts))
    assert chineseblue_probes(50, 20, seed=4)[1].texts() != a[1].texts()


@pytest.mark.parametrize("average, metric", [("binary", "f1"), ("weighted", "weighted_f1"), ("macro", "macro_f1")])
def test_f1_over_draws_is_scikit_learns(average, metric):
    rng = np.random.default_rng(0)
    classes = 2 if average == "binary" else 5
    gold, predicted = rng.integers(0, classes, 300), rng.integers(0, classes, (3, 300))
    predicted[1, :100] = gold[:100]  # a better seed
    draws = rng.integers(0, 300, (50, 300))
    draws[0] = np.arange(300)
    statistic = F1(gold, classes, average, positive=1)
    values = statistic(predicted.astype(float), draws)
    for s in range(3):
        for b in (0, 7, 49):
            expected = f1_score(gold[draws[b]], predicted[s, draws[b]], average=average, zero_division=0)
            assert values[s, b] == pytest.approx(expected, abs=1e-12)


def test_a_probe_task_scores_its_fitted_probe_with_an_interval(tiny_encoder):
    task = chineseblue_probes(60, 30, seed=0)[1]  # cMedIC: weighted F1
    embeddings = tiny_encoder.encode(task.texts()[0], show_progress=False)
    fit = task.fit((embeddings,))
    assert 0.0 <= fit.dev <= 1.0 and fit.predictions.shape == (30,)
    scores = task.score((embeddings,))["weighted_f1"]
    assert scores.value == pytest.approx(fit.test, abs=1e-12)
    estimate = score_interval(scores, 0, 500)
    assert estimate.low <= fit.test <= estimate.high and estimate.high > estimate.low
