"""Families of comparisons: the adjusted p-values against hand-computed ones, the intervals at the family's
level, and the rate of false verdicts in families of comparisons with no true difference."""

from dataclasses import replace

import numpy as np
import pytest

from kit.evaluation.bootstrap import ItemScores, Mean, Spearman
from kit.evaluation.families import adjusted_p, correct, family_confidence
from kit.evaluation.inference import paired_comparison

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
    """Fixed models that add ``gain`` x noise-free signal to a noisy copy of the gold scores, each against one
    baseline (None: the baseline itself)."""
    rng = np.random.default_rng(seed)
    gold = rng.uniform(0, 4, n)
    statistic = Spearman(gold)
    noise = rng.normal(0, 2, n)
    base = ItemScores("s", gold + noise, statistic, fixed=True)
    out = []
    for k, gain in enumerate(gains):
        row = (
            base
            if gain is None
            else ItemScores("s", gold + noise * (1 - gain) + rng.normal(0, 0.3, n), statistic, True)
        )
        out.append(paired_comparison(row, base, seed=(seed, k), resamples=1000))
    return out


def test_family_intervals_are_each_comparisons_t_interval_at_the_widened_level_and_identical_rows_stay_out():
    comparisons = _comparisons([0.5, 0.1, 0.0, None])
    family = correct(comparisons, "holm")
    for c, a in zip(comparisons[:3], family[:3]):
        assert a.size == 3 and a.confidence == pytest.approx(1 - 0.05 / 3)
        assert (a.low, a.high) == pytest.approx(c.interval(1 - 0.05 / 3))
        assert a.low <= c.low and a.high >= c.high and a.detectable >= c.detectable
    assert family[0].significant and family[0].low > 0  # a large gain survives the correction
    assert np.isnan(family[3].p) and not family[3].significant  # the baseline against itself: not a member
    alone = correct(comparisons, "none")
    assert [x for a in alone[:3] for x in (a.low, a.high)] == pytest.approx(
        [x for c in comparisons[:3] for x in (c.low, c.high)]
    )


def test_a_p_value_of_exactly_alpha_over_m_is_not_significant_after_holm_despite_float_rounding():
    """56 x (0.05 / 56) is not below 0.05 in floats' eyes only by rounding: the adjusted p is alpha, not below it."""
    c = _comparisons([0.3])[0]
    family = correct([replace(c, p_value=0.05 / 56)] + [replace(c, p_value=1.0)] * 55, "holm")
    assert family[0].p == pytest.approx(0.05) and not family[0].significant


FAMILIES, SIZE = 200, 20


@pytest.fixture(scope="module")
def null_families():
    """200 families of 20 comparisons, each an independent fixed model whose per-item scores have the same mean as
    the family's baseline's (no true difference): the number of "significant" verdicts per family under each
    correction."""
    counts = {"holm": [], "bh": [], "none": []}
    for seed in range(FAMILIES):
        rng = np.random.default_rng(seed)
        difficulty = rng.normal(0.6, 0.15, 60)  # what every model finds hard: the pairing removes it
        base = ItemScores("s", difficulty + rng.normal(0, 0.1, 60), Mean(), fixed=True)
        family = [
            paired_comparison(ItemScores("s", difficulty + rng.normal(0, 0.1, 60), Mean(), True), base, (seed, k), 300)
            for k in range(SIZE)
        ]
        for correction, found in counts.items():
            found.append(sum(a.significant for a in correct(family, correction)))
    return {correction: np.array(found) for correction, found in counts.items()}


def test_corrected_families_of_null_comparisons_keep_the_family_wise_rate_uncorrected_ones_do_not(null_families):
    """20 comparisons at 5% each: uncorrected, about 1 - 0.95^20 = 64% of families (less here: the comparisons
    share their baseline) hold a false "significant"; Holm keeps that at alpha and BH (whose rate equals its
    false-discovery rate when nothing is true) too, within two Monte-Carlo errors of the 200 families."""
    any_found = {correction: float((found > 0).mean()) for correction, found in null_families.items()}
    error = np.sqrt(0.05 * 0.95 / FAMILIES)
    assert any_found["none"] >= 0.25, any_found
    assert any_found["holm"] <= 0.05 + 2 * error and any_found["bh"] <= 0.05 + 2 * error, any_found


def test_holm_written_out_equals_statsmodels_on_random_families_with_ties_and_ones():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 20, 57):
        p = rng.uniform(0, 1, m) ** 3
        p[rng.integers(0, m, m // 3)] = p[0]  # ties
        assert adjusted_p(p, "holm") == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)
