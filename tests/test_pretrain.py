"""kit.pretrain at toy size on the CPU: the vocabulary round-trips text and is numbered canonically, the MLM
loss falls, an interrupted run resumes onto exactly the same loss curve and weights, and the saved model loads
in fp32 through the Encoder. (The command line's faults, kills and reproducibility across processes:
tests/faults/test_pretrain.py.)"""

import json

import pytest
import torch

from kit.core.models import Encoder
from kit.data import chineseblue_corpus, load_pubmed_sentences
from kit.pretrain import (
    CHECKPOINT,
    SPECIAL_TOKENS,
    WRITTEN,
    PretrainConfig,
    _model,
    _wordpiece,
    build_tokenizer,
    canonical_vocab,
    learnt_tokens,
    main,
    packed,
    pretrain,
    tokenizer_from_vocab,
)

TOY = dict(vocab_size=800, layers=2, hidden=32, heads=2, intermediate=64, max_length=24, batch_size=16, lr=3e-3)


@pytest.fixture(scope="module")
def texts():
    return load_pubmed_sentences(limit=1500)


def test_english_vocabulary_round_trips_text(texts):
    tok = build_tokenizer(texts, 800)
    for s in texts[:50]:
        ids = tok(s)["input_ids"]
        assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
        assert tok.decode(ids, skip_special_tokens=True) == tok.decode(tok(s.lower())["input_ids"][1:-1])
        assert tok.unk_token_id not in ids or not s.isascii()
    assert tok.decode(tok("the patients were treated")["input_ids"], skip_special_tokens=True) == (
        "the patients were treated"
    )


def test_chinese_vocabulary_is_the_corpus_characters():
    corpus = chineseblue_corpus()[:3000]
    tok = build_tokenizer(corpus, 3000)
    seen = {ch for t in corpus for ch in t if "\u4e00" <= ch <= "\u9fff"}
    vocab = tok.get_vocab()
    assert seen <= set(vocab), "a Chinese character of the corpus is missing from the vocabulary"
    s = corpus[7]
    tokens = tok.convert_ids_to_tokens(tok(s, add_special_tokens=False)["input_ids"])
    assert all(len(t) == 1 for t in tokens if "\u4e00" <= t[0] <= "\u9fff"), tokens
    assert tok.decode(tok(s)["input_ids"], skip_special_tokens=True).replace(" ", "") == s.lower().replace(" ", "")


def test_the_ids_are_canonical_and_change_only_the_numbering(texts):
    vocab = build_tokenizer(texts, 800).get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    assert tokens[:5] == SPECIAL_TOKENS and tokens[5:] == sorted(tokens[5:])  # then in code-point order
    trained = _wordpiece(texts, 800, 2, SPECIAL_TOKENS)  # numbered by the trainer
    renumbered = tokenizer_from_vocab(canonical_vocab(set(trained.get_vocab())))
    for s in texts[:200]:
        assert trained.encode(s).tokens == renumbered.tokenize(s)


def test_the_token_set_is_the_same_in_every_build():
    # the trainer alone learnt 5 sets in 6 builds here (in one process too: each build hashes with new keys)
    corpus = chineseblue_corpus()[:8000]
    assert len({frozenset(learnt_tokens(corpus, 3000, 2)) for _ in range(6)}) == 1


def test_loss_falls_and_an_interrupted_run_resumes_onto_exactly_the_same_curve(texts, tmp_path):
    config = PretrainConfig(**TOY, steps=40, heldout=100, save_every=10, log_every=5, device="cpu")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    full = pretrain(texts, straight, config)
    assert full.heldout_end < full.heldout_start - 0.3, full
    assert full.losses[-1] < full.losses[0] - 0.3, full.losses

    part = pretrain(texts, resumed, config, until=13)  # stopped between two logged steps
    assert part.heldout_end is None and (resumed / "checkpoint.pt").exists()
    assert not (resumed / "model.safetensors").exists()
    rest = pretrain(texts, resumed, config)
    assert (rest.steps, rest.losses, rest.heldout_end) == (full.steps, full.losses, full.heldout_end)
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()
    assert not (resumed / "checkpoint.pt").exists()


