"""Masked-language-model pretraining of a small BERT from scratch: the kit's raw starts.

The papers start their contrastive training from raw masked-language models (BERT, BioBERT,
chinese-bert-wwm); none can be had offline. This module pretrains a small one on the shared corpora:

- the vocabulary is learnt from the corpus itself, WordPiece (Schuster & Nakajima 2012; BERT's
  tokenizer) as PubMedBERT does for its in-domain vocabulary (Gu et al. 2021); Chinese text is split
  into single characters first, as in Chinese BERT, so the Chinese vocabulary is the corpus's
  characters (plus WordPiece for its Latin and digit runs);
- sentences are packed into sequences of ``max_length`` tokens (RoBERTa's FULL-SENTENCES, Liu et al. 2019):
  their tokens joined, each sentence closed by [SEP], cut into blocks opened by [CLS], so every position up
  to ``max_length`` gets a gradient; the model has exactly those positions (``max_position_embeddings``, and
  the tokenizer's ``model_max_length``), so no reader can add an untrained position vector to a longer text;
- the objective is BERT's (Devlin et al. 2019): 15% of the tokens are chosen, 80% of those become
  [MASK], 10% a random token, 10% stay; the loss is the cross-entropy on the chosen tokens
  (transformers' ``DataCollatorForLanguageModeling``); no next-sentence task (as RoBERTa);
- AdamW with linear warm-up and linear decay, bf16 autocast on CUDA, fp32 on CPU.

Runs are seeded, reproducible and resumable: the vocabulary is the same in every process
(``build_tokenizer``), so on the CPU a rerun gives the same weights and loss log bit for bit; the state
is checkpointed every ``save_every`` steps (and at ``until``) and a restarted run continues from it with
the same batches, masks, dropout and loss log. ``run.json`` in the model folder records the run's
settings and corpus digest from its start, so that a rerun resumes its own run and refuses a folder
holding another. The finished model is written as fp16 safetensors (``BertModel``, loadable by
``AutoModel``) with its tokenizer, its loss log and a model card (command, data, commit, steps, MLM
losses, time).

``python -m kit.pretrain --corpus pubmed --out models/pubmed-bert-mini`` (``--help`` for the shape).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
import typing
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from kit.core.batches import Batches
from kit.core.cli import Parser, integer, output_folder, setting_argument
from kit.core.config import TrainSettings
from kit.core.devices import autocast, describe, resolve_device
from kit.core.files import json_text, normal_permissions, write_atomic, write_text_atomic
from kit.core.fingerprint import digest
from kit.core.models import MIN_MAX_LENGTH
from kit.core.progress import bar, quiet_libraries
from kit.core.settings import ParameterError, check_settings, redefault, setting
from kit.core.train import read_checkpoint
from kit.report.record import git_commit

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHECKPOINT_KEYS = frozenset("run vocab model optimizer scheduler batches torch_rng cuda_rng log running step".split())
RUN_RECORD = "run.json"
CHECKPOINT = "checkpoint.pt"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
FINISHED_FILES = (*MODEL_FILES, "training_log.json", "README.md")
WRITTEN = (RUN_RECORD, CHECKPOINT, *FINISHED_FILES)  # every file kit.pretrain writes in a model folder
MAX_POSITIONS = 512  # BERT's table: the longest sequences kit.pretrain trains


@dataclass
class PretrainConfig:
    """The model's shape and the MLM run's hyperparameters (defaults: the kit's mini-BERTs), each declared with
    its help and allowed values, which the command line takes over (``kit.core.cli.setting_argument``)."""

    vocab_size: int = setting(8000, "WordPiece tokens learnt from the corpus, at most", min=len(SPECIAL_TOKENS) + 1)
    min_frequency: int = setting(2, "occurrences a merge needs to enter the vocabulary", min=1)
    layers: int = setting(4, "transformer layers", min=1)
    hidden: int = setting(256, "hidden size, a multiple of --heads", min=1)
    heads: int = setting(4, "attention heads", min=1)
    intermediate: int = setting(1024, "feed-forward size", min=1)
    max_length: int = setting(
        128,
        "tokens per packed sequence: the positions the model has, each trained",
        min=MIN_MAX_LENGTH,
        max=MAX_POSITIONS,
    )
    batch_size: int = setting(64, "packed sequences per batch", min=1)
    steps: int = setting(8000, "optimizer steps", min=1)
    lr: float = setting(5e-4, "AdamW peak learning rate", gt=0)
    warmup: float = setting(0.06, "share of the steps with a linear warm-up", gt=0, lt=1)
    weight_decay: float = setting(0.01, "AdamW weight decay (not on biases and LayerNorm)", min=0)
    mask_prob: float = setting(0.15, "share of the tokens chosen for the MLM loss", gt=0, lt=1)
    heldout: int = setting(1000, "sentences never trained on, for the held-out MLM loss", min=1)
    seed: int = setting(0, "seed of the split, the batches, the masks, dropout and initialisation", min=0)
    device: str = redefault(TrainSettings, "device", "auto")
    save_every: int = setting(1000, "steps between checkpoints", min=1)
    log_every: int = setting(100, "steps between logged training losses", min=1)

    def __post_init__(self):
        check_settings(self)
        if self.hidden % self.heads:
            raise ParameterError(f"parameter 'hidden': must be a multiple of heads ({self.heads}), got {self.hidden}")


class CorpusTooSmall(ValueError):
    """The corpus packs into fewer training sequences than one batch."""


@dataclass
class PretrainLog:
    """Mean training loss per ``log_every`` steps, held-out MLM loss at the start and end, time spent."""

    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    heldout_start: float | None = None
    heldout_end: float | None = None
    train_seconds: float = 0.0
    vocabulary: int = 0  # tokens in the learnt vocabulary (at most vocab_size: a small corpus may give fewer)


def build_tokenizer(texts: list[str], vocab_size: int, min_frequency: int = 2):
    """A lower-cased WordPiece tokenizer learnt from ``texts`` (CJK characters split off as single tokens,
    each kept), as a ``transformers`` fast tokenizer; the same texts and settings give the same tokenizer
    in every process (``tokenizer.json`` byte for byte).

    The token set is the one ``tokenizers``' WordPiece trainer learns. Left alone, that trainer numbers
    the continuation pieces (``##e``) in Rust hash order as it meets them and breaks ties between equally
    frequent merges by those numbers, so its set changed between processes (2 of 16 builds on the PubMed
    corpus at 8,000 tokens swapped two tokens at the cut-off; 6 builds on ChineseBLUE at 6,000 gave 6 sets).
    Here a first pass lists every continuation piece of the corpus and the trainer is given them, sorted,
    before it starts, so that no number it uses depends on hashing: the set was then identical in every
    process tried (see ``learnt_tokens``). The ids are not the trainer's but canonical (``canonical_vocab``)."""
    return tokenizer_from_vocab(canonical_vocab(learnt_tokens(texts, vocab_size, min_frequency)))


def learnt_tokens(texts: list[str], vocab_size: int, min_frequency: int) -> set[str]:
    """The token set of ``tokenizers``' WordPiece trainer on ``texts``, its continuation pieces given up front
    (``build_tokenizer`` says why): 17 processes on the PubMed corpus at 8,000 tokens, 8 on ChineseBLUE at
    6,000 and 30 on 1,500 PubMed sentences at 800 each learnt one set, numbered alike by the trainer."""
    pieces = _wordpiece(texts, 0, 1, SPECIAL_TOKENS)  # vocab_size 0: no merge, only the alphabet and pieces
    continuations = sorted(t for t in pieces.get_vocab() if t.startswith("##"))
    return set(_wordpiece(texts, vocab_size, min_frequency, SPECIAL_TOKENS + continuations).get_vocab())


def _wordpiece(texts: list[str], vocab_size: int, min_frequency: int, special_tokens: list[str]):
    from tokenizers import BertWordPieceTokenizer

    wp = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    # limit_alphabet: keep every character seen (the default, 1000, would drop most Chinese characters)
    wp.train_from_iterator(
        texts,
        vocab_size,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        limit_alphabet=100_000,
        show_progress=False,
    )
    return wp


def canonical_vocab(tokens: set[str]) -> dict[str, int]:
    """Token -> id: the special tokens first, in ``SPECIAL_TOKENS``' order, then every other token in the
    code-point order of its string (Python's ``sorted``)."""
    return {token: i for i, token in enumerate([*SPECIAL_TOKENS, *sorted(set(tokens) - set(SPECIAL_TOKENS))])}


def tokenizer_from_vocab(vocab: dict[str, int]):
    """The kit's WordPiece tokenizer (lower-cased, CJK characters split off, [CLS] ... [SEP] around each
    text) over ``vocab``, as a ``transformers`` fast tokenizer."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import PreTrainedTokenizerFast

    wp = BertWordPieceTokenizer(vocab, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    with tempfile.TemporaryDirectory() as tmp:
        wp.save(str(Path(tmp) / "tokenizer.json"))
        return PreTrainedTokenizerFast(
            tokenizer_file=str(Path(tmp) / "tokenizer.json"),
            model_max_length=512,
            **dict(zip(("pad_token", "unk_token", "cls_token", "sep_token", "mask_token"), SPECIAL_TOKENS)),
        )


def packed(ids: list[list[int]], length: int, cls: int, sep: int) -> list[list[int]]:
    """Sentences (token ids with [CLS] ... [SEP]) packed into sequences of ``length`` tokens: their tokens
    joined, each sentence closed by [SEP], cut into blocks of ``length - 1`` opened by [CLS] (RoBERTa's
    FULL-SENTENCES packing, Liu et al. 2019); every block but the last holds exactly ``length`` tokens, so every
    position below ``length`` is trained."""
    stream = [t for x in ids for t in (*x[1:-1], sep)]
    n = length - 1
    return [[cls, *stream[i : i + n]] for i in range(0, len(stream), n)]


def keep_trained_positions(folder: str | Path, length: int, why: str) -> None:
    """Cut a saved model folder's position table to its first ``length`` rows, the ones pretraining trained, and
    say so in its ``config.json`` (``max_position_embeddings``), its tokenizer (``model_max_length``) and, with
    ``why``, its model card: the kit's readers never go past them (``kit.core.models.token_limit``), nor can any
    other reader of the folder. The outputs of texts of at most ``length`` tokens are unchanged."""
    from safetensors.torch import load_file, save_file

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith("position_embeddings.weight"))
    weights[key] = weights[key][:length].clone()
    if "embeddings.position_ids" in weights:
        weights["embeddings.position_ids"] = weights["embeddings.position_ids"][:, :length].clone()
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    config["max_position_embeddings"] = length
    write_text_atomic(folder / "config.json", json.dumps(config, indent=2, sort_keys=True) + "\n")
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer_config["model_max_length"] = length
    write_text_atomic(folder / "tokenizer_config.json", json.dumps(tokenizer_config, indent=2) + "\n")
    card = folder / "README.md"
    write_text_atomic(
        card, card.read_text(encoding="utf-8").rstrip("\n") + f"\n\n**Trained positions: {length}.** {why}\n"
    )


def _model(config: PretrainConfig, tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(config.seed)
    bert = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        intermediate_size=config.intermediate,
        max_position_embeddings=config.max_length,  # only positions that are trained
        pad_token_id=tokenizer.pad_token_id,
        attn_implementation="sdpa",
    )
    return BertForMaskedLM(bert)


def _optimizer(model, config: PretrainConfig, device: torch.device):
    """AdamW (no weight decay on biases and LayerNorm) and its schedule: linear warm-up over at least one
    step, then linear decay to 0 at ``config.steps``."""
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        fused=device.type == "cuda",
    )
    warm = max(1, int(config.warmup * config.steps))
    cool = max(1, config.steps - warm)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (config.steps - s) / cool)))
    return opt, sched


def _collate(collator, ids: list[list[int]], device: torch.device) -> dict[str, torch.Tensor]:
    batch = collator([{"input_ids": x} for x in ids])
    return {k: v.to(device, non_blocking=device.type == "cuda") for k, v in batch.items()}


@torch.no_grad()
def heldout_loss(model, collator, ids: list[list[int]], device: torch.device, batch_size: int = 256) -> float:
    """MLM loss on held-out sentences with masks drawn from a fixed seed (the same masks at every call),
    restoring the global RNG afterwards so that training is not perturbed."""
    state = torch.get_rng_state()
    torch.manual_seed(1234)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for s in range(0, len(ids), batch_size):
        batch = _collate(collator, ids[s : s + batch_size], device)
        n = int((batch["labels"] != -100).sum())
        with autocast(device):
            total += model(**batch).loss.float().item() * n
        count += n
    torch.set_rng_state(state)
    model.train(was_training)
    return total / max(count, 1)


def run_record(texts: list[str], config: PretrainConfig) -> dict:
    """What makes a run the same run: its settings and its corpus (``run.json`` in the model folder)."""
    return {"settings": asdict(config), "corpus": digest(texts), "sentences": len(texts)}


def split(texts: list[str], config: PretrainConfig) -> tuple[list[str], list[str]]:
    """(training, held-out) sentences: the last ``config.heldout`` after a shuffle seeded by ``config.seed``."""
    order = np.random.default_rng(config.seed).permutation(len(texts))
    cut = len(texts) - config.heldout
    return [texts[i] for i in order[:cut]], [texts[i] for i in order[cut:]]


def pretrain(
    texts: list[str],
    out: str | Path,
    config: PretrainConfig,
    until: int | None = None,
    card: Callable[[PretrainLog], str] | None = None,
) -> PretrainLog:
    """Pretrain on ``texts`` into the folder ``out``; resume from ``out/checkpoint.pt`` if present (one of
    another run, other settings or another corpus, is refused with ValueError). ``out/run.json`` records
    the run from its start.

    ``until``: stop after this step (checkpointed) and return; a later call resumes. At ``config.steps``
    the model (fp16 safetensors), tokenizer, ``training_log.json`` and, given ``card``, the model card
    (``card(log)``, README.md) are written, then the checkpoint is removed: a run killed before that
    redoes the last writes from it. The last ``config.heldout`` sentences (after a seeded shuffle) are
    never trained on."""
    from transformers import DataCollatorForLanguageModeling

    out = Path(out)
    device = resolve_device(config.device)
    if len(texts) < config.heldout + config.batch_size:
        raise ValueError(f"corpus of {len(texts)} sentences is too small for {config.heldout} held out + one batch")
    record = run_record(texts, config)
    ckpt = out / CHECKPOINT
    state = read_checkpoint(ckpt, CHECKPOINT_KEYS)  # a damaged one is set aside: the run starts over
    if state is not None and state["run"] != record:
        raise ValueError(f"{ckpt} was written by a run of other settings or on another corpus: {state['run']}")
    write_text_atomic(out / RUN_RECORD, json_text(record, indent=1))
    train_texts, heldout_texts = split(texts, config)
    if state is not None:  # the checkpoint's own vocabulary
        tokenizer = tokenizer_from_vocab(state["vocab"])
    else:
        tokenizer = build_tokenizer(train_texts, config.vocab_size, config.min_frequency)
    tokenizer.model_max_length = config.max_length

    def encode(texts: list[str]) -> list[list[int]]:
        ids = tokenizer(texts, verbose=False)["input_ids"]  # whole sentences: packing cuts them
        return packed(ids, config.max_length, tokenizer.cls_token_id, tokenizer.sep_token_id)

    train_ids, heldout_ids = encode(train_texts), encode(heldout_texts)
    if len(train_ids) < config.batch_size:
        raise CorpusTooSmall(
            f"packs into {len(train_ids)} training sequences of {config.max_length} tokens, fewer than one batch of "
            f"{config.batch_size}"
        )
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=config.mask_prob, return_tensors="pt")

    model = _model(config, tokenizer).to(device)
    opt, sched = _optimizer(model, config, device)
    batches = Batches(len(train_ids), config.batch_size, np.random.default_rng(config.seed))
    torch.manual_seed(config.seed)
    log, step = PretrainLog(), 0
    running = torch.zeros((), device=device)  # the sum of the losses since the last logged step
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        batches.load(state["batches"])
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] is not None and device.type == "cuda":
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        log, step, running = PretrainLog(**state["log"]), state["step"], state["running"].to(device)
    else:
        log.heldout_start = heldout_loss(model, collator, heldout_ids, device)
        log.vocabulary = len(tokenizer)

    def save_checkpoint() -> None:
        saved = {
            "run": record,
            "vocab": tokenizer.get_vocab(),
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "batches": batches.state(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if device.type == "cuda" else None,
            "log": asdict(log),
            "running": running.cpu(),
            "step": step,
        }
        write_atomic(ckpt, lambda tmp: torch.save(saved, tmp))

    stop = min(config.steps, until if until is not None else config.steps)
    model.train()
    progress = bar(total=config.steps, initial=step, desc=f"MLM {out.name}")
    t0 = time.perf_counter()
    while step < stop:
        batch = _collate(collator, [train_ids[i] for i in batches.next()], device)
        with autocast(device):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        running += loss.detach().float()
        step += 1
        progress.update(1)
        if step % config.log_every == 0:
            log.steps.append(step)
            log.losses.append(running.item() / config.log_every)
            running.zero_()
            progress.set_postfix(loss=f"{log.losses[-1]:.3f}")
        if step % config.save_every == 0 or step == stop:
            log.train_seconds += time.perf_counter() - t0
            save_checkpoint()
            t0 = time.perf_counter()
    progress.close()
    if step < config.steps:
        return log
    log.heldout_end = heldout_loss(model, collator, heldout_ids, device)
    _save_model(model, tokenizer, out)
    write_text_atomic(out / "training_log.json", json_text(asdict(log), indent=1))
    if card is not None:
        write_text_atomic(out / "README.md", card(log))
    normal_permissions(*(out / name for name in FINISHED_FILES))  # transformers leaves the weights 0600
    ckpt.unlink(missing_ok=True)
    return log


def _save_model(mlm, tokenizer, out: Path) -> None:
    """The encoder of the MLM model, as a ``BertModel`` (with a seeded, untrained pooler so that
    ``AutoModel`` loads it without newly initialised weights), in fp16 safetensors."""
    from transformers import BertModel

    torch.manual_seed(0)
    bert = BertModel(mlm.config, add_pooling_layer=True)
    missing, unexpected = bert.load_state_dict(mlm.bert.state_dict(), strict=False)
    assert not unexpected and all(k.startswith("pooler.") for k in missing), (missing, unexpected)
    bert.half().save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def model_card(name: str, corpus: str, texts: list[str], config: PretrainConfig, log: PretrainLog, argv) -> str:
    """The model card (README.md): what the model is and everything needed to reproduce it."""
    params = (config.layers * (4 * config.hidden**2 + 2 * config.hidden * config.intermediate)) / 1e6
    last = log.losses[-5:]
    rows = {
        "command": f"`python -m kit.pretrain {shlex.join(argv)}`",
        "data": f"{corpus}: {len(texts):,} sentences, digest `{digest(texts)[:16]}`; the last "
        f"{config.heldout:,} after a seeded shuffle are held out",
        "commit": git_commit(),
        "steps": f"{config.steps:,} x batch {config.batch_size} (sentences packed into sequences of "
        f"{config.max_length} tokens), lr {config.lr:g}, warm-up {config.warmup:.0%}, seed {config.seed}",
        "trained positions": f"{config.max_length}: the model has no other (`max_position_embeddings`), and the "
        "kit truncates every text it reads to them",
        f"training loss, mean of the last {len(last) * config.log_every} steps": f"{np.mean(last):.3f}"
        if last
        else "not logged",
        "held-out MLM loss, start -> end": f"{log.heldout_start:.3f} -> {log.heldout_end:.3f}",
        "training time": f"{log.train_seconds / 60:.1f} min on {describe(resolve_device(config.device))}, "
        f"torch {torch.__version__}",
    }
    table = "\n".join(f"| {k} | {v} |" for k, v in rows.items())
    return f"""# {name}

A small BERT ({config.layers} layers, hidden {config.hidden}, {config.heads} heads, intermediate
{config.intermediate}, vocabulary of {log.vocabulary:,} WordPiece tokens learnt from the corpus, about
{params:.1f}M parameters outside the embeddings) pretrained from random weights by `kit.pretrain` with
BERT's masked-language-model objective, so that the studies can start from a *raw* masked-language
model as the papers do (they start from BERT-base, 110M parameters, pretrained on billions of words;
this one saw a few million tokens: a stand-in for the direction of the papers' effects, not their size).

| | |
|---|---|
{table}

Weights are stored in fp16 (safetensors); the kit loads them in fp32. `training_log.json` holds the
loss every {config.log_every} steps. Load it by its alias in the kit, or with
`transformers.AutoModel.from_pretrained` on this folder.

Rerunning the command at this commit (same corpus, same library versions) into a new folder reproduces the
vocabulary (`tokenizer.json`) byte for byte on any machine, and on the same device type the training: on
the CPU the weights and the loss log bit for bit; on a GPU (bf16 autocast) the kernels need not be
deterministic, so the weights agree closely but not necessarily bit for bit.
"""


CORPORA = ("pubmed", "chineseblue")


def load_corpus(name: str) -> tuple[str, list[str]]:
    """(description, sentences) of a shared corpus (``pubmed``, ``chineseblue``) or a text file (one
    sentence per line, .txt or .txt.gz)."""
    from kit.data import chineseblue_corpus, load_pubmed_sentences

    if name == "pubmed":
        return "PubMed sentences (../shared/data/pubmed_sentences)", load_pubmed_sentences()
    if name == "chineseblue":
        return "ChineseBLUE training sentences (cMedQQ, cMedIC, cMedTC train; dev/test texts removed)", (
            chineseblue_corpus()
        )
    return f"sentences from {name}", load_pubmed_sentences(name)


def corpus_name(text: str) -> str:
    """A ``type=`` for --corpus: a shared corpus's name, or a regular .txt or .txt.gz file."""
    if text in CORPORA:
        return text
    if not text.endswith((".txt", ".txt.gz")):
        raise argparse.ArgumentTypeError(f"{text!r} is neither {' nor '.join(CORPORA)} nor a .txt or .txt.gz file")
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text} is not a regular file (give a .txt or .txt.gz file)")
    return text


def parser() -> Parser:
    ap = Parser(prog="python -m kit.pretrain", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus",
        required=True,
        type=corpus_name,
        help="pubmed, chineseblue, or a .txt/.txt.gz file (one sentence a line)",
    )
    ap.add_argument(
        "--out",
        required=True,
        type=lambda text: Path(output_folder(text)),
        help="model folder (e.g. models/pubmed-bert-mini), created if missing; a folder holding this run (same "
        "settings and corpus) resumes it, or if finished is left as it is; one holding anything else is refused",
    )
    ap.add_argument(
        "--overwrite",
        action="store_true",
        help=f"train into an --out that holds another run or model, replacing the files kit.pretrain writes "
        f"({', '.join(WRITTEN)}); other files are left",
    )
    ap.add_argument(
        "--until",
        type=integer(1),
        default=None,
        help="stop after this step (1..--steps, checkpointed); rerun to resume",
    )
    hints = typing.get_type_hints(PretrainConfig)
    for f in fields(PretrainConfig):
        ap.add_argument(f"--{f.name.replace('_', '-')}", **setting_argument(f, hints[f.name]))
    return ap


def held_run(out: Path, record: dict) -> tuple[str, str]:
    """What the folder ``out`` holds: ("new", "") when it is missing or empty, ("resume", "") or
    ("finished", "") for the run of ``record`` (``run_record``), else ("other", a phrase naming what)."""
    if not out.is_dir() or not any(out.iterdir()):
        return "new", ""
    try:
        held = json.loads((out / RUN_RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        names = sorted(p.name for p in out.iterdir())
        return "other", f"files of no kit.pretrain run ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})"
    except (OSError, ValueError):
        held = None
    if held == record:
        finished = not (out / CHECKPOINT).exists() and all((out / name).exists() for name in FINISHED_FILES)
        return ("finished" if finished else "resume"), ""
    if not isinstance(held, dict) or not isinstance(held.get("settings"), dict):
        return "other", f"a {RUN_RECORD} that kit.pretrain cannot read"
    other = [
        f"--{k.replace('_', '-')} {held['settings'].get(k)}"
        for k, v in record["settings"].items()
        if held["settings"].get(k) != v
    ]
    if held.get("corpus") != record["corpus"]:
        other.append(f"a corpus of {held.get('sentences')} sentences, digest {held.get('corpus')}")
    return "other", f"another run ({', '.join(other)} there)"


def checked_config(ap: Parser, settings: dict, until: int | None) -> PretrainConfig:
    """The run's settings, once those that depend on each other agree (each alone was checked by its type)."""
    if settings["hidden"] % settings["heads"]:
        ap.error(f"argument --hidden: must be a multiple of --heads ({settings['heads']}), got {settings['hidden']}")
    if until is not None and until > settings["steps"]:
        ap.error(f"argument --until: must be a step in 1..{settings['steps']} (--steps), got {until}")
    return PretrainConfig(**settings)


def checked_corpus(ap: Parser, corpus: str, config: PretrainConfig) -> tuple[str, list[str]]:
    """(description, sentences) of --corpus, once read whole and found large enough for ``config``."""
    try:
        description, texts = load_corpus(corpus)
    except (OSError, ValueError) as err:  # missing shared data, an unreadable or malformed file
        ap.error(f"argument --corpus: {err}")
    if len(texts) < config.heldout + config.batch_size:
        ap.error(
            f"argument --heldout/--batch-size: --corpus {corpus} has {len(texts):,} sentences; --heldout "
            f"{config.heldout:,} plus one batch of --batch-size {config.batch_size:,} needs at least "
            f"{config.heldout + config.batch_size:,}"
        )
    return description, texts


def claimed_out(ap: Parser, out: Path, record: dict, overwrite: bool) -> str:
    """What ``out`` held (``held_run``), made the folder of the run of ``record`` unless that run is finished
    there. One that holds anything else is refused, unless ``overwrite``: then the files kit.pretrain writes
    are removed from it."""
    state, what = held_run(out, record)
    if state == "finished":
        return state
    if state == "other" and not overwrite:
        ap.error(f"argument --out: {out} holds {what}; give another --out, or --overwrite to replace it")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        ap.error(f"argument --out: cannot create {out} ({err.strerror}); give a folder in a writable place")
    if state == "other":
        for name in WRITTEN:
            (out / name).unlink(missing_ok=True)
    return state


def main(argv: list[str] | None = None) -> int:
    """The command line. Every argument and file is checked before any work: a bad one is refused with one
    line on stderr (naming it and what is allowed) and exit code 2, and nothing is written."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = parser()
    args = vars(ap.parse_args(argv))
    quiet_libraries()
    out, corpus, until, overwrite = args.pop("out"), args.pop("corpus"), args.pop("until"), args.pop("overwrite")
    config = checked_config(ap, args, until)
    description, texts = checked_corpus(ap, corpus, config)
    state = claimed_out(ap, out, run_record(texts, config), overwrite)
    if state == "finished":
        print(f"{out} holds this run, finished: nothing to do (remove the folder to train it again)")
        return 0
    if state == "resume" and (out / CHECKPOINT).exists():
        print(f"{out}: resuming this run from its checkpoint")
    card = lambda log: model_card(out.name, description, texts, config, log, argv)  # noqa: E731
    try:
        log = pretrain(texts, out, config, until, card)
    except CorpusTooSmall as err:  # known only once the corpus is tokenized and packed
        print(f"python -m kit.pretrain: error: argument --corpus: {corpus} {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{out}: interrupted; the same command resumes from the last checkpoint", file=sys.stderr)
        return 130
    if log.heldout_end is None:
        print(f"{out}: checkpointed before step {config.steps} (--until {until}); rerun without --until to finish")
        return 0
    print(f"{out}: held-out MLM loss {log.heldout_start:.3f} -> {log.heldout_end:.3f}, {log.train_seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
