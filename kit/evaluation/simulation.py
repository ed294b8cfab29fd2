"""Simulated studies for testing the tests: how often a comparison procedure says "significant" when two methods are
equally good (its false rate under the null) and when one is better (its power), at a study's seeds and items.

A simulated task has n items with gold scores g ~ U(0, 4) (z: g standardised). Every training run s of a method m gives
each item an output

    $$x_{m,s,i} = q_{m,s} z_i + c_i + u_{m,i} + w_{m,s,i}$$

where q_{m,s} ~ N(q_m, sd_run) is the run's overall quality (a good or bad seed), c_i ~ N(0, sd_shared) is what makes an
item hard for every method (the pairing removes it), u_{m,i} ~ N(0, sd_method) is how the method's errors fall on this
item set (item sampling: another item set would favour the other method), and w_{m,s,i} ~ N(0, sd_item) is the run's own
item-by-item noise. The metric is Spearman's rho of x against g (an STS task), or average precision of x for the label g
>= 2.5 (pair classification). For a metric that is a mean of per-item scores (``mean``: per-query nDCG@10, per-question
ROUGE-L) the quality raises every item alike: z_i is replaced by 1 and each item's score is Phi(x - ``SHIFT``) in (0,
1), a probit of how well the item is served (about 0.3 under the null, as the raw starts' and MiniLM's retrieval scores
and the summarizers' ROUGE-L are); as a run's metric averages Phi over its quality draw, a deterministic model of
quality q is given SHIFT + (q - SHIFT) sqrt(v / (v + sd_run^2)), v = 1 + sd_shared^2 + sd_method^2 + sd_item^2, whose
metric is a run's expected metric, so that the control's null is a null. Under the null both methods have q_m =
``QUALITY``; the alternative adds ``effect``
to the first method's. ``NOISES`` names three regimes: runs that differ only item by item, runs that differ only in
overall quality (what the issue measured: one run's Spearman differs from another's by 11-15 points x100, as the demo's
seeds do), and both.

``multi_bootstrap`` is the procedure the kit used before ``kit.evaluation.inference``, kept here as the reference:
the percentile bootstrap that draws items and each method's seeds with replacement (Sellam et al. 2022).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from kit.evaluation.bootstrap import AveragePrecision, ItemScores, Mean, Spearman
from kit.evaluation.inference import paired_comparison

QUALITY = 0.45
"""Every method's mean signal weight under the null."""
POSITIVE_AT = 2.5
"""Average precision's label: gold score at least this."""
SHIFT = 1.2
"""An item's score under ``mean`` is Phi(x - SHIFT) (the module's text)."""
STATISTICS = {
    "spearman": lambda gold: Spearman(gold),
    "average_precision": lambda gold: AveragePrecision(gold >= POSITIVE_AT),
    "mean": lambda gold: Mean(),
}
"""Each simulated metric's statistic, from the items' gold scores."""


@dataclass(frozen=True)
class Noise:
    """The standard deviations of the simulated outputs (the module's formula)."""

    run: float
    item: float
    method: float = 0.6
    shared: float = 0.5


NOISES = {
    "item": Noise(run=0.0, item=0.8),
    "run": Noise(run=0.2, item=0.0),
    "mixed": Noise(run=0.2, item=0.8),
}


def _task(rng: np.random.Generator, noise: Noise, items: int, metric: str) -> Callable[..., ItemScores]:
    """One simulated task (gold, its statistic, what every method finds hard); returns ``method(quality, seeds,
    fixed=False)``, the outputs of ``seeds`` training runs of a method (the module's formula), or of one
    deterministic model (``fixed``: one output, no run-to-run quality draw)."""
    gold = rng.uniform(0, 4, items)
    z = np.ones(items) if metric == "mean" else (gold - gold.mean()) / gold.std()
    statistic = STATISTICS[metric](gold)
    shared = rng.normal(0, noise.shared, items)

    def method(quality: float, seeds: int, fixed: bool = False) -> ItemScores:
        if fixed and metric == "mean":  # the quality whose expected metric a run of ``quality`` has (the module's text)
            spread = 1 + noise.shared**2 + noise.method**2 + noise.item**2
            quality = SHIFT + (quality - SHIFT) * np.sqrt(spread / (spread + noise.run**2))
        q = quality + (0.0 if fixed else rng.normal(0, noise.run, (seeds, 1)))
        x = q * z + shared + rng.normal(0, noise.method, items) + rng.normal(0, noise.item, (seeds, items))
        return ItemScores(metric, stats.norm.cdf(x - SHIFT) if metric == "mean" else x, statistic, fixed=fixed)

    return method


