"""Contrastive losses: one InfoNCE for every study, MixCSE's mixed negatives, DCLR's instance weights.

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
    anchors: torch.Tensor,
    positives: torch.Tensor,
    temperature: float = 0.05,
    *,
    in_batch: bool = True,
    weights: torch.Tensor | None = None,
    shared_negatives: torch.Tensor | None = None,
    own_negatives: torch.Tensor | None = None,
    own_negative_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""InfoNCE of each anchor a_i against its positive p_i, the one contrastive loss of the kit:

        $$\mathcal{L} = \frac{1}{B} \sum_i -\log \frac{e^{s(a_i, p_i)/\tau}}{\sum_{j \in P_i} w_{ij}
        e^{s(a_i, p_j)/\tau} + \sum_{n \in N_i} e^{s(a_i, n)/\tau}}$$

    - ``in_batch`` (unsup-SimCSE, Gao, Yao, Chen 2021): P_i is every positive of the batch, so the
      other rows' positives are negatives; otherwise P_i = {i} (MoCo-style losses, as QFCL's).
    - ``weights`` [B, B]: instance weights w_ij of the in-batch terms (the diagonal is always 1; 0
      removes a term), e.g. ``instance_weights``; without them every w_ij = 1.
    - ``shared_negatives`` [K, d]: negatives of every anchor (a queue of keys).
    - ``own_negatives`` [B, d] or [B, N, d]: negatives of each anchor alone (MixCSE's mixed negative,
      QFCL's hard negatives); ``own_negative_mask`` [B, N] drops padded ones. An anchor left with no
      negative at all contributes nothing; with no anchor left the loss is 0.

    With in-batch negatives only, this is sentence-transformers' MultipleNegativesRankingLoss at scale 1/tau.
    """
    if own_negative_mask is not None and own_negatives is None:
        raise ValueError("own_negative_mask masks own_negatives: give them too")
    if in_batch:
        target = torch.arange(len(anchors), device=anchors.device)
        block = cosine_matrix(anchors, positives) / temperature
        if weights is not None:
            w = weights.clone()
            w.fill_diagonal_(1.0)
            block = block + torch.log(w.to(block.dtype))
        columns = [block]
    else:
        if weights is not None:
            raise ValueError("instance weights apply to in-batch negatives (in_batch=True)")
        target, columns = torch.zeros(len(anchors), dtype=torch.long, device=anchors.device), []
    if not in_batch or shared_negatives is not None or own_negatives is not None:
        # normalised again, not shared with cosine_matrix: one graph per use keeps the gradients (and every
        # cached result) bit-identical to the kit's earlier separate SimCSE and QFCL losses
        a = F.normalize(anchors, dim=-1)
        if not in_batch:
            columns.append((a * F.normalize(positives, dim=-1)).sum(-1, keepdim=True) / temperature)
        if shared_negatives is not None:
            columns.append(a @ F.normalize(shared_negatives, dim=-1).T / temperature)
        if own_negatives is not None:
            n = F.normalize(own_negatives, dim=-1)
            own = (a * n).sum(-1, keepdim=True) if n.dim() == 2 else torch.einsum("bd,bnd->bn", a, n)
            columns.append(own / temperature)
    logits = torch.cat(columns, 1) if len(columns) > 1 else columns[0]
    if own_negative_mask is not None:
        keep = F.pad(own_negative_mask.bool(), (logits.shape[1] - own_negative_mask.shape[1], 0), value=True)
        logits = logits.masked_fill(~keep, float("-inf"))
        if not in_batch and shared_negatives is None:  # the own negatives are the only ones
            rows = own_negative_mask.bool().any(1)
            if not rows.any():
                return anchors.sum() * 0.0
            logits, target = logits[rows], target[rows]
    return F.cross_entropy(logits, target)


def mixed_negatives(z2: torch.Tensor, lam: float, partner: torch.Tensor) -> torch.Tensor:
    r"""MixCSE hard negatives (Zhang et al. 2022, "Unsupervised Sentence Representation via
    Contrastive Learning with Mixing Negatives", AAAI):

        $$m_i = \mathrm{sg}\left(\frac{\lambda z_{2,i} + (1 - \lambda) z_{2,\pi(i)}}{\lVert \lambda z_{2,i}
        + (1 - \lambda) z_{2,\pi(i)} \rVert}\right), \quad \pi = \texttt{partner}$$

    ``partner`` [B] must satisfy partner(i) != i. Stop-gradient (sg) keeps the mixture a
    fixed target, so no gradient flows into it.
    """
    mixed = lam * F.normalize(z2, dim=-1) + (1 - lam) * F.normalize(z2[partner], dim=-1)
    return F.normalize(mixed, dim=-1).detach()


def instance_weights(complementary: torch.Tensor, phi: float = 0.9) -> torch.Tensor:
    r"""Instance weights from a frozen complementary model (DCLR: Zhou et al. 2022, "Debiased
    Contrastive Learning of Unsupervised Sentence Representations", ACL):

        $$w_{ij} = \begin{cases} 0 & \text{if } s(c_i, c_j) \geq \phi \text{ and } i \neq j \\ 1 & \text{otherwise}
        \end{cases}$$

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
        loss = info_nce(z1, z2, self.temperature, weights=weights, own_negatives=extra)
        with torch.no_grad():
            sim = cosine_matrix(z1, z2).float()
            pos = sim.diagonal().mean()
            neg = (sim.sum() - sim.diagonal().sum()) / max(sim.numel() - len(sim), 1)
        return loss, {"pos_cos": pos, "neg_cos": neg}
