"""MED-SE's method (Hwang, Yoo, Choi 2022, "MED-SE: Medical Entity Definition-based Sentence
Embedding", arXiv:2212.04734): training mixtures of sentences with and without entities, a batch
sampler that handles sentences whose entity already occurs in the batch (naive / remove / replace),
and the entity-level loss: the entity's token states -> ``EntityEncoder`` -> InfoNCE against the
definition's embedding from a separate ``DefinitionEncoder``; L = L_sen + lambda L_ent.
"""

from __future__ import annotations

import copy
from typing import Literal

import numpy as np
import torch
from torch import nn

from kit.core.batches import Batches
from kit.core.config import TrainConfig
from kit.core.devices import to_device
from kit.core.losses import info_nce
from kit.core.models import Encoder, masked_mean, token_limit
from kit.core.objectives import SimCSEObjective
from kit.studies.medse_entity_definitions.linking import Mention, token_span


def mixture_fits(size: int, none_share: float, n_entity: int, n_none: int) -> bool:
    """A mixture of ``size`` rows, round(size * none_share) of them entity-free, can be drawn without
    replacement from ``n_entity`` linked and ``n_none`` entity-free sentences."""
    need_none = round(size * none_share)
    return need_none <= n_none and size - need_none <= n_entity


def largest_mixture(none_share: float, n_entity: int, n_none: int) -> int:
    """The largest size that ``mixture_fits``: min(n_entity / (1 - share), n_none / share) fits, and the
    rounding of the entity-free count can leave room for a few more (sizes that fit form a prefix)."""
    entity_room = n_entity / (1 - none_share) if none_share < 1 else np.inf
    size = int(min(entity_room, n_none / none_share if none_share > 0 else np.inf))
    while mixture_fits(size + 1, none_share, n_entity, n_none):
        size += 1
    return size


def training_mixture(
    with_entity: list[int], without: list[int], none_share: float, size: int, rng: np.random.Generator
) -> list[int]:
    """``size`` corpus rows, a share ``none_share`` of them without entities (the paper's S_none
    ratio), drawn without replacement and shuffled."""
    n_none = round(size * none_share)
    if not mixture_fits(size, none_share, len(with_entity), len(without)):
        raise ValueError(
            f"a mixture of {size:,} with {none_share:.0%} S_none needs {size - n_none:,} entity and {n_none:,} "
            f"entity-free sentences; the corpus has {len(with_entity):,} and {len(without):,}"
        )
    rows = [*rng.choice(with_entity, size - n_none, replace=False), *rng.choice(without, n_none, replace=False)]
    return [int(r) for r in rng.permutation(rows)]


DedupStrategy = Literal["naive", "remove", "replace"]


class DedupBatches(Batches):
    """Batches in which no entity occurs twice, as the paper's Table 7 compares.

    ``entities[i]``: the entity chosen for row i (None: the row has none, never a duplicate).
    ``naive``: plain shuffled batches. ``remove``: rows whose entity is already in the batch
    are dropped (smaller batches). ``replace``: they are put back at the front of the queue
    and the batch is filled with the next rows whose entity is new (full batches).
    """

    def __init__(self, entities: list[str | None], batch_size: int, rng: np.random.Generator, strategy: DedupStrategy):
        super().__init__(len(entities), batch_size, rng)
        if strategy not in ("naive", "remove", "replace"):
            raise ValueError(f"unknown duplicate-entity strategy '{strategy}'; choose naive, remove or replace")
        self.entities, self.strategy = entities, strategy
        distinct = len({e for e in entities if e is not None}) + sum(e is None for e in entities)
        if strategy == "replace" and distinct < batch_size:
            raise ValueError(
                f"'replace' needs at least {batch_size} rows with distinct entities; the corpus has {distinct}"
            )

    def next(self) -> np.ndarray:
        if self.strategy == "naive":
            return super().next()
        if self.strategy == "remove":
            idx = super().next()
            return idx[self._first_of_entity(idx)]
        batch, seen, skipped = [], set(), []
        for _ in range(2 * self.n):
            row = self.pop()
            entity = self.entities[row]
            if row in batch or (entity is not None and entity in seen):
                skipped.append(row)
                continue
            batch.append(row)
            seen.add(entity)
            if len(batch) == self.batch_size:
                break
        self.requeue(skipped)  # skipped rows are seen first in the next batch
        return np.asarray(batch)

    def _first_of_entity(self, idx: np.ndarray) -> np.ndarray:
        seen, keep = set(), []
        for i in idx:
            e = self.entities[i]
            keep.append(e is None or e not in seen)
            seen.add(e)
        return np.asarray(keep, dtype=bool)


EntityEncoderKind = Literal["mean", "transformer", "cross"]


