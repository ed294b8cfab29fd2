"""Semantic textual similarity: cosine of the two sentences' embeddings against the gold score, Spearman's
rho over the pairs (MTEB's STS main score, ``kit.core.metrics.cosine_spearman``). The items are pairs;
rho is not a mean over pairs, so the bootstrap draws pairs and recomputes rho.

Tasks: BIOSSES, all 100 pairs (as MTEB scores it) and the 20 pairs of the BLURB test split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.data import BIOSSES, STSPairs, load_biosses
from kit.evaluation.bootstrap import ItemScores, Spearman
from kit.evaluation.task import Task, cosines, unique, within_ranks


@dataclass(frozen=True)
class STSTask(Task):
    """``load()`` returns ``STSPairs``; a pair is an item, its gold score the target."""

    type = "sts"
    metrics = ("spearman",)
    metric_labels = {"spearman": "cosine Spearman"}

    @property
    def items(self) -> int:
        return len(self.data)

    def texts(self) -> tuple[list[str]]:
        pairs: STSPairs = self.data
        return (unique(pairs.sentence1 + pairs.sentence2)[0],)

    def score(self, embeddings: tuple[np.ndarray]) -> dict[str, ItemScores]:
        pairs: STSPairs = self.data
        _, rows = unique(pairs.sentence1 + pairs.sentence2)
        (emb,) = embeddings
        n = len(pairs)
        cos = cosines(emb[rows[:n]], emb[rows[n:]])
        return {"spearman": ItemScores("spearman", within_ranks(cos), self.statistic("spearman"))}

    def statistic(self, metric: str) -> Spearman:
        return Spearman(np.asarray(self.data.scores, float))


_POSITIVE = "no positives: every pair has a graded gold score (mean of five annotators, 0-4)"
# Study 2 (augmented_sbert) trains its bi-encoders on BIOSSES gold pairs: the train split in its BLURB mode,
# and in its 5-fold cross-validation every pair. Studies 1 and 4 select checkpoints on the dev split.
BIOSSES_ALL = STSTask(
    name="biosses-all",
    description="BIOSSES, all 100 pairs (MTEB's BIOSSES task)",
    dataset=BIOSSES,
    split="all 100 pairs (train 64 + dev 16 + test 20)",
    positive=_POSITIVE,
    load=lambda: load_biosses(),
    seen_by=("augmented_sbert",),
)
BIOSSES_TEST = STSTask(
    name="biosses-test",
    description="BIOSSES, the 20 pairs of the BLURB test split",
    dataset=BIOSSES,
    split="test (BLURB split, 20 pairs)",
    positive=_POSITIVE,
    load=lambda: load_biosses().subset("test"),
    seen_by=(),  # study 2's cross-validation mode trains on these pairs; its BLURB mode does not
)

TASKS = (BIOSSES_ALL, BIOSSES_TEST)
