"""MED-SE's parts and its baselines: linking, token spans, mixtures, duplicate-entity batches,
the entity loss, ConSERT views, contrastive tension and whitening (the notebook smoke run trains)."""

import math

import numpy as np
import pytest
import torch

from kit.data import EntityEntry
from kit.medse import (ConSERTObjective, ContrastiveTensionObjective, DedupBatches, DefinitionEncoder, DictionaryLinker,
                       EntityEncoder, MedSEObjective, Mention, Whitening, corpus_statistics, embedding_inputs, entity_loss,
                       token_cutoff, token_shuffle, token_span, training_mixture)
from kit.models import Encoder
from kit.train import SimCSEObjective, TrainConfig

ENTRIES = [
    EntityEntry("D:1", "breast cancer", ("mammary carcinoma",), "A thoracic cancer that originates in the mammary gland."),
    EntityEntry("D:2", "cancer", (), "A disease of cellular proliferation that is malignant."),
    EntityEntry("D:3", "acute lymphoblastic leukemia", ("ALL",), "A lymphoid leukemia of immature lymphocytes."),
    EntityEntry("D:4", "hemangiosarcoma", ("is",), "A vascular cancer."),
]
CONFIG = TrainConfig(batch_size=4, max_length=32, steps=2, eval_every=1, device="cpu")


@pytest.fixture(scope="module")
def linker():
    return DictionaryLinker(ENTRIES)


@pytest.fixture(scope="module")
def minilm():
    return Encoder.from_pretrained("minilm")


def test_linker_prefers_the_longest_name_and_finds_synonyms(linker):
    text = "Mammary carcinoma and Breast Cancer differ from ALL, but all cancer is treatable."
    found = [(m.text, m.entity) for m in linker.link(text)]
    # longest match: "Breast Cancer" is D:1, not D:2; "ALL" matches only in capitals; the stop word "is" is skipped
    assert found == [("Mammary carcinoma", "D:1"), ("Breast Cancer", "D:1"), ("ALL", "D:3"), ("cancer", "D:2")]
    assert all(text[m.start:m.end] == m.text for m in linker.link(text))
    assert linker.link("no disease named here") == []


def test_linker_spans_cross_hyphens_and_map_to_subword_tokens(linker, minilm):
    text = "Cutaneous hemangiosarcoma - a breast - cancer mimic."
    ms = linker.link(text)
    assert [(m.text, m.entity) for m in ms] == [("hemangiosarcoma", "D:4"), ("breast - cancer", "D:1")]
    enc = minilm.tokenizer(text, return_offsets_mapping=True)
    pieces = minilm.tokenizer.convert_ids_to_tokens(enc["input_ids"])
    first, last = token_span(enc["offset_mapping"], ms[0].start, ms[0].end)
    assert last - first > 1  # a word the vocabulary splits into subwords
    assert "".join(p.removeprefix("##") for p in pieces[first:last]) == "hemangiosarcoma"
    first, last = token_span(enc["offset_mapping"], ms[1].start, ms[1].end)
    assert pieces[first:last] == ["breast", "-", "cancer"]
    truncated = minilm.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=3)
    assert token_span(truncated["offset_mapping"], ms[1].start, ms[1].end) is None


def test_corpus_statistics_count_like_tables_1_and_2():
    m = [[Mention(0, 1, "a", "x"), Mention(2, 3, "b", "y")], [], [Mention(0, 1, "a", "x")], []]
    stats = corpus_statistics(m)
    assert stats["with entities"] == 2 and stats["without entities"] == 2 and stats["unique entities"] == 2
    assert stats["entities per sentence (with any)"] == 1.5
    assert stats["top-10% entities' share of mentions"] == pytest.approx(2 / 3)  # ceil(10% of 2) = 1 entity: "a"


def test_training_mixture_has_the_requested_share_and_fails_when_short():
    ent, none = list(range(100)), list(range(100, 150))
    rows = training_mixture(ent, none, 0.25, 80, np.random.default_rng(0))
    assert len(rows) == len(set(rows)) == 80 and sum(r >= 100 for r in rows) == 20
    with pytest.raises(ValueError, match="entity-free"):
        training_mixture(ent, none, 0.9, 80, np.random.default_rng(0))


def _entities(n=60, distinct=8):
    rng = np.random.default_rng(1)
    return [None if i % 5 == 0 else f"E{rng.integers(distinct)}" for i in range(n)]


def test_replace_never_yields_a_repeated_entity_and_keeps_batches_full():
    entities = _entities()
    sampler = DedupBatches(entities, 6, np.random.default_rng(0), "replace")
    seen = set()
    for _ in range(200):
        batch = sampler.next()
        named = [entities[i] for i in batch if entities[i] is not None]
        assert len(batch) == 6 and len(named) == len(set(named))
        seen |= set(batch.tolist())
    assert seen == set(range(len(entities)))  # skipped rows come back in later batches


