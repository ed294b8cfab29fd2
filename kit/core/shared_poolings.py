"""One frozen start model, encoded once for all the training-free poolings a study scores it with.

The positive control of studies 1 and 4 (``kit.study.CONTROL_ROWS``) scores the start's [CLS], mean and first-last
average embeddings, each with and without BERT-whitening, and the starting-model row one of them again: six or seven
rows that are one model. ``SharedPoolings`` reads the start once and computes every pooling its rows use in one
forward pass per batch (``Encoder.encode_poolers``). It keeps each call's arrays, so that the next row to encode the
same texts in the same batches (the suite's, the whitening sample's) finds them computed. A view's vectors equal
``Encoder.from_pretrained(name, pooler, seed).encode``'s bit for bit (``tests/core/test_shared_poolings.py``) until
a call of ``FAST_PATH_TEXTS`` texts or more, or a suite of as many announced by ``frozen_fast_path`` (whose calls
come one token batch at a time), has made one ONNX Runtime export of every pooling
(``kit.core.onnx_encoder.fastest_exact``); the calls after it run there, equal to about 1e-6.

Its weights are frozen (``requires_grad`` off): a row that trained them would fail at its first backward pass
instead of reading vectors of the untrained model. Memory: one float32 vector per pooling and text encoded, held
while the study lives (about 100 MB for a 256-wide model on study 1's largest suite).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kit.core.fingerprint import digest
from kit.core.models import Encoder
from kit.core.onnx_encoder import FAST_PATH_TEXTS, fastest_exact


class SharedPoolings:
    """``encoder`` (frozen here) under each of ``poolers``, every ``encode`` call computed once for all of them."""

    def __init__(self, encoder: Encoder, poolers: Sequence[str]) -> None:
        self.encoder = encoder.requires_grad_(False)
        self.poolers = tuple(dict.fromkeys(poolers))
        self.memo: dict[tuple, dict[str, np.ndarray]] = {}
        self.fast = None  # fastest_exact(encoder) under every pooling, made by prepare once it pays for itself

    def view(self, pooler: str) -> PoolingView:
        """The model under one of ``poolers``, used where an ``Encoder`` is."""
        if pooler not in self.poolers:
            raise ValueError(f"pooler must be one of {self.poolers} (the poolings shared), got {pooler!r}")
        return PoolingView(self, pooler)

    def encode(
        self,
        pooler: str,
        texts: list[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        texts = list(texts)
        key = (digest(texts), batch_size, max_length, normalize)
        if key not in self.memo:
            self.prepare(len(texts))
            model = self.fast or self.encoder
            self.memo[key] = model.encode_poolers(texts, self.poolers, batch_size, max_length, normalize, show_progress)
        return self.memo[key][pooler].copy()

    def prepare(self, texts: int) -> None:
        """Calls to come encode ``texts`` texts in all: from ``FAST_PATH_TEXTS``, they (and every later call) run on
        the ONNX Runtime export of every pooling, made now once."""
        if self.fast is None and texts >= FAST_PATH_TEXTS:
            fast = fastest_exact(self.encoder, texts, self.poolers)
            self.fast = None if fast is self.encoder else fast


@dataclass
class PoolingView:
    """A ``SharedPoolings`` model under one pooler: ``encode`` as ``Encoder.encode``; every other attribute the
    encoder's (its tokenizer, for length-sorted batches)."""

    shared: SharedPoolings
    pooler: str

    def encode(
        self,
        texts: list[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        return self.shared.encode(self.pooler, texts, batch_size, max_length, normalize, show_progress)

    def __getattr__(self, name: str):
        if name in ("shared", "pooler"):  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.shared.encoder, name)


def frozen_fast_path(encoder, texts: int):
    """The model to encode ``texts`` texts in all with ``encoder``'s frozen weights, in calls of any size (a suite's
    token batches): a ``PoolingView``, its ``SharedPoolings`` prepared for them; any other, ``fastest_exact``'s."""
    if isinstance(encoder, PoolingView):
        encoder.shared.prepare(texts)
        return encoder
    return fastest_exact(encoder, texts)
