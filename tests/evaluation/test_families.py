"""Families of comparisons: the adjusted p-values against hand-computed ones, the intervals at the family's
level, and the rate of false verdicts in families of comparisons with no true difference."""

import numpy as np
import pytest

from kit.evaluation.bootstrap import ItemScores, Spearman, paired_bootstrap, percentile_interval
from kit.evaluation.families import adjusted_p, correct, family_confidence, family_resamples, format_adjusted

P = [0.01, 0.04, 0.03, 0.005]


def test_holm_multiplies_the_sorted_p_values_by_m_k_plus_1_and_keeps_them_monotone():
    """Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> raised to 0.06 (step-down)."""
    assert adjusted_p(P, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_benjamini_hochberg_multiplies_by_m_over_rank_from_the_top():
    """Sorted: 0.04 x4/4 = 0.04, 0.03 x4/3 = 0.04, 0.01 x4/2 = 0.02, 0.005 x4/1 = 0.02 (step-up minimum)."""
    assert adjusted_p(P, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_no_correction_keeps_the_p_values_and_nan_stays_out_of_the_family():
    assert adjusted_p(P, "none") == pytest.approx(P)
    out = adjusted_p([0.01, np.nan, 0.04], "holm")
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.04)
    with pytest.raises(ValueError, match="correction must be one of"):
        adjusted_p(P, "bonferroni-ish")


def test_the_family_level_is_bonferronis_for_holm_and_benjamini_yekutielis_for_bh():
    assert family_confidence("holm", 0.95, 10, 3) == pytest.approx(0.995)
    assert family_confidence("bh", 0.95, 10, 3) == pytest.approx(1 - 3 * 0.05 / 10)
    assert family_confidence("bh", 0.95, 10, 0) == pytest.approx(0.995)
    assert family_confidence("none", 0.95, 10, 3) == 0.95 and family_confidence("holm", 0.95, 1, 0) == 0.95


def _comparisons(gains, n=80, seed=0):
    """Rows that add ``gain`` x noise-free signal to a noisy copy of the gold scores, each against one baseline."""
    rng = np.random.default_rng(seed)
    gold = rng.uniform(0, 4, n)
    statistic = Spearman(gold)
    noise = rng.normal(0, 2, n)
    base = ItemScores("s", gold + noise, statistic)
    out = []
    for k, gain in enumerate(gains):
        row = base if gain is None else ItemScores("s", gold + noise * (1 - gain) + rng.normal(0, 0.3, n), statistic)
        out.append(paired_bootstrap(row, base, seed=(seed, k), resamples=1000))
    return out


def test_family_intervals_are_the_replicates_at_the_widened_level_and_a_model_against_itself_stays_zero():
    comparisons = _comparisons([0.5, 0.1, 0.0, None])
    family = correct(
        [c.p_value for c in comparisons], [c.replicates for c in comparisons], [c.se for c in comparisons], "holm"
    )
    for c, a in zip(comparisons, family):
        assert a.size == 4 and a.confidence == pytest.approx(1 - 0.05 / 4)
        assert (a.low, a.high) == percentile_interval(c.replicates, 1 - 0.05 / 4)
        assert a.low <= c.low and a.high >= c.high and a.detectable >= c.detectable
    assert family[0].significant and family[0].low > 0  # a large gain survives the correction
    assert (family[3].low, family[3].high, family[3].p, family[3].significant) == (0.0, 0.0, 1.0, False)
    alone = correct(
        [c.p_value for c in comparisons], [c.replicates for c in comparisons], [c.se for c in comparisons], "none"
    )
    assert [(a.low, a.high) for a in alone] == [(c.low, c.high) for c in comparisons]


def test_a_family_of_m_draws_m_times_the_resamples_of_a_lone_interval_unless_uncorrected():
    assert family_resamples(2000, 56, "holm") == family_resamples(2000, 56, "bh") == 112_000
    assert family_resamples(2000, 56, "none") == family_resamples(2000, 1, "holm") == 2000
    assert family_resamples(2000, 300, "holm") == 200_000  # as deep as a family of 100 at most
    with pytest.raises(ValueError, match="correction must be one of"):
        family_resamples(2000, 3, "bonferroni")


def test_a_p_value_of_exactly_alpha_over_m_is_not_significant_after_holm_despite_float_rounding():
    """56 x (100 / 112,000) is 0.049999999999999996 in floats: the comparison's Bonferroni interval reaches zero,
    and its adjusted p is alpha, not below it."""
    p = [100 / 112_000] + [1.0] * 55
    replicates = [np.linspace(-1, 1, 11)] * 56
    [first, *_] = correct(p, replicates, [0.1] * 56, "holm")
    assert first.p == pytest.approx(0.05) and not first.significant


def test_an_adjusted_p_is_written_with_the_familys_floor():
    """No replicate beyond zero: p < 2 / 112,000, so its Holm p over 56 comparisons is only known below 0.001."""
    assert format_adjusted(0.0, 112_000, 56) == "< 0.001" and format_adjusted(0.0, 112_000, 1) == "< 2e-05"


@pytest.fixture(scope="module")
def null_families():
    """50 families of 20 comparisons, each an independent model of the same quality as the baseline (no true
    difference): the number of "significant" verdicts per family under each correction."""
    counts = {"holm": [], "bh": [], "none": []}
    for seed in range(50):
        rng = np.random.default_rng(seed)
        gold = rng.uniform(0, 4, 60)
        statistic = Spearman(gold)
        base = ItemScores("s", gold + rng.normal(0, 2, 60), statistic)
        family = [
            paired_bootstrap(ItemScores("s", gold + rng.normal(0, 2, 60), statistic), base, (seed, k), 500)
            for k in range(20)
        ]
        for correction, found in counts.items():
            verdicts = correct(
                [c.p_value for c in family], [c.replicates for c in family], [c.se for c in family], correction
            )
            found.append(sum(a.significant for a in verdicts))
    return {correction: np.array(found) for correction, found in counts.items()}


def test_corrected_families_of_null_comparisons_rarely_find_anything_uncorrected_ones_often_do(null_families):
    """20 comparisons at 5% each: uncorrected, about 1 - 0.95^20 = 64% of families (less here: the comparisons
    share their baseline) hold a false "significant"; Holm and BH keep that near 5% (BH's rate equals its
    false-discovery rate when nothing is true)."""
    any_found = {correction: float((found > 0).mean()) for correction, found in null_families.items()}
    assert any_found["none"] >= 0.25, any_found
    assert any_found["holm"] <= 0.2 and any_found["bh"] <= 0.2, any_found
