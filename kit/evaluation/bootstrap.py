"""Item-level outputs and the item bootstrap: what every interval and test of ``kit.evaluation.inference`` is
computed from.

A model's output on one metric of a task is an ``ItemScores``: item-level outputs ``[seeds, items]`` and
the ``Statistic`` that turns the outputs of a draw of items into the metric. An additive metric (a mean of
per-query nDCG@10, MRR or recall@1, per-question ROUGE) is a ``Mean``; a metric of the whole item set is
recomputed on every draw: ``Spearman`` (STS: rank correlation of cosine and gold score),
``AveragePrecision`` (pair classification) and ``F1`` (probes). For Spearman and AP the item outputs are the
model's cosines as ranks within its own items, scaled to (0, 1]: both metrics depend on the order of the
cosines only, so the ranks give the same values as the cosines and put two models on one scale.

``item_replicates`` draws the task's items with replacement (Efron and Tibshirani 1993) and recomputes each
seed's metric on every draw; the draws depend only on the seed and the number of items, so every model of a
task is resampled with the same draws. Items that are not independent, because one model scored a group of them
together (k-fold predictions: each fold's items are scored by the model that held them out, study 2's
``biosses-cv``), carry their ``clusters``: the draws still take single items (what that leaves out,
``kit.evaluation.inference``), and a report shows how evenly a difference is spread over the folds.
One seed (an int, or a sequence of ints such as (seed, task)) gives the same draws, so the same outputs give the
same intervals. ``statistic_record`` / ``statistic_from`` store a statistic as plain values beside saved outputs,
so that a report's verdicts can be computed again from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

SeedLike = int | Sequence[int]
_DRAW_ELEMENTS = 2_000_000  # items drawn per chunk of replicates (the chunks depend only on the number of items)


class Statistic(Protocol):
    """A metric over a draw of items: ``outputs`` [S, n] (S seeds), ``draws`` [B, m] item indices ->
    the metric of each seed on each draw, [S, B]; ``subset(idx)`` the same metric on the items ``idx`` alone;
    ``bounds``: the values the metric can take (a score's interval is kept within them)."""

    bounds: tuple[float, float]

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray: ...

    def subset(self, idx: np.ndarray) -> Statistic: ...


@dataclass(frozen=True, eq=False)
class Mean:
    """The mean of additive per-item scores: metric = (1/m) sum_{i in draw} x_i (each in [0, 1]: nDCG@10, MRR,
    recall@1, ROUGE F1)."""

    bounds = (0.0, 1.0)

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return outputs[:, draws].mean(-1)

    def subset(self, idx: np.ndarray) -> Mean:
        return self


def _draw_counts(draws: np.ndarray, items: int) -> np.ndarray:
    """How many times each draw [B, m] takes each of ``items`` items: [B, items] ints."""
    rows = np.arange(len(draws))[:, None] * items
    return np.bincount((rows + draws).ravel(), minlength=len(draws) * items).reshape(len(draws), items)


def _tie_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``values``' stable ascending order, the first sorted position of each group of equal values, and the group
    of each sorted position."""
    order = np.argsort(values, kind="stable")
    new = np.r_[True, values[order][1:] != values[order][:-1]]
    return order, np.flatnonzero(new), np.cumsum(new) - 1


def _average_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The rank of each of the items with ``values`` [n] within each draw of ``counts`` [B, n] as scipy's
    ``rankdata`` gives it (ties share their average rank): R = (taken below) + (taken equal + 1) / 2. [B, n]."""
    order, starts, group = _tie_groups(values)
    taken = np.add.reduceat(counts[:, order], starts, axis=1)
    average = np.cumsum(taken, axis=1) - (taken - 1) / 2
    ranks = np.empty(counts.shape)
    ranks[:, order] = average[:, group]
    return ranks


@dataclass(frozen=True, eq=False)
class Spearman:
    """Spearman's rho of the outputs against ``gold`` on each draw: Pearson's r of the two sides' ranks
    (ties get their average rank, as in scipy.stats.spearmanr), rho = cov(R(x), R(g)) / (sd R(x) sd R(g)).
    Computed from each draw's count of each item (one sort per seed, not one per draw); ranks are halves and
    the sums of their products exact in float64, so rho equals scipy's bit for bit. A draw on which one side
    is constant has no correlation (nan)."""

    gold: np.ndarray
    bounds = (-1.0, 1.0)

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        counts = _draw_counts(draws, outputs.shape[1])
        mean = (draws.shape[1] + 1) / 2  # every draw's ranks average to (m + 1) / 2
        g = _average_ranks(self.gold, counts) - mean
        out = np.empty((len(outputs), len(draws)))
        for s, scores in enumerate(outputs):
            x = _average_ranks(scores, counts) - mean
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s] = (counts * x * g).sum(1) / np.sqrt((counts * x * x).sum(1) * (counts * g * g).sum(1))
        return out

    def subset(self, idx: np.ndarray) -> Spearman:
        return Spearman(self.gold[idx])


