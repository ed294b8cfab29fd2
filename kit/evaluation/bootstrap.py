"""Uncertainty of evaluation scores: bootstrap intervals over a task's items (and seeds), paired
differences between two models with their p-value, and the smallest difference a design can detect.

A model's output on one metric of a task is an ``ItemScores``: item-level outputs ``[seeds, items]`` and
the ``Statistic`` that turns the outputs of a draw of items into the metric. An additive metric (a mean of
per-query nDCG@10, MRR or recall@1, per-question ROUGE) is a ``Mean``; a metric of the whole item set is
recomputed on every draw: ``Spearman`` (STS: rank correlation of cosine and gold score),
``AveragePrecision`` (pair classification) and ``F1`` (probes). For Spearman and AP the item outputs are the
model's cosines as ranks within its own items, scaled to (0, 1]: both metrics depend on the order of the
cosines only, so the ranks give the same values as the cosines and put two models on one scale.

- ``bootstrap_interval``: one model, the percentile bootstrap interval (Efron and Tibshirani 1993): draw
  the task's items with replacement (and, with several seeds, the seeds with replacement), recompute the
  metric, take the (1 - confidence)/2 and (1 + confidence)/2 quantiles of ``resamples`` replicates.
- ``paired_bootstrap``: model a against a baseline b on the same items: every replicate draws the items
  once and scores both models on that draw (and draws each model's seeds), so the interval is that of the
  paired difference metric(a) - metric(b). Its p-value comes from the same replicates (``bootstrap_p``: the
  smallest level at which the percentile interval excludes zero), so that "the interval excludes zero" and
  "p < 1 - confidence" are one statement, and both see how much the seeds disagree (a sign-flip permutation
  test of the seed-averaged outputs does not, and calls differences significant whose interval reaches
  zero); with it the smallest detectable difference. The replicates are
  kept, so that a family of comparisons can widen each interval to its simultaneous level
  (``kit.evaluation.families``).
- ``detectable_difference``: (z_{1-alpha/2} + z_{power}) * SE = 2.80 SE at alpha 0.05 and 80% power.

Quantiles are taken of the replicates' empirical distribution without interpolation ("inverted CDF", low
end; the mirror image at the high end), which makes the agreement of interval and p-value exact.
Everything is seeded: one seed (an int, or a sequence of ints such as (seed, task)) gives the same draws,
so the same outputs give the same intervals. The item draws depend only on the seed and the number of
items, so every model of a task is resampled with the same draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy import stats

SeedLike = int | Sequence[int]
_DRAW_ELEMENTS = 2_000_000  # items drawn per chunk of replicates (the chunks depend only on the number of items)


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
        """``f"{d:.1f}"`` -> ``+16.3 [+12.3, +20.2]``."""
        spec = spec or ".2f"
        return f"{self.estimate:+{spec}} [{self.low:+{spec}}, {self.high:+{spec}}]".replace("-", "−")


class Statistic(Protocol):
    """A metric over a draw of items: ``outputs`` [S, n] (S seeds), ``draws`` [B, m] item indices ->
    the metric of each seed on each draw, [S, B]; ``subset(idx)`` the same metric on the items ``idx`` alone."""

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray: ...

    def subset(self, idx: np.ndarray) -> Statistic: ...


@dataclass(frozen=True, eq=False)
class Mean:
    """The mean of additive per-item scores: metric = (1/m) sum_{i in draw} x_i."""

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return outputs[:, draws].mean(-1)

    def subset(self, idx: np.ndarray) -> Mean:
        return self


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    y = y - y.mean(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(-1) / np.sqrt((x * x).sum(-1) * (y * y).sum(-1))


@dataclass(frozen=True, eq=False)
class Spearman:
    """Spearman's rho of the outputs against ``gold`` on each draw: Pearson's r of the two sides' ranks
    (ties get their average rank, as in scipy.stats.spearmanr), rho = cov(R(x), R(g)) / (sd R(x) sd R(g)).
    A draw on which one side is constant has no correlation (nan)."""

    gold: np.ndarray

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        x = stats.rankdata(outputs[:, draws], axis=-1)
        g = stats.rankdata(self.gold[draws], axis=-1)
        return _rowwise_pearson(x, g[None])

    def subset(self, idx: np.ndarray) -> Spearman:
        return Spearman(self.gold[idx])


@dataclass(frozen=True, eq=False)
class AveragePrecision:
    """Average precision of the outputs as scores for the binary ``labels`` on each draw, as scikit-learn's
    ``average_precision_score`` defines it: AP = sum_k (R_k - R_{k-1}) P_k over the distinct score thresholds
    taken from the highest, where tied scores form one threshold. Equivalently, with P positives and each
    positive i credited the precision at the end of its tie group g(i):
    AP = (1/P) sum_{positive i} TP(g(i)) / N(g(i)), N(g) the items scored at least g's score and TP(g) the
    positives among them. Computed for all draws at once (scikit-learn's function takes one ranking per
    call, which made the bootstrap of a 2,000-pair task take seconds); the tests check the two agree. A
    draw without positives has no AP (nan)."""

    labels: np.ndarray

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        y = self.labels[draws].astype(np.float64)  # [B, m]
        out = np.empty((len(outputs), len(draws)))
        position = np.arange(draws.shape[1])
        for s, scores in enumerate(outputs):
            x = scores[draws]
            order = np.argsort(-x, axis=1, kind="stable")
            xs, ys = np.take_along_axis(x, order, 1), np.take_along_axis(y, order, 1)
            true_positives = np.cumsum(ys, axis=1)
            ends = np.append(xs[:, 1:] != xs[:, :-1], np.ones((len(xs), 1), dtype=bool), axis=1)
            end = np.where(ends, position, draws.shape[1])  # each item's tie group ends at its first end to the right
            end = np.minimum.accumulate(end[:, ::-1], axis=1)[:, ::-1]
            precision = np.take_along_axis(true_positives, end, 1) / (end + 1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s] = (ys * precision).sum(1) / ys.sum(1)
        return out

    def subset(self, idx: np.ndarray) -> AveragePrecision:
        return AveragePrecision(self.labels[idx])


@dataclass(frozen=True, eq=False)
class F1:
    """F1 of the outputs as predicted classes (indices into the classes) against the ``gold`` class of each item
    on each draw, as scikit-learn's ``f1_score`` defines it. Per class k, F1_k = 2 TP_k / (2 TP_k + FP_k + FN_k),
    0 when the class is neither predicted nor true on the draw; ``average`` "binary" takes F1 of ``positive``,
    "weighted" the mean of F1_k weighted by the true counts, "macro" the plain mean over the classes that are
    predicted or true on the draw. Counted for all draws at once with one ``bincount`` per seed."""

    gold: np.ndarray
    classes: int
    average: str = "weighted"
    positive: int = 1

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        k, b = self.classes, len(draws)
        rows = np.arange(b)[:, None] * k
        gold = self.gold.astype(np.int64)[draws]
        true = np.bincount((rows + gold).ravel(), minlength=b * k).reshape(b, k)
        out = np.empty((len(outputs), b))
        for s, predicted in enumerate(outputs.astype(np.int64)):
            predicted = predicted[draws]
            pred = np.bincount((rows + predicted).ravel(), minlength=b * k).reshape(b, k)
            hits = np.bincount((rows + predicted).ravel(), (predicted == gold).ravel(), minlength=b * k).reshape(b, k)
            with np.errstate(invalid="ignore", divide="ignore"):
                f1 = np.where(true + pred > 0, 2 * hits / (true + pred), 0.0)
            if self.average == "binary":
                out[s] = f1[:, self.positive]
            elif self.average == "weighted":
                out[s] = (f1 * true).sum(1) / true.sum(1)
            else:
                present = (true + pred) > 0
                out[s] = (f1 * present).sum(1) / present.sum(1)
        return out

    def subset(self, idx: np.ndarray) -> F1:
        return F1(self.gold[idx], self.classes, self.average, self.positive)


@dataclass(frozen=True, eq=False)
class ItemScores:
    """One model's outputs for one metric of one task: ``outputs`` [seeds, items] and the ``statistic``
    that makes the metric of them. Two ItemScores are compared item by item: same items, same order."""

    metric: str
    outputs: np.ndarray
    statistic: Statistic

    def __post_init__(self):
        outputs = np.asarray(self.outputs, dtype=np.float64)
        object.__setattr__(self, "outputs", outputs[None] if outputs.ndim == 1 else outputs)

    @property
    def items(self) -> int:
        return self.outputs.shape[1]

    @property
    def seeds(self) -> int:
        return self.outputs.shape[0]

    @property
    def per_seed(self) -> np.ndarray:
        """The metric of each seed on all items."""
        return self.statistic(self.outputs, np.arange(self.items)[None])[:, 0]

    @property
    def value(self) -> float:
        """The metric on all items, averaged over seeds."""
        return float(self.per_seed.mean())

    def subset(self, idx: np.ndarray) -> ItemScores:
        """The same model's outputs on the items ``idx`` alone (items shared with other data left out)."""
        return ItemScores(self.metric, self.outputs[:, idx], self.statistic.subset(idx))

    @classmethod
    def stack(cls, runs: Sequence[ItemScores]) -> ItemScores:
        """Several seeds' scores of one model (one ItemScores each, same items) as one."""
        first = runs[0]
        if any(r.metric != first.metric or r.items != first.items for r in runs):
            raise ValueError("stack: every seed must score the same metric on the same items")
        return cls(first.metric, np.concatenate([r.outputs for r in runs]), first.statistic)


