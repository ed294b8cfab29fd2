"""The statistics recomputed on item draws, the draws themselves, and statistics stored as plain values."""

import itertools
import json

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from kit.evaluation.bootstrap import (
    F1,
    AveragePrecision,
    ItemScores,
    Mean,
    Spearman,
    item_replicates,
    statistic_from,
    statistic_record,
)
from kit.evaluation.sts import spearman

RNG = np.random.default_rng(7)
GOLD = RNG.uniform(0, 4, 60)
LABELS = RNG.random(60) < 0.4


def scores(kind: str, outputs) -> ItemScores:
    statistic = {"mean": Mean(), "spearman": Spearman(GOLD), "ap": AveragePrecision(LABELS)}[kind]
    return ItemScores(kind, np.asarray(outputs, dtype=float), statistic)


def good_outputs(kind: str, seeds: int = 1) -> np.ndarray:
    """Outputs that follow the target: per-item scores near 0.8, or scores correlated with gold / labels."""
    noise = np.random.default_rng(1).normal(0, 1, (seeds, 60))
    if kind == "mean":
        return np.clip(0.8 + 0.1 * noise, 0, 1)
    target = GOLD if kind == "spearman" else LABELS * 2.0
    return target + noise


def test_the_statistics_recompute_the_metric_on_every_draw():
    """Spearman's draws equal scipy's rho (via kit.evaluation.sts.spearman) and AP's equal scikit-learn's, ties
    included (a draw repeats items, and the outputs here are rounded to make ties)."""
    outputs = np.round(np.random.default_rng(3).normal(size=(2, 60)), 1)
    draws = np.random.default_rng(4).integers(0, 60, (25, 60))
    rho = Spearman(GOLD)(outputs, draws)
    ap = AveragePrecision(LABELS)(outputs, draws)
    for s, b in itertools.product(range(2), range(25)):
        d = draws[b]
        assert rho[s, b] == pytest.approx(spearman(outputs[s, d], GOLD[d]), abs=1e-12)
        assert ap[s, b] == pytest.approx(average_precision_score(LABELS[d], outputs[s, d]), abs=1e-12)
    assert Mean()(outputs, draws) == pytest.approx(outputs[:, draws].mean(-1))


def test_item_draws_depend_only_on_the_seed_and_the_items_so_every_model_shares_them():
    a, b = scores("mean", good_outputs("mean", 2)), scores("mean", good_outputs("mean", 2)[::-1] * 0.9)
    ra, rb = item_replicates(a, seed=(5, 1), resamples=300), item_replicates(b, seed=(5, 1), resamples=300)
    assert ra.shape == rb.shape == (2, 300)
    draws = np.random.default_rng(np.random.SeedSequence((5, 1))).integers(0, 60, (300, 60))
    assert ra == pytest.approx(a.outputs[:, draws].mean(-1)) and rb == pytest.approx(b.outputs[:, draws].mean(-1))
    assert not np.allclose(item_replicates(a, seed=6, resamples=300), ra)


def test_clusters_are_one_int_per_item_in_two_clusters_or_more_and_kept_by_a_subset():
    clusters = np.repeat(np.arange(4), 15)
    a = ItemScores("mean", good_outputs("mean", 2), Mean(), clusters=clusters)
    assert (a.subset(np.arange(20, 40)).clusters == clusters[20:40]).all()
    assert ItemScores.stack([a, a]).clusters is clusters and ItemScores("mean", np.ones(60), Mean()).clusters is None
    with pytest.raises(ValueError, match="one int per item"):
        ItemScores("mean", np.ones(60), Mean(), clusters=np.zeros(59, int))
    with pytest.raises(ValueError, match="at least 2 clusters"):
        ItemScores("mean", np.ones(60), Mean(), clusters=np.zeros(60, int))
    with pytest.raises(ValueError, match="same clusters"):
        ItemScores.stack([a, ItemScores("mean", a.outputs, Mean())])


@pytest.mark.parametrize("kind", ["mean", "spearman", "ap"])
def test_a_statistic_round_trips_through_its_record(kind):
    statistic = scores(kind, good_outputs(kind)).statistic
    back = statistic_from(json.loads(json.dumps(statistic_record(statistic))))
    outputs = good_outputs(kind, 2)
    draws = np.random.default_rng(0).integers(0, 60, (10, 60))
    assert back(outputs, draws) == pytest.approx(statistic(outputs, draws), nan_ok=True)


def test_f1_round_trips_with_its_classes_and_average():
    statistic = F1(np.array([0, 1, 2, 1, 0]), 3, "macro", 1)
    back = statistic_from(statistic_record(statistic))
    assert (back.classes, back.average, back.positive) == (3, "macro", 1) and back.gold.tolist() == [0, 1, 2, 1, 0]
