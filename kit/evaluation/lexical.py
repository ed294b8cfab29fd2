"""Bag-of-words anchors for the suite: what word overlap alone reaches on the same items.

A sentence encoder's score says little until it stands beside a lexical baseline on the same items: a raw start
below TF-IDF is in another regime than one above it. Two anchors, each a fixed (untrained, seedless) row:

- ``tfidf``: TF-IDF cosine (Salton & Buckley 1988), scikit-learn's ``TfidfVectorizer`` (lower-cased words of two or
  more letters, smoothed idf, l2-normalised rows) with the idf of a reference corpus (the shared PubMed sentences for
  English); on every English pair task (STS, pair classification: the cosine of the two texts) and retrieval task
  (queries rank the candidates by cosine);
- ``bm25``: Okapi BM25 (Robertson & Zaragoza 2009; k1 1.5, b 0.75, Lucene's idf) with ``bm25s``, the implementation
  MTEB's BM25 baseline uses (Lucene's variant, without the constant factor k1 + 1), English stopwords removed, no
  stemmer; on every English retrieval task, its term statistics from the task's candidates (BM25 ranks documents
  for a query; it is no similarity of two sentences).

Their outputs go through the tasks' own scoring (``PairCosineTask.score_cosines``,
``RetrievalTask.score_similarities``), so their per-item outputs, metrics and intervals are the models' kind.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kit.evaluation.bootstrap import ItemScores
from kit.evaluation.task import PairCosineTask, Task

ANCHORS = ("tfidf", "bm25")
ANCHOR_LABELS = {"tfidf": "TF-IDF cosine", "bm25": "BM25"}


def english_reference() -> list[str]:
    """The reference corpus of the English idf: the shared PubMed sentences."""
    from kit.data import load_pubmed_sentences

    return load_pubmed_sentences()


@dataclass
class Lexical:
    """One anchor (``tfidf`` or ``bm25``, see the module) for tasks in ``language``; ``reference`` gives the texts of
    TF-IDF's idf (read once, at the first task scored)."""

    name: str
    language: str = "en"
    reference: Callable[[], list[str]] = field(default=english_reference, repr=False)

    def __post_init__(self):
        if self.name not in ANCHORS:
            raise ValueError(f"anchor must be one of {ANCHORS}, got {self.name!r}")

    @property
    def label(self) -> str:
        return ANCHOR_LABELS[self.name]

    def applies(self, task: Task) -> bool:
        """Whether this anchor scores ``task``: its language, and a pair task (TF-IDF) or a retrieval task (both)."""
        from kit.evaluation.retrieval import RetrievalTask

        if task.language != self.language:
            return False
        return isinstance(task, RetrievalTask) or (self.name == "tfidf" and isinstance(task, PairCosineTask))

    @property
    def vectorizer(self):
        """TF-IDF's vectorizer, fitted on ``reference()`` once per process (``fitted_vectorizer``)."""
        return fitted_vectorizer(self.reference)

    def score_task(self, task: Task) -> dict[str, ItemScores]:
        """The anchor's item scores on ``task`` (one per metric); ``ValueError`` where it does not apply."""
        if not self.applies(task):
            raise ValueError(f"the {self.name} anchor does not apply to {task.name} ({task.type}, {task.language})")
        if isinstance(task, PairCosineTask):
            first, second = task.pairs()
            a, b = self.vectorizer.transform(first), self.vectorizer.transform(second)
            return task.score_cosines(np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64).ravel())
        queries, candidates = task.texts()
        if self.name == "tfidf":
            q, c = self.vectorizer.transform(queries), self.vectorizer.transform(candidates).T.tocsr()
            return task.score_similarities(lambda rows: (q[rows] @ c).toarray())
        return task.score_similarities(bm25_similarities(queries, candidates))


@functools.cache
def fitted_vectorizer(reference: Callable[[], list[str]]):
    """A ``TfidfVectorizer`` (float64) fitted on the texts ``reference`` returns, kept for the process: every study
    report and ``kit.evaluate`` call reads the same idf (55k PubMed sentences take seconds to fit)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(dtype=np.float64).fit(reference())


def bm25_similarities(queries: list[str], candidates: list[str]) -> Callable[[slice], np.ndarray]:
    """rows -> BM25 scores [len(rows), len(candidates)] of those queries against every candidate (``bm25s``, the
    index built from ``candidates``; a query word absent from them adds nothing)."""
    import bm25s

    index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    index.index(bm25s.tokenize(candidates, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
    known = index.vocab_dict

    def rows(selected: slice) -> np.ndarray:
        out = np.zeros((len(tokens[selected]), len(candidates)), dtype=np.float64)
        for i, words in enumerate(tokens[selected]):
            words = [w for w in words if w in known]
            if words:
                out[i] = index.get_scores(words)
        return out

    return rows
