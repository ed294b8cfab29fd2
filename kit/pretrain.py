"""Masked-language-model pretraining of a small BERT from scratch: the kit's raw starts.

The papers start their contrastive training from raw masked-language models (BERT, BioBERT,
chinese-bert-wwm); none can be had offline. This module pretrains a small one on the shared corpora:

- the vocabulary is learnt from the corpus itself, WordPiece (Schuster & Nakajima 2012; BERT's
  tokenizer) as PubMedBERT does for its in-domain vocabulary (Gu et al. 2021); Chinese text is split
  into single characters first, as in Chinese BERT, so the Chinese vocabulary is the corpus's
  characters (plus WordPiece for its Latin and digit runs);
- the objective is BERT's (Devlin et al. 2019): 15% of the tokens are chosen, 80% of those become
  [MASK], 10% a random token, 10% stay; the loss is the cross-entropy on the chosen tokens
  (transformers' ``DataCollatorForLanguageModeling``); no next-sentence task (as RoBERTa);
- AdamW with linear warm-up and linear decay, bf16 autocast on CUDA, fp32 on CPU.

Runs are seeded and resumable: the state is checkpointed every ``save_every`` steps (and at
``until``) and a restarted run continues from it with the same batches, masks and dropout. The
finished model is written as fp16 safetensors (``BertModel``, loadable by ``AutoModel``) with its
tokenizer, its loss log and a model card (command, data, commit, steps, MLM losses, time).

``python -m kit.pretrain --corpus pubmed --out models/pubmed-bert-mini`` (``--help`` for the shape).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from kit.core.batches import Batches
from kit.core.devices import autocast, describe, resolve_device
from kit.core.files import write_atomic, write_text_atomic
from kit.core.fingerprint import digest
from kit.core.progress import bar
from kit.core.train import read_checkpoint
from kit.report.record import git_commit

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHECKPOINT_KEYS = frozenset("config model optimizer scheduler batches torch_rng cuda_rng log step".split())


@dataclass
class PretrainConfig:
    """The model's shape and the MLM run's hyperparameters (defaults: the kit's mini-BERTs)."""

    vocab_size: int = 8000
    min_frequency: int = 2
    layers: int = 4
    hidden: int = 256
    heads: int = 4
    intermediate: int = 1024
    max_length: int = 48
    batch_size: int = 256
    steps: int = 8000
    lr: float = 5e-4
    warmup: float = 0.06  # share of the steps
    weight_decay: float = 0.01
    mask_prob: float = 0.15
    heldout: int = 1000  # sentences kept out of training, for the held-out MLM loss
    seed: int = 0
    device: str = "auto"
    save_every: int = 1000
    log_every: int = 100

    def __post_init__(self):
        for name in ("vocab_size", "layers", "hidden", "heads", "intermediate", "max_length", "steps", "lr"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        if self.batch_size < 1 or self.save_every < 1 or self.log_every < 1:
            raise ValueError("batch_size, save_every and log_every must be >= 1")
        if not 0 < self.mask_prob < 1:
            raise ValueError(f"mask_prob must be in (0, 1), got {self.mask_prob}")


@dataclass
class PretrainLog:
    """Mean training loss per ``log_every`` steps, held-out MLM loss at the start and end, time spent."""

    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    heldout_start: float | None = None
    heldout_end: float | None = None
    train_seconds: float = 0.0
    vocabulary: int = 0  # tokens in the learnt vocabulary (at most vocab_size: a small corpus may give fewer)


def build_tokenizer(texts: list[str], vocab_size: int, min_frequency: int = 2, folder: Path | None = None):
    """A lower-cased WordPiece tokenizer learnt from ``texts`` (CJK characters split off as single
    tokens, each kept), as a ``transformers`` fast tokenizer; saved to ``folder`` when given.

    Not bit-reproducible: ``tokenizers``' trainer breaks ties between equally frequent merges in hash
    order, so two builds may differ in a few tokens at the frequency cut-off. ``pretrain`` therefore
    writes the vocabulary into the model folder first and reuses a vocabulary it finds there."""
    import tempfile

    from tokenizers import BertWordPieceTokenizer, processors
    from transformers import PreTrainedTokenizerFast

    wp = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    # limit_alphabet: keep every character seen (the default, 1000, would drop most Chinese characters)
    wp.train_from_iterator(
        texts, vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_TOKENS, limit_alphabet=100_000
    )
    wp.post_processor = processors.BertProcessing(
        ("[SEP]", wp.token_to_id("[SEP]")), ("[CLS]", wp.token_to_id("[CLS]"))
    )
    with tempfile.TemporaryDirectory() as tmp:
        wp.save(str(Path(tmp) / "tokenizer.json"))
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_file=str(Path(tmp) / "tokenizer.json"),
            model_max_length=512,
            **dict(zip(("pad_token", "unk_token", "cls_token", "sep_token", "mask_token"), SPECIAL_TOKENS)),
        )
    if folder is not None:
        tokenizer.save_pretrained(folder)
    return tokenizer


def _model(config: PretrainConfig, tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(config.seed)
    bert = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        intermediate_size=config.intermediate,
        max_position_embeddings=512,  # as BERT: evaluation encodes longer texts than pretraining saw
        pad_token_id=tokenizer.pad_token_id,
        attn_implementation="sdpa",
    )
    return BertForMaskedLM(bert)


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


def pretrain(texts: list[str], out: str | Path, config: PretrainConfig, until: int | None = None) -> PretrainLog:
    """Pretrain on ``texts`` into the folder ``out``; resume from ``out/checkpoint.pt`` if present. The
    vocabulary is learnt from the training sentences unless ``out`` already holds a tokenizer.

    ``until``: stop after this step (checkpointed) and return; a later call resumes. At ``config.steps``
    the model (fp16 safetensors), tokenizer and ``training_log.json`` are written and the checkpoint
    removed. The last ``config.heldout`` sentences (after a seeded shuffle) are never trained on."""
    from transformers import AutoTokenizer, DataCollatorForLanguageModeling

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = resolve_device(config.device)
    if len(texts) <= config.heldout + config.batch_size:
        raise ValueError(f"corpus of {len(texts)} sentences is too small for {config.heldout} held out + one batch")
    order = np.random.default_rng(config.seed).permutation(len(texts))
    train_texts = [texts[i] for i in order[: len(texts) - config.heldout]]
    heldout_texts = [texts[i] for i in order[len(texts) - config.heldout :]]

    ckpt = out / "checkpoint.pt"
    state = read_checkpoint(ckpt, CHECKPOINT_KEYS)  # a damaged one is set aside: the run starts over
    if state is not None and state["config"] != asdict(config):
        raise ValueError(f"{ckpt} was written with other settings; remove it or use them: {state['config']}")
    if (out / "tokenizer.json").exists():  # a resumed run's, or one given on purpose
        tokenizer = AutoTokenizer.from_pretrained(out)
    else:
        tokenizer = build_tokenizer(train_texts, config.vocab_size, config.min_frequency, out)
    vocabulary = len(tokenizer)
    encode = lambda ts: tokenizer(ts, truncation=True, max_length=config.max_length)["input_ids"]  # noqa: E731
    train_ids, heldout_ids = encode(train_texts), encode(heldout_texts)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=config.mask_prob, return_tensors="pt")

    model = _model(config, tokenizer).to(device)
    decay = [p for p in model.parameters() if p.ndim > 1]  # no weight decay on biases and LayerNorm
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        fused=device.type == "cuda",
    )
    warm = max(1, int(config.warmup * config.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (config.steps - s) / (config.steps - warm)))
    )
    batches = Batches(len(train_ids), config.batch_size, np.random.default_rng(config.seed))
    torch.manual_seed(config.seed)
    log, step = PretrainLog(), 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        batches.load(state["batches"])
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] is not None and device.type == "cuda":
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        log, step = PretrainLog(**state["log"]), state["step"]
    else:
        log.heldout_start = heldout_loss(model, collator, heldout_ids, device)
        log.vocabulary = vocabulary

    def save_checkpoint() -> None:
        saved = {
            "config": asdict(config),
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "batches": batches.state(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if device.type == "cuda" else None,
            "log": asdict(log),
            "step": step,
        }
        write_atomic(ckpt, lambda tmp: torch.save(saved, tmp))

    stop = min(config.steps, until if until is not None else config.steps)
    model.train()
    running = torch.zeros((), device=device)
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
    write_text_atomic(out / "training_log.json", json.dumps(asdict(log), indent=1))
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
        "steps": f"{config.steps:,} x batch {config.batch_size} (length <= {config.max_length}), lr {config.lr:g}, "
        f"warm-up {config.warmup:.0%}, seed {config.seed}",
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
"""


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


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m kit.pretrain", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="pubmed, chineseblue, or a .txt/.txt.gz file (one sentence a line)")
    ap.add_argument("--out", required=True, help="model folder (e.g. models/pubmed-bert-mini); resumes if checkpointed")
    ap.add_argument("--until", type=int, default=None, help="stop after this step (checkpointed); rerun to resume")
    defaults = PretrainConfig()
    for name, value in asdict(defaults).items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = vars(ap.parse_args(argv))
    out, corpus, until = Path(args.pop("out")), args.pop("corpus"), args.pop("until")
    config = PretrainConfig(**args)
    description, texts = load_corpus(corpus)
    log = pretrain(texts, out, config, until)
    if log.heldout_end is None:
        print(f"stopped at step {log.steps[-1] if log.steps else until} of {config.steps}; rerun to resume")
        return
    write_text_atomic(out / "README.md", model_card(out.name, description, texts, config, log, argv))
    print(f"{out}: held-out MLM loss {log.heldout_start:.3f} -> {log.heldout_end:.3f}, {log.train_seconds:.0f} s")


if __name__ == "__main__":
    main()
