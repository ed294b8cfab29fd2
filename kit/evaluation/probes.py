"""SentEval-style linear probes (Conneau and Kiela 2018): a classifier on frozen sentence embeddings, its
regularisation chosen on a dev part, scored on test; pair tasks read the pair representation [u, v, |u - v|, u * v]."""

from __future__ import annotations

import numpy as np


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
