"""The general objectives beside SimCSE: SimCSE with its auxiliary MLM loss, contrastive tension and ConSERT's token
cutoff and shuffle views."""

import numpy as np
import torch

from kit.core.config import TrainConfig
from kit.core.objectives import (
    ConSERTObjective,
    ContrastiveTensionObjective,
    SimCSEObjective,
    SimCSEWithMLMObjective,
    embedding_inputs,
    token_cutoff,
    token_shuffle,
)

CONFIG = TrainConfig(batch_size=4, max_length=32, steps=2, eval_every=1, device="cpu")


def _inputs(encoder, texts):
    feats = encoder.tokenizer(texts, padding=True, return_tensors="pt", return_special_tokens_mask=True)
    content = feats.pop("special_tokens_mask").eq(0) & feats["attention_mask"].bool()
    with torch.no_grad():
        return embedding_inputs(encoder, dict(feats)), content


def test_token_cutoff_zeroes_ceil_rate_content_tokens_and_leaves_its_input(tiny_encoder):
    inputs, content = _inputs(tiny_encoder, ["a short one", "a much longer sentence about breast cancer"])
    before = inputs["inputs_embeds"].clone()
    out = token_cutoff(inputs, content, 0.3, torch.Generator().manual_seed(0))
    zeroed = out["inputs_embeds"].abs().sum(-1).eq(0) & content
    assert zeroed.sum(1).tolist() == torch.ceil(content.sum(1) * 0.3).long().tolist()
    assert torch.equal(out["inputs_embeds"][~content], before[~content])  # special and padding tokens untouched
    assert torch.equal(inputs["inputs_embeds"], before)


def test_token_shuffle_permutes_content_positions_only(tiny_encoder):
    inputs, content = _inputs(tiny_encoder, ["one two three four five six seven", "short"])
    out = token_shuffle(inputs, content, torch.Generator().manual_seed(0))
    pos, orig = out["position_ids"], inputs["position_ids"]
    assert torch.equal(pos[~content], orig[~content])
    for i in range(2):
        assert sorted(pos[i][content[i]].tolist()) == orig[i][content[i]].tolist()
    assert not torch.equal(pos[0], orig[0])


def test_consert_and_ct_objectives_give_finite_losses_and_gradients(tiny_encoder):
    texts = ["Breast cancer is common.", "Cancer cells divide.", "No entity here.", "ALL in children."]
    for objective in (
        ConSERTObjective(tiny_encoder, CONFIG, "cutoff"),
        ConSERTObjective(tiny_encoder, CONFIG, "shuffle"),
        ContrastiveTensionObjective(tiny_encoder, CONFIG),
    ):
        loss, _ = objective(tiny_encoder.train(), texts, np.arange(4))
        loss.backward()
        assert torch.isfinite(loss) and any(p.grad is not None for p in tiny_encoder.parameters())
        tiny_encoder.zero_grad(set_to_none=True)
    assert tiny_encoder.eval().training is False
    ct = ContrastiveTensionObjective(tiny_encoder, CONFIG)
    assert len(list(ct.parameters())) == len(list(tiny_encoder.parameters()))  # the partner copy is trained too


def test_simcse_with_mlm_adds_the_weighted_masked_token_loss_to_simcse(tiny_encoder):
    texts = ["Breast cancer is common in older women.", "Cancer cells divide.", "No entity here.", "ALL in children."]
    torch.manual_seed(0)
    simcse, simcse_stats = SimCSEObjective(tiny_encoder, CONFIG)(tiny_encoder.train(), texts, np.arange(4))
    objective = SimCSEWithMLMObjective(tiny_encoder, CONFIG, 0.1)  # its head's initialisation draws from torch
    torch.manual_seed(0)  # the same dropout masks for the SimCSE part; the MLM masks are drawn after it
    loss, stats = objective(tiny_encoder, texts, np.arange(4))
    assert set(stats) == {*simcse_stats, "mlm_loss"} and objective.stat_names == ("pos_cos", "neg_cos", "mlm_loss")
    assert float(stats["mlm_loss"]) > 0
    torch.testing.assert_close(loss, simcse + 0.1 * stats["mlm_loss"])
    loss.backward()
    embeddings = tiny_encoder.backbone.get_input_embeddings().weight
    assert objective.head.bias.grad is not None and embeddings.grad is not None  # the decoder is tied to them
    tiny_encoder.zero_grad(set_to_none=True)
    tiny_encoder.eval()


def test_the_mlm_copy_masks_only_ordinary_tokens_and_labels_only_those(tiny_encoder):
    objective = SimCSEWithMLMObjective(tiny_encoder, CONFIG, 1.0, mlm_probability=0.5)
    feats = tiny_encoder.tokenize(["one two three four five six seven eight", "short"], 32)
    ids = feats["input_ids"]
    special = torch.isin(ids, objective.special_ids)
    masked, labels = objective.masker.torch_mask_tokens(ids.clone(), special)
    chosen = labels.ne(-100)
    assert chosen.any() and not (chosen & special).any()  # [CLS], [SEP] and padding are never chosen
    assert torch.equal(masked[~chosen], ids[~chosen]) and torch.equal(labels[chosen], ids[chosen])


def test_training_with_mlm_lowers_the_masked_token_loss_and_refuses_a_bad_weight(tiny_encoder):
    import copy

    import pytest

    from kit.core.train import train_contrastive

    encoder = copy.deepcopy(tiny_encoder)
    texts = ["the patient had a fever and a cough"] * 8
    config = TrainConfig(batch_size=8, max_length=16, steps=60, eval_every=30, lr=3e-3, device="cpu")
    history = train_contrastive(
        encoder, texts, config, lambda e: {"spearman_dev": 0.0}, objective=SimCSEWithMLMObjective(encoder, config, 1.0)
    )
    assert history.rows[-1]["mlm_loss"] < 0.75 * history.rows[1]["mlm_loss"]  # one sentence is being learnt
    with pytest.raises(ValueError, match="mlm_weight"):
        SimCSEWithMLMObjective(tiny_encoder, CONFIG, 0.0)