@dataclass(frozen=True)
class Estimate:
    """A model's score ``value`` on a task with its percentile bootstrap interval [``low``, ``high``]
    over ``items`` items and ``seeds`` seeds; ``se`` is the standard deviation of the replicates."""

    value: float
    low: float
    high: float
    se: float
    items: int
    seeds: int = 1
    confidence: float = 0.95
    resamples: int = 2000

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in other units (x100 for tables)."""
        return Estimate(
            self.value * factor,
            self.low * factor,
            self.high * factor,
            self.se * factor,
            self.items,
            self.seeds,
            self.confidence,
            self.resamples,
        )

    def __format__(self, spec: str) -> str:
        """``f"{e:.1f}"`` -> ``81.3 [74.2, 86.6]``."""
        spec = spec or ".3f"
        return f"{self.value:{spec}} [{self.low:{spec}}, {self.high:{spec}}]".replace("-", "−")


@dataclass(frozen=True)
class Comparison:
    """Model a minus its baseline b on the same items: the paired bootstrap ``difference`` (its ``n`` is the
    number of items), its ``p_value`` from the same replicates (``bootstrap_p``), the bootstrap standard
    error ``se`` of the difference and ``detectable``, the smallest true difference this design detects with
    80% power at alpha 0.05 (``detectable_difference(se)`` = 2.80 se). ``replicates`` are the bootstrap
    differences themselves, for intervals at other levels (``interval``)."""

    difference: Difference
    p_value: float
    se: float
    detectable: float
    seeds: tuple[int, int] = (1, 1)
    resamples: int = 2000
    replicates: np.ndarray = field(default=None, repr=False, compare=False)

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
    def excludes_zero(self) -> bool:
        return self.difference.excludes_zero

    def interval(self, confidence: float) -> tuple[float, float]:
        """The percentile interval of the difference at another level (a simultaneous one, say)."""
        return percentile_interval(self.replicates, confidence)

    def scaled(self, factor: float) -> Comparison:
        d = self.difference
        return Comparison(
            Difference(d.estimate * factor, d.low * factor, d.high * factor, d.n, d.confidence),
            self.p_value,
            self.se * factor,
            self.detectable * factor,
            self.seeds,
            self.resamples,
            None if self.replicates is None else self.replicates * factor,
        )

    def __format__(self, spec: str) -> str:
        """``f"{c:.1f}"`` -> ``+2.1 [+0.4, +3.9], p = 0.016``."""
        p = format_p(self.p_value, self.resamples)
        return f"{self.difference:{spec}}, p {p if p.startswith('<') else '= ' + p}"


def format_p(p: float, resamples: int | None = None) -> str:
    """``0.016``; below the smallest value ``resamples`` replicates can show, 2 / resamples, ``< 0.001``."""
    if resamples and p < 2.0 / resamples:
        return f"< {2.0 / resamples:.1g}"
    return f"{p:.2g}" if p < 0.1 else f"{p:.2f}"


def detectable_difference(se: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided test at level ``alpha`` detects with probability ``power``
    when the difference is estimated with standard error ``se`` (normal approximation):
    (z_{1-alpha/2} + z_{power}) * se, i.e. (1.960 + 0.842) * se = 2.80 se at alpha 0.05 and 80% power."""
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * se)


