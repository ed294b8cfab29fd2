import math

import numpy as np
import pytest
import torch
from torch import nn

from kit.qfcl import (
    Chunk, KeyQueue, contrastive, hard_negatives, key_encoder, mean_states, momentum_update, noun_chunks, np_dictionary,
    question_focus, spacy_pipeline,
)


@pytest.fixture(scope="module")
def nlp():
    return spacy_pipeline()


def test_focus_is_the_noun_phrases_shared_by_question_and_summary(nlp):
    chq = "My mother has diabetes and her doctor changed the insulin dose. What are the Side Effects of metformin?"
    faq = "What are the side effects of metformin for her age?"
    chq_chunks, faq_chunks = noun_chunks([chq, faq], nlp)
    focus = [c.text.lower() for c in question_focus(chq_chunks, faq_chunks)]
    assert focus == ["side effects", "metformin"]  # case-insensitive; "age" is not in the question
    assert "mother" in [c.text for c in chq_chunks]  # the possessive pronoun is dropped from the chunk
    for c in faq_chunks:
        assert faq[c.start:c.end] == c.text  # character spans point into the sentence


def test_hard_negative_differs_from_its_faq_only_in_focus_phrases():
    faq = "What are the side effects of metformin for diabetes?"
    focus = [Chunk("metformin", 29, 38, "NN"), Chunk("diabetes", 43, 51, "NN")]
    dictionary = np_dictionary([[Chunk("aspirin", 0, 7, "NN"), Chunk("asthma", 0, 6, "NN"), Chunk("metformin", 0, 9, "NN"),
                                 Chunk("the kidneys", 0, 11, "NNS")]])
    negs = hard_negatives(faq, focus, dictionary, 8, np.random.default_rng(0))
    assert len(negs) == 8
    pattern = faq.replace("metformin", "{}").replace("diabetes", "{}")
    for neg in negs:
        prefix, rest = neg.split(" of ", 1)
        a, b = rest.removesuffix("?").split(" for ")
        assert neg == pattern.format(a, b) and prefix == "What are the side effects"
        assert a in ("aspirin", "asthma", "diabetes") and b in ("aspirin", "asthma", "metformin")  # same label, never itself
        assert "the kidneys" not in neg  # another label is never used
    assert hard_negatives(faq, [], dictionary, 4, np.random.default_rng(0)) == []  # no focus, no hard negatives


def test_momentum_update_moves_the_key_by_one_minus_m_and_gives_it_no_gradient():
    torch.manual_seed(0)
    query = nn.Linear(4, 3)
    key = key_encoder(query)
    with torch.no_grad():
        for p in query.parameters():
            p.add_(1.0)
    before = [p.clone() for p in key.parameters()]
    momentum_update(key, query, m=0.9)
    for b, k, q in zip(before, key.parameters(), query.parameters()):
        torch.testing.assert_close(k, 0.9 * b + 0.1 * q)
        assert not k.requires_grad
    assert not key(torch.randn(2, 4)).requires_grad  # nothing to backpropagate into the key encoder


def test_queue_is_fifo_with_its_size():
    q = KeyQueue(size=4, dim=2)
    assert len(q) == 0 and q.tensor().shape == (0, 2)
    vec = lambda *xs: torch.tensor([[x, 1.0] for x in xs])  # noqa: E731
    q.push(vec(1, 2, 3))
    q.push(vec(4, 5))
    assert len(q) == 4
    first = q.tensor()[:, 0] / q.tensor()[:, 1]  # undo the normalisation: x / 1
    torch.testing.assert_close(first, torch.tensor([2.0, 3.0, 4.0, 5.0]))
    q.push(vec(6, 7, 8, 9, 10))  # more than the queue holds: the newest four stay
    torch.testing.assert_close(q.tensor()[:, 0] / q.tensor()[:, 1], torch.tensor([7.0, 8.0, 9.0, 10.0]))


def test_contrastive_loss_equals_a_hand_computed_value():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    p = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    queue = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    tau = 0.5
    s = 1 / math.sqrt(2)
    row0 = -math.log(math.exp(s / tau) / (math.exp(s / tau) + math.exp(1 / tau) + math.exp(-1 / tau)))
    row1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 2 * math.exp(0.0)))
    assert contrastive(a, p, queue, tau).item() == pytest.approx((row0 + row1) / 2, rel=1e-6)
    # per-anchor hard negatives with a mask: anchor 1's second negative is padding, anchor 0 has none
    hard = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [5.0, 5.0]]])
    mask = torch.tensor([[0, 0], [1, 0]])
    only1 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0.0)))
    assert contrastive(a, p, hard, tau, mask).item() == pytest.approx(only1, rel=1e-6)
    assert contrastive(a, p, hard, tau, torch.zeros(2, 2)).item() == 0.0


def test_mean_states_ignore_padding():
    states = torch.tensor([[[1.0], [3.0], [100.0]]])
    assert mean_states(states, torch.tensor([[1, 1, 0]])).item() == 2.0


# ---- the seq2seq side, on a tiny random BERT2BERT ----

from kit.qfcl import (  # noqa: E402
    QFCLConfig, QFCLObjective, QFCLPair, Seq2SeqFit, collate, focus_accuracy, generate, rouge, summarizer, train,
)

