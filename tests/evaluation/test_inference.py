"""The calibrated comparison: its parts on cases whose answer is known (identical rows, a shuffled copy, seeds that
disagree, a trained row against a fixed one), its agreement of interval and p-value, and the rows it refuses to test."""

import numpy as np
import pytest
from scipy import stats

from kit.evaluation.bootstrap import AveragePrecision, ItemScores, Mean, Spearman
from kit.evaluation.inference import (
    RUN_DF_CAP,
    Estimate,
    Variance,
    cluster_contributions,
    detectable,
    format_p,
    paired_comparison,
    power_at,
    score_interval,
)

RNG = np.random.default_rng(7)
GOLD = RNG.uniform(0, 4, 60)
LABELS = RNG.random(60) < 0.4


def scores(kind: str, outputs, fixed: bool = False) -> ItemScores:
    statistic = {"mean": Mean(), "spearman": Spearman(GOLD), "ap": AveragePrecision(LABELS)}[kind]
    return ItemScores(kind, np.asarray(outputs, dtype=float), statistic, fixed)


def good_outputs(kind: str, seeds: int = 1, seed: int = 1) -> np.ndarray:
    noise = np.random.default_rng(seed).normal(0, 1, (seeds, 60))
    if kind == "mean":
        return np.clip(0.8 + 0.1 * noise, 0, 1)
    return (GOLD if kind == "spearman" else LABELS * 2.0) + noise


@pytest.mark.parametrize("kind", ["mean", "spearman", "ap"])
@pytest.mark.parametrize("seeds", [1, 3])
def test_a_model_compared_with_itself_is_reported_identical_and_not_tested(kind, seeds):
    a = scores(kind, good_outputs(kind, seeds), fixed=seeds == 1)
    c = paired_comparison(a, a, seed=3, resamples=300)
    assert c.identical and not c.tested and c.estimate == 0.0 and np.isnan(c.p_value)
    assert "same outputs" in c.reason and "not tested" in f"{c:.1f}"


@pytest.mark.parametrize("kind", ["spearman", "ap"])
def test_a_copy_with_outputs_shuffled_across_items_is_significantly_worse(kind):
    a = scores(kind, good_outputs(kind), fixed=True)
    shuffled = scores(kind, np.random.default_rng(2).permutation(a.outputs[0]), fixed=True)
    c = paired_comparison(shuffled, a, seed=0, resamples=500)
    assert c.tested and c.high < 0 and c.p_value < 0.01
    assert c.estimate == pytest.approx(shuffled.value - a.value)
    assert c.df == pytest.approx(59) and not c.variance.runs  # two fixed models: items only, n - 1 df


@pytest.mark.parametrize("kind", ["mean", "spearman", "ap"])
def test_a_fixed_seed_gives_the_same_result_twice_and_another_seed_another(kind):
    a, b = scores(kind, good_outputs(kind, 2)), scores(kind, good_outputs(kind, 2, seed=4) * 0.9)
    assert paired_comparison(a, b, seed=5, resamples=200) == paired_comparison(a, b, seed=5, resamples=200)
    assert paired_comparison(a, b, seed=5, resamples=200) != paired_comparison(a, b, seed=6, resamples=200)
    assert score_interval(a, seed=5, resamples=200) == score_interval(a, seed=5, resamples=200)


def test_seeds_that_disagree_widen_the_interval_that_items_alone_would_give():
    """Two seeds of a row, one 0.05 above its baseline on every item and one 0.03 below: the items alone (the
    seed-averaged outputs as one fixed model) show a tiny, very regular gain; the run part of the variance, with one
    degree of freedom, says another seed could as well lose."""
    base = np.random.default_rng(11).uniform(0.3, 0.9, 200)
    noise = np.random.default_rng(12).normal(0, 0.01, (2, 200))
    row = scores("mean", np.stack([base + 0.05, base - 0.03]) + noise)
    baseline = scores("mean", base, fixed=True)
    c = paired_comparison(row, baseline, seed=0, resamples=2000)
    averaged = paired_comparison(scores("mean", row.outputs.mean(0), fixed=True), baseline, seed=0, resamples=2000)
    assert averaged.p_value < 0.001
    assert c.low < 0 < c.high and c.p_value > 0.05
    assert c.variance.runs and c.df <= RUN_DF_CAP * 1