def _generators(seed: SeedLike) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent streams for the item draws and the seed draws."""
    items, seeds = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(items), np.random.default_rng(seeds)


def _item_draws(rng: np.random.Generator, n: int, resamples: int):
    """Item draws [chunk, n] (with replacement) in chunks whose size depends only on n."""
    chunk = max(1, _DRAW_ELEMENTS // n)
    for start in range(0, resamples, chunk):
        yield rng.integers(0, n, size=(min(chunk, resamples - start), n))


def _seed_draws(rng: np.random.Generator, seeds: int, resamples: int) -> np.ndarray:
    """Seeds drawn with replacement for every replicate, [resamples, seeds] (a single seed is always itself)."""
    return rng.integers(0, seeds, size=(resamples, seeds)) if seeds > 1 else np.zeros((resamples, 1), dtype=int)


def _over_seeds(per_seed: np.ndarray, seed_draw: np.ndarray) -> np.ndarray:
    """per_seed [S, b] and the drawn seeds [b, S] -> the mean over the drawn seeds of each replicate, [b]."""
    return per_seed[seed_draw, np.arange(per_seed.shape[1])[:, None]].mean(1)


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of the (non-nan) replicates without interpolation: the low end is the smallest
    replicate with at least a (1 - confidence)/2 share of the replicates at or below it, the high end its
    mirror image, so that the interval excludes zero exactly when ``bootstrap_p`` < 1 - confidence."""
    x = np.sort(np.asarray(replicates, dtype=np.float64)[~np.isnan(replicates)])
    if not len(x):
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    k = max(0, min(len(x) - 1, int(np.ceil(tail * len(x) - 1e-9)) - 1))
    return float(x[k]), float(x[len(x) - 1 - k])


