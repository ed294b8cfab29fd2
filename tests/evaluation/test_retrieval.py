"""Retrieval metrics: a hand-computed case, scikit-learn's nDCG, ties, and the pool a task builds."""

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from kit.data import MEQSUM
from kit.evaluation.retrieval import RetrievalTask, ndcg_at_k, recall_at_k, reciprocal_rank, relevant_ranks

# 3 queries x 4 candidates. q0: relevant c0, ranked 1st. q1: relevant c2, ranked 2nd (c0 above it).
# q2: relevant c1 and c3; order c0 .9, c3 .8, c2 .4, c1 .2, so its relevant ones are ranked 2nd and 4th.
SIMILARITY = np.array([[0.9, 0.5, 0.1, 0.3], [0.8, 0.6, 0.7, 0.1], [0.9, 0.2, 0.4, 0.8]])
RELEVANT = [np.array([0]), np.array([2]), np.array([1, 3])]


def test_a_hand_built_three_query_case():
    ranks = relevant_ranks(SIMILARITY, RELEVANT)
    np.testing.assert_array_equal(ranks, [[1, np.inf], [2, np.inf], [2, 4]])
    l2 = np.log2
    ndcg = [1.0, 1 / l2(3), (1 / l2(3) + 1 / l2(5)) / (1 + 1 / l2(3))]  # q2: DCG over IDCG of two relevant
    np.testing.assert_allclose(ndcg_at_k(ranks, 10), ndcg)
    np.testing.assert_allclose(reciprocal_rank(ranks), [1.0, 0.5, 0.5])
    np.testing.assert_allclose(recall_at_k(ranks, 1), [1.0, 0.0, 0.0])
    assert ndcg_at_k(ranks, 10).mean() == pytest.approx((1 + 0.6309298 + 0.6509209) / 3, abs=1e-6)
    assert reciprocal_rank(ranks).mean() == pytest.approx(2 / 3)
    assert recall_at_k(ranks, 1).mean() == pytest.approx(1 / 3)
    # with a cut-off of 3, q2's second relevant candidate (rank 4) no longer counts
    assert ndcg_at_k(ranks, 3)[2] == pytest.approx((1 / l2(3)) / (1 + 1 / l2(3)))


def test_ndcg_at_10_equals_scikit_learns_on_rankings_without_ties():
    rng = np.random.default_rng(0)
    sims = rng.normal(size=(40, 30))
    relevant = [rng.choice(30, size=rng.integers(1, 4), replace=False) for _ in range(40)]
    ours = ndcg_at_k(relevant_ranks(sims, relevant), 10)
    for q, r in enumerate(relevant):
        truth = np.zeros(30)
        truth[r] = 1
        assert ours[q] == pytest.approx(ndcg_score(truth[None], sims[q][None], k=10), abs=1e-12)


def test_ties_with_irrelevant_candidates_count_against_the_relevant_one():
    """A model that gives every candidate the same score cannot win by the order of ties: its relevant
    candidate is ranked last."""
    ranks = relevant_ranks(np.full((2, 5), 0.3), [np.array([0]), np.array([4])])
    np.testing.assert_array_equal(ranks[:, 0], [5, 5])
    assert recall_at_k(ranks).sum() == 0


def test_the_pool_is_the_distinct_targets_and_a_repeated_query_keeps_both_targets():
    task = RetrievalTask(
        "toy",
        "toy",
        MEQSUM,
        "all",
        "its target",
        load=lambda: (["q a", "q b", "q c", "q a"], ["t 1", "t 2", "t 1", "t 3"]),
    )
    queries, candidates = task.texts()
    assert queries == ["q a", "q b", "q c"] and candidates == ["t 1", "t 2", "t 3"]
    assert [r.tolist() for r in task.pool[2]] == [[0, 2], [1], [0]]
    assert task.items == 3 and task.candidates == 3
    # embeddings in which every query points at exactly its targets: perfect scores
    q = np.array([[1.0, 0, 1], [0, 1, 0], [1, 0, 0]])
    c = np.eye(3)
    scored = task.score((q, c))
    assert list(scored) == ["ndcg_at_10", "mrr", "recall_at_1"]
    assert scored["ndcg_at_10"].value == pytest.approx(1.0) and scored["mrr"].value == pytest.approx(1.0)
    # recall@1 of a query with two relevant candidates is at most 1/2
    np.testing.assert_allclose(scored["recall_at_1"].outputs[0], [0.5, 1.0, 1.0])


def test_the_control_tasks_dev_split_is_left_out_of_it_when_a_run_selects_on_it():
    """``doid-definition-name-dev``: 1,000 seeded definitions with their names, scored only when named; a run that
    selects on it leaves exactly those diseases out of ``doid-definition-name`` (the leakage accounting,
    ``kit.evaluation.rows.shared_items``), and study 1 selects on it by default when its control is tested there."""
    from kit.evaluation.rows import shared_items
    from kit.evaluation.tasks import NAMED_ONLY, TASKS, dev_split
    from kit.studies.simcse_augmentations.params import SimCSEParams

    dev, full = TASKS["doid-definition-name-dev"], TASKS["doid-definition-name"]
    assert dev_split(full.name) == dev.name and dev_split("biosses-all") is None and dev.name in NAMED_ONLY
    assert dev.items == dev.candidates == 1000
    texts = frozenset(text for item in dev.item_texts() for text in item)
    left_out = shared_items(full, texts)
    assert left_out.sum() == 1000 and full.items - left_out.sum() == 8962
    declared = {"primary": "swap_10 - simcse on doid-definition-name"}
    assert SimCSEParams.from_dict(declared).select_on == ["doid-definition-name-dev"]
    grouped = {**declared, "suite": ["retrieval", "biosses-all"]}  # the control's task named through a group
    assert SimCSEParams.from_dict(grouped).select_on == ["doid-definition-name-dev"]
    assert SimCSEParams.from_dict({"primary": None}).select_on == ["rqe-validation"]  # no dev split: as before
    chosen = {**declared, "select_on": ["rqe-validation"]}
    assert SimCSEParams.from_dict(chosen).select_on == ["rqe-validation"]  # a run file's own choice stands