@dataclass(frozen=True, eq=False)
class AveragePrecision:
    """Average precision of the outputs as scores for the binary ``labels`` on each draw, as scikit-learn's
    ``average_precision_score`` defines it: AP = sum_k (R_k - R_{k-1}) P_k over the distinct score thresholds
    taken from the highest, where tied scores form one threshold. Equivalently, over the tie groups g from the
    highest score, with P_g the positives a draw takes in g, N(g) the items it takes in g or above and TP(g)
    the positives among them: AP = sum_g P_g TP(g) / N(g) / sum_g P_g. Computed from each draw's count of each
    item, one sort per seed (scikit-learn's function takes one ranking per call, which made the bootstrap of a
    2,000-pair task take seconds); the tests check the two agree. A draw without positives has no AP (nan)."""

    labels: np.ndarray
    bounds = (0.0, 1.0)

    def __call__(self, outputs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        counts = _draw_counts(draws, outputs.shape[1])
        positives = counts * self.labels.astype(np.int64)
        out = np.empty((len(outputs), len(draws)))
        for s, scores in enumerate(outputs):
            order, starts, _ = _tie_groups(-scores)
            taken = np.cumsum(np.add.reduceat(counts[:, order], starts, axis=1), axis=1)
            hits = np.add.reduceat(positives[:, order], starts, axis=1)
            precision = np.divide(np.cumsum(hits, axis=1), taken, out=np.zeros(taken.shape), where=taken > 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s] = (hits * precision).sum(1) / hits.sum(1)
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
    bounds = (0.0, 1.0)

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
    that makes the metric of them. Two ItemScores are compared item by item: same items, same order. ``fixed``: the
    outputs of a deterministic model (one set: an untrained model, or a frozen model compared as an artefact), which
    has no run-to-run variance; otherwise each row of ``outputs`` is one training run (seed)."""

    metric: str
    outputs: np.ndarray
    statistic: Statistic
    fixed: bool = False
    clusters: np.ndarray | None = None
    """The cluster of each item (ints, [items]) when items are scored in groups by one model each (a k-fold row's
    folds; the module's text). None: independent items."""

    def __post_init__(self):
        outputs = np.asarray(self.outputs, dtype=np.float64)
        object.__setattr__(self, "outputs", outputs[None] if outputs.ndim == 1 else outputs)
        if self.clusters is not None:
            clusters = np.asarray(self.clusters)
            if clusters.shape != (self.items,) or clusters.dtype.kind not in "iu":
                raise ValueError(
                    f"clusters: one int per item ({self.items}), got {clusters.dtype} of shape {clusters.shape}"
                )
            if len(np.unique(clusters)) < 2:
                raise ValueError("clusters: at least 2 clusters, else nothing spreads over them")
            object.__setattr__(self, "clusters", clusters)

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
        clusters = None if self.clusters is None else self.clusters[idx]
        if clusters is not None and len(np.unique(clusters)) < 2:
            clusters = None  # the items kept fall in one cluster: nothing spreads over clusters
        return ItemScores(self.metric, self.outputs[:, idx], self.statistic.subset(idx), self.fixed, clusters)

    @classmethod
    def stack(cls, runs: Sequence[ItemScores]) -> ItemScores:
        """Several seeds' scores of one model (one ItemScores each, same items) as one."""
        first = runs[0]
        if any(r.metric != first.metric or r.items != first.items or not same_clusters(r, first) for r in runs):
            raise ValueError("stack: every seed must score the same metric on the same items in the same clusters")
        return cls(first.metric, np.concatenate([r.outputs for r in runs]), first.statistic, clusters=first.clusters)


def same_clusters(a: ItemScores, b: ItemScores) -> bool:
    """Whether ``a`` and ``b`` group their items alike (both independent, or the same clusters)."""
    if a.clusters is None or b.clusters is None:
        return a.clusters is None and b.clusters is None
    return np.array_equal(a.clusters, b.clusters)


def _item_draws(rng: np.random.Generator, n: int, resamples: int):
    """Item draws [chunk, n] (with replacement) in chunks whose size depends only on n."""
    chunk = max(1, _DRAW_ELEMENTS // n)
    for start in range(0, resamples, chunk):
        yield rng.integers(0, n, size=(min(chunk, resamples - start), n))


def item_replicates(scores: ItemScores, seed: SeedLike = 0, resamples: int = 2000) -> np.ndarray:
    """The metric of each seed on ``resamples`` draws of the items with replacement, [seeds, resamples]. The draws
    depend only on ``seed`` and the number of items, so every model of a task is scored on the same draws (the
    pairing of a paired comparison)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return np.concatenate(
        [scores.statistic(scores.outputs, draws) for draws in _item_draws(rng, scores.items, resamples)], axis=1
    )


STATISTICS: dict[str, type] = {"mean": Mean, "spearman": Spearman, "average_precision": AveragePrecision, "f1": F1}
"""Every statistic by name: ``statistic_record`` and ``statistic_from`` write and read one as plain values."""


def statistic_record(statistic: Statistic) -> dict:
    """A statistic as its name and fields (arrays as lists), to be stored beside saved outputs."""
    name = next(k for k, cls in STATISTICS.items() if type(statistic) is cls)
    return {
        "statistic": name,
        **{k: np.asarray(v).tolist() if isinstance(v, np.ndarray) else v for k, v in vars(statistic).items()},
    }


def statistic_from(record: dict) -> Statistic:
    """The statistic ``statistic_record`` wrote."""
    fields = {k: np.asarray(v) if isinstance(v, list) else v for k, v in record.items() if k != "statistic"}
    return STATISTICS[record["statistic"]](**fields)
