"""The general objectives beside SimCSE: contrastive tension and ConSERT's token cutoff and shuffle views."""

import numpy as np
import torch

from kit.core.config import TrainConfig
from kit.core.objectives import (
    ConSERTObjective,
    ContrastiveTensionObjective,
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