def test_a_checkpoint_of_other_settings_is_refused(texts, tmp_path):
    config = PretrainConfig(**TOY, steps=4, heldout=100, save_every=2, device="cpu")
    pretrain(texts, tmp_path, config, until=2)
    with pytest.raises(ValueError, match="other settings"):
        pretrain(texts, tmp_path, PretrainConfig(**{**TOY, "lr": 1e-3}, steps=4, heldout=100, device="cpu"))


def test_the_command_writes_a_loadable_fp16_model_with_a_card(tmp_path, monkeypatch):
    out = tmp_path / "toy-bert"
    args = ["--corpus", "pubmed", "--out", str(out), "--steps", "6", "--heldout", "200", "--device", "cpu"]
    args += [f"--{k.replace('_', '-')}={v}" for k, v in TOY.items()]
    assert main(args) == 0
    card = (out / "README.md").read_text()
    assert "python -m kit.pretrain --corpus pubmed" in card and "held-out MLM loss" in card
    assert "on the CPU the weights and the loss log bit for bit" in " ".join(card.split())
    assert sorted(p.name for p in out.iterdir()) == sorted(set(WRITTEN) - {CHECKPOINT})
    assert json.loads((out / "training_log.json").read_text())["heldout_end"] > 0
    from safetensors import safe_open

    with safe_open(out / "model.safetensors", "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    enc = Encoder.from_pretrained(str(out), "cls_before_pooler")
    assert next(enc.parameters()).dtype == torch.float32
    assert enc.encode(["a sentence", "another one"]).shape == (2, 32)


def test_a_damaged_checkpoint_is_set_aside_and_the_run_starts_over(texts, tmp_path):
    config = PretrainConfig(**TOY, steps=4, heldout=100, save_every=2, log_every=2, device="cpu")
    (tmp_path / "checkpoint.pt").write_bytes(b"truncated")
    log = pretrain(texts, tmp_path, config)
    assert log.steps == [2, 4] and log.heldout_end is not None
    assert list(tmp_path.glob("checkpoint.pt.damaged-*"))


def test_packing_fills_every_position_and_keeps_every_token():
    ids = [[2, 10, 11, 3], [2, 12, 3], [2, *range(20, 30), 3], [2, 13, 3]]
    blocks = packed(ids, 6, cls=2, sep=3)
    assert all(len(b) == 6 for b in blocks[:-1]) and 1 < len(blocks[-1]) <= 6
    assert all(b[0] == 2 for b in blocks)
    assert [t for b in blocks for t in b[1:]] == [10, 11, 3, 12, 3, *range(20, 30), 3, 13, 3]


def test_a_fresh_run_trains_every_position_it_has_and_has_no_other(texts, tmp_path):
    """Packed sequences reach every position of the table, and the table ends at max_length: after a few steps
    no row is still at its initialisation, and the saved model and its tokenizer stop at max_length."""
    from transformers import AutoConfig, AutoTokenizer

    config = PretrainConfig(**TOY, steps=4, heldout=100, device="cpu")
    pretrain(texts, tmp_path, config)
    start = _model(config, AutoTokenizer.from_pretrained(tmp_path)).bert.embeddings.position_embeddings.weight
    trained = Encoder.from_pretrained(str(tmp_path)).backbone.embeddings.position_embeddings.weight
    assert trained.shape == start.shape == (TOY["max_length"], TOY["hidden"])
    moved = (trained - start).abs().amax(dim=1)
    assert (moved > 1e-4).all(), moved  # fp16 storage moves no row by as much
    assert AutoConfig.from_pretrained(tmp_path).max_position_embeddings == TOY["max_length"]
    assert AutoTokenizer.from_pretrained(tmp_path).model_max_length == TOY["max_length"]
