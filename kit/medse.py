"""Study 4's methods: MED-SE (Hwang, Yoo, Choi 2022, "MED-SE: Medical Entity Definition-based
Sentence Embedding", arXiv:2212.04734) and the baselines it is compared with.

- entity linking by longest match over an ontology's names and synonyms (``DictionaryLinker``;
  any object with ``link(text) -> list[Mention]``, e.g. a MedCAT or scispaCy wrapper, can stand in);
- training mixtures of sentences with and without entities, and a batch sampler that handles
  sentences whose entity already occurs in the batch (naive / remove / replace);
- the entity-level loss: token states of the entity -> ``EntityEncoder`` -> InfoNCE against the
  definition's embedding from a separate ``DefinitionEncoder``; L = L_sen + lambda L_ent;
- baselines: contrastive tension (Carlsson et al. 2021), ConSERT token cutoff and token shuffle
  (Yan et al. 2021) as pure functions on embedding inputs, and BERT-whitening (Su et al. 2021).
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import torch
from torch import nn

from kit.data import EntityEntry
from kit.losses import info_nce
from kit.models import Encoder
from kit.progress import bar
from kit.devices import to_device
from kit.train import Batches, SimCSEObjective, TrainConfig

# ---- entity linking --------------------------------------------------------------

WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Mention:
    """An entity mention: character span [start, end) of the sentence, the entity id and the text."""

    start: int
    end: int
    entity: str
    text: str


class Linker(Protocol):
    def link(self, text: str) -> list[Mention]: ...


def _is_abbreviation(name: str) -> bool:
    return len(name) <= 6 and sum(c.isupper() for c in name) >= 2


class DictionaryLinker:
    """Longest match over the names and synonyms of ``entries`` on the sentence's word tokens
    (``\\w+``, so hyphens and apostrophes are boundaries and "ataxia-telangiectasia" matches
    "ataxia - telangiectasia"). Case-insensitive, except abbreviations (at most 6 characters with
    two or more capitals, e.g. "ALL", "DES"), which must match in case; other names that are
    English stop words are skipped. Non-overlapping mentions, left to right."""

    def __init__(self, entries: list[EntityEntry]):
        from spacy.lang.en.stop_words import STOP_WORDS

        self.names: dict[tuple[str, ...], str] = {}
        self.max_words = 1
        for e in entries:
            for name in (e.name, *e.synonyms):
                words, abbreviation = tuple(m.group() for m in WORD.finditer(name)), _is_abbreviation(name)
                if not words or (not abbreviation and len(words) == 1 and words[0].lower() in STOP_WORDS):
                    continue
                key = words if abbreviation else tuple(w.lower() for w in words)
                self.names.setdefault(key, e.id)
                self.max_words = max(self.max_words, len(words))

    def link(self, text: str) -> list[Mention]:
        tokens = list(WORD.finditer(text))
        words = [t.group() for t in tokens]
        lower = [w.lower() for w in words]
        out, i = [], 0
        while i < len(tokens):
            for n in range(min(self.max_words, len(tokens) - i), 0, -1):
                entity = self.names.get(tuple(lower[i:i + n])) or self.names.get(tuple(words[i:i + n]))
                if entity:
                    start, end = tokens[i].start(), tokens[i + n - 1].end()
                    out.append(Mention(start, end, entity, text[start:end]))
                    i += n
                    break
            else:
                i += 1
        return out


def link_corpus(sentences: list[str], linker: Linker) -> list[list[Mention]]:
    return [linker.link(s) for s in bar(sentences, desc="link entities", show=len(sentences) > 2000)]


def corpus_statistics(mentions: list[list[Mention]]) -> dict[str, float]:
    """The paper's Tables 1-2 for a linked corpus: sentences with and without entities, mentions,
    unique entities, the share of mentions taken by the top 10% most frequent entities, and
    entities per sentence (over sentences with at least one)."""
    counts = Counter(m.entity for ms in mentions for m in ms)
    total = sum(counts.values())
    top = sorted(counts.values(), reverse=True)[: max(1, math.ceil(len(counts) / 10))] if counts else []
    with_entity = sum(bool(ms) for ms in mentions)
    return {
        "sentences": len(mentions), "with entities": with_entity, "without entities": len(mentions) - with_entity,
        "mentions": total, "unique entities": len(counts),
        "top-10% entities' share of mentions": sum(top) / total if total else float("nan"),
        "entities per sentence (with any)": total / with_entity if with_entity else float("nan"),
    }


def token_span(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """[first, last + 1) of the (sub)word tokens whose characters lie in [start, end), from a fast
    tokenizer's ``offset_mapping``; None when truncation removed the span. Special tokens (0, 0) never count."""
    inside = [i for i, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
    return (inside[0], inside[-1] + 1) if inside else None


def training_mixture(with_entity: list[int], without: list[int], none_share: float, size: int,
                     rng: np.random.Generator) -> list[int]:
    """``size`` corpus rows, a share ``none_share`` of them without entities (the paper's S_none
    ratio), drawn without replacement and shuffled."""
    n_none = round(size * none_share)
    if n_none > len(without) or size - n_none > len(with_entity):
        raise ValueError(f"a mixture of {size} with {none_share:.0%} S_none needs {size - n_none} entity and {n_none} "
                         f"entity-free sentences; the corpus has {len(with_entity)} and {len(without)}")
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
            raise ValueError(f"'replace' needs at least {batch_size} rows with distinct entities; the corpus has {distinct}")

    def next(self) -> np.ndarray:
        if self.strategy == "naive":
            return super().next()
        if self.strategy == "remove":
            idx = super().next()
            return idx[self._first_of_entity(idx)]
        batch, seen, skipped = [], set(), []
        for _ in range(2 * self.n):
            if self.pos >= len(self.order):  # the queue is empty: a new epoch
                self.order, self.pos = self.rng.permutation(self.n), 0
            row = int(self.order[self.pos])
            self.pos += 1
            entity = self.entities[row]
            if row in batch or (entity is not None and entity in seen):
                skipped.append(row)
                continue
            batch.append(row)
            seen.add(entity)
            if len(batch) == self.batch_size:
                break
        # skipped rows are seen first in the next batch
        self.order = np.concatenate([np.asarray(skipped, dtype=int), self.order[self.pos:]])
        self.pos = 0
        return np.asarray(batch)

    def _first_of_entity(self, idx: np.ndarray) -> np.ndarray:
        seen, keep = set(), []
        for i in idx:
            e = self.entities[i]
            keep.append(e is None or e not in seen)
            seen.add(e)
        return np.asarray(keep, dtype=bool)


# ---- the entity-level loss -------------------------------------------------------------

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
            attended, _ = self.attention(states, states, states, key_padding_mask=~attention_mask.bool(), need_weights=False)
            states = self.norm(states + attended)
        w = entity_mask.unsqueeze(-1).to(states.dtype)
        return (states * w).sum(1) / w.sum(1).clamp(min=1.0)


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
            table = copy_.encode(self.texts, max_length=max_length, show_progress=False) if self.texts else np.zeros((0, encoder.dim))
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

    def __init__(self, encoder: Encoder, config: TrainConfig, mentions: list[Mention | None], definitions: DefinitionEncoder,
                 entity_encoder: EntityEncoderKind = "transformer", lam: float = 0.1, entity_temperature: float = 0.05,
                 dedup: DedupStrategy = "replace"):
        super().__init__(encoder, config)
        if lam < 0 or entity_temperature <= 0:
            raise ValueError(f"lambda must be >= 0 and the entity temperature > 0, got {lam}, {entity_temperature}")
        self.mentions, self.definitions, self.lam, self.entity_temperature, self.dedup = (
            mentions, definitions, lam, entity_temperature, dedup)
        self.entity_encoder = EntityEncoder(entity_encoder, encoder.dim)

    def batches(self, corpus: list[str]) -> Batches:
        rng = np.random.default_rng(np.random.SeedSequence(self.config.seed).spawn(2)[0])
        return DedupBatches([m.entity if m else None for m in self.mentions], self.config.batch_size, rng, self.dedup)

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        b = len(texts)
        feats = encoder.tokenizer(texts + texts, padding=True, truncation=True, max_length=self.config.max_length,
                                  return_tensors="pt", return_offsets_mapping=True)
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
                spans[i, span[0]:span[1]] = True
        ent_loss = torch.zeros((), device=emb.device)
        if len(keep) >= 2:
            spans = spans.to(emb.device)
            h = self.entity_encoder(states[keep], spans[keep], feats["attention_mask"][keep])
            d = self.definitions([self.mentions[rows[i]].entity for i in keep])
            ent_loss = entity_loss(h, d.to(h.dtype), self.entity_temperature)
        return loss + self.lam * ent_loss, {**stats, "entity_loss": ent_loss.detach().float()}


# ---- baselines -------------------------------------------------------------------------


class ContrastiveTensionObjective(SimCSEObjective):
    """Contrastive tension with in-batch negatives (Carlsson et al. 2021, "Semantic Re-tuning with
    Contrastive Tension", ICLR; as sentence-transformers' ContrastiveTensionLossInBatchNegatives):
    two independently trained copies f1 (the encoder kept) and f2 of the starting model embed the
    same sentences; L = InfoNCE(f1(x), f2(x)) with in-batch negatives."""

    def __init__(self, encoder: Encoder, config: TrainConfig):
        super().__init__(encoder, config)
        self.partner = copy.deepcopy(encoder)

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        feats = to_device(encoder.tokenize(texts, self.config.max_length), encoder.device)
        self.partner.train(encoder.training)
        return self.loss_fn(encoder(feats, training_head=True), self.partner(feats, training_head=True))


def embedding_inputs(encoder: Encoder, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Tokenizer features -> the backbone's embedding inputs (``inputs_embeds`` from the word
    embeddings, explicit ``position_ids``), which ConSERT's view generators edit."""
    ids = features["input_ids"]
    out = {k: v for k, v in features.items() if k != "input_ids"}
    out["inputs_embeds"] = encoder.backbone.get_input_embeddings()(ids)
    out["position_ids"] = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    return out


def token_cutoff(inputs: dict[str, torch.Tensor], content: torch.Tensor, rate: float, generator: torch.Generator) -> dict:
    """ConSERT token cutoff (Yan et al. 2021, "ConSERT", ACL): zero the embedding rows of
    ceil(rate x n) randomly chosen content tokens of each sentence (n content tokens; special and
    padding tokens never). Returns new inputs; the given ones are unchanged."""
    scores = torch.rand(content.shape, generator=generator).to(content.device).masked_fill(~content, 2.0)
    k = torch.ceil(content.sum(1) * rate).long()
    ranks = scores.argsort(1).argsort(1)
    cut = (ranks < k.unsqueeze(1)) & content
    return {**inputs, "inputs_embeds": inputs["inputs_embeds"].masked_fill(cut.unsqueeze(-1), 0.0)}


def token_shuffle(inputs: dict[str, torch.Tensor], content: torch.Tensor, generator: torch.Generator) -> dict:
    """ConSERT token shuffle: permute the position ids of each sentence's content tokens (special
    and padding positions stay), so the same tokens are read in a shuffled order. Returns new inputs."""
    positions = inputs["position_ids"].clone()
    for i in range(len(positions)):
        where = content[i].nonzero().squeeze(1)
        perm = torch.randperm(len(where), generator=generator).to(where.device)
        positions[i, where] = positions[i, where[perm]]
    return {**inputs, "position_ids": positions}


@contextlib.contextmanager
def dropout_off(module: nn.Module):
    """Eval mode for the duration (no dropout), then the previous mode."""
    was = module.training
    module.eval()
    try:
        yield
    finally:
        module.train(was)


class ConSERTObjective(SimCSEObjective):
    """ConSERT's unsupervised objective with one view generator in place of dropout: both views of
    each sentence come from ``token_cutoff`` (``view='cutoff'``) or ``token_shuffle`` applied
    independently to its embedding inputs, encoded with dropout off; InfoNCE as in SimCSE."""

    def __init__(self, encoder: Encoder, config: TrainConfig, view: Literal["cutoff", "shuffle"], cutoff_rate: float = 0.15):
        super().__init__(encoder, config)
        if view not in ("cutoff", "shuffle"):
            raise ValueError(f"unknown ConSERT view '{view}'; choose cutoff or shuffle")
        self.view, self.cutoff_rate = view, cutoff_rate

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        feats = encoder.tokenizer(texts, padding=True, truncation=True, max_length=self.config.max_length,
                                  return_tensors="pt", return_special_tokens_mask=True)
        content = feats.pop("special_tokens_mask").eq(0) & feats["attention_mask"].bool()
        feats = to_device(dict(feats), encoder.device)
        content = content.to(encoder.device)
        generator = torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        inputs = embedding_inputs(encoder, feats)
        if self.view == "cutoff":
            views = [token_cutoff(inputs, content, self.cutoff_rate, generator) for _ in range(2)]
        else:
            views = [token_shuffle(inputs, content, generator) for _ in range(2)]
        both = {k: torch.cat([views[0][k], views[1][k]]) for k in inputs}
        with dropout_off(encoder):
            emb = encoder(both, training_head=True)
        return self.loss_fn(emb[: len(texts)], emb[len(texts) :])


@dataclass
class Whitening:
    """BERT-whitening (Su et al. 2021, "Whitening Sentence Representations for Better Semantics
    and Faster Retrieval"): x -> (x - mu) W with W = U diag(s)^(-1/2), where U diag(s) U^T is
    the covariance of the fitting embeddings; ``dim`` keeps the first k columns (dimension reduction)."""

    mean: np.ndarray
    matrix: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, dim: int | None = None) -> "Whitening":
        x = np.asarray(x, dtype=np.float64)
        if len(x) <= x.shape[1]:
            raise ValueError(f"whitening needs more fitting embeddings ({len(x)}) than dimensions ({x.shape[1]})")
        mean = x.mean(0)
        u, s, _ = np.linalg.svd(np.cov((x - mean).T, bias=True))
        return cls(mean, (u / np.sqrt(s))[:, :dim])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((np.asarray(x, dtype=np.float64) - self.mean) @ self.matrix).astype(np.float32)
