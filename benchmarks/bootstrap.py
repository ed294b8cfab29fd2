"""Item-bootstrap statistics: the kit's Spearman and average precision on every draw against the references they
must equal, in the same process: scipy's ``rankdata`` on all draws at once (what the kit did before it counted each
draw's items) and scikit-learn's ``average_precision_score`` one draw at a time.

Sizes are those of the suite's tasks (``rqe-test`` 230 pairs, ``cmedqq-test`` 1,935), 2,000 draws and 5 seeds as the
reports use; ``--quick`` takes 50 draws and writes nothing. Each row prints the largest difference to its reference.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best_of, record
from scipy import stats
from sklearn.metrics import average_precision_score

from kit.evaluation.bootstrap import AveragePrecision, Spearman


def spearman_rankdata(outputs: np.ndarray, gold: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """rho of every seed on every draw from scipy's ranks of the drawn items, [S, B]."""
    x = stats.rankdata(outputs[:, draws], axis=-1)
    g = stats.rankdata(gold[draws], axis=-1)[None]
    x, g = x - x.mean(-1, keepdims=True), g - g.mean(-1, keepdims=True)
    return (x * g).sum(-1) / np.sqrt((x * x).sum(-1) * (g * g).sum(-1))


def ap_sklearn(outputs: np.ndarray, labels: np.ndarray, draws: np.ndarray) -> np.ndarray:
    return np.array([[average_precision_score(labels[d], scores[d]) for d in draws] for scores in outputs])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    resamples, seeds, rng = (50 if args.quick else 2000), 5, np.random.default_rng(0)
    rows = [
        "| statistic | items | draws x seeds | kit s | reference | reference s | ratio | largest difference |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for items in (230, 1935):
        draws = rng.integers(0, items, (resamples, items))
        outputs = np.round(rng.normal(size=(seeds, items)), 2)  # rounded: ties, as cosine ranks have
        gold, labels = rng.integers(0, 5, items).astype(float), rng.random(items) < 0.4
        cases = [
            ("Spearman", Spearman(gold), "scipy rankdata", lambda: spearman_rankdata(outputs, gold, draws)),
            ("average precision", AveragePrecision(labels), "scikit-learn", lambda: ap_sklearn(outputs, labels, draws)),
        ]
        for name, statistic, reference, compute in cases:
            mine, theirs = statistic(outputs, draws), compute()
            t_kit = best_of(lambda s=statistic: s(outputs, draws), 3)
            t_ref = best_of(compute, 1)
            rows.append(
                f"| {name} | {items:,} | {resamples:,} x {seeds} | {t_kit:.3f} | {reference} | {t_ref:.3f} | "
                f"{t_ref / t_kit:.1f}x | {np.nanmax(np.abs(mine - theirs)):.1e} |"
            )
    record("bootstrap.py: item-bootstrap statistics against their references", "\n".join(rows), args.quick)


if __name__ == "__main__":
    main()
