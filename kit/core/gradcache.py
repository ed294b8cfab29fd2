"""Gradient caching for in-batch-negative losses: large contrastive batches in small memory.

GradCache (Gao, Zhang, Han, Callan 2021, "Scaling Deep Contrastive Learning Batch Size under
Memory Limited Setup", RepL4NLP), as sentence-transformers' CachedMultipleNegativesRankingLoss:

1. embed the batch in mini-batches without a graph, recording each mini-batch's RNG state;
2. compute the loss on those embeddings (a leaf tensor) and its gradient g with respect to them;
3. when the training loop calls ``loss.backward()``, re-embed each mini-batch *with* a graph under
   its recorded RNG state (so dropout draws the same masks) and back-propagate sum(emb * g).

The gradients equal those of the full-batch loss; peak activation memory is one mini-batch's.
"""

from __future__ import annotations

import contextlib
from functools import partial

import numpy as np
import torch

from kit.core.augment import Augmenter
from kit.core.config import TrainConfig
from kit.core.devices import autocast
from kit.core.models import Encoder
from kit.core.objectives import SimCSEObjective


def rng_state(device: torch.device) -> tuple:
    return torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None


@contextlib.contextmanager
def replayed_rng(state: tuple, device: torch.device):
    """Run the block under a recorded RNG state; the global RNG is left as it was before the block."""
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.set_rng_state(state[0])
        if state[1] is not None:
            torch.cuda.set_rng_state(state[1], device)
        yield


class CachedSimCSEObjective(SimCSEObjective):
    """``SimCSEObjective`` with GradCache over mini-batches of ``mini_batch_size`` rows of the
    2B-row input (both views); the same loss and gradients as the full batch in one pass."""

    def __init__(self, encoder: Encoder, config: TrainConfig, mini_batch_size: int, augmenter: Augmenter | None = None):
        super().__init__(encoder, config, augmenter)
        if mini_batch_size < 1:
            raise ValueError(f"mini_batch_size must be >= 1, got {mini_batch_size}")
        self.mini_batch_size = mini_batch_size

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        b, device = len(texts), encoder.device
        feats = self.view_features(encoder, texts, self.second_views(texts))
        chunks = [
            {k: v[i : i + self.mini_batch_size] for k, v in feats.items()}
            for i in range(0, 2 * b, self.mini_batch_size)
        ]
        states, reps = [], []
        with torch.no_grad():
            for chunk in chunks:
                states.append(rng_state(device))
                reps.append(encoder(chunk, training_head=True))
        comp = self.complementary_embeddings({k: v[:b] for k, v in feats.items()})
        emb = torch.cat(reps).detach().float().requires_grad_()
        with torch.enable_grad():
            loss, stats = self.loss_fn(emb[:b], emb[b:], comp)
            loss.backward()
        out = loss.detach().requires_grad_()
        out.register_hook(partial(self._replay, encoder, chunks, states, emb.grad.split(self.mini_batch_size)))
        return out, stats

    def _replay(self, encoder: Encoder, chunks, states, grads, grad_output: torch.Tensor) -> None:
        """Backward hook of the returned loss: re-embed each mini-batch with a graph and push its cached gradient."""
        device = encoder.device
        with torch.enable_grad(), autocast(device, self.config.precision):
            for chunk, state, grad in zip(chunks, states, grads):
                with replayed_rng(state, device):
                    reps = encoder(chunk, training_head=True)
                (reps.float() * grad).sum().mul(grad_output).backward()
