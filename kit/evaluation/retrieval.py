"""Retrieval: each query ranks a fixed pool of candidates by cosine; per query nDCG@10 (main score, as
MTEB's retrieval tasks), reciprocal rank (MRR over the whole ranking) and recall@1. The items are the
queries and every metric is a mean over them, so the bootstrap draws queries.

The pool is the distinct target texts of the task (a text that is the target of several queries is one
candidate, relevant to each of them), and the queries are the distinct query texts (a query text that
occurs twice is relevant to both targets).

Tasks: consumer health question -> its summary on MeQSum (1,000 pairs) and on the public HealthCareMagic
subset (1,643 = train + valid); Disease Ontology definition -> disease name (9,962) and name -> definition.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from kit.data import (
    DISEASE_ONTOLOGY,
    HEALTHCAREMAGIC,
    MEQSUM,
    SummaryPairs,
    load_disease_ontology,
    load_healthcaremagic,
    load_meqsum,
)
from kit.evaluation.bootstrap import ItemScores, Mean
from kit.evaluation.task import TASKS, Task, unique, unit

TIE = 1e-6
"""Cosines closer than this are a tie; a tie between a relevant and an irrelevant candidate ranks the
relevant one last (a model cannot gain from the order of equal scores)."""


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
    units = unit(embeddings)
    hits = []
    for q in queries:
        sims = units @ units[q]
        sims[q] = -np.inf
        top = np.flatnonzero(sims >= sims.max() - tie)
        hits.append(np.isin(top, list(partners[q])).mean())
    return {
        "hit_at_1": float(np.mean(hits)),
        "queries": len(queries),
        "chance": float(np.mean([len(partners[q]) / (len(embeddings) - 1) for q in queries])),
    }


def relevant_ranks(similarity: np.ndarray, relevant: list[np.ndarray], tie: float = TIE) -> np.ndarray:
    """1-based ranks of each query's relevant candidates, best first, ``[queries, max relevant]`` padded
    with inf. ``similarity`` [queries, candidates]; ``relevant[q]`` the candidate ids relevant to query q.

    With the relevant candidates of q sorted by score, s_(1) >= s_(2) >= ..., the j-th one has rank
    j + #{irrelevant c: s_c >= s_(j) - tie}: ties with irrelevant candidates count against it."""
    q, c = similarity.shape
    width = max((len(r) for r in relevant), default=1)
    mask = np.zeros((q, c), dtype=bool)
    rel = np.full((q, width), -np.inf)
    for i, r in enumerate(relevant):
        mask[i, r] = True
        rel[i, : len(r)] = np.sort(similarity[i, r])[::-1]
    irrelevant = np.where(mask, -np.inf, similarity)
    ranks = np.full((q, width), np.inf)
    for j in range(width):
        beaten = (irrelevant >= rel[:, j : j + 1] - tie).sum(1)
        ranks[:, j] = np.where(np.isfinite(rel[:, j]), j + 1 + beaten, np.inf)
    return ranks


def ndcg_at_k(ranks: np.ndarray, k: int = 10) -> np.ndarray:
    """Binary-relevance nDCG@k per query (Jarvelin and Kekalainen 2002, as in MTEB / pytrec_eval):
    DCG@k = sum over relevant r with rank(r) <= k of 1 / log2(rank(r) + 1); IDCG@k = sum_{i=1}^{min(R, k)}
    1 / log2(i + 1) with R relevant candidates; nDCG@k = DCG@k / IDCG@k."""
    gain = np.where(ranks <= k, 1.0 / np.log2(ranks + 1.0), 0.0).sum(1)
    n_relevant = np.isfinite(ranks).sum(1)
    ideal = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(1, k + 1) + 1.0))])
    return gain / ideal[np.minimum(n_relevant, k)]


def reciprocal_rank(ranks: np.ndarray) -> np.ndarray:
    """1 / rank of the first relevant candidate, over the whole ranking (no cut-off); MRR is its mean."""
    return 1.0 / ranks.min(1)


def recall_at_k(ranks: np.ndarray, k: int = 1) -> np.ndarray:
    """|relevant in the top k| / |relevant| per query (MTEB's recall@k); with one relevant candidate, hit@k."""
    return (ranks <= k).sum(1) / np.isfinite(ranks).sum(1)


