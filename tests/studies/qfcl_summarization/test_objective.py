"""QFCL's objective and training on a tiny random BERT2BERT: batches, steps, the queue, generation, ROUGE."""

import numpy as np
import pytest
import torch

from kit.evaluation.summarization import rouge
from kit.studies.qfcl_summarization.focus import QFCLPair
from kit.studies.qfcl_summarization.objective import QFCLConfig, QFCLObjective, collate
from kit.studies.qfcl_summarization.seq2seq import generate, summarizer
from kit.studies.qfcl_summarization.train import Seq2SeqFit, train

PAIRS = [
    QFCLPair(
        "My son has asthma and uses an inhaler twice a day. Is that too much?",
        "How often can a child use an asthma inhaler?",
        ["asthma inhaler"],
        ["How often can a child use an insulin pump?", "How often can a child use a knee brace?"],
    ),
    QFCLPair(
        "I take metformin and my stomach hurts after meals.",
        "Does metformin cause stomach pain?",
        ["metformin"],
        ["Does aspirin cause stomach pain?"],
    ),
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
    ((kwargs, ids),) = seen
    assert kwargs["num_beams"] == 3 and kwargs["max_new_tokens"] == 5
    assert ids.shape[1] <= 1 + 5  # the decoder start token and at most five new tokens


def test_one_qfcl_step_trains_the_model_fills_the_queue_and_moves_the_key_encoder():
    s = summarizer("tiny-random-bert", seed=0)
    objective = QFCLObjective(s, QFCLConfig(queue_size=4, momentum=0.5))
    batch = collate(PAIRS, s.tokenizer, 24, 12, 2)
    opt = torch.optim.SGD(s.model.parameters(), lr=0.5)
    for step in range(2):
        loss, terms = objective(batch)
        assert set(terms) == (
            {"ce", "CH", "GH"} if step == 0 else {"ce", "CS", "CH", "GS", "GH"}
        )  # queue empty at first
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


def test_rouge_scores_stemmed_overlap():
    assert rouge(["what causes asthma"], ["what causes asthma"])["rougeL"] == 100.0
    assert rouge(["asthma inhalers"], ["an asthma inhaler"])["rouge1"] > 0  # stemming: inhalers ~ inhaler


def test_objective_combines_its_terms_as_the_paper_states():
    s = summarizer("tiny-random-bert", seed=0)
    cfg = QFCLConfig(queue_size=8, alpha=1.0, beta=0.5)
    objective = QFCLObjective(s, cfg)
    batch = collate(PAIRS, s.tokenizer, 24, 12, 2)
    objective(batch)
    objective.after_step()  # fill the queue so that every term is present
    loss, t = objective(batch)
    expected = (
        t["ce"] + 0.5 * (cfg.alpha * t["CS"] + cfg.beta * t["CH"]) + 0.5 * (cfg.alpha * t["GS"] + cfg.beta * t["GH"])
    )
    torch.testing.assert_close(loss, expected)


def test_a_random_bart_with_a_wordpiece_tokenizer_trains_and_generates():
    """The BART path of the GPU dry run (random-bart-large), at toy size: a WordPiece tokenizer returns
    token_type_ids, which BART's generate refuses unless the kit passes ids and mask only."""
    from kit.studies.qfcl_summarization.seq2seq import generate, summarizer

    s = summarizer("tiny-random-bart", seed=0)
    assert s.model.config.is_encoder_decoder
    out = generate(s, ["what is the dose of aspirin for a child?", "is it safe?"], 32, 6, num_beams=2)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)


def test_a_bert2bert_from_an_fp16_checkpoint_trains_in_fp32(fp16_bert):
    """Both halves warm-start from the checkpoint; in its stored fp16 they would fine-tune in fp16 on the CPU."""
    import torch

    from kit.studies.qfcl_summarization.seq2seq import summarizer

    assert {p.dtype for p in summarizer(str(fp16_bert)).model.parameters()} == {torch.float32}


def test_warm_started_weights_train_at_their_own_rate_and_new_ones_at_theirs():
    """A BERT2BERT's new weights (cross-attention, the LM head's transform) are the parameters no checkpoint tensor
    gave; they train at new_lr, every warm-started weight at lr (the paper's 3e-5 for its BART baseline), and one
    step moves each by about its own rate (Adam's first step is lr x sign(gradient))."""
    from kit.studies.qfcl_summarization.train import optimizer

    s = summarizer("tiny-random-bert", seed=0)
    assert s.new and all("crossattention" in n or ".cls." in n for n in s.new), sorted(s.new)
    assert any("crossattention" in n for n in s.new)
    assert not any(n.startswith("encoder.") or "word_embeddings" in n for n in s.new)
    fit = Seq2SeqFit(lr=3e-5, new_lr=3e-3, device="cpu")
    opt = optimizer(s, fit)
    rates = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    named = dict(s.model.named_parameters())
    assert len(rates) == len([p for p in named.values() if p.requires_grad])
    assert all(rates[id(p)] == (3e-3 if n in s.new else 3e-5) for n, p in named.items())
    before = {n: p.detach().clone() for n, p in named.items()}
    loss, _ = QFCLObjective(s, QFCLConfig(simple=False, hard=False, decoder=False))(
        collate(PAIRS, s.tokenizer, 24, 8, 0)
    )
    loss.backward()
    opt.step()
    moved = {n: float((p.detach() - before[n]).abs().max()) for n, p in named.items()}
    assert max(moved[n] for n in named if n not in s.new) <= 3e-5 * 1.01
    assert max(moved[n] for n in s.new) > 1e-3


def test_the_best_dev_epoch_is_kept_and_marked():
    s = summarizer("tiny-random-bert", seed=0)
    fit = Seq2SeqFit(epochs=3, batch_size=2, lr=1e-3, max_source=24, max_target=8, n_hard=2, device="cpu")
    history = train(s, PAIRS, PAIRS, QFCLConfig(queue_size=8), fit)
    kept = [h for h in history if h["kept"]]
    assert len(kept) == 1 and kept[0]["dev_rougeL"] == max(h["dev_rougeL"] for h in history)
    summaries = generate(s, [p.chq for p in PAIRS], 24, 8, num_beams=1)
    assert rouge(summaries, [p.faq for p in PAIRS])["rougeL"] == pytest.approx(kept[0]["dev_rougeL"])
