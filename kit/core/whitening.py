"""BERT-whitening of sentence embeddings (Su et al. 2021)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.core.compute import EVALUATION_LENGTH


@dataclass
class Whitening:
    """BERT-whitening (Su et al. 2021, "Whitening Sentence Representations for Better Semantics
    and Faster Retrieval"): x -> (x - mu) W with W = U diag(s)^(-1/2), where U diag(s) U^T is
    the covariance of the fitting embeddings; ``dim`` keeps the first k columns (dimension reduction).

    Directions in which the fitting embeddings do not vary beyond float32 rounding are left out: those whose
    singular value, sqrt(s), is at most sqrt(s_max) * max(n, d) * eps(float32), the numerical rank of the
    centred embeddings as ``numpy.linalg.matrix_rank`` takes it. A LayerNorm output spans d - 1 dimensions, so
    the last s is rounding (about 1e-14), and 1/sqrt(s) would scale each input's rounding in that direction up
    to unit size: whitened scores would then move with the machine, the thread count or the batch padding."""

    mean: np.ndarray
    matrix: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, dim: int | None = None) -> Whitening:
        x = np.asarray(x, dtype=np.float64)
        if len(x) <= x.shape[1]:
            raise ValueError(f"whitening needs more fitting embeddings ({len(x)}) than dimensions ({x.shape[1]})")
        mean = x.mean(0)
        u, s, _ = np.linalg.svd(np.cov((x - mean).T, bias=True))
        rank = int((np.sqrt(s) > np.sqrt(s[0]) * max(x.shape) * np.finfo(np.float32).eps).sum())
        return cls(mean, (u[:, :rank] / np.sqrt(s[:rank]))[:, :dim])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((np.asarray(x, dtype=np.float64) - self.mean) @ self.matrix).astype(np.float32)


def fit_whitening(encoder, sentences: list[str], n: int, seed: int, dim: int | None = None) -> Whitening:
    """A ``Whitening`` fitted on ``encoder``'s embeddings of ``n`` of ``sentences`` (at most all) drawn with
    ``seed``, each read as every evaluation reads a text (``EVALUATION_LENGTH`` tokens, capped at the model's trained
    positions), so that the statistics fitted are those of the vectors it whitens. (Fitted on sentences cut at 32
    tokens and applied to texts read whole, the kit's pubmed-bert-mini read 37.5 Spearman on all BIOSSES pairs with
    first-last average + whitening; fitted at the evaluation length, 72.5: ``benchmarks/whitening_fit.py``.)"""
    idx = np.random.default_rng(seed).choice(len(sentences), min(n, len(sentences)), replace=False)
    texts = [sentences[i] for i in idx]
    return Whitening.fit(encoder.encode(texts, max_length=EVALUATION_LENGTH, show_progress=False), dim)


@dataclass
class Whitened:
    """An encoder whose embeddings are whitened: ``encode(...)`` is ``whitening(encoder.encode(...))``; every other
    attribute is the encoder's (its tokenizer, for length-sorted batches)."""

    encoder: object
    whitening: Whitening

    def encode(self, texts, **kwargs) -> np.ndarray:
        return self.whitening(self.encoder.encode(texts, **kwargs))

    def __getattr__(self, name: str):
        if name in ("encoder", "whitening"):  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.encoder, name)
