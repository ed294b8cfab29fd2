"""Semantic textual similarity: cosine of the two sentences' embeddings against the gold score, Spearman's
rho over the pairs (MTEB's STS main score, ``cosine_spearman``). The items are pairs; rho is not a mean over
pairs, so the bootstrap draws pairs and recomputes rho.

The same measure serves two callers: the suite's ``STSTask`` (with intervals), and ``STSEmbeddings`` /
``sts_report``, which score a study's own STS splits during training (checkpoint selection) and after it
(its tables: every split, alignment and uniformity over the same embeddings).

Tasks: BIOSSES, all 100 pairs (as MTEB scores it) and the 20 pairs of the BLURB test split.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from kit.data import BIOSSES, STSPairs, load_biosses
from kit.evaluation.bootstrap import Spearman
from kit.evaluation.geometry import alignment, uniformity
from kit.evaluation.task import TASKS, PairCosineTask, unit

POSITIVE_THRESHOLD = 4.0
"""Gold score at or above which a BIOSSES pair counts as a positive for alignment (0-4 scale)."""


def spearman(predicted, gold) -> float:
    """Spearman rank correlation between predicted similarities and gold scores: the STS metric of every study."""
    return float(spearmanr(predicted, gold).statistic)


def cosine_spearman(e1: np.ndarray, e2: np.ndarray, gold: np.ndarray) -> float:
    """Spearman correlation between row-wise cosine(e1, e2) and the gold scores (as MTEB's STS)."""
    return spearman((unit(e1, None) * unit(e2, None)).sum(1), gold)


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


@dataclass(frozen=True)
class STSTask(PairCosineTask):
    """``load()`` returns ``STSPairs``; a pair is an item, its gold score the target."""

    type = "sts"
    metrics = ("spearman",)
    metric_labels = {"spearman": "cosine Spearman"}

    def pairs(self) -> tuple[list[str], list[str]]:
        return self.data.sentence1, self.data.sentence2

    def statistic(self, metric: str) -> Spearman:
        return Spearman(np.asarray(self.data.scores, float))


_POSITIVE = "no positives: every pair has a graded gold score (mean of five annotators, 0-4)"
# Study 2 (augmented_sbert) trains its bi-encoders on BIOSSES gold pairs: the train split in its BLURB mode,
# and in its 5-fold cross-validation every pair. Studies 1 and 4 select checkpoints on the dev split.
BIOSSES_ALL = TASKS.add(
    STSTask(
        name="biosses-all",
        description="BIOSSES, all 100 pairs (MTEB's BIOSSES task)",
        dataset=BIOSSES,
        split="all 100 pairs (train 64 + dev 16 + test 20)",
        positive=_POSITIVE,
        load=lambda: load_biosses(),
        seen_by=("augmented_sbert",),
    )
)
BIOSSES_TEST = TASKS.add(
    STSTask(
        name="biosses-test",
        description="BIOSSES, the 20 pairs of the BLURB test split",
        dataset=BIOSSES,
        split="test (BLURB split, 20 pairs)",
        positive=_POSITIVE,
        load=lambda: load_biosses().subset("test"),
        seen_by=(),  # study 2's cross-validation mode trains on these pairs; its BLURB mode does not
    )
)