class EntityEncoder(nn.Module):
    """The entity's representation from the sentence encoder's token states [B, T, d] and the
    entity's token mask [B, T]:

    - ``mean``: masked mean over the entity's tokens;
    - ``transformer``: a one-layer Transformer encoder whose attention stays inside the entity's
      tokens, then the masked mean (MED-SE's shallow entity encoder);
    - ``cross``: the entity's tokens attend over all tokens of the sentence (one multi-head
      attention layer with a residual connection and layer norm), then the masked mean.
    """

    def __init__(self, kind: EntityEncoderKind, dim: int, heads: int = 4):
        super().__init__()
        if kind not in ("mean", "transformer", "cross"):
            raise ValueError(f"unknown entity encoder '{kind}'; choose mean, transformer or cross")
        if kind != "mean" and dim % heads:
            raise ValueError(f"hidden size {dim} is not divisible by {heads} heads")
        self.kind = kind
        if kind == "transformer":
            self.layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.1, batch_first=True)
        elif kind == "cross":
            self.attention = nn.MultiheadAttention(dim, heads, dropout=0.1, batch_first=True)
            self.norm = nn.LayerNorm(dim)

    def forward(self, states: torch.Tensor, entity_mask: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        if self.kind == "transformer":
            states = self.layer(states, src_key_padding_mask=~entity_mask)
        elif self.kind == "cross":
            attended, _ = self.attention(
                states, states, states, key_padding_mask=~attention_mask.bool(), need_weights=False
            )
            states = self.norm(states + attended)
        return masked_mean(states, entity_mask)


class DefinitionEncoder(nn.Module):
    """Embeds entity definitions with its own copy of the starting encoder (mean pooling).

    ``trainable=False``: the copy is frozen, so every definition is embedded once here and looked
    up per batch (no forward pass per step). ``trainable=True``: definitions of the batch are
    encoded in the graph at every step and the copy is trained with the entity loss.
    """

    def __init__(self, encoder: Encoder, definitions: dict[str, str], trainable: bool, max_length: int = 64):
        super().__init__()
        self.ids = {e: i for i, e in enumerate(definitions)}
        self.texts, self.trainable, self.max_length = list(definitions.values()), trainable, max_length
        copy_ = copy.deepcopy(encoder)
        copy_.pooler, copy_.mlp = "mean", None
        if trainable:
            self.encoder = copy_
        else:
            table = (
                copy_.encode(self.texts, max_length=max_length, show_progress=False)
                if self.texts
                else np.zeros((0, encoder.dim))
            )
            self.register_buffer("table", torch.from_numpy(table), persistent=False)

    def forward(self, entities: list[str]) -> torch.Tensor:
        rows = [self.ids[e] for e in entities]
        if not self.trainable:
            return self.table[rows]
        feats = to_device(self.encoder.tokenize([self.texts[r] for r in rows], self.max_length), self.encoder.device)
        return self.encoder(feats)


def entity_loss(entities: torch.Tensor, definitions: torch.Tensor, temperature: float) -> torch.Tensor:
    """MED-SE's entity-level loss: InfoNCE between entity embeddings h_i and definition
    embeddings d_i of the same batch,

        L_ent = mean_i -log( e^{s(h_i, d_i)/tau} / sum_j e^{s(h_i, d_j)/tau} ).
    """
    return info_nce(entities, definitions, temperature)


class MedSEObjective(SimCSEObjective):
    """MED-SE: L = L_sen + lambda L_ent. L_sen is unsup-SimCSE on the batch; L_ent is
    ``entity_loss`` over the batch rows whose chosen entity survives truncation, the entity's
    token states taken from the first (dropout) view of the same forward pass.
    ``mentions[i]``: the entity chosen for corpus row i (None: row without entity)."""

    stat_names = ("pos_cos", "neg_cos", "entity_loss")

    def __init__(
        self,
        encoder: Encoder,
        config: TrainConfig,
        mentions: list[Mention | None],
        definitions: DefinitionEncoder,
        entity_encoder: EntityEncoderKind = "transformer",
        lam: float = 0.1,
        entity_temperature: float = 0.05,
        dedup: DedupStrategy = "replace",
    ):
        super().__init__(encoder, config)
        if lam < 0 or entity_temperature <= 0:
            raise ValueError(f"lambda must be >= 0 and the entity temperature > 0, got {lam}, {entity_temperature}")
        self.mentions, self.definitions, self.lam, self.entity_temperature, self.dedup = (
            mentions,
            definitions,
            lam,
            entity_temperature,
            dedup,
        )
        self.entity_encoder = EntityEncoder(entity_encoder, encoder.dim)

    def batches(self, corpus: list[str]) -> Batches:
        rng = np.random.default_rng(np.random.SeedSequence(self.config.seed).spawn(2)[0])
        return DedupBatches([m.entity if m else None for m in self.mentions], self.config.batch_size, rng, self.dedup)

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        b = len(texts)
        feats = encoder.tokenizer(
            texts + texts,
            padding=True,
            truncation=True,
            max_length=token_limit(encoder.tokenizer, self.config.max_length),
            return_tensors="pt",
            return_offsets_mapping=True,
        )
        offsets = feats.pop("offset_mapping")[:b].tolist()
        feats = to_device(dict(feats), encoder.device)
        emb, states = encoder.embed_with_states(feats, training_head=True)
        loss, stats = self.loss_fn(emb[:b], emb[b:])
        keep, spans = [], torch.zeros(b, feats["input_ids"].shape[1], dtype=torch.bool)
        for i, row in enumerate(rows):
            m = self.mentions[row]
            span = token_span(offsets[i], m.start, m.end) if m else None
            if span:
                keep.append(i)
                spans[i, span[0] : span[1]] = True
        ent_loss = torch.zeros((), device=emb.device)
        if len(keep) >= 2:
            spans = spans.to(emb.device)
            h = self.entity_encoder(states[keep], spans[keep], feats["attention_mask"][keep])
            d = self.definitions([self.mentions[rows[i]].entity for i in keep])
            ent_loss = entity_loss(h, d.to(h.dtype), self.entity_temperature)
        return loss + self.lam * ent_loss, {**stats, "entity_loss": ent_loss.detach().float()}
