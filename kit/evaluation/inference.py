"""Calibrated inference for scores and differences measured over a task's items and a row's training seeds.

A row's score on a task varies for two reasons: which items the task happens to hold, and which training run
(seed) produced the model. A difference between two rows must carry both, and with the 2-10 seeds a study can
afford, the run-to-run part is estimated from very few values. The percentile bootstrap over items and seeds
(the multi-bootstrap of Sellam et al. 2022) sees only (S - 1)/S of the run-to-run variance and uses normal
quantiles where the seeds give S - 1 degrees of freedom: with 2 seeds per row it said "significant" in 14-22% of
simulated nulls at alpha 0.05 whose runs differ in quality (``benchmarks/calibration.py``). This module replaces
it with a t test whose variance is split into an item part and a run part, as generalizability theory splits the
error of a crossed (seeds x items) design (Brennan 2001, *Generalizability Theory*, ch. 3), and whose degrees of
freedom are Satterthwaite's (1946), as in Welch's (1947) test.

For a difference D = m(a) - m(b), m(x) the metric averaged over the row's seeds (each seed's metric on all
items; f(x_s) below):

- item part V_item: the variance of D over B draws of the items with replacement, the same draws for both rows
  and every seed, the seeds held fixed (``kit.evaluation.bootstrap.item_replicates``); n - 1 degrees of freedom
  for n items.
- run part of each trained row with S >= 2 seeds: R = max(0, s^2 / S - (v - V) / (S - 1)), s^2 the sample
  variance of f(x_s) over the seeds, v the mean over seeds of each seed's own item-draw variance and V the item-draw
  variance of the seed average. s^2 holds the run-to-run variance plus S/(S - 1) (v - V) of seed-by-item
  interaction, which V_item already counts; the subtraction keeps it from being counted twice. S - 1 degrees
  of freedom. A deterministic row (``ItemScores.fixed``: an untrained model, or a frozen model compared as an
  artefact) has no run part; a trained row with one seed has one that cannot be measured, and its comparisons
  are not tested (``reason``).
- SE^2 = V_item + R_a + R_b; df = SE^4 / (V_item^2/(n - 1) + R_a^2/(S_a - 1) + R_b^2/(S_b - 1)), at most
  2 x the seeds' degrees of freedom sum(S - 1) when a trained row takes part. Without that cap, a run part
  estimated from one degree of freedom that happens to come out small makes df large and SE small together, and
  the test said "significant" in 8-10% of simulated nulls with 2 seeds on 100 items (run-level and mixed noise,
  ``benchmarks/calibration.py --seeds 2 --items 100 --df-cap inf``); with it the simulated rate stays within
  alpha plus its Monte-Carlo error for 2-10 seeds, item-level, run-level and mixed noise
  (``benchmarks/calibration.py`` prints the table, ``docs/evaluation.md`` shows it). When the one run part has one
  degree of freedom (a trained row of two seeds against a deterministic one), df is 1: on 9,962 items, where the
  item part is tiny, that run part coming out small by chance pulled df towards the cap exactly when the statistic
  was large, and the positive control passed in 4-6% of simulated nulls against a nominal 2.5%
  (``benchmarks/calibration.py --control --metric mean``); with df 1 the difference over its run part is Student's
  t with one degree of freedom, as it is when the items add nothing (``LONE_RUN_DF``; ``--lone-run-df inf`` lifts it).
  Where the harness does not reach, the rule is not shown to hold: an idealized simulation without an item part
  (a review's, normal run effects only) put 3 seeds against a fixed row at 6.6% and 2 seeds against 2 with unequal
  run noise at up to 10.7% two-sided; the harness's cells, which have the item part real tasks have, read within
  alpha plus its Monte-Carlo error.
- interval D +- t_{df, 1 - alpha/2} SE, p = 2 P(T_df > |D| / SE): one t distribution gives both, so the interval
  excludes zero exactly when p < alpha, at every level (a family's level too, ``interval``).

What the interval counts: which items a task happens to hold and which training runs the seeds gave, for models
trained on the data the run file names; not what other training data would give. On study 2's k-fold task
(``biosses-cv``: each pair scored by the model of the fold that held it out) this is the naive cross-validation
interval: each fold's held-out pairs are taken as fresh draws for its model, although the other folds trained on
them, and how well a fold's training pairs suit a method, shared by its pairs and every seed, is counted by neither
part. A cross-validation estimate tracks the error averaged over training sets, and the naive interval can be too
narrow for it (Bates, Hastie and Tibshirani 2023, "Cross-validation: what does it estimate and how well does it do
it?", JASA; their nested cross-validation is the remedy, not implemented here), and no estimator of the variance of
k-fold cross-validation is unbiased under every distribution (Bengio and Grandvalet 2004, JMLR 5). Simulated with a
method-by-fold effect and methods equal on average, the test says "significant" more often than alpha as that
effect grows (``benchmarks/calibration.py --control --folds 5``): a verdict on ``biosses-cv`` is weaker than one on
a task with a fixed training set, and reports say so. They also show how evenly a difference is spread over the
folds (``cluster_contributions``).

Why not the alternatives: a permutation over seed labels has a smallest p of 1/3 with 2 seeds per side and 1/10
with 3; a two-stage bootstrap needs its own small-sample correction and keeps the normal quantiles; a mixed
model has no closed form for Spearman's rho or average precision. Everything is seeded: the same outputs and
seed give the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from kit.evaluation.bootstrap import ItemScores, SeedLike, item_replicates, same_clusters

RUN_DF_CAP = 2
"""df is at most this many times the trained rows' seed degrees of freedom, sum(S - 1) (see the module's text)."""
LONE_RUN_DF = 1.0
"""df when the lone run part has one degree of freedom: a trained row of two seeds against a deterministic one."""


@dataclass(frozen=True)
class Variance:
    """The parts of an estimate's variance: ``item`` over ``items`` items, and one (variance, seeds) per trained row
    (``runs``), each variance already divided by its seeds (the variance of that row's seed mean). ``interactions``:
    per trained row (as ``runs``), the share of ``item`` that is its seed-by-item interaction, (v - V)/(S - 1) of the
    module's text: it shrinks with the row's seeds as well as with the items."""

    item: float
    items: int
    runs: tuple[tuple[float, int], ...] = ()
    interactions: tuple[float, ...] = ()

    @property
    def total(self) -> float:
        return self.item + sum(v for v, _ in self.runs)

    @property
    def df(self) -> float:
        """Satterthwaite's degrees of freedom, capped at ``RUN_DF_CAP`` x sum(S - 1) when a trained row takes part, and
        at ``LONE_RUN_DF`` when the one run part has one degree of freedom (the module's text)."""
        parts = [(self.item, self.items - 1), *((v, s - 1) for v, s in self.runs)]
        weight = sum(v * v / d for v, d in parts if v > 0 and d > 0)
        df = self.total**2 / weight if weight > 0 else float(max(self.items - 1, 1))
        if self.runs:
            seeds_df = sum(s - 1 for _, s in self.runs)
            df = min(df, LONE_RUN_DF if seeds_df == 1 else RUN_DF_CAP * seeds_df)
        return float(max(df, 1.0))

    def at(self, seeds: int | None = None, items: int | None = None) -> Variance:
        """The same parts for another design: every trained row at ``seeds`` seeds, ``items`` items (the item part
        scales as 1/items, a run part as 1/seeds, a row's seed-by-item share as 1/(items x seeds)): what
        ``kit.evaluation.design`` sizes runs with."""
        n = items / self.items if items else 1.0
        shares = self.interactions or (0.0,) * len(self.runs)
        new = tuple(x * s / seeds / n if seeds else x / n for x, (_, s) in zip(shares, self.runs))
        item = max(self.item - sum(shares), 0.0) / n + sum(new)
        runs = tuple((v * s / seeds, seeds) for v, s in self.runs) if seeds else self.runs
        return Variance(item, items or self.items, runs, new)

    def without(self, kept: Sequence[bool]) -> Variance:
        """The parts with only the trained rows ``kept`` (as ``runs``): a row the design makes deterministic loses its
        run part and its seed-by-item share of the item part."""
        shares = self.interactions or (0.0,) * len(self.runs)
        dropped = sum(x for x, k in zip(shares, kept) if not k)
        return Variance(
            max(self.item - dropped, 0.0),
            self.items,
            tuple(r for r, k in zip(self.runs, kept) if k),
            tuple(x for x, k in zip(shares, kept) if k),
        )

    def record(self) -> dict:
        return {
            "item": self.item,
            "items": self.items,
            "runs": [list(r) for r in self.runs],
            "interactions": list(self.interactions),
        }

    @classmethod
    def from_record(cls, record: dict) -> Variance:
        runs = tuple((float(v), int(s)) for v, s in record["runs"])
        return cls(float(record["item"]), int(record["items"]), runs, tuple(map(float, record.get("interactions", ()))))


def t_quantile(probability: float, df: float) -> float:
    return float(stats.t.ppf(probability, df))


def detectable(variance: Variance, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided t test at ``alpha`` with these variance parts finds with probability
    ``power`` (the usual approximation to the noncentral t): (t_{df, 1 - alpha/2} + t_{df, power}) SE."""
    df, se = variance.df, np.sqrt(variance.total)
    return float((t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * se)


def power_at(effect: float, variance: Variance, alpha: float = 0.05) -> float:
    """The probability that the two-sided t test at ``alpha`` finds a true difference ``effect``: the noncentral t
    with df and noncentrality effect / SE beyond either critical value."""
    df, se = variance.df, np.sqrt(variance.total)
    if se == 0:
        return 1.0 if effect else alpha
    crit, nc = t_quantile(1 - alpha / 2, df), abs(effect) / se
    upper, lower = stats.nct.sf(crit, df, nc), stats.nct.cdf(-crit, df, nc)
    # scipy's noncentral t gives nan for a far tail (df 4, noncentrality 10: the lower one); the normal's tail there
    # is as negligible, and a finite number
    upper = upper if np.isfinite(upper) else stats.norm.sf(crit - nc)
    lower = lower if np.isfinite(lower) else stats.norm.cdf(-crit - nc)
    return float(min(upper + lower, 1.0))


SCALE = 200.0
"""The widest difference two scores x100 of any suite metric can show (Spearman's, each score from -100 to 100; the
others, from 0 to 100, span half of it): an interval past +-SCALE says nothing the scale does not (study 3's family
intervals, [-336.8, +355.4] with 1 degree of freedom)."""
NOT_ESTIMABLE = "not estimable at these seeds: the interval passes ±200"


def beyond_scale(low: float, high: float) -> bool:
    """Whether an interval of a difference x100 passes the widest range a difference can have (``SCALE``)."""
    return low < -SCALE or high > SCALE


@dataclass(frozen=True)
class Difference:
    """A difference ``estimate`` between two models with its interval [``low``, ``high``] over ``n`` items."""

    estimate: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __format__(self, spec: str) -> str:
        """``f"{d:.1f}"`` -> ``+16.3 [+12.3, +20.2]``; an interval past any difference's range (``beyond_scale``) is
        not printed."""
        spec = spec or ".2f"
        if beyond_scale(self.low, self.high):
            return f"{self.estimate:+{spec}} [{NOT_ESTIMABLE}]".replace("-", "−")
        return f"{self.estimate:+{spec}} [{self.low:+{spec}}, {self.high:+{spec}}]".replace("-", "−")


@dataclass(frozen=True)
class Estimate:
    """A model's score ``value`` on a task with its interval [``low``, ``high``] over ``items`` items and ``seeds``
    seeds (item and run parts, t with ``df``); ``se`` its standard error."""

    value: float
    low: float
    high: float
    se: float
    items: int
    seeds: int = 1
    confidence: float = 0.95
    df: float = float("inf")

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in other units (x100 for tables)."""
        v = self
        return replace(v, value=v.value * factor, low=v.low * factor, high=v.high * factor, se=v.se * factor)

    def __format__(self, spec: str) -> str:
        """``f"{e:.1f}"`` -> ``81.3 [74.2, 86.6]``."""
        spec = spec or ".3f"
        return f"{self.value:{spec}} [{self.low:{spec}}, {self.high:{spec}}]".replace("-", "−")


@dataclass(frozen=True)
class Comparison:
    """Model a minus its baseline b on the same items: the ``difference`` with its interval, its ``p_value``, its
    standard error ``se`` from the ``variance`` parts, ``df`` and ``detectable`` (the smallest true difference the
    design finds with 80% power at alpha 0.05). ``reason`` says why it is not tested (then p, the interval and
    detectable are nan): the two sides have the same outputs on every item (``identical``), or a trained side
    has one seed."""

    difference: Difference
    p_value: float
    se: float
    df: float
    detectable: float
    variance: Variance
    seeds: tuple[int, int] = (1, 1)
    resamples: int = 2000
    reason: str = ""
    identical: bool = False

    @property
    def estimate(self) -> float:
        return self.difference.estimate

    @property
    def low(self) -> float:
        return self.difference.low

    @property
    def high(self) -> float:
        return self.difference.high

    @property
    def tested(self) -> bool:
        return not self.reason

    @property
    def excludes_zero(self) -> bool:
        return self.difference.excludes_zero

    def interval(self, confidence: float) -> tuple[float, float]:
        """The interval at another level (a family's): D +- t_{df, (1 + confidence)/2} SE."""
        if not self.tested:
            return float("nan"), float("nan")
        half = t_quantile((1 + confidence) / 2, self.df) * self.se
        return self.estimate - half, self.estimate + half

    def detectable_at(self, alpha: float, power: float = 0.8) -> float:
        return detectable(self.variance, alpha, power) if self.tested else float("nan")

    def scaled(self, factor: float) -> Comparison:
        d, v = self.difference, self.variance
        f2 = factor * factor
        variance = Variance(
            v.item * f2, v.items, tuple((r * f2, s) for r, s in v.runs), tuple(x * f2 for x in v.interactions)
        )
        return replace(
            self,
            difference=Difference(d.estimate * factor, d.low * factor, d.high * factor, d.n, d.confidence),
            se=self.se * factor,
            detectable=self.detectable * factor,
            variance=variance,
        )

    def __format__(self, spec: str) -> str:
        """``f"{c:.1f}"`` -> ``+2.1 [+0.4, +3.9], p = 0.016``."""
        if not self.tested:
            return f"{self.estimate:+{spec or '.2f'}}".replace("-", "−") + f" (not tested: {self.reason})"
        p = format_p(self.p_value)
        return f"{self.difference:{spec}}, p {p if p.startswith('<') else '= ' + p}"


def format_p(p: float) -> str:
    """``0.016``, ``0.31``; below 0.001, ``< 0.001``."""
    if p != p:
        return ""
    if p < 0.001:
        return "< 0.001"
    return f"{p:.2g}" if p < 0.1 else f"{p:.2f}"


@dataclass(frozen=True)
class _Side:
    per_seed: np.ndarray  # [S] the metric of each seed on all items
    replicates: np.ndarray  # [S, B] on each item draw
    fixed: bool

    @property
    def seeds(self) -> int:
        return len(self.per_seed)

    def interaction(self, keep: np.ndarray) -> float:
        """(v - V)/(S - 1) (the module's text): the seed-by-item interaction's share of the seed mean's item part."""
        reps = self.replicates[:, keep]
        v = float(np.mean(np.var(reps, axis=1, ddof=1)))
        return (v - float(np.var(reps.mean(0), ddof=1))) / (self.seeds - 1)

    def run_part(self, keep: np.ndarray) -> float:
        """R = max(0, s^2/S - (v - V)/(S - 1)) (the module's text)."""
        return max(0.0, float(np.var(self.per_seed, ddof=1)) / self.seeds - self.interaction(keep))


def _side(scores: ItemScores, seed: SeedLike, resamples: int) -> _Side:
    if scores.fixed and scores.seeds != 1:
        raise ValueError(f"a fixed (deterministic) model has one set of outputs, got {scores.seeds} seeds")
    return _Side(scores.per_seed, item_replicates(scores, seed, resamples), scores.fixed)


def _unmeasured(*sides: _Side) -> str:
    if any(not s.fixed and s.seeds == 1 for s in sides):
        return "a trained row with one seed: its run-to-run variance is not measured"
    return ""


def _variance(sides: tuple[_Side, ...], signs: tuple[int, ...], items: int) -> tuple[float, Variance]:
    """The estimate sum(sign x seed mean) and its variance parts, on the item draws every side has a value on."""
    keep = np.all([np.isfinite(s.replicates).all(0) for s in sides], axis=0)
    draws = sum(sign * s.replicates[:, keep].mean(0) for s, sign in zip(sides, signs))
    item = float(np.var(draws, ddof=1)) if keep.sum() > 1 else float("nan")
    trained = [s for s in sides if not s.fixed and s.seeds > 1]
    runs = tuple((s.run_part(keep), s.seeds) for s in trained)
    shares = tuple(max(s.interaction(keep), 0.0) for s in trained)
    estimate = sum(sign * float(s.per_seed.mean()) for s, sign in zip(sides, signs))
    return estimate, Variance(item, items, runs, shares)


def score_interval(scores: ItemScores, seed: SeedLike = 0, resamples: int = 2000, confidence: float = 0.95) -> Estimate:
    """A row's metric on all items (mean over its seeds) with its t interval from the item part and (with two seeds
    or more) the run part, kept within the metric's bounds; a trained row with one seed gets the item part alone."""
    side = _side(scores, seed, resamples)
    value, variance = _variance((side,), (1,), scores.items)
    se = float(np.sqrt(variance.total))
    half = t_quantile((1 + confidence) / 2, variance.df) * se
    low, high = max(value - half, scores.statistic.bounds[0]), min(value + half, scores.statistic.bounds[1])
    return Estimate(value, low, high, se, scores.items, scores.seeds, confidence, variance.df)


def _check_paired(a: ItemScores, b: ItemScores) -> None:
    if a.items != b.items or a.metric != b.metric:
        raise ValueError(
            f"paired comparison needs the same items and metric: {a.metric} on {a.items} items vs "
            f"{b.metric} on {b.items} items"
        )


def paired_comparison(
    a: ItemScores,
    b: ItemScores,
    seed: SeedLike = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    power: float = 0.8,
) -> Comparison:
    """Model ``a`` against baseline ``b`` on the same items, by the t test of the module's text; ``detectable`` at
    alpha = 1 - ``confidence`` and ``power``. Outputs equal on every item and seed are reported as identical, not
    tested."""
    _check_paired(a, b)
    seeds = (a.seeds, b.seeds)
    if a.outputs.shape == b.outputs.shape and np.array_equal(a.outputs, b.outputs) and a.fixed == b.fixed:
        nan = float("nan")
        return Comparison(
            Difference(0.0, nan, nan, a.items, confidence),
            nan,
            0.0,
            nan,
            nan,
            Variance(0.0, a.items),
            seeds,
            resamples,
            "the same outputs on every item",
            identical=True,
        )
    sides = (_side(a, seed, resamples), _side(b, seed, resamples))
    estimate, variance = _variance(sides, (1, -1), a.items)
    reason = _unmeasured(*sides) or ("" if np.isfinite(estimate) and np.isfinite(variance.item) else "no metric")
    nan = float("nan")
    if reason:
        return Comparison(
            Difference(estimate, nan, nan, a.items, confidence), nan, nan, nan, nan, variance, seeds, resamples, reason
        )
    se, df = float(np.sqrt(variance.total)), variance.df
    if se == 0:
        p = 1.0 if estimate == 0 else 0.0
        low = high = estimate
    else:
        p = float(2 * stats.t.sf(abs(estimate) / se, df))
        half = t_quantile((1 + confidence) / 2, df) * se
        low, high = estimate - half, estimate + half
    return Comparison(
        Difference(float(estimate), low, high, a.items, confidence),
        p,
        se,
        df,
        detectable(variance, 1 - confidence, power),
        variance,
        seeds,
        resamples,
    )


def cluster_contributions(a: ItemScores, b: ItemScores) -> np.ndarray:
    """Each cluster's contribution to a - b (the metric's seed means; the items' ``clusters``, a k-fold task's
    folds): c_c = (D - D_c) / 2, D_c the difference after exchanging the two sides' outputs on cluster c's items, seed
    by seed (a fixed side's one set of outputs stands for every seed of the other): how much of the difference rests
    on that fold's models. For a mean of per-item scores, c_c is the difference on cluster c's items times its share
    of them, and the c_c add up to D. A description of how evenly the difference is spread over the folds, not a
    test (the module's text). ValueError without clusters, or for two trained sides of unequal seeds."""
    if a.clusters is None or not same_clusters(a, b):
        raise ValueError("cluster_contributions: both sides need the same items' clusters")
    if not (a.fixed or b.fixed) and a.seeds != b.seeds:
        raise ValueError(f"clustered items: two trained rows of {a.seeds} and {b.seeds} seeds cannot be paired by fold")
    seeds = max(a.seeds, b.seeds)
    x, y = (np.broadcast_to(s.outputs, (seeds, s.items)) for s in (a, b))
    every = np.arange(a.items)[None]

    def difference(xs: np.ndarray, ys: np.ndarray) -> float:
        return float(np.mean(a.statistic(xs, every)[:, 0]) - np.mean(b.statistic(ys, every)[:, 0]))

    whole = difference(x, y)
    swapped = (a.clusters == c for c in np.unique(a.clusters))
    return np.array([(whole - difference(np.where(m, y, x), np.where(m, x, y))) / 2 for m in swapped])