def test_remove_drops_repeats_and_naive_keeps_them():
    entities = _entities()
    remove = DedupBatches(entities, 6, np.random.default_rng(0), "remove")
    naive = DedupBatches(entities, 6, np.random.default_rng(0), "naive")
    repeats = 0
    for _ in range(100):
        kept, plain = remove.next(), naive.next()
        named = [entities[i] for i in kept if entities[i] is not None]
        assert len(named) == len(set(named)) and set(kept) <= set(plain)
        named = [entities[i] for i in plain if entities[i] is not None]
        repeats += len(named) - len(set(named))
    assert repeats > 0  # with 8 entities over 60 rows, plain batches do repeat them
    with pytest.raises(ValueError, match="distinct entities"):
        DedupBatches(["E1"] * 10, 4, np.random.default_rng(0), "replace")


def test_entity_loss_equals_a_hand_computed_value():
    h = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    d = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    c = 1 / math.sqrt(2)  # cos(h0, d1) = cos(h1, d1); cos(h1, d0) = 0
    by_hand = (-math.log(math.exp(1 / 0.5) / (math.exp(1 / 0.5) + math.exp(c / 0.5)))
               - math.log(math.exp(c / 0.5) / (math.exp(0.0) + math.exp(c / 0.5)))) / 2
    assert entity_loss(h, d, 0.5).item() == pytest.approx(by_hand, rel=1e-6)


def test_mean_entity_encoder_averages_the_entity_tokens_only():
    states = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    mask = torch.tensor([[False, True, True], [True, False, False]])
    out = EntityEncoder("mean", 4)(states, mask, torch.ones(2, 3))
    torch.testing.assert_close(out, torch.stack([states[0, 1:].mean(0), states[1, 0]]))
    for kind in ("transformer", "cross"):
        assert EntityEncoder(kind, 4, heads=2)(states, mask, torch.ones(2, 3)).shape == (2, 4)


def test_medse_with_lambda_zero_is_simcse_and_lambda_adds_the_entity_term(tiny_encoder):
    texts = ["Breast cancer is common.", "Cancer cells divide.", "No entity here.", "ALL in children."]
    mentions = [Mention(0, 13, "D:1", "Breast cancer"), Mention(0, 6, "D:2", "Cancer"), None, Mention(0, 3, "D:3", "ALL")]
    bank = DefinitionEncoder(tiny_encoder, {e.id: e.definition for e in ENTRIES}, trainable=False)
    rows = np.arange(4)

    def loss(objective, seed=0):
        torch.manual_seed(seed)
        return objective(tiny_encoder.train(), texts, rows)

    simcse, _ = loss(SimCSEObjective(tiny_encoder, CONFIG))
    plain, stats = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, bank, "mean", lam=0.0))
    assert plain.item() == pytest.approx(simcse.item(), abs=1e-6) and stats["entity_loss"] > 0
    full, stats = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, bank, "mean", lam=0.5))
    assert full.item() == pytest.approx(simcse.item() + 0.5 * stats["entity_loss"].item(), abs=1e-5)
    trainable = DefinitionEncoder(tiny_encoder, {e.id: e.definition for e in ENTRIES}, trainable=True)
    full, _ = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, trainable, "transformer", lam=0.5))
    full.backward()
    assert any(p.grad is not None for p in trainable.parameters())
    tiny_encoder.zero_grad(set_to_none=True)
    tiny_encoder.eval()


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
    for objective in (ConSERTObjective(tiny_encoder, CONFIG, "cutoff"), ConSERTObjective(tiny_encoder, CONFIG, "shuffle"),
                      ContrastiveTensionObjective(tiny_encoder, CONFIG)):
        loss, _ = objective(tiny_encoder.train(), texts, np.arange(4))
        loss.backward()
        assert torch.isfinite(loss) and any(p.grad is not None for p in tiny_encoder.parameters())
        tiny_encoder.zero_grad(set_to_none=True)
    assert tiny_encoder.eval().training is False
    ct = ContrastiveTensionObjective(tiny_encoder, CONFIG)
    assert len(list(ct.parameters())) == len(list(tiny_encoder.parameters()))  # the partner copy is trained too


def test_whitening_gives_identity_covariance_on_its_fitting_data():
    x = np.random.default_rng(0).normal(size=(500, 8)) @ np.random.default_rng(1).normal(size=(8, 8)) + 3.0
    w = Whitening.fit(x)
    z = w(x).astype(np.float64)
    np.testing.assert_allclose(np.cov(z.T, bias=True), np.eye(8), atol=1e-4)
    np.testing.assert_allclose(z.mean(0), 0, atol=1e-4)
    assert Whitening.fit(x, dim=3)(x).shape == (500, 3)
    with pytest.raises(ValueError, match="more fitting embeddings"):
        Whitening.fit(x[:5])


def test_study_parameters_fail_before_any_run():
    from kit.medse_study import MedSEParams
    from kit.params import ParameterError

    with pytest.raises(ParameterError, match="only trained rows"):
        MedSEParams.from_dict({"sweep_rows": ["mean_whitening"]})
    with pytest.raises(ParameterError, match="not one of the allowed values"):
        MedSEParams.from_dict({"dedup_sweep": ["drop"]})
    with pytest.raises(ParameterError, match="unknown row"):
        MedSEParams.from_dict({"rows": ["bert_flow"]})
