"""Sizing a comparison before its runs: the power of the calibrated t test (``kit.evaluation.inference``) for an
effect, and the seeds (and items) it needs for 80% power, from the variance parts of a pilot (an earlier report of
the same study, or this report's own).

A pilot gives each part of a difference's variance (``Variance``): the item part, which scales as 1/items, and each
trained row's run part, which scales as 1/seeds. ``Variance.at`` rescales them to another design; ``power_at`` is
the noncentral-t power of the two-sided test at alpha; ``seeds_needed`` and ``items_needed`` search the smallest
design that reaches ``POWER``. An effect that would carry a score past its scale's maximum (100 for Spearman,
average precision, F1 and ROUGE x100) cannot be observed, whatever the design: ``ceiling`` names it.
"""

from __future__ import annotations

from kit.evaluation.inference import Variance, detectable, power_at

__all__ = [
    "Variance",
    "ceiling",
    "design_needed",
    "detectable",
    "items_needed",
    "power_at",
    "seeds_needed",
    "sizing_sentence",
]

POWER = 0.8
MOST_SEEDS = 100
"""``seeds_needed`` looks no further: a comparison that needs more is beyond any study's budget."""
SCALE_MAXIMUM = 100.0


def seeds_needed(effect: float, variance: Variance, alpha: float = 0.05, power: float = POWER) -> int | None:
    """The fewest seeds per trained row (2 to ``MOST_SEEDS``) at which the test finds ``effect`` with ``power``;
    None when none does (the item part alone is too large), or when no row is trained (seeds change nothing)."""
    if not variance.runs:
        return None
    return next((s for s in range(2, MOST_SEEDS + 1) if power_at(effect, variance.at(seeds=s), alpha) >= power), None)


ITEM_FACTORS = (1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100)
"""The item counts ``items_needed`` and ``design_needed`` try, as multiples of the pilot's."""


def items_needed(effect: float, variance: Variance, alpha: float = 0.05, power: float = POWER) -> int | None:
    """The fewest items (up to 100 x the pilot's) at which the test finds ``effect`` with ``power`` at the pilot's
    seeds; None when more items alone cannot (the run part is too large)."""
    n = variance.items
    for items in sorted({max(n, int(n * f)) for f in ITEM_FACTORS}):
        if power_at(effect, variance.at(items=items), alpha) >= power:
            return items
    return None


def design_needed(
    effect: float, variance: Variance, alpha: float = 0.05, power: float = POWER
) -> tuple[int, int] | None:
    """(seeds, items): the fewest items (from the pilot's up, ``ITEM_FACTORS``) at which some number of seeds up to
    ``MOST_SEEDS`` reaches ``power``, with the fewest such seeds; None when no such design exists."""
    n = variance.items
    for items in sorted({max(n, int(n * f)) for f in ITEM_FACTORS}):
        seeds = seeds_needed(effect, variance.at(items=items), alpha, power)
        if seeds is not None:
            return seeds, items
    return None


def ceiling(effect: float, baseline: float | None, maximum: float = SCALE_MAXIMUM) -> str:
    """A sentence when ``baseline`` + ``effect`` passes the scale's ``maximum`` (or falls below zero): no design
    can show such a gain on this task; '' otherwise."""
    if baseline is None or 0 <= baseline + effect <= maximum:
        return ""
    return (
        f"An effect of {effect:+.1f} points on a baseline of {baseline:.1f} would pass the scale's "
        f"{'maximum of ' + format(maximum, 'g') if effect > 0 else 'minimum of 0'}: no design can show it on this task."
    )


PILOT_QUANTILES = (0.1, 0.9)
"""The bounds of the run-to-run variance that a pilot's seeds leave possible (``run_bounds``)."""


def run_bounds(variance: Variance, pilot_seeds: int, quantiles: tuple[float, float] = PILOT_QUANTILES):
    """The variance parts with every run part at the lower and at the upper bound of the true run variance that a pilot
    of ``pilot_seeds`` seeds per row leaves possible: an estimate v from S seeds has (S - 1) v / sigma^2 ~ chi^2_{S-1}
    (normal run effects), so sigma^2 lies in [(S - 1) v / chi^2_{S-1, q_high}, (S - 1) v / chi^2_{S-1, q_low}] with
    probability q_high - q_low (the usual interval for a normal variance; with 3 seeds 0.43 to 9.5 times v). A design
    sized on the pilot's v alone sizes on a number 2 seeds' worth of freedom cannot pin down."""
    from scipy import stats

    df = max(pilot_seeds - 1, 1)
    low, high = (df / stats.chi2.ppf(q, df) for q in reversed(quantiles))

    def scaled(factor: float) -> Variance:
        return Variance(
            variance.item, variance.items, tuple((v * factor, s) for v, s in variance.runs), variance.interactions
        )

    return scaled(low), scaled(high), (low, high)


def sizing_sentence(effect: float, variance: Variance, seeds: int, alpha: float = 0.05) -> str:
    """What a comparison with these variance parts (``seeds`` per trained row) resolves, set against the ``effect``
    it was declared for: its power, and when short of ``POWER`` the seeds (or items) that would reach it."""
    seeds, power = int(seeds), power_at(effect, variance, alpha)
    resolves = detectable(variance, alpha, POWER)
    what = f"{seeds} seed{'s' * (seeds != 1)} per trained row" if variance.runs else "its items"
    out = (
        f"With {what} it resolves {resolves:.1f} points with {POWER:.0%} power; the effect it was declared for, "
        f"{effect:.1f} points, has {power:.0%} power"
    )
    if power >= POWER:
        return out + "."
    if variance.runs and (need := seeds_needed(effect, variance, alpha)) is not None:
        return (
            out + f": {seeds} seed{'s' * (seeds != 1)} cannot tell run-to-run variation from a difference of "
            f"{effect:.1f} points; {POWER:.0%} power needs {need} seeds per trained row."
        )
    if not variance.runs:
        items = items_needed(effect, variance, alpha)
        return out + (f": {POWER:.0%} power needs {items:,} items." if items else ": not within 100 times the items.")
    both = design_needed(effect, variance, alpha)
    if both is None:
        return out + f": no design within {MOST_SEEDS} seeds and 100 times the items reaches it."
    return (
        out + f": {seeds} seed{'s' * (seeds != 1)} cannot tell run-to-run variation from a difference of "
        f"{effect:.1f} points, and more seeds alone cannot either (the {variance.items} items limit it); "
        f"{POWER:.0%} power needs {both[0]} seeds per trained row and {both[1]:,} items."
    )
