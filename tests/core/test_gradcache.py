"""GradCache gives the full-batch loss and gradients, with dropout masks replayed exactly."""

import numpy as np
import pytest
import torch

from kit.core.config import TrainConfig
from kit.core.devices import to_device
from kit.core.gradcache import CachedSimCSEObjective
from kit.core.models import Encoder
from kit.core.objectives import SimCSEObjective
from kit.core.train import train_contrastive

CONFIG = TrainConfig(batch_size=6, max_length=24, steps=2, eval_every=1, device="cpu")


@pytest.fixture
def encoder():
    return Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)


def _grads(encoder, objective, texts, seed=0, train=True):
    encoder.zero_grad(set_to_none=True)
    encoder.train(train)
    torch.manual_seed(seed)
    loss, _ = objective(encoder, texts, np.arange(len(texts)))
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in encoder.named_parameters() if p.grad is not None}


def _close(a, b, atol):
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=atol, rtol=1e-4, msg=name)


def test_cached_equals_full_batch_without_dropout(encoder, pubmed):
    texts = pubmed[:6]
    loss, grads = _grads(encoder, SimCSEObjective(encoder, CONFIG), texts, train=False)
    cached_loss, cached = _grads(encoder, CachedSimCSEObjective(encoder, CONFIG, mini_batch_size=5), texts, train=False)
    assert cached_loss == pytest.approx(loss, abs=1e-6)
    _close(cached, grads, atol=1e-5)  # float32 sums over other shapes: about 1e-6 apart here


def test_replay_reproduces_the_dropout_masks(encoder, pubmed):
    texts = pubmed[:6]
    objective = CachedSimCSEObjective(encoder, CONFIG, mini_batch_size=4)
    loss, cached = _grads(encoder, objective, texts, seed=3)

    # reference: the same mini-batches embedded *with* a graph, in the same RNG order, no caching
    encoder.zero_grad(set_to_none=True)
    torch.manual_seed(3)
    feats = to_device(encoder.tokenize(texts + texts, CONFIG.max_length), encoder.device)
    reps = [encoder({k: v[i : i + 4] for k, v in feats.items()}, training_head=True) for i in range(0, 12, 4)]
    emb = torch.cat(reps)
    ref_loss, _ = objective.loss_fn(emb[:6], emb[6:])
    ref_loss.backward()
    assert loss == pytest.approx(ref_loss.item(), abs=1e-6)
    _close(cached, {n: p.grad for n, p in encoder.named_parameters() if p.grad is not None}, atol=1e-6)
    # a different dropout draw gives different gradients: the comparison above can fail
    _, other = _grads(encoder, objective, texts, seed=4)
    assert any(not torch.allclose(other[n], cached[n]) for n in cached)


def test_one_mini_batch_is_the_plain_objective_with_dropout(encoder, pubmed):
    texts = pubmed[:6]
    loss, grads = _grads(encoder, SimCSEObjective(encoder, CONFIG), texts, seed=1)
    cached_loss, cached = _grads(encoder, CachedSimCSEObjective(encoder, CONFIG, mini_batch_size=12), texts, seed=1)
    assert cached_loss == pytest.approx(loss, abs=1e-6)
    _close(cached, grads, atol=1e-6)


def test_trains_through_the_loop(encoder, pubmed, biosses):
    from kit.evaluation.sts import sts_report

    history = train_contrastive(
        encoder,
        pubmed[:200],
        CONFIG,
        lambda e: sts_report(e, biosses),
        objective=CachedSimCSEObjective(encoder, CONFIG, mini_batch_size=4),
    )
    assert [r["step"] for r in history.rows] == [0, 1, 2] and all(np.isfinite(r["loss"]) for r in history.rows[1:])