def simulated_pair(
    rng: np.random.Generator, noise: Noise, seeds: int, items: int, metric: str, effect: float = 0.0
) -> tuple[ItemScores, ItemScores]:
    """Two methods' outputs on one simulated task, ``seeds`` training runs each; the first is ``effect`` better."""
    method = _task(rng, noise, items, metric)
    return method(QUALITY + effect, seeds), method(QUALITY, seeds)


def control_pair(
    rng: np.random.Generator,
    noise: Noise,
    seeds: int,
    items: int,
    metric: str,
    effect: float = 0.0,
    candidates: int = 6,
) -> tuple[ItemScores, ItemScores]:
    """The positive control's design (``kit.study.StudyBase.training_free_control``): a trained method (``seeds``
    runs, ``effect`` better) against the best, on these very items, of ``candidates`` deterministic training-free
    embeddings of quality ``QUALITY`` (one output each). Independent candidates are the worst case of that choice:
    the real ones share their start, so they differ less and the choice favours the baseline less."""
    method = _task(rng, noise, items, metric)
    trained = method(QUALITY + effect, seeds)
    pool = [method(QUALITY, 1, fixed=True) for _ in range(candidates)]
    return trained, max(pool, key=lambda x: x.value)


def cross_fitted_pair(
    rng: np.random.Generator,
    noise: Noise,
    seeds: int,
    items: int,
    metric: str,
    effect: float = 0.0,
    folds: int = 5,
    fold_sd: float = 0.0,
) -> tuple[ItemScores, ItemScores]:
    """Study 2's control on its held-out task (``kit.studies.augmented_sbert.held_out``): two trained methods (the
    first ``effect`` better) on items split once into ``folds`` folds, the same for every seed and both methods. Each
    (method m, seed s, fold f) is a model of its own, quality q_{m,s,f} ~ N(q_m + e_{m,f}, sd_run) and item noise of its
    own, that scores every item; a seed's output on item i is fold f(i)'s model's rank of it among its scores of all
    items, / n. e_{m,f} ~ N(0, ``fold_sd``) is how much fold f's training data suits method m, shared by every seed:
    the fixed folds' part, which neither the item draws nor the seeds' spread samples (0: none)."""
    gold = rng.uniform(0, 4, items)
    z = (gold - gold.mean()) / gold.std()
    statistic = STATISTICS[metric](gold)
    shared = rng.normal(0, noise.shared, items)
    fold_of = rng.permutation(np.arange(items) % folds)

    def method(quality: float) -> ItemScores:
        errors = rng.normal(0, noise.method, items)
        suits = rng.normal(0, fold_sd, folds)
        pooled = np.empty((seeds, items))
        for s, f in itertools.product(range(seeds), range(folds)):
            q = quality + suits[f] + rng.normal(0, noise.run)
            x = q * z + shared + errors + rng.normal(0, noise.item, items)
            held = fold_of == f
            pooled[s, held] = (stats.rankdata(x) / items)[held]
        return ItemScores(metric, pooled, statistic)

    return method(QUALITY + effect), method(QUALITY)


Test = Callable[[ItemScores, ItemScores, int], float]
"""A procedure under test: (a, b, seed) -> the two-sided p-value of a - b (nan: not tested)."""

Design = Callable[..., tuple[ItemScores, ItemScores]]
"""A simulated comparison: (rng, noise, seeds, items, metric, effect) -> the two sides (``simulated_pair``,
``control_pair``, ``cross_fitted_pair``)."""


