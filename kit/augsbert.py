"""Study 2: Augmented SBERT (Thakur et al. 2021, "Augmented SBERT: Data Augmentation Method for
Improving Bi-Encoders for Pairwise Sentence Scoring Tasks", NAACL), as applied to biomedical pairs
by the second seed paper ("Augmented Bio-SBERT").

A cross-encoder trained on the gold pairs labels new pairs (the silver set); a bi-encoder is then
trained on gold + silver. This module holds the pair samplers: random sampling and semantic-search
sampling (top-k neighbours by a bi-encoder, k = 5 in the paper).

Every sampler returns *new* unordered pairs: never a self-pair, never a gold pair in either order,
never the same pair twice (in either order). sentence-transformers' example scripts
(``examples/.../augmented_sbert``) add (a, b) and (b, a) as two pairs and keep gold pairs, so their
silver sets hold duplicates and copies of gold.
"""

from __future__ import annotations

import numpy as np

Pair = tuple[str, str]


def unordered(a: str, b: str) -> Pair:
    """The canonical form of an unordered pair (used for de-duplication)."""
    return (a, b) if a <= b else (b, a)


def _sentences_and_excluded(sentences: list[str], exclude: list[Pair]) -> tuple[list[str], set[Pair]]:
    return list(dict.fromkeys(sentences)), {unordered(a, b) for a, b in exclude}


def random_pairs(sentences: list[str], n: int, exclude: list[Pair], rng: np.random.Generator) -> list[Pair]:
    """``n`` distinct pairs of distinct sentences drawn uniformly from the de-duplicated pool,
    none of them in ``exclude`` (either order). Raises ValueError when fewer than ``n`` exist."""
    pool, seen = _sentences_and_excluded(sentences, exclude)
    members = set(pool)
    available = len(pool) * (len(pool) - 1) // 2 - sum(a in members and b in members and a != b for a, b in seen)
    if n > available:
        raise ValueError(f"asked for {n} random pairs but only {available} new pairs exist among {len(pool)} sentences")
    out: list[Pair] = []
    while len(out) < n:
        i, j = rng.integers(len(pool), size=2)
        pair = unordered(pool[i], pool[j])
        if i != j and pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


def semantic_pairs(sentences: list[str], embeddings: np.ndarray, k: int, exclude: list[Pair]) -> list[Pair]:
    """For every sentence, its ``k`` most similar other sentences by cosine
    (sentence-transformers' ``semantic_search``) that form a new pair: self, gold pairs (either
    order) and pairs already emitted are skipped and the next neighbour is taken instead, so every
    sentence contributes exactly ``k`` pairs wherever the pool still has ``k`` candidates for it.
    ``embeddings[i]`` embeds ``sentences[i]``; a repeated sentence keeps its first row."""
    import torch
    from sentence_transformers.util import semantic_search

    pool, seen = _sentences_and_excluded(sentences, exclude)
    first: dict[str, int] = {}
    for i, s in enumerate(sentences):
        first.setdefault(s, i)
    emb = torch.from_numpy(np.asarray(embeddings, dtype=np.float32)[[first[s] for s in pool]])
    out: list[Pair] = []

    def take(q: int, ranked: list[dict], want: int) -> int:
        taken = 0
        for hit in ranked:
            pair = unordered(pool[q], pool[hit["corpus_id"]])
            if taken == want:
                break
            if hit["corpus_id"] != q and pair not in seen:
                seen.add(pair)
                out.append((pool[q], pool[hit["corpus_id"]]))
                taken += 1
        return taken

    depth = min(len(pool), 2 * k + 2)  # enough unless many neighbours are gold or already taken
    for q, ranked in enumerate(semantic_search(emb, emb, top_k=depth)):
        taken = take(q, ranked, k)
        if taken < k and depth < len(pool):  # search this sentence's whole ranking
            take(q, semantic_search(emb[q : q + 1], emb, top_k=len(pool))[0], k - taken)
    return out
