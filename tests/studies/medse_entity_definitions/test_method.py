"""MED-SE's method: mixtures, duplicate-entity batches, entity and definition encoders, the entity loss
(the notebook smoke run trains)."""

import math

import numpy as np
import pytest
import torch

from kit.core.config import TrainConfig
from kit.core.objectives import SimCSEObjective
from kit.params import ParameterError
from kit.studies.medse_entity_definitions import Params
from kit.studies.medse_entity_definitions.linking import Mention
from kit.studies.medse_entity_definitions.method import (
    DedupBatches,
    DefinitionEncoder,
    EntityEncoder,
    MedSEObjective,
    entity_loss,
    largest_mixture,
    mixture_fits,
    training_mixture,
)

CONFIG = TrainConfig(batch_size=4, max_length=32, steps=2, eval_every=1, device="cpu")


def test_training_mixture_has_the_requested_share_and_fails_when_short():
    ent, none = list(range(100)), list(range(100, 150))
    rows = training_mixture(ent, none, 0.25, 80, np.random.default_rng(0))
    assert len(rows) == len(set(rows)) == 80 and sum(r >= 100 for r in rows) == 20
    with pytest.raises(ValueError, match="entity-free"):
        training_mixture(ent, none, 0.9, 80, np.random.default_rng(0))


@pytest.mark.parametrize("share", [0.0, 0.05, 0.1, 0.5, 0.93, 1.0])
def test_the_largest_mixture_is_the_last_size_a_mixture_can_be_drawn_at(share):
    """Against brute force over small corpora: every size up to ``largest_mixture`` can be drawn, none above."""
    for n_entity, n_none in [(0, 0), (0, 7), (9, 0), (12, 5), (37, 59)]:
        ent, none = list(range(n_entity)), list(range(100, 100 + n_none))
        largest = largest_mixture(share, n_entity, n_none)
        for size in range(1, n_entity + n_none + 2):
            fits = mixture_fits(size, share, n_entity, n_none)
            assert fits == (size <= largest), (share, n_entity, n_none, size)
            if fits:
                assert len(training_mixture(ent, none, share, size, np.random.default_rng(0))) == size


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
    by_hand = (
        -math.log(math.exp(1 / 0.5) / (math.exp(1 / 0.5) + math.exp(c / 0.5)))
        - math.log(math.exp(c / 0.5) / (math.exp(0.0) + math.exp(c / 0.5)))
    ) / 2
    assert entity_loss(h, d, 0.5).item() == pytest.approx(by_hand, rel=1e-6)


def test_mean_entity_encoder_averages_the_entity_tokens_only():
    states = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    mask = torch.tensor([[False, True, True], [True, False, False]])
    out = EntityEncoder("mean", 4)(states, mask, torch.ones(2, 3))
    torch.testing.assert_close(out, torch.stack([states[0, 1:].mean(0), states[1, 0]]))
    for kind in ("transformer", "cross"):
        assert EntityEncoder(kind, 4, heads=2)(states, mask, torch.ones(2, 3)).shape == (2, 4)


def test_medse_with_lambda_zero_is_simcse_and_lambda_adds_the_entity_term(tiny_encoder, entries):
    texts = ["Breast cancer is common.", "Cancer cells divide.", "No entity here.", "ALL in children."]
    mentions = [
        Mention(0, 13, "D:1", "Breast cancer"),
        Mention(0, 6, "D:2", "Cancer"),
        None,
        Mention(0, 3, "D:3", "ALL"),
    ]
    bank = DefinitionEncoder(tiny_encoder, {e.id: e.definition for e in entries}, trainable=False)
    rows = np.arange(4)

    def loss(objective, seed=0):
        torch.manual_seed(seed)
        return objective(tiny_encoder.train(), texts, rows)

    simcse, _ = loss(SimCSEObjective(tiny_encoder, CONFIG))
    plain, stats = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, bank, "mean", lam=0.0))
    assert plain.item() == pytest.approx(simcse.item(), abs=1e-6) and stats["entity_loss"] > 0
    full, stats = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, bank, "mean", lam=0.5))
    assert full.item() == pytest.approx(simcse.item() + 0.5 * stats["entity_loss"].item(), abs=1e-5)
    trainable = DefinitionEncoder(tiny_encoder, {e.id: e.definition for e in entries}, trainable=True)
    full, _ = loss(MedSEObjective(tiny_encoder, CONFIG, mentions, trainable, "transformer", lam=0.5))
    full.backward()
    assert any(p.grad is not None for p in trainable.parameters())
    tiny_encoder.zero_grad(set_to_none=True)
    tiny_encoder.eval()


def test_study_parameters_fail_before_any_run():
    with pytest.raises(ParameterError, match=r"parameter 'sweep_rows': unknown value\(s\) \['mean_whitening'\]"):
        Params.from_dict({"sweep_rows": ["mean_whitening"]})  # only trained rows can be swept
    with pytest.raises(ParameterError, match="not one of the allowed values"):
        Params.from_dict({"dedup_sweep": ["drop"]})
    with pytest.raises(ParameterError, match="unknown value"):
        Params.from_dict({"rows": ["bert_flow"]})
    with pytest.raises(ParameterError, match="fewer than one batch"):
        Params.from_dict({"train_size": 32, "batch_size": 64})
