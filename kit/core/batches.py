"""Batches of corpus rows for contrastive training: shuffled epochs from one numpy Generator."""

from __future__ import annotations

import numpy as np


class Batches:
    """Endless shuffled batches of corpus indices, epoch by epoch, from one Generator.

    The epoch is a queue of rows: ``next`` takes a full batch from its front (a new shuffled epoch
    when fewer than a batch remain); samplers that build batches row by row use ``pop`` and put
    rows back at the front with ``requeue``.

    With ``lengths``, each epoch's permutation is grouped by length as transformers'
    ``LengthGroupedSampler`` does: cut into mega-batches of ``GROUP`` batches, each sorted by
    decreasing length, so a batch holds sentences of similar length (less padding) while the
    epoch stays shuffled at the mega-batch scale.
    """

    GROUP = 50

    def __init__(self, n: int, batch_size: int, rng: np.random.Generator, lengths: np.ndarray | None = None):
        if n < batch_size:
            raise ValueError(f"corpus of {n} sentences is smaller than one batch ({batch_size})")
        if lengths is not None and len(lengths) != n:
            raise ValueError(f"{len(lengths)} lengths for {n} sentences")
        self.n, self.batch_size, self.rng, self.lengths = n, batch_size, rng, lengths
        self.order, self.pos = self._permutation(), 0

    def _permutation(self) -> np.ndarray:
        order = self.rng.permutation(self.n)
        if self.lengths is None:
            return order
        size = self.GROUP * self.batch_size
        return np.concatenate(
            [m[np.argsort(-self.lengths[m], kind="stable")] for m in np.split(order, range(size, self.n, size))]
        )

    def next(self) -> np.ndarray:
        """The next full batch of row indices."""
        if self.pos + self.batch_size > len(self.order):
            self.order, self.pos = self._permutation(), 0
        idx = self.order[self.pos : self.pos + self.batch_size]
        self.pos += self.batch_size
        return idx

    def pop(self) -> int:
        """The row at the front of the queue (a new shuffled epoch when the queue is empty)."""
        if self.pos >= len(self.order):
            self.order, self.pos = self._permutation(), 0
        row = int(self.order[self.pos])
        self.pos += 1
        return row

    def requeue(self, rows: list[int]) -> None:
        """Put ``rows`` back at the front of the queue, in this order."""
        self.order = np.concatenate([np.asarray(rows, dtype=int), self.order[self.pos :]])
        self.pos = 0

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "order": self.order.tolist(), "pos": self.pos}

    def load(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.order, self.pos = np.asarray(state["order"]), state["pos"]
