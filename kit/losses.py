"""Contrastive losses for sentence embeddings.

Notation: z1, z2 are [B, d] embeddings of two views of the same B sentences;
s(a, b) is cosine similarity and tau the temperature.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """[len(a), len(b)] cosine similarities."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(
    z1: torch.Tensor,
    z2: torch.Tensor,
    temperature: float = 0.05,
    weights: torch.Tensor | None = None,
    extra_negatives: torch.Tensor | None = None,
) -> torch.Tensor:
    """InfoNCE with in-batch negatives (unsup-SimCSE, Gao, Yao, Chen 2021), optionally weighted.

        L = mean_i -log( e^{s(z1_i, z2_i)/tau}
                         / ( sum_j w_ij e^{s(z1_i, z2_j)/tau} + e^{s(z1_i, m_i)/tau} ) )

    ``weights`` [B, B] are instance weights w_ij (the diagonal is always 1; a weight of 0
    removes the term from the denominator); ``extra_negatives`` [B, d] adds one negative
    m_i per anchor (MixCSE's mixed negative). With neither, this is plain SimCSE.
    """
    logits = cosine_matrix(z1, z2) / temperature
    if weights is not None:
        w = weights.clone()
        w.fill_diagonal_(1.0)
        logits = logits + torch.log(w.to(logits.dtype))
    if extra_negatives is not None:
        extra = (F.normalize(z1, dim=-1) * F.normalize(extra_negatives, dim=-1)).sum(-1, keepdim=True) / temperature
        logits = torch.cat([logits, extra], dim=1)
    labels = torch.arange(len(z1), device=z1.device)
    return F.cross_entropy(logits, labels)


def mixed_negatives(z2: torch.Tensor, lam: float, partner: torch.Tensor) -> torch.Tensor:
    """MixCSE hard negatives (Zhang et al. 2022, "Unsupervised Sentence Representation via
    Contrastive Learning with Mixing Negatives", AAAI):

        m_i = sg( normalize( lam * z2_i + (1 - lam) * z2_{partner(i)} ) )

    ``partner`` [B] must satisfy partner(i) != i. Stop-gradient (sg) keeps the mixture a
    fixed target, so no gradient flows into it.
    """
    mixed = lam * F.normalize(z2, dim=-1) + (1 - lam) * F.normalize(z2[partner], dim=-1)
    return F.normalize(mixed, dim=-1).detach()


def instance_weights(complementary: torch.Tensor, phi: float = 0.9) -> torch.Tensor:
    """Instance weights from a frozen complementary model (DCLR: Zhou et al. 2022, "Debiased
    Contrastive Learning of Unsupervised Sentence Representations", ACL):

        w_ij = 0 if s(c_i, c_j) >= phi and i != j else 1

    where c are the complementary model's embeddings of the batch. Likely false negatives
    (near-duplicates of the anchor) leave the denominator.
    """
    with torch.no_grad():
        sim = cosine_matrix(complementary, complementary)
        w = (sim < phi).to(complementary.dtype)
        w.fill_diagonal_(1.0)
    return w


class ContrastiveLoss(nn.Module):
    """SimCSE InfoNCE with optional MixCSE negatives (``mix_lambda``) and instance weighting
    (``iw_phi``; needs the complementary model's embeddings in ``forward``).

    ``forward`` returns (loss, stats) where stats holds detached tensors: the mean cosine of
    positive pairs and of in-batch negatives (no host synchronisation per step).
    """

    def __init__(self, temperature: float = 0.05, mix_lambda: float | None = None, iw_phi: float | None = None):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if mix_lambda is not None and not 0.0 <= mix_lambda <= 1.0:
            raise ValueError(f"mix_lambda must be in [0, 1], got {mix_lambda}")
        self.temperature, self.mix_lambda, self.iw_phi = temperature, mix_lambda, iw_phi

    @property
    def needs_complementary(self) -> bool:
        return self.iw_phi is not None

    def forward(self, z1: torch.Tensor, z2: torch.Tensor, complementary: torch.Tensor | None = None):
        weights = extra = None
        if self.iw_phi is not None:
            if complementary is None:
                raise ValueError("instance weighting (iw_phi) needs the complementary model's embeddings")
            weights = instance_weights(complementary, self.iw_phi)
        if self.mix_lambda is not None:
            partner = torch.roll(torch.arange(len(z2), device=z2.device), shifts=-1)
            extra = mixed_negatives(z2, self.mix_lambda, partner)
        loss = info_nce(z1, z2, self.temperature, weights, extra)
        with torch.no_grad():
            sim = cosine_matrix(z1, z2).float()
            pos = sim.diagonal().mean()
            neg = (sim.sum() - sim.diagonal().sum()) / max(sim.numel() - len(sim), 1)
        return loss, {"pos_cos": pos, "neg_cos": neg}
