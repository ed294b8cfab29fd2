"""Bootstrap intervals, paired differences, their p-values and the detectable difference, on cases whose
answer is known."""

import itertools

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score

from kit.evaluation.bootstrap import (
    AveragePrecision,
    Estimate,
    ItemScores,
    Mean,
    Spearman,
    bootstrap_interval,
    bootstrap_p,
    detectable_difference,
    paired_bootstrap,
    percentile_interval,
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


@pytest.mark.parametrize("kind", ["mean", "spearman", "ap"])
@pytest.mark.parametrize("seeds", [1, 3])
def test_a_model_compared_with_itself_differs_by_exactly_zero_with_p_one(kind, seeds):
    a = scores(kind, good_outputs(kind, seeds))
    c = paired_bootstrap(a, a, seed=3, resamples=300)
    assert (c.estimate, c.low, c.high, c.se, c.detectable) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert c.p_value == 1.0 and not c.excludes_zero


@pytest.mark.parametrize("kind", ["spearman", "ap"])
def test_a_copy_with_outputs_shuffled_across_items_is_significantly_worse(kind):
    """(Shuffling per-item scores keeps their mean; the retrieval case shuffles embeddings, in test_tasks.py.)"""
    a = scores(kind, good_outputs(kind))
    shuffled = scores(kind, np.random.default_rng(2).permutation(a.outputs[0]))
    c = paired_bootstrap(shuffled, a, seed=0, resamples=500)
    assert c.high < 0 and c.excludes_zero and c.p_value < 0.01
    assert c.estimate == pytest.approx(shuffled.value - a.value)


@pytest.mark.parametrize("kind", ["mean", "spearman", "ap"])
def test_a_fixed_seed_gives_the_same_interval_twice_and_another_seed_another(kind):
    a, b = scores(kind, good_outputs(kind, 2)), scores(kind, good_outputs(kind, 2)[::-1] * 0.9)
    assert bootstrap_interval(a, seed=5, resamples=200) == bootstrap_interval(a, seed=5, resamples=200)
    assert paired_bootstrap(a, b, seed=5, resamples=200) == paired_bootstrap(a, b, seed=5, resamples=200)
    assert bootstrap_interval(a, seed=5, resamples=200) != bootstrap_interval(a, seed=6, resamples=200)


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


def test_the_percentile_interval_of_a_mean_matches_scipys_bootstrap():
    x = np.random.default_rng(8).normal(0.5, 0.2, 200)
    e = bootstrap_interval(scores("mean", x), seed=0, resamples=4000)
    ref = stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=1).confidence_interval
    assert e.value == pytest.approx(x.mean())
    assert e.low == pytest.approx(ref.low, abs=0.005) and e.high == pytest.approx(ref.high, abs=0.005)
    assert e.se == pytest.approx(x.std(ddof=1) / np.sqrt(len(x)), rel=0.1)


def test_seeds_are_resampled_with_the_items():
    """Two seeds that disagree by a constant: the items alone cannot see it, the seed draws must widen the
    interval; the point estimate is the mean over seeds."""
    x = np.random.default_rng(9).normal(0.5, 0.05, 300)
    one = bootstrap_interval(scores("mean", x), resamples=1000)
    two = bootstrap_interval(scores("mean", np.stack([x - 0.1, x + 0.1])), resamples=1000)
    assert two.value == pytest.approx(one.value) and two.seeds == 2
    assert two.high - two.low > 3 * (one.high - one.low)


def test_a_single_seed_baseline_pairs_with_every_seed_of_a_trained_row():
    base = scores("mean", good_outputs("mean"))
    trained = scores("mean", good_outputs("mean", 3) + 0.05)
    c = paired_bootstrap(trained, base, resamples=300)
    assert c.seeds == (3, 1) and c.estimate == pytest.approx(trained.value - base.value)
    assert c.low < c.estimate < c.high


def test_when_seeds_disagree_the_p_value_and_the_interval_agree():
    """Two seeds of a row, one 0.05 above its baseline on every item and one 0.03 below: the items alone (the
    seed-averaged outputs, as a permutation test sees them) show a tiny, very regular gain; the seeds show
    that another seed could as well lose. The p-value comes from the same draws of items and seeds as the
    interval, so both say "not significant", at every level."""
    base = np.random.default_rng(11).uniform(0.3, 0.9, 200)
    noise = np.random.default_rng(12).normal(0, 0.01, (2, 200))
    row = scores("mean", np.stack([base + 0.05, base - 0.03]) + noise)
    baseline = scores("mean", base)
    c = paired_bootstrap(row, baseline, seed=0, resamples=2000)
    averaged = paired_bootstrap(scores("mean", row.outputs.mean(0)), baseline, seed=0, resamples=2000)
    assert averaged.excludes_zero and averaged.p_value < 0.001  # what the seed-blind test reported
    assert c.low < 0 < c.high and c.p_value > 0.05
    for confidence in (0.5, 0.8, 0.9, 0.95, 0.99):
        low, high = c.interval(confidence)
        assert (low > 0 or high < 0) == (c.p_value < 1 - confidence)


@pytest.mark.parametrize("shift", [0.0, 0.005, 0.01, 0.02, 0.05])
def test_the_interval_excludes_zero_exactly_when_p_is_below_one_minus_its_level(shift):
    """For any replicates: percentile_interval at level c excludes zero if and only if bootstrap_p < 1 - c."""
    replicates = np.random.default_rng(13).normal(shift, 0.01, 999)
    p = bootstrap_p(replicates)
    for confidence in np.linspace(0.5, 0.999, 60):
        low, high = percentile_interval(replicates, confidence)
        assert (low > 0 or high < 0) == (p < 1 - confidence), (confidence, p, low, high)


def test_the_bootstrap_p_value_is_twice_the_smaller_tail():
    assert bootstrap_p(np.array([-1.0, 1, 2, 3, 4, 5, 6, 7, 8, 9])) == pytest.approx(0.2)
    assert bootstrap_p(np.array([0.0, 0.0, 1.0])) == 1.0  # zero counts on both sides
    assert bootstrap_p(np.arange(1.0, 101)) == 0.0


def test_the_detectable_difference_is_2_8_standard_errors():
    assert detectable_difference(1.0) == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    assert detectable_difference(0.5, alpha=0.05, power=0.8) == pytest.approx(1.4008, abs=1e-3)


def test_paired_items_must_match():
    with pytest.raises(ValueError, match="same items"):
        paired_bootstrap(scores("mean", np.ones(60)), ItemScores("mean", np.ones(59), Mean()))


def test_estimates_and_comparisons_format_like_intervals_difference():
    e = Estimate(0.8125, 0.7119, 0.8834, 0.04, 100)
    assert f"{e.scaled(100):.1f}" == "81.2 [71.2, 88.3]"
    a = scores("mean", good_outputs("mean"))
    c = paired_bootstrap(scores("mean", a.outputs - 0.1), a, resamples=200).scaled(100)
    assert f"{c:.1f}".startswith("−10.0 [−") and "p < 0.01" in f"{c:.1f}"
