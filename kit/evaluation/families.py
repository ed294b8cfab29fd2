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

The adjustment is statsmodels' ``multipletests`` for ``bh`` and Holm's step-down written out for ``holm``
(statsmodels' ``holm`` branch runs a full ``gc.collect()`` on every call: 30-200 ms in a process holding models, which
made a report's or a simulation's thousands of families slow; a test checks the two agree); the intervals come from
each comparison's own t distribution at the family's level (``kit.evaluation.inference.Comparison.interval``), and the
smallest detectable difference is taken at the family's level too. ``correct`` does all of it for one family. A
comparison that is not tested (its two sides have the same outputs, or a trained side has one seed) is not a member:
it neither widens the family nor counts among its m.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from kit.core.cli import number
from kit.evaluation.inference import Comparison

Correction = Literal["holm", "bh", "none"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)


def add_family_options(ap: argparse.ArgumentParser) -> None:
    """The commands' ``--correction`` (holm by default) and ``--confidence`` (0.95) of a family of comparisons."""
    ap.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="correction for the number of comparisons: holm (family-wise error, default), bh (false discovery "
        "rate) or none",
    )
    ap.add_argument(
        "--confidence", type=number(0, 1), default=0.95, help="interval level, between 0 and 1 (default 0.95)"
    )


def adjusted_p(p_values: Sequence[float], correction: str, alpha: float = 0.05) -> np.ndarray:
    """The family's adjusted p-values (``none``: the p-values themselves); nan stays nan."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    p = np.asarray(p_values, dtype=np.float64)
    if correction == "none" or not len(p):
        return p
    out = np.full(len(p), np.nan)
    valid = ~np.isnan(p)
    if valid.any() and correction == "holm":
        out[valid] = holm(p[valid])
    elif valid.any():
        from statsmodels.stats.multitest import multipletests

        out[valid] = multipletests(p[valid], alpha=alpha, method="fdr_bh")[1]
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's (1979) adjusted p-values: sorted ascending, p_(k) x (m - k + 1), made non-decreasing by a running
    maximum and capped at 1, then put back in the given order."""
    order = np.argsort(p, kind="stable")
    out = np.empty(len(p))
    out[order] = np.minimum(1.0, np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)))
    return out


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


def correct(comparisons: Sequence[Comparison], correction: str, confidence: float = 0.95) -> list[Adjusted]:
    """A family of paired comparisons corrected together by ``correction``, in the order given; the untested ones
    (``Comparison.tested``) are left out of it and get nan."""
    tested = [c for c in comparisons if c.tested]
    adjusted = iter(adjusted_p([c.p_value for c in tested], correction, 1 - confidence))
    significant_p = {id(c): q for c, q in zip(tested, adjusted)}
    m = len(tested)
    hits = sum(q < (1 - confidence) * (1 - 1e-9) for q in significant_p.values())  # m x (alpha/m) is alpha
    level = family_confidence(correction, confidence, m, hits)
    nan = float("nan")
    out = []
    for c in comparisons:
        if not c.tested:
            out.append(Adjusted(nan, nan, nan, level, m, nan, False))
            continue
        q = float(significant_p[id(c)])
        out.append(
            Adjusted(q, *c.interval(level), level, m, c.detectable_at(1 - level), q < (1 - confidence) * (1 - 1e-9))
        )
    return out
