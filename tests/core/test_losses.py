import math

import pytest
import torch
from torch.nn import functional as F

from kit.core.losses import ContrastiveLoss, cosine_matrix, info_nce, instance_weights, mixed_negatives


def views(b=6, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, d, generator=g, requires_grad=True), torch.randn(b, d, generator=g, requires_grad=True)


def test_info_nce_equals_multiple_negatives_ranking_formulation():
    """sentence-transformers' MultipleNegativesRankingLoss: cross-entropy of cos_sim * scale, scale = 1/tau."""
    from sentence_transformers.util import cos_sim

    z1, z2 = views()
    reference = F.cross_entropy(cos_sim(z1, z2) * 20.0, torch.arange(6))
    assert torch.allclose(info_nce(z1, z2, temperature=0.05), reference, atol=1e-6)


def test_all_ones_weights_and_no_mixing_equal_plain_info_nce():
    z1, z2 = views()
    plain = info_nce(z1, z2, 0.05)
    weighted = info_nce(z1, z2, 0.05, weights=torch.ones(6, 6))
    assert torch.allclose(plain, weighted, atol=1e-6)
    loss, _ = ContrastiveLoss(0.05, mix_lambda=None, iw_phi=2.0)(z1, z2, complementary=torch.randn(6, 8))
    assert torch.allclose(loss, plain, atol=1e-6)  # phi above every cosine: all weights 1


def test_hand_computed_3x3_case_with_a_zero_weight_and_a_mixed_negative():
    z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    z2 = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    tau = 0.5
    w = torch.ones(3, 3)
    w[0, 1] = 0.0  # anchor 0 drops negative 1
    m = torch.tensor([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    r = 1 / math.sqrt(2)
    # cosines s(z1_i, z2_j) and s(z1_i, m_i), written out by hand
    s = [[1, r, 0], [0, r, 1], [r, 1, r]]
    sm = [0, 0, r]
    expected = 0.0
    for i in range(3):
        denom = sum(w[i, j].item() * math.exp(s[i][j] / tau) for j in range(3)) + math.exp(sm[i] / tau)
        expected += -math.log(math.exp(s[i][i] / tau) / denom)
    expected /= 3
    got = info_nce(z1, z2, tau, weights=w, own_negatives=m)
    assert got.item() == pytest.approx(expected, abs=1e-6)


def test_zero_weight_removes_the_term_from_the_denominator():
    z1, z2 = views(b=4)
    w = torch.ones(4, 4)
    w[2, 3] = 0
    logits = cosine_matrix(z1, z2) / 0.05
    manual = -(logits[2, 2] - torch.logsumexp(logits[2, [0, 1, 2]], 0))
    rows = [-(logits[i, i] - torch.logsumexp(logits[i], 0)) for i in (0, 1, 3)]
    assert torch.allclose(info_nce(z1, z2, 0.05, weights=w), (manual + sum(rows)) / 4, atol=1e-5)


def test_no_gradient_flows_into_mixed_negatives_or_the_complementary_model():
    z1, z2 = views()
    comp = torch.randn(6, 8, requires_grad=True)
    mixed = mixed_negatives(z2, 0.2, torch.roll(torch.arange(6), -1))
    assert not mixed.requires_grad
    assert not instance_weights(comp, 0.5).requires_grad
    loss, _ = ContrastiveLoss(0.05, mix_lambda=0.2, iw_phi=0.5)(z1, z2, comp)
    loss.backward()
    assert comp.grad is None
    # z2's gradient is exactly that of the loss with the mixture held constant
    z1b, z2b = (t.detach().clone().requires_grad_(True) for t in (z1, z2))
    w = instance_weights(comp.detach(), 0.5)
    info_nce(z1b, z2b, 0.05, weights=w, own_negatives=mixed.clone()).backward()
    assert torch.allclose(z2.grad, z2b.grad, atol=1e-6)


def test_mixed_negative_is_the_normalised_mixture():
    z2 = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    m = mixed_negatives(z2, 0.25, torch.tensor([1, 0]))
    assert torch.allclose(m[0], F.normalize(torch.tensor([0.25, 0.75]), dim=0))


def test_instance_weights_threshold_and_diagonal():
    c = torch.tensor([[1.0, 0.0], [1.0, 0.01], [0.0, 1.0]])
    w = instance_weights(c, phi=0.9)
    assert w.tolist() == [[1, 0, 1], [0, 1, 1], [1, 1, 1]]


def test_stats_and_errors():
    z1, z2 = views()
    _, stats = ContrastiveLoss()(z1, z1.detach())
    assert stats["pos_cos"].item() == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="complementary"):
        ContrastiveLoss(iw_phi=0.9)(z1, z2)
    with pytest.raises(ValueError, match="temperature"):
        ContrastiveLoss(temperature=0)


def test_without_in_batch_negatives_each_anchor_meets_a_shared_queue_or_its_own_hard_negatives():
    """QFCL's L_S (a queue shared by every anchor) and L_H (each anchor's hard negatives, padding masked),
    written out by hand."""
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    p = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    queue = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    tau = 0.5
    s = 1 / math.sqrt(2)
    row0 = -math.log(math.exp(s / tau) / (math.exp(s / tau) + math.exp(1 / tau) + math.exp(-1 / tau)))
    row1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 2 * math.exp(0.0)))
    assert info_nce(a, p, tau, in_batch=False, shared_negatives=queue).item() == pytest.approx(
        (row0 + row1) / 2, rel=1e-6
    )
    # per-anchor hard negatives with a mask: anchor 1's second negative is padding, anchor 0 has none
    hard = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [5.0, 5.0]]])
    mask = torch.tensor([[0, 0], [1, 0]])
    only1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0.0)))
    assert info_nce(a, p, tau, in_batch=False, own_negatives=hard, own_negative_mask=mask).item() == pytest.approx(
        only1, rel=1e-6
    )
    assert info_nce(a, p, tau, in_batch=False, own_negatives=hard, own_negative_mask=torch.zeros(2, 2)).item() == 0.0


def test_one_own_negative_given_flat_or_as_a_list_of_one_is_the_same_loss():
    z1, z2 = views()
    m = torch.randn(6, 8)
    flat = info_nce(z1, z2, 0.05, own_negatives=m)
    nested = info_nce(z1, z2, 0.05, own_negatives=m[:, None, :])
    assert torch.allclose(flat, nested, atol=1e-6)
    with pytest.raises(ValueError, match="in-batch"):
        info_nce(z1, z2, 0.05, in_batch=False, weights=torch.ones(6, 6))
    with pytest.raises(ValueError, match="give them too"):
        info_nce(z1, z2, 0.05, own_negative_mask=torch.ones(6, 1))


def test_with_in_batch_negatives_a_mask_drops_only_padded_own_negatives():
    z1, z2 = views()
    own = torch.randn(6, 2, 8)
    masked = info_nce(z1, z2, 0.05, own_negatives=own, own_negative_mask=torch.tensor([[1, 0]] * 6))
    assert torch.allclose(masked, info_nce(z1, z2, 0.05, own_negatives=own[:, :1]), atol=1e-6)
