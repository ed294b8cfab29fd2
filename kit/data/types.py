"""What the loaders return: scored sentence pairs, labelled texts, question-summary pairs, ontology entries."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class STSPairs:
    """Sentence pairs with gold similarity scores and the split of each pair."""

    sentence1: list[str]
    sentence2: list[str]
    scores: np.ndarray
    split: np.ndarray
    source: str = field(metadata={"digest": False})  # where it was read from: not part of run keys

    def subset(self, split: str) -> STSPairs:
        """Pairs of one split ('train', 'dev', 'test'), or every pair for 'all'."""
        if split == "all":
            return self
        idx = np.flatnonzero(self.split == split)
        if idx.size == 0:
            raise ValueError(f"split '{split}' has no pairs in {self.source}; splits: {sorted(set(self.split))}")
        return STSPairs(
            [self.sentence1[i] for i in idx],
            [self.sentence2[i] for i in idx],
            self.scores[idx],
            self.split[idx],
            self.source,
        )

    def __len__(self) -> int:
        return len(self.scores)


@dataclass
class LabeledTexts:
    """One split of a classification or pair task: ``texts`` holds one list per text column."""

    task: str
    split: str
    texts: tuple[list[str], ...]
    labels: np.ndarray
    source: str = field(metadata={"digest": False})  # where it was read from: not part of run keys

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, idx, split: str | None = None) -> LabeledTexts:
        """The rows ``idx`` (in file order), as ``split`` (default: this split)."""
        idx = np.sort(np.asarray(idx, dtype=np.int64))
        columns = tuple([column[i] for i in idx] for column in self.texts)
        return LabeledTexts(self.task, split or self.split, columns, self.labels[idx], self.source)

    def capped(self, size: int | None, rng: np.random.Generator) -> LabeledTexts:
        """A seeded subsample of ``size`` rows (drawn with ``rng``), or every row when ``size`` is None or larger."""
        return self if size is None or len(self) <= size else self.take(rng.permutation(len(self))[:size])


@dataclass
class SummaryPairs:
    """Consumer health questions and their reference summaries."""

    chq: list[str]
    summary: list[str]
    source: str = field(metadata={"digest": False})  # where it was read from: not part of run keys

    def __len__(self) -> int:
        return len(self.chq)

    def take(self, idx) -> SummaryPairs:
        return SummaryPairs([self.chq[i] for i in idx], [self.summary[i] for i in idx], self.source)


@dataclass(frozen=True)
class EntityEntry:
    """One ontology entity: id, preferred name, synonyms and its definition as prose."""

    id: str
    name: str
    synonyms: tuple[str, ...]
    definition: str