def test_a_trained_row_against_a_fixed_one_carries_the_trained_rows_run_to_run_variance():
    """Three seeds that differ by a constant each: the run part is their variance over 3 (less the tiny item noise
    they share), and the degrees of freedom come from those seeds."""
    base = np.random.default_rng(3).uniform(0.3, 0.9, 400)
    shifts = np.array([[0.0], [0.04], [0.08]])
    row = scores("mean", base + 0.02 + shifts + np.random.default_rng(4).normal(0, 0.001, (3, 400)))
    c = paired_comparison(row, scores("mean", base, fixed=True), seed=1, resamples=2000)
    ((run, seeds),) = c.variance.runs
    assert seeds == 3 and run == pytest.approx(np.var(shifts, ddof=1) / 3, rel=0.02)
    assert c.se == pytest.approx(np.sqrt(c.variance.item + run)) and c.df <= RUN_DF_CAP * 2
    half = stats.t.ppf(0.975, c.df) * c.se
    assert (c.low, c.high) == pytest.approx((c.estimate - half, c.estimate + half))


def test_a_trained_row_with_one_seed_is_not_tested():
    trained = scores("mean", good_outputs("mean"))
    c = paired_comparison(trained, scores("mean", good_outputs("mean", seed=9), fixed=True), resamples=100)
    assert not c.tested and "one seed" in c.reason and np.isnan(c.low) and np.isnan(c.detectable)
    with pytest.raises(ValueError, match="one set of outputs"):
        paired_comparison(scores("mean", good_outputs("mean", 2), fixed=True), trained)


def test_item_only_noise_adds_no_run_part_beyond_the_seed_by_item_interaction():
    """Seeds that differ only item by item: s^2/S holds the interaction, which the item part already counts, so the
    run part estimates zero; each estimate is noisy (4 degrees of freedom) and cut at zero, so on average it adds
    about a third of the truth, 0.1^2 / (300 x 5) (without the subtraction it would add the whole truth)."""
    runs, totals = [], []
    for k in range(40):
        x = np.random.default_rng(k).normal(0.5, 0.1, (5, 300))
        c = paired_comparison(scores("mean", x), scores("mean", np.full(300, 0.5), fixed=True), k, resamples=1000)
        runs.append(c.variance.runs[0][0])
        totals.append(c.variance.total)
    truth = 0.01 / 1500
    assert np.mean(runs) < 0.5 * truth
    assert truth * 0.9 < np.mean(totals) < truth * 1.5


@pytest.mark.parametrize("shift", [0.0, 0.005, 0.01, 0.02, 0.05])
def test_the_interval_excludes_zero_exactly_when_p_is_below_one_minus_its_level(shift):
    a = scores("mean", good_outputs("mean", 3) + shift)
    b = scores("mean", good_outputs("mean", 3, seed=2))
    c = paired_comparison(a, b, seed=0, resamples=500)
    for confidence in np.linspace(0.5, 0.999, 40):
        low, high = c.interval(confidence)
        assert (low > 0 or high < 0) == (c.p_value < 1 - confidence), (confidence, c.p_value, low, high)


def test_the_degrees_of_freedom_are_satterthwaites_and_capped_by_the_seeds():
    v = Variance(item=1.0, items=100, runs=((1.0, 3), (1.0, 3)))
    assert v.df == pytest.approx(min(9.0 / (1 / 99 + 1 / 2 + 1 / 2), RUN_DF_CAP * 4))
    assert Variance(item=0.001, items=100, runs=((1.0, 2),)).df == 1
    assert Variance(item=1.0, items=10_000, runs=((0.01, 2),)).df == 1  # a lone 1-df run part that came out small
    assert Variance(item=1.0, items=10_000, runs=((0.01, 2), (0.01, 2))).df == RUN_DF_CAP * 2
    assert Variance(item=1.0, items=40).df == pytest.approx(39)


