"""MoCo's momentum key encoder and FIFO key queue."""

import torch
from torch import nn

from kit.studies.qfcl_summarization.moco import KeyQueue, key_encoder, momentum_update


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
