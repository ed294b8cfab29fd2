import itertools

import numpy as np
import pytest

from kit.augsbert import random_pairs, semantic_pairs, unordered


def _check_new_pairs(pairs, gold):
    keys = [unordered(a, b) for a, b in pairs]
    assert all(a != b for a, b in pairs), "self-pair"
    assert len(set(keys)) == len(keys), "duplicate pair (in some order)"
    assert not set(keys) & {unordered(a, b) for a, b in gold}, "gold pair"


@pytest.fixture
def pool():
    sentences = [f"s{i}" for i in range(12)] + ["s3", "s5"]  # repeated sentences must not yield self-pairs
    gold = [("s0", "s1"), ("s2", "s1"), ("s4", "s3")]
    return sentences, gold


def test_random_pairs_are_new_distinct_and_seeded(pool):
    sentences, gold = pool
    pairs = random_pairs(sentences, 40, gold, np.random.default_rng(0))
    assert len(pairs) == 40
    _check_new_pairs(pairs, gold)
    assert pairs == random_pairs(sentences, 40, gold, np.random.default_rng(0))
    assert pairs != random_pairs(sentences, 40, gold, np.random.default_rng(1))


def test_random_pairs_can_exhaust_the_pool_and_refuse_more(pool):
    sentences, gold = pool
    total = 12 * 11 // 2 - len(gold)
    assert len(random_pairs(sentences, total, gold, np.random.default_rng(0))) == total
    with pytest.raises(ValueError, match=f"only {total} new pairs"):
        random_pairs(sentences, total + 1, gold, np.random.default_rng(0))


def test_semantic_pairs_take_exactly_k_new_nearest_neighbours(pool):
    sentences, gold = pool
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(sentences), 8))
    emb[12], emb[13] = emb[3], emb[5]  # the repeats embed as their first occurrence
    k = 3
    pairs = semantic_pairs(sentences, emb, k, gold)
    _check_new_pairs(pairs, gold)
    by_anchor = {s: [b for a, b in pairs if a == s] for s in dict.fromkeys(sentences)}
    assert all(len(v) == k for v in by_anchor.values())
    # the first sentence's partners are its k nearest neighbours, gold partner s1 skipped
    unit = emb[:12] / np.linalg.norm(emb[:12], axis=1, keepdims=True)
    ranked = [f"s{i}" for i in np.argsort(-(unit @ unit[0])) if i != 0 and f"s{i}" != "s1"]
    assert by_anchor["s0"] == ranked[:k]


def test_semantic_pairs_search_deeper_when_near_neighbours_are_taken():
    sentences = [f"s{i}" for i in range(8)]
    emb = np.eye(8) + 0.01
    gold = [(a, b) for a, b in itertools.combinations(sentences[:6], 2)]  # s0..s5 are all gold with each other
    pairs = semantic_pairs(sentences, emb, 2, gold)
    _check_new_pairs(pairs, gold)
    assert [b for a, b in pairs if a == "s0"] and all(b in ("s6", "s7") for a, b in pairs if a == "s0")
