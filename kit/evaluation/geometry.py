"""The geometry of an embedding space (Wang and Isola 2020, "Understanding Contrastive Representation
Learning through Alignment and Uniformity on the Hypersphere"): alignment of positive pairs and uniformity
of the whole set, on L2-normalised embeddings with alpha = 2 and t = 2."""

from __future__ import annotations

import numpy as np

from kit.evaluation.task import unit


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """Wang and Isola (2020): E ||f(x) - f(y)||^alpha over positive pairs, on L2-normalised embeddings."""
    return float((np.linalg.norm(unit(x, None) - unit(y, None), axis=1) ** alpha).mean())


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """Wang and Isola (2020): log E exp(-t ||f(x) - f(y)||^2) over distinct pairs, L2-normalised."""
    u = unit(x, None).astype(np.float64)
    sq = np.clip(2.0 - 2.0 * (u @ u.T), 0.0, None)
    iu = np.triu_indices(len(u), k=1)
    return float(np.log(np.exp(-t * sq[iu]).mean()))
