"""MoCo's momentum key encoder and key queue (He et al. 2020), as QFCL uses them."""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn import functional as F


def key_encoder(encoder: nn.Module) -> nn.Module:
    """A frozen copy of ``encoder`` that only moves by ``momentum_update`` (no gradients, no
    dropout: keys are deterministic)."""
    key = copy.deepcopy(encoder).eval()
    for p in key.parameters():
        p.requires_grad_(False)
    return key


@torch.no_grad()
def momentum_update(key: nn.Module, query: nn.Module, m: float) -> None:
    """theta_k <- m * theta_k + (1 - m) * theta_q, parameter by parameter (MoCo, He et al. 2020)."""
    for pk, pq in zip(key.parameters(), query.parameters()):
        pk.mul_(m).add_(pq.detach(), alpha=1 - m)


class KeyQueue:
    """A FIFO queue of K L2-normalised key vectors (the simple negatives); starts empty."""

    def __init__(self, size: int, dim: int, device: torch.device | str = "cpu"):
        if size < 1:
            raise ValueError(f"queue size must be >= 1, got {size}")
        self.keys = torch.zeros(size, dim, device=device)
        self.ptr, self.count = 0, 0

    def __len__(self) -> int:
        return self.count

    def tensor(self) -> torch.Tensor:
        """The keys currently held, oldest first."""
        if self.count < len(self.keys):
            return self.keys[: self.count]
        return torch.cat([self.keys[self.ptr :], self.keys[: self.ptr]])

    @torch.no_grad()
    def push(self, keys: torch.Tensor) -> None:
        """Enqueue ``keys`` [n, dim] (normalised here); the oldest leave once the queue is full."""
        keys = F.normalize(keys.detach(), dim=-1)[-len(self.keys) :]
        idx = (self.ptr + torch.arange(len(keys), device=self.keys.device)) % len(self.keys)
        self.keys[idx] = keys.to(self.keys.dtype)
        self.ptr = int((self.ptr + len(keys)) % len(self.keys))
        self.count = min(self.count + len(keys), len(self.keys))
