"""QFCL's objective (Zhang, Dou, Wang, Wu 2022, "Focus-Driven Contrastive Learning for Medical Question
Summarization", COLING) and the batches it reads:

    L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG,   L_ctr = alpha L_S + beta L_H,

where C is the encoder-side anchor (the CHQ's mean encoder state), G the decoder-side anchor (the
summary's mean decoder state), S the simple negatives (queued FAQ keys) and H the focus-driven hard
negatives; each L_* is ``kit.core.losses.info_nce`` of the anchor against the FAQ's key.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from kit.core.losses import info_nce
from kit.core.models import masked_mean, token_limit
from kit.core.settings import setting
from kit.studies.qfcl_summarization.focus import QFCLPair
from kit.studies.qfcl_summarization.moco import KeyQueue, key_encoder, momentum_update
from kit.studies.qfcl_summarization.seq2seq import Summarizer


@dataclass
class QFCLSettings:
    """The method's hyper-parameters, declared once (study 3's parameters extend them); demo-sized defaults."""

    queue_size: int = setting(256, "MoCo queue of simple negatives, K (the paper: 4096)", min=1)
    momentum: float = setting(0.99, "MoCo key-encoder momentum m (the paper: 0.999)", min=0, lt=1)
    temperature: float = setting(0.07, "contrastive temperature tau", gt=0)
    alpha: float = setting(1.0, "weight of the simple-negative loss L_S", min=0)
    beta: float = setting(0.5, "weight of the hard-negative loss L_H", min=0)


@dataclass
class QFCLConfig(QFCLSettings):
    """One ablation row: its loss switches (all off: the cross-entropy baseline) and the method's settings."""

    simple: bool = True  # S: queued FAQ keys as negatives
    hard: bool = True  # H: focus-driven hard negatives
    decoder: bool = True  # D: the summary's decoder states as a second anchor

    @property
    def contrastive(self) -> bool:
        return self.simple or self.hard


class QFCLObjective(nn.Module):
    """L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG with L_ctr = alpha L_S + beta L_H; the switches of
    ``QFCLConfig`` turn terms off (all off: the cross-entropy baseline). Keys come from a momentum
    copy of the encoder (MoCo); after each step ``after_step`` enqueues the batch's FAQ keys and
    moves the key encoder. Representations are mean output states (``masked_mean``)."""

    def __init__(self, s: Summarizer, cfg: QFCLConfig):
        super().__init__()
        self.s, self.cfg = s, cfg
        self.key = key_encoder(s.encoder) if cfg.contrastive else None
        dim = s.model.config.encoder.hidden_size if hasattr(s.model.config, "encoder") else s.model.config.d_model
        self.queue = KeyQueue(cfg.queue_size, dim, next(s.model.parameters()).device) if cfg.simple else None

    @torch.no_grad()
    def keys(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Key-encoder representations (mean of output states) of tokenized texts."""
        return masked_mean(self.key(input_ids=ids, attention_mask=mask).last_hidden_state, mask)

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``batch``: chq_ids/chq_mask, labels (FAQ ids, -100 on padding), and for the contrastive rows
        faq_ids/faq_mask, and for H hard_ids/hard_mask [B*N, T] with hard_valid [B, N]."""
        out = self.s.model(
            input_ids=batch["chq_ids"],
            attention_mask=batch["chq_mask"],
            labels=batch["labels"],
            output_hidden_states=self.cfg.decoder and self.cfg.contrastive,
        )
        terms = {"ce": out.loss}
        if not self.cfg.contrastive:
            return out.loss, terms
        positive = self.keys(batch["faq_ids"], batch["faq_mask"])
        anchors = {"C": masked_mean(out.encoder_last_hidden_state, batch["chq_mask"])}
        if self.cfg.decoder:
            anchors["G"] = masked_mean(out.decoder_hidden_states[-1], (batch["labels"] != -100).long())
        hard = None
        if self.cfg.hard:
            valid = batch["hard_valid"]
            hard = self.keys(batch["hard_ids"], batch["hard_mask"]).view(*valid.shape, -1)
        loss = out.loss
        tau = self.cfg.temperature
        for side, anchor in anchors.items():
            ctr = anchor.new_zeros(())
            if self.cfg.simple and len(self.queue):
                terms[f"{side}S"] = info_nce(
                    anchor, positive, tau, in_batch=False, shared_negatives=self.queue.tensor()
                )
                ctr = ctr + self.cfg.alpha * terms[f"{side}S"]
            if hard is not None:
                terms[f"{side}H"] = info_nce(
                    anchor, positive, tau, in_batch=False, own_negatives=hard, own_negative_mask=valid
                )
                ctr = ctr + self.cfg.beta * terms[f"{side}H"]
            loss = loss + 0.5 * ctr
        self._last_positive = positive
        return loss, terms

    @torch.no_grad()
    def after_step(self) -> None:
        """Enqueue this step's FAQ keys, then theta_k <- m theta_k + (1 - m) theta_q."""
        if self.key is None:
            return
        if self.queue is not None:
            self.queue.push(self._last_positive)
        momentum_update(self.key, self.s.encoder, self.cfg.momentum)


def collate(pairs: list[QFCLPair], tokenizer, max_source: int, max_target: int, n_hard: int) -> dict[str, torch.Tensor]:
    """Tokenized batch for ``QFCLObjective``: hard negatives padded to ``n_hard`` per pair
    (padding repeats the FAQ and is masked out by ``hard_valid``)."""

    def tok(texts, n):
        return tokenizer(
            texts, padding=True, truncation=True, max_length=token_limit(tokenizer, n), return_tensors="pt"
        )

    chq, faq = tok([p.chq for p in pairs], max_source), tok([p.faq for p in pairs], max_target)
    labels = faq["input_ids"].masked_fill(faq["attention_mask"] == 0, -100)
    batch = {
        "chq_ids": chq["input_ids"],
        "chq_mask": chq["attention_mask"],
        "labels": labels,
        "faq_ids": faq["input_ids"],
        "faq_mask": faq["attention_mask"],
    }
    if n_hard:
        texts = [(p.hard + [p.faq] * n_hard)[:n_hard] for p in pairs]
        hard = tok([t for row in texts for t in row], max_target)
        batch.update(
            hard_ids=hard["input_ids"],
            hard_mask=hard["attention_mask"],
            hard_valid=torch.tensor([[i < len(p.hard) for i in range(n_hard)] for p in pairs], dtype=torch.long),
        )
    return batch
