"""Differences between methods with their confidence intervals."""

import numpy as np
import pytest
from scipy import stats

from kit.evaluation.intervals import comparison, paired_difference


def test_the_paired_interval_is_scipys_paired_t_interval():
    rng = np.random.default_rng(0)
    a, b = rng.normal(50, 2, 5), rng.normal(48, 2, 5)
    d = paired_difference(dict(enumerate(a)), dict(enumerate(b)))
    reference = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((reference.low, reference.high))
    assert d.estimate == pytest.approx(np.mean(a - b)) and d.n == 5


def test_units_are_paired_by_name_and_a_single_baseline_score_pairs_with_every_unit():
    d = paired_difference({2: 12.0, 0: 10.0, 1: 11.0, 7: 99.0}, {0: 9.0, 1: 9.0, 2: 9.0})  # seed 7 has no pair
    assert d.n == 3 and d.estimate == pytest.approx(2.0)
    deterministic = paired_difference({0: 10.0, 1: 12.0}, {0: 9.0})
    assert deterministic.n == 2 and deterministic.estimate == pytest.approx(2.0)


def test_no_difference_is_stated_without_an_interval():
    assert paired_difference({0: 1.0}, {0: 2.0}) is None
    assert "no difference stated" in comparison("crop 10%", "SimCSE", None)


def test_the_sentence_says_whether_the_interval_excludes_zero():
    clear = comparison(
        "crop 10%", "SimCSE", paired_difference({0: 45.0, 1: 46.0, 2: 44.0}, {0: 29.0, 1: 30.0, 2: 28.5})
    )
    assert clear.startswith("crop 10% vs SimCSE: +15.8 [+") and clear.endswith("excludes zero")
    noisy = comparison("a", "b", paired_difference({0: 1.0, 1: 3.0}, {0: 2.0, 1: 1.0}))
    assert "includes zero: not a measurable difference" in noisy and "−" in noisy