@dataclass(frozen=True)
class RetrievalTask(Task):
    """``load()`` returns (queries, targets), aligned: targets[i] is the positive of queries[i]."""

    type = "retrieval"
    metrics = ("ndcg_at_10", "mrr", "recall_at_1")
    metric_labels = {"ndcg_at_10": "nDCG@10", "mrr": "MRR", "recall_at_1": "recall@1"}

    @functools.cached_property
    def pool(self) -> tuple[list[str], list[str], list[np.ndarray]]:
        """(distinct queries, distinct candidates, the candidate ids relevant to each query)."""
        queries, targets = self.data
        distinct_q, q_rows = unique(list(queries))
        candidates, c_rows = unique(list(targets))
        relevant = [set() for _ in distinct_q]
        for q, c in zip(q_rows, c_rows):
            relevant[q].add(int(c))
        return distinct_q, candidates, [np.array(sorted(r), dtype=np.int64) for r in relevant]

    @property
    def items(self) -> int:
        return len(self.pool[0])

    @property
    def candidates(self) -> int:
        return len(self.pool[1])

    def texts(self) -> tuple[list[str], list[str]]:
        queries, candidates, _ = self.pool
        return queries, candidates

    def item_texts(self) -> list[tuple[str, ...]]:
        """Each query with its relevant targets."""
        queries, candidates, relevant = self.pool
        return [(q, *(candidates[c] for c in r)) for q, r in zip(queries, relevant)]

    def describe(self) -> dict:
        return {**super().describe(), "candidates": self.candidates}

    def score(self, embeddings: tuple[np.ndarray, np.ndarray], chunk: int = 1024) -> dict[str, ItemScores]:
        queries, candidates = unit(embeddings[0]), unit(embeddings[1])
        return self.score_similarities(lambda rows: queries[rows] @ candidates.T, chunk)

    def score_similarities(self, similarities, chunk: int = 1024) -> dict[str, ItemScores]:
        """The item scores from ``similarities(rows)``: the scores [len(rows), candidates] of the queries in the
        slice ``rows`` against every candidate (cosines, or any score that ranks candidates: BM25's), a chunk of
        queries at a time."""
        relevant = self.pool[2]
        ranks = []
        for start in range(0, len(relevant), chunk):
            sims = similarities(slice(start, start + chunk))
            ranks.append(relevant_ranks(sims, relevant[start : start + chunk]))
        width = max(r.shape[1] for r in ranks)
        ranks = np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=np.inf) for r in ranks])
        per_query = {
            "ndcg_at_10": ndcg_at_k(ranks, 10),
            "mrr": reciprocal_rank(ranks),
            "recall_at_1": recall_at_k(ranks),
        }
        return {m: ItemScores(m, per_query[m], self.statistic(m)) for m in self.metrics}

    def statistic(self, metric: str) -> Mean:
        return Mean()


def _summaries(*parts: SummaryPairs) -> tuple[list[str], list[str]]:
    return [q for p in parts for q in p.chq], [s for p in parts for s in p.summary]


def _ontology(query: str) -> tuple[list[str], list[str]]:
    entries = load_disease_ontology()
    names, definitions = [e.name for e in entries], [e.definition for e in entries]
    return (definitions, names) if query == "definition" else (names, definitions)


DEV_QUERIES = 1000
"""The queries of a retrieval task's dev split (``doid-definition-name-dev``)."""
DEV_SEED = 20261207
"""The seed that draws them."""


def _ontology_dev() -> tuple[list[str], list[str]]:
    """``DEV_QUERIES`` definitions drawn with ``DEV_SEED`` (in ontology order), each with its disease's name."""
    definitions, names = _ontology("definition")
    idx = np.sort(np.random.default_rng(DEV_SEED).choice(len(definitions), DEV_QUERIES, replace=False))
    return [definitions[i] for i in idx], [names[i] for i in idx]


MEQSUM_CHQ_SUMMARY = TASKS.add(
    RetrievalTask(
        name="meqsum-chq-summary",
        description="MeQSum: each consumer health question (CHQ) retrieves its expert-written summary among all "
        "the summaries",
        dataset=MEQSUM,
        split="all 1,000 pairs (MeQSum has no official split)",
        positive="the summary written for the question (994 distinct summaries: one shared by several questions "
        "is relevant to each)",
        load=lambda: _summaries(load_meqsum()),
        seen_by=("qfcl_summarization",),
    )
)
HEALTHCAREMAGIC_CHQ_SUMMARY = TASKS.add(
    RetrievalTask(
        name="healthcaremagic-chq-summary",
        description="HealthCareMagic public subset: each CHQ retrieves its summary among all the summaries",
        dataset=HEALTHCAREMAGIC,
        split="train 1,314 + valid 329 = 1,643 pairs",
        positive="the summary written for the question (1,600 distinct summaries: templates shared by several "
        "questions are relevant to each)",
        load=lambda: _summaries(load_healthcaremagic("train"), load_healthcaremagic("valid")),
        seen_by=("qfcl_summarization",),  # its HealthCareMagic runs train on the train split
    )
)
DOID_DEFINITION_NAME = TASKS.add(
    RetrievalTask(
        name="doid-definition-name",
        description="Disease Ontology: each definition retrieves its disease's name among all 9,962 names",
        dataset=DISEASE_ONTOLOGY,
        split="all 9,962 diseases with a definition",
        positive="the preferred name of the disease the definition defines (synonyms are not candidates)",
        load=lambda: _ontology("definition"),
        seen_by=("medse_entity_definitions",),
    )
)
DOID_DEFINITION_NAME_DEV = TASKS.add(
    RetrievalTask(
        name="doid-definition-name-dev",
        description="Disease Ontology, the selection split of doid-definition-name: 1,000 definitions (seeded) each "
        "retrieve their disease's name among those 1,000 names. A run that selects on it leaves these diseases out "
        "of doid-definition-name, which is then tested on the other 8,962",
        dataset=DISEASE_ONTOLOGY,
        split=f"{DEV_QUERIES:,} of the 9,962 diseases with a definition (seed {DEV_SEED})",
        positive="the preferred name of the disease the definition defines",
        load=_ontology_dev,
        seen_by=("medse_entity_definitions",),
        optional=True,  # selection data: scored only when named
        nests=False,  # a split for selection, not a part of doid-definition-name's finding
    )
)
DOID_NAME_DEFINITION = TASKS.add(
    RetrievalTask(
        name="doid-name-definition",
        description="Disease Ontology: each disease name retrieves its definition among all 9,962 definitions",
        dataset=DISEASE_ONTOLOGY,
        split="all 9,962 diseases with a definition",
        positive="the definition of the named disease",
        load=lambda: _ontology("name"),
        seen_by=("medse_entity_definitions",),
    )
)
