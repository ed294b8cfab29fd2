"""BERT-whitening of sentence embeddings (Su et al. 2021)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Whitening:
    """BERT-whitening (Su et al. 2021, "Whitening Sentence Representations for Better Semantics
    and Faster Retrieval"): x -> (x - mu) W with W = U diag(s)^(-1/2), where U diag(s) U^T is
    the covariance of the fitting embeddings; ``dim`` keeps the first k columns (dimension reduction)."""

    mean: np.ndarray
    matrix: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, dim: int | None = None) -> Whitening:
        x = np.asarray(x, dtype=np.float64)
        if len(x) <= x.shape[1]:
            raise ValueError(f"whitening needs more fitting embeddings ({len(x)}) than dimensions ({x.shape[1]})")
        mean = x.mean(0)
        u, s, _ = np.linalg.svd(np.cov((x - mean).T, bias=True))
        return cls(mean, (u / np.sqrt(s))[:, :dim])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((np.asarray(x, dtype=np.float64) - self.mean) @ self.matrix).astype(np.float32)
