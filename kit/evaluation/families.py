"""Families of comparisons: a report that makes m comparisons at once corrects for them.

Every comparison of a family gets, beside its own p-value and interval, an adjusted p-value and an interval
at the family's level; its verdict follows the adjusted p-value. ``correction``:

- ``holm`` (the default): Holm's step-down procedure (Holm 1979) controls the family-wise error rate at
  alpha, the chance that any of the m verdicts is a false "significant". Its intervals are Bonferroni's
  simultaneous intervals, at level 1 - alpha/m; Holm rejects at least what Bonferroni does, so a comparison
  can be significant under Holm while its simultaneous interval reaches zero.
- ``bh``: Benjamini and Hochberg's procedure (1995) controls the false discovery rate, the expected share of
  false verdicts among the "significant" ones; its intervals are Benjamini and Yekutieli's (2005)
  false-coverage-rate intervals, at level 1 - R alpha / m for R significant comparisons (1 - alpha/m when
  none is).
- ``none``: each comparison alone (the p-value and interval as they are).

The adjustment itself is statsmodels' ``multipletests``; the intervals are the paired bootstrap's own
replicates at the widened level (``kit.evaluation.bootstrap.percentile_interval``), and the smallest
detectable difference is taken at the family's level too. ``correct`` does all of it for one family.

A family's level lies deep in the replicates' tails: at 1 - 0.05/56 (study 1's English family), 2,000
replicates put 0.9 of a replicate beyond each end, so the interval would be the extreme replicates and the
p-value (a multiple of 2/B) too coarse for Holm's first step (0.05/56). So every comparison of a family of m
draws ``family_resamples`` = m x the resamples a lone interval uses (m at most 100): each tail of its family
interval holds as many replicates as a lone 95% interval's does (50 at 2,000), and p resolves alpha/m as
finely as a lone p resolves alpha. An adjusted p is written with its own floor (``format_adjusted``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from kit.evaluation.bootstrap import detectable_difference, format_p, percentile_interval

Correction = Literal["holm", "bh", "none"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)
_METHODS = {"holm": "holm", "bh": "fdr_bh"}


def adjusted_p(p_values: Sequence[float], correction: str, alpha: float = 0.05) -> np.ndarray:
    """The family's adjusted p-values (``none``: the p-values themselves); nan stays nan."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    p = np.asarray(p_values, dtype=np.float64)
    if correction == "none" or not len(p):
        return p
    from statsmodels.stats.multitest import multipletests

    out = np.full(len(p), np.nan)
    valid = ~np.isnan(p)
    if valid.any():
        out[valid] = multipletests(p[valid], alpha=alpha, method=_METHODS[correction])[1]
    return out


DEEPEST = 100
"""``family_resamples`` draws as deep as a family of 100 at most: beyond, the tails thin in proportion (25 replicates
at m = 200 with 2,000 resamples), so that a ``kit.evaluate`` of many models on many tasks stays within minutes."""


def family_resamples(resamples: int, size: int, correction: str) -> int:
    """The resamples of each comparison in a family of ``size`` under ``correction``: ``resamples`` x size (at most
    x ``DEEPEST``), so that each tail of its interval at the family's level (at most alpha/size) holds as many
    replicates as a lone interval's tail at ``resamples``; ``resamples`` itself under ``none`` or for a family of
    one."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    return resamples if correction == "none" or size <= 1 else resamples * min(size, DEEPEST)


def format_adjusted(p: float, resamples: float, size: float) -> str:
    """An adjusted p-value as ``format_p`` writes it, its floor m x 2 / resamples for a family of m: a comparison
    with no replicate beyond zero has p < 2 / resamples, so its adjusted p is below m times that."""
    return format_p(p, resamples / max(size, 1))


def family_confidence(correction: str, confidence: float, m: int, significant: int) -> float:
    """The level of the family's intervals for m comparisons of which ``significant`` are significant after the
    correction: Bonferroni's 1 - alpha/m (``holm``), Benjamini-Yekutieli's 1 - R alpha/m (``bh``), or the
    comparisons' own level (``none``, or a family of one)."""
    alpha = 1 - confidence
    if correction == "none" or m <= 1:
        return confidence
    if correction == "holm":
        return 1 - alpha / m
    return 1 - max(significant, 1) * alpha / m


@dataclass(frozen=True)
class Adjusted:
    """One comparison within its family of ``size``: its adjusted ``p``, its interval [``low``, ``high``] at the
    family's ``confidence``, the smallest difference ``detectable`` at that level (80% power) and the verdict
    (``significant``: the adjusted p below 1 - the comparisons' own confidence)."""

    p: float
    low: float
    high: float
    confidence: float
    size: int
    detectable: float
    significant: bool


def correct(
    p_values: Sequence[float],
    replicates: Sequence[np.ndarray],
    se: Sequence[float],
    correction: str,
    confidence: float = 0.95,
) -> list[Adjusted]:
    """A family of paired comparisons (each its p-value, bootstrap replicates and standard error) corrected
    together by ``correction``, in the order given."""
    adjusted = adjusted_p(p_values, correction, 1 - confidence)
    significant = adjusted < (1 - confidence) * (1 - 1e-9)  # m x (alpha / m) is alpha, not a float below it
    m = len(adjusted)
    level = family_confidence(correction, confidence, m, int(significant.sum()))
    return [
        Adjusted(
            float(q),
            *percentile_interval(r, level),
            level,
            len(adjusted),
            detectable_difference(s, 1 - level),
            bool(sig),
        )
        for q, r, s, sig in zip(adjusted, replicates, se, significant)
    ]