def test_power_and_the_detectable_difference_agree():
    v = Variance(item=4.0, items=100, runs=((1.0, 5),))
    d = detectable(v)
    assert power_at(d, v) == pytest.approx(0.8, abs=0.02)
    assert power_at(0.0, v) == pytest.approx(0.05, abs=1e-6)
    assert v.at(seeds=10).runs == ((0.5, 10),) and v.at(items=400).item == pytest.approx(1.0)


def test_estimates_and_comparisons_format_like_intervals_difference():
    e = Estimate(0.8125, 0.7119, 0.8834, 0.04, 100)
    assert f"{e.scaled(100):.1f}" == "81.2 [71.2, 88.3]"
    a = scores("mean", good_outputs("mean"), fixed=True)
    c = paired_comparison(scores("mean", a.outputs - 0.1, fixed=True), a, resamples=200).scaled(100)
    assert f"{c:.1f}".startswith("−10.0 [−") and "p < 0.001" in f"{c:.1f}"
    assert format_p(0.0123) == "0.012" and format_p(0.31) == "0.31" and format_p(float("nan")) == ""


def test_paired_items_must_match():
    with pytest.raises(ValueError, match="same items"):
        paired_comparison(scores("mean", np.ones(60)), ItemScores("mean", np.ones(59), Mean()))


def test_a_two_seed_pilot_sized_to_ten_seeds_predicts_the_item_part_ten_seeds_measure():
    """The item part holds each trained row's seed-by-item share, which shrinks with its seeds: ``Variance.at``
    rescales it (kept whole, a 2-seed pilot overstated the item part at 10 seeds 2.7 times, and a 10-seed pilot
    understated it at 2 seeds as much)."""
    rng = np.random.default_rng(5)

    def pair(seeds):
        def method():
            x = 0.5 + rng.normal(0, 0.02, (seeds, 1)) + rng.normal(0, 0.3, 100) + rng.normal(0, 0.8, (seeds, 100))
            return ItemScores("x", x, Mean())

        return method(), method()

    predicted = [paired_comparison(*pair(2), k, 200).variance.at(seeds=10).item for k in range(60)]
    measured = [paired_comparison(*pair(10), k, 200).variance.item for k in range(60)]
    assert 0.85 < np.mean(predicted) / np.mean(measured) < 1.2
    back = [paired_comparison(*pair(10), k, 200).variance.at(seeds=2).item for k in range(60)]
    at_two = [paired_comparison(*pair(2), k, 200).variance.item for k in range(60)]
    assert 0.85 < np.mean(back) / np.mean(at_two) < 1.2


def test_a_clusters_contribution_is_half_what_exchanging_its_outputs_takes_off_the_difference():
    """For a mean of per-item scores, c_c is the difference on cluster c's items times its share of them, and the
    contributions add up to the difference; a fixed side's outputs stand for every seed of the other; clustered items
    do not change the test, which stays conditional on the folds' models (the module's text)."""
    rng = np.random.default_rng(4)
    folds = np.repeat(np.arange(3), [10, 20, 30])
    a, b = rng.random((2, 60)), rng.random(60)
    sides = ItemScores("mean", a, Mean(), clusters=folds), ItemScores("mean", b, Mean(), fixed=True, clusters=folds)
    c = cluster_contributions(*sides)
    by_hand = [(a[:, folds == f].mean() - b[folds == f].mean()) * (folds == f).mean() for f in range(3)]
    assert c == pytest.approx(by_hand) and c.sum() == pytest.approx(a.mean() - b.mean())
    plain = paired_comparison(ItemScores("mean", a, Mean()), ItemScores("mean", b, Mean(), fixed=True), resamples=300)
    assert paired_comparison(*sides, resamples=300).p_value == plain.p_value
    with pytest.raises(ValueError, match="2 and 3 seeds cannot be paired by fold"):
        cluster_contributions(sides[0], ItemScores("mean", np.vstack([a, a[:1]]), Mean(), clusters=folds))
    with pytest.raises(ValueError, match="same items' clusters"):
        cluster_contributions(ItemScores("mean", a, Mean()), sides[1])