PAIRS = [
    QFCLPair("My son has asthma and uses an inhaler twice a day. Is that too much?", "How often can a child use an asthma inhaler?",
             ["asthma inhaler"], ["How often can a child use an insulin pump?", "How often can a child use a knee brace?"]),
    QFCLPair("I take metformin and my stomach hurts after meals.", "Does metformin cause stomach pain?", ["metformin"],
             ["Does aspirin cause stomach pain?"]),
    QFCLPair("Where can I buy cetirizine? My pharmacy ran out.", "Where can I buy cetirizine?", [], []),
]


@pytest.fixture(scope="module")
def tiny():
    return summarizer("tiny-random-bert", seed=0)


def test_collate_pads_hard_negatives_and_masks_the_padding(tiny):
    batch = collate(PAIRS, tiny.tokenizer, max_source=24, max_target=12, n_hard=2)
    assert batch["hard_ids"].shape[0] == 3 * 2
    assert batch["hard_valid"].tolist() == [[1, 1], [1, 0], [0, 0]]
    assert (batch["labels"] == -100).any() and batch["chq_ids"].shape[1] <= 24


def test_generation_uses_beam_search_within_the_length_limit(tiny, monkeypatch):
    real, seen = tiny.model.generate, []

    def spy(**kwargs):  # the real generate, its arguments and output recorded
        ids = real(**kwargs)
        seen.append((kwargs, ids))
        return ids

    monkeypatch.setattr(tiny.model, "generate", spy)
    out = generate(tiny, [p.chq for p in PAIRS], max_source=24, max_target=5, num_beams=3)
    assert len(out) == 3 and all(len(t.split()) <= 5 for t in out)
    (kwargs, ids), = seen
    assert kwargs["num_beams"] == 3 and kwargs["max_new_tokens"] == 5
    assert ids.shape[1] <= 1 + 5  # the decoder start token and at most five new tokens


def test_one_qfcl_step_trains_the_model_fills_the_queue_and_moves_the_key_encoder():
    s = summarizer("tiny-random-bert", seed=0)
    objective = QFCLObjective(s, QFCLConfig(queue_size=4, momentum=0.5))
    batch = collate(PAIRS, s.tokenizer, 24, 12, 2)
    opt = torch.optim.SGD(s.model.parameters(), lr=0.5)
    for step in range(2):
        loss, terms = objective(batch)
        assert set(terms) == ({"ce", "CH", "GH"} if step == 0 else {"ce", "CS", "CH", "GS", "GH"})  # queue empty at first
        key_before = [p.clone() for p in objective.key.parameters()]
        loss.backward()
        assert all(p.grad is None for p in objective.key.parameters())
        opt.step()
        opt.zero_grad()
        objective.after_step()
        for kb, k, q in zip(key_before, objective.key.parameters(), s.encoder.parameters()):
            torch.testing.assert_close(k, 0.5 * kb + 0.5 * q)
    assert len(objective.queue) == 4  # two steps of three keys, FIFO capped at K = 4


def test_baseline_is_cross_entropy_only():
    s = summarizer("tiny-random-bert", seed=0)
    objective = QFCLObjective(s, QFCLConfig(simple=False, hard=False, decoder=False))
    loss, terms = objective(collate(PAIRS, s.tokenizer, 24, 12, 0))
    assert objective.key is None and list(terms) == ["ce"] and loss is terms["ce"]


def test_train_records_losses_dev_rouge_and_similarities_per_epoch():
    s = summarizer("tiny-random-bert", seed=0)
    fit = Seq2SeqFit(epochs=2, batch_size=2, lr=1e-3, max_source=24, max_target=8, n_hard=2, device="cpu")
    history = train(s, PAIRS, PAIRS, QFCLConfig(queue_size=8), fit)
    assert [h["epoch"] for h in history] == [1, 2]
    for key in ("loss_ce", "loss_CS", "loss_GH", "dev_rougeL", "chq_faq", "chq_simple", "chq_hard", "summary_faq"):
        assert np.isfinite(history[-1][key]), key


def test_rouge_and_focus_accuracy():
    assert rouge(["what causes asthma"], ["what causes asthma"])["rougeL"] == 100.0
    assert rouge(["asthma inhalers"], ["an asthma inhaler"])["rouge1"] > 0  # stemming: inhalers ~ inhaler
    assert focus_accuracy(["Does Metformin cause pain?", "no focus here"], [["metformin"], ["cetirizine", "pharmacy"]]) == pytest.approx(100 / 3)


def test_objective_combines_its_terms_as_the_paper_states():
    s = summarizer("tiny-random-bert", seed=0)
    cfg = QFCLConfig(queue_size=8, alpha=1.0, beta=0.5)
    objective = QFCLObjective(s, cfg)
    batch = collate(PAIRS, s.tokenizer, 24, 12, 2)
    objective(batch)
    objective.after_step()  # fill the queue so that every term is present
    loss, t = objective(batch)
    expected = t["ce"] + 0.5 * (cfg.alpha * t["CS"] + cfg.beta * t["CH"]) + 0.5 * (cfg.alpha * t["GS"] + cfg.beta * t["GH"])
    torch.testing.assert_close(loss, expected)