def calibrated(resamples: int) -> Test:
    """``kit.evaluation.inference.paired_comparison`` with ``resamples`` item draws."""
    return lambda a, b, seed: paired_comparison(a, b, seed, resamples).p_value


def multi_bootstrap(resamples: int) -> Test:
    """The reference: percentile bootstrap over items and each method's seeds drawn with replacement, p twice the
    smaller share of replicates on either side of zero (the kit's ``paired_bootstrap`` until this module)."""

    def test(a: ItemScores, b: ItemScores, seed: int) -> float:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, a.items, (resamples, a.items))
        picks = [rng.integers(0, x.seeds, (resamples, x.seeds)) for x in (a, b)]
        if a.seeds == b.seeds:  # paired seed by seed, as runs with one seed share their data order
            picks[1] = picks[0]
        per_draw = [x.statistic(x.outputs, draws) for x in (a, b)]  # [seeds, resamples]
        columns = np.arange(resamples)[:, None]
        d = per_draw[0][picks[0], columns].mean(1) - per_draw[1][picks[1], columns].mean(1)
        d = d[np.isfinite(d)]
        return float(min(1.0, 2 * min(np.sum(d <= 0), np.sum(d >= 0)) / len(d)))

    return test


@dataclass(frozen=True)
class Cell:
    """The share of ``runs`` simulated comparisons with p < alpha (``rate``; with ``rejection_rates``' ``upper``, only
    those with the first side ahead), its Monte-Carlo error (``error``; ``behind_error`` for ``behind``), the mean
    observed difference of the metric x100 between the methods over the simulated pairs (``difference``)."""

    rate: float
    runs: int
    difference: float
    behind: float = float("nan")
    """With ``rejection_rates``' ``fail_alpha``: the share with p < fail_alpha and the first side behind (a positive
    control's fail)."""

    @property
    def error(self) -> float:
        """The Monte-Carlo standard error of ``rate``: sqrt(rate (1 - rate) / runs)."""
        return float(np.sqrt(max(self.rate * (1 - self.rate), 1e-12) / self.runs))

    @property
    def behind_error(self) -> float:
        """The Monte-Carlo standard error of ``behind``."""
        return float(np.sqrt(max(self.behind * (1 - self.behind), 1e-12) / self.runs))


def rejection_rates(
    tests: dict[str, Test],
    noise: Noise,
    seeds: int,
    items: int,
    metric: str,
    runs: int,
    effect: float = 0.0,
    alpha: float = 0.05,
    seed: int = 0,
    design: Design = simulated_pair,
    upper: bool = False,
    fail_alpha: float | None = None,
) -> dict[str, Cell]:
    """How often each of ``tests`` rejects at ``alpha`` over the same ``runs`` simulated pairs of ``design`` (each its
    own task and training runs); ``upper``: only rejections where the first side came out ahead count (a positive
    control's pass); ``fail_alpha``: a cell's ``behind`` also counts p < fail_alpha with the first side behind (a
    control's fail). A cell's ``difference`` is the mean observed difference x100, the effect in the metric's
    units."""
    rng = np.random.default_rng([seed, seeds, items, int(effect * 1000) & 0xFFFFFFFF, len(metric)])
    p_values: dict[str, list[float]] = {name: [] for name in tests}
    differences = []
    for k in range(runs):
        a, b = design(rng, noise, seeds, items, metric, effect)
        differences.append(100 * (a.value - b.value))
        for name, test in tests.items():
            p_values[name].append(test(a, b, k))
    out = {}
    ahead = np.array(differences) > 0
    for name, ps in p_values.items():
        ps = np.asarray(ps, dtype=float)
        tested = ps == ps
        rejected = (ps < alpha) & (ahead if upper else True)
        rate = float(np.mean(rejected[tested])) if tested.any() else float("nan")
        fails = (ps < fail_alpha) & ~ahead if fail_alpha is not None and tested.any() else None
        behind = float(np.mean(fails[tested])) if fails is not None else float("nan")
        out[name] = Cell(rate, int(tested.sum()), float(np.mean(differences)), behind)
    return out
