"""Evaluation metrics: STS Spearman, alignment and uniformity, nearest-neighbour retrieval,
paraphrase hit@1 and SentEval-style linear probes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from kit.data import STSPairs

POSITIVE_THRESHOLD = 4.0
"""Gold score at or above which a BIOSSES pair counts as a positive for alignment (0-4 scale)."""


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-12)


def spearman(predicted, gold) -> float:
    """Spearman rank correlation between predicted similarities and gold scores: the STS metric of every study."""
    return float(spearmanr(predicted, gold).statistic)


def cosine_spearman(e1: np.ndarray, e2: np.ndarray, gold: np.ndarray) -> float:
    """Spearman correlation between row-wise cosine(e1, e2) and the gold scores (as MTEB's STS)."""
    return spearman((_unit(e1) * _unit(e2)).sum(1), gold)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """Wang and Isola (2020): E ||f(x) - f(y)||^alpha over positive pairs, on L2-normalised embeddings."""
    return float((np.linalg.norm(_unit(x) - _unit(y), axis=1) ** alpha).mean())


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """Wang and Isola (2020): log E exp(-t ||f(x) - f(y)||^2) over distinct pairs, L2-normalised."""
    u = _unit(x).astype(np.float64)
    sq = np.clip(2.0 - 2.0 * (u @ u.T), 0.0, None)
    iu = np.triu_indices(len(u), k=1)
    return float(np.log(np.exp(-t * sq[iu]).mean()))


@dataclass
class STSEmbeddings:
    """Embeddings of both sides of a pair set, computed once and reused by every metric."""

    pairs: STSPairs
    e1: np.ndarray
    e2: np.ndarray

    @classmethod
    def compute(cls, encoder, pairs: STSPairs, max_length: int = 256) -> STSEmbeddings:
        texts = list(dict.fromkeys(pairs.sentence1 + pairs.sentence2))
        emb = encoder.encode(texts, max_length=max_length, show_progress=False)
        row = {t: i for i, t in enumerate(texts)}
        return cls(pairs, emb[[row[t] for t in pairs.sentence1]], emb[[row[t] for t in pairs.sentence2]])

    def transformed(self, fn: Callable[[np.ndarray], np.ndarray]) -> STSEmbeddings:
        """Both sides mapped by ``fn`` (a whitening, say)."""
        return STSEmbeddings(self.pairs, fn(self.e1), fn(self.e2))

    def spearman(self, split: str | np.ndarray = "all") -> float:
        """Cosine Spearman over a split ('train', 'dev', 'test', 'all') or an array of pair indices."""
        idx = self._idx(split) if isinstance(split, str) else split
        return cosine_spearman(self.e1[idx], self.e2[idx], self.pairs.scores[idx])

    def alignment(self, threshold: float = POSITIVE_THRESHOLD) -> float:
        """Alignment over the pairs whose gold score is at least ``threshold``."""
        pos = self.pairs.scores >= threshold
        return alignment(self.e1[pos], self.e2[pos])

    def uniformity(self) -> float:
        return uniformity(np.concatenate([self.e1, self.e2]))

    def _idx(self, split: str) -> np.ndarray:
        return np.arange(len(self.pairs)) if split == "all" else np.flatnonzero(self.pairs.split == split)


def sts_report(
    encoder, pairs: STSPairs, max_length: int = 256, positive_threshold: float = POSITIVE_THRESHOLD
) -> dict[str, float]:
    """Spearman on the dev/test splits and all pairs, alignment (pairs with gold >= threshold) and uniformity."""
    emb = STSEmbeddings.compute(encoder, pairs, max_length)
    return {
        "spearman_test": emb.spearman("test"),
        "spearman_all": emb.spearman("all"),
        "spearman_dev": emb.spearman("dev"),
        "alignment": emb.alignment(positive_threshold),
        "uniformity": emb.uniformity(),
    }


def nearest_neighbours(corpus: np.ndarray, query_ids: list[int], k: int = 3) -> list[list[tuple[int, float]]]:
    """Top-k corpus rows by cosine for each query row, the query itself excluded
    (sentence-transformers' ``semantic_search``). Returns [[(corpus_id, score), ...], ...]."""
    import torch
    from sentence_transformers.util import semantic_search

    hits = semantic_search(torch.from_numpy(corpus[query_ids]), torch.from_numpy(corpus), top_k=k + 1)
    return [[(h["corpus_id"], h["score"]) for h in row if h["corpus_id"] != q][:k] for q, row in zip(query_ids, hits)]


def paraphrase_hit_at_1(embeddings: np.ndarray, partners: dict[int, set[int]], tie: float = 1e-6) -> dict[str, float]:
    """For every row with at least one gold partner: is its nearest other row (cosine) a partner?
    Ties count fractionally (p partners among t rows sharing the top score score p / t), so texts
    that a vocabulary maps to the same tokens cannot win by tie order. Returns the hit rate, the
    number of queries and the rate a random ranking would reach (mean of |partners| / (n - 1))."""
    queries = sorted(q for q, p in partners.items() if p)
    if not queries:
        return {"hit_at_1": float("nan"), "queries": 0, "chance": float("nan")}
    unit = _unit(embeddings.astype(np.float32))
    hits = []
    for q in queries:
        sims = unit @ unit[q]
        sims[q] = -np.inf
        top = np.flatnonzero(sims >= sims.max() - tie)
        hits.append(np.isin(top, list(partners[q])).mean())
    return {
        "hit_at_1": float(np.mean(hits)),
        "queries": len(queries),
        "chance": float(np.mean([len(partners[q]) / (len(embeddings) - 1) for q in queries])),
    }


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's pair representation (Conneau and Kiela 2018): [u, v, |u - v|, u * v]."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


F1_AVERAGE = {"f1": "binary", "weighted_f1": "weighted", "macro_f1": "macro"}


def linear_probe(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    metric: str = "weighted_f1",
    seed: int = 0,
    c_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0),
) -> dict[str, float]:
    """SentEval-style transfer probe on frozen embeddings: standardised features and an L2
    logistic regression (scikit-learn) whose C is chosen on dev; returns dev and test F1.

    ``metric``: ``f1`` (binary, positive label "1"), ``weighted_f1`` or ``macro_f1``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if metric not in F1_AVERAGE:
        raise ValueError(f"unknown metric '{metric}'; choose one of {sorted(F1_AVERAGE)}")
    kwargs = {"average": F1_AVERAGE[metric]}
    if metric == "f1":
        kwargs["pos_label"] = "1" if train[1].dtype.kind in "US" else 1

    def fit(c):
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000, random_state=seed)).fit(*train)

    scored = [(f1_score(dev[1], (m := fit(c)).predict(dev[0]), **kwargs), c, m) for c in c_grid]
    dev_f1, c, model = max(scored, key=lambda s: s[0])
    return {"dev": float(dev_f1), "test": float(f1_score(test[1], model.predict(test[0]), **kwargs)), "C": c}
