import math

import numpy as np
import pytest
import torch
from torch import nn

from kit.qfcl import (
    Chunk, KeyQueue, contrastive, hard_negatives, key_encoder, mean_states, momentum_update, noun_chunks, np_dictionary,
    question_focus, spacy_pipeline,
)


@pytest.fixture(scope="module")
def nlp():
    return spacy_pipeline()


def test_focus_is_the_noun_phrases_shared_by_question_and_summary(nlp):
    chq = "My mother has type 2 diabetes and her doctor changed the insulin dose. Is metformin still safe?"
    faq = "Is metformin safe with a new insulin dose for type 2 diabetes?"
    chq_chunks, faq_chunks = noun_chunks([chq, faq], nlp)
    focus = {c.text.lower() for c in question_focus(chq_chunks, faq_chunks)}
    assert "metformin" in focus and "type 2 diabetes" in focus
    for c in faq_chunks:
        assert faq[c.start:c.end] == c.text  # character spans point into the sentence


def test_hard_negative_differs_from_its_faq_only_in_focus_phrases():
    faq = "What are the side effects of metformin for diabetes?"
    focus = [Chunk("metformin", 29, 38, "NN"), Chunk("diabetes", 43, 51, "NN")]
    dictionary = np_dictionary([[Chunk("aspirin", 0, 7, "NN"), Chunk("asthma", 0, 6, "NN"), Chunk("metformin", 0, 9, "NN"),
                                 Chunk("the kidneys", 0, 11, "NNS")]])
    negs = hard_negatives(faq, focus, dictionary, 8, np.random.default_rng(0))
    assert len(negs) == 8
    pattern = faq.replace("metformin", "{}").replace("diabetes", "{}")
    for neg in negs:
        prefix, rest = neg.split(" of ", 1)
        a, b = rest.removesuffix("?").split(" for ")
        assert neg == pattern.format(a, b) and prefix == "What are the side effects"
        assert a in ("aspirin", "asthma", "diabetes") and b in ("aspirin", "asthma", "metformin")  # same label, never itself
        assert "the kidneys" not in neg  # another label is never used
    assert hard_negatives(faq, [], dictionary, 4, np.random.default_rng(0)) == []  # no focus, no hard negatives


def test_momentum_update_moves_the_key_by_one_minus_m_and_gives_it_no_gradient():
    torch.manual_seed(0)
    query = nn.Linear(4, 3)
    key = key_encoder(query)
    with torch.no_grad():
        for p in query.parameters():
            p.add_(1.0)
    before = [p.clone() for p in key.parameters()]
    momentum_update(key, query, m=0.9)
    for b, k, q in zip(before, key.parameters(), query.parameters()):
        torch.testing.assert_close(k, 0.9 * b + 0.1 * q)
        assert not k.requires_grad
    assert not key(torch.randn(2, 4)).requires_grad  # nothing to backpropagate into the key encoder


def test_queue_is_fifo_with_its_size():
    q = KeyQueue(size=4, dim=2)
    assert len(q) == 0 and q.tensor().shape == (0, 2)
    vec = lambda *xs: torch.tensor([[x, 1.0] for x in xs])  # noqa: E731
    q.push(vec(1, 2, 3))
    q.push(vec(4, 5))
    assert len(q) == 4
    first = q.tensor()[:, 0] / q.tensor()[:, 1]  # undo the normalisation: x / 1
    torch.testing.assert_close(first, torch.tensor([2.0, 3.0, 4.0, 5.0]))
    q.push(vec(6, 7, 8, 9, 10))  # more than the queue holds: the newest four stay
    torch.testing.assert_close(q.tensor()[:, 0] / q.tensor()[:, 1], torch.tensor([7.0, 8.0, 9.0, 10.0]))


def test_contrastive_loss_equals_a_hand_computed_value():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    p = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    queue = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    tau = 0.5
    s = 1 / math.sqrt(2)
    row0 = -math.log(math.exp(s / tau) / (math.exp(s / tau) + math.exp(1 / tau) + math.exp(-1 / tau)))
    row1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 2 * math.exp(0.0)))
    assert contrastive(a, p, queue, tau).item() == pytest.approx((row0 + row1) / 2, rel=1e-6)
    # per-anchor hard negatives with a mask: anchor 1's second negative is padding, anchor 0 has none
    hard = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [5.0, 5.0]]])
    mask = torch.tensor([[0, 0], [1, 0]])
    only1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0.0)))
    assert contrastive(a, p, hard, tau, mask).item() == pytest.approx(only1, rel=1e-6)
    assert contrastive(a, p, hard, tau, torch.zeros(2, 2)).item() == 0.0


def test_mean_states_ignore_padding():
    states = torch.tensor([[[1.0], [3.0], [100.0]]])
    assert mean_states(states, torch.tensor([[1, 1, 0]])).item() == 2.0