def bootstrap_p(replicates: np.ndarray) -> float:
    """Two-sided p-value of "the difference is zero" from the paired bootstrap's replicates: twice the smaller
    share of replicates on either side of zero (zero counted on both), p = 2 min(#{d* <= 0}, #{d* >= 0}) / B,
    at most 1: the smallest 1 - confidence at which ``percentile_interval`` excludes zero. It follows the
    interval's resampling of items and seeds, so the two never disagree."""
    x = np.asarray(replicates, dtype=np.float64)
    x = x[~np.isnan(x)]
    if not len(x):
        return float("nan")
    return float(min(1.0, 2.0 * min(np.sum(x <= 0), np.sum(x >= 0)) / len(x)))


def bootstrap_interval(
    scores: ItemScores, seed: SeedLike = 0, resamples: int = 2000, confidence: float = 0.95
) -> Estimate:
    """The metric on all items (mean over seeds) with its percentile bootstrap interval: each replicate
    draws the items with replacement (and the seeds with replacement) and recomputes the metric."""
    items_rng, seeds_rng = _generators(seed)
    seed_draw = _seed_draws(seeds_rng, scores.seeds, resamples)
    replicates = np.concatenate(
        [
            _over_seeds(scores.statistic(scores.outputs, draws), seed_draw[start : start + len(draws)])
            for start, draws in _chunks(_item_draws(items_rng, scores.items, resamples))
        ]
    )
    low, high = percentile_interval(replicates, confidence)
    se = float(np.nanstd(replicates, ddof=1))
    return Estimate(scores.value, low, high, se, scores.items, scores.seeds, confidence, resamples)


def _chunks(draws):
    start = 0
    for d in draws:
        yield start, d
        start += len(d)


def _check_paired(a: ItemScores, b: ItemScores) -> None:
    if a.items != b.items or a.metric != b.metric:
        raise ValueError(
            f"paired comparison needs the same items and metric: {a.metric} on {a.items} items vs "
            f"{b.metric} on {b.items} items"
        )


def paired_bootstrap(
    a: ItemScores,
    b: ItemScores,
    seed: SeedLike = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Comparison:
    """Model ``a`` against baseline ``b`` on the same items: estimate metric(a) - metric(b) (each the mean
    over its seeds), its percentile interval from replicates that draw the items once for both models
    (with replacement) and the seeds of each model with replacement (paired by position when both have
    the same number of seeds > 1, as runs with the same seed share their data order; a single-seed model,
    such as an untrained one, is itself in every replicate), its p-value from the same replicates
    (``bootstrap_p``) and the smallest detectable difference (``detectable_difference`` of the replicates'
    standard deviation)."""
    _check_paired(a, b)
    items_rng, seeds_rng = _generators(seed)
    seed_a = _seed_draws(seeds_rng, a.seeds, resamples)
    seed_b = seed_a if a.seeds == b.seeds else _seed_draws(seeds_rng, b.seeds, resamples)
    parts = []
    for start, draws in _chunks(_item_draws(items_rng, a.items, resamples)):
        stop = start + len(draws)
        parts.append(
            _over_seeds(a.statistic(a.outputs, draws), seed_a[start:stop])
            - _over_seeds(b.statistic(b.outputs, draws), seed_b[start:stop])
        )
    replicates = np.concatenate(parts)
    low, high = percentile_interval(replicates, confidence)
    se = float(np.nanstd(replicates, ddof=1))
    estimate = a.value - b.value
    difference = Difference(float(estimate), low, high, a.items, confidence)
    p = bootstrap_p(replicates)
    detectable = detectable_difference(se, alpha, power)
    return Comparison(difference, p, se, detectable, (a.seeds, b.seeds), resamples, replicates)
