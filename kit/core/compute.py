r"""What a run file costs: the FLOPs of its planned work, and GPU time at the rates the kit measured on an H100.

A transformer with N non-embedding parameters, n_layer layers of width d, reading n_ctx tokens, spends

    $$C_\mathrm{forward} = 2 N + 2 n_\mathrm{layer} n_\mathrm{ctx} d \quad \text{FLOPs per token,}$$

and a training pass (forward and backward) 3 C_forward (Kaplan et al. 2020, "Scaling Laws for Neural Language
Models", Table 1). A study declares its planned compute as ``Work``: how many sequences of how many tokens pass
through which model, with or without the backward pass, in how many optimizer steps of which training loop.

Its GPU time is, for each training loop, max(FLOPs of the work done inside its steps / rate, steps x floor), and
FLOPs / rate for the work outside any loop (evaluation, mining, generation):

- the rate is the kit's own SimCSE step on bert-base's shape (``REFERENCE``) from the committed H100 benchmark
  tables: its FLOPs, counted by the same formula, over its measured seconds (the slowest and the fastest
  measurement give the range);
- the floor is a loop's measured step on MiniLM (``FLOOR_OF``), which is host time, not GPU work: no step of that
  loop is faster, however small its batch.

Counts are estimates: the contrastive loop's sentences count at ``max_length`` tokens (the kit's batches reach it
on PubMed), other texts at their mean token count under the model's tokenizer; generation is counted by its FLOPs
only, though beam search is bound by latency, not arithmetic.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kit.paths import PROJECT_ROOT

H100_RESULTS = PROJECT_ROOT / "benchmarks" / "results" / "x86_64-16cores-NVIDIA-H100-80GB-HBM3.md"
"""The committed H100 benchmark tables the rates are read from."""
REFERENCE = ("random-bert-base", 128, 32, "kit train_contrastive (bf16 autocast)")
"""The measured step the rate comes from: (model, batch, length, loop row) of ``benchmarks/train_step.py``."""
FLOOR_OF = {
    "kit": ("minilm", 64, 32, "kit train_contrastive (bf16 autocast)"),
    "sentence-transformers": ("minilm", 64, 32, "sentence-transformers trainer + MNRL"),
}
"""Each training loop's floor: its measured step on MiniLM, (model, batch, length, loop row)."""
SHAPE_OF = {
    "bert-base-uncased": "random-bert-base",
    "dmis-lab/biobert-v1.1": "random-bert-base",
    "hfl/chinese-bert-wwm-ext": "random-chinese-bert-base",
    "facebook/bart-large": "random-bart-large",
}
"""The hub models the paper files name, whose configurations are not offline: the random stand-in of their shape
(``kit.core.models.RANDOM_MODELS``), whose shape and tokenizer the counts use."""
LENGTH_SAMPLE = 5000
"""The most texts whose token counts are taken for a mean (a seeded sample of larger sets)."""
EVALUATION_LENGTH = 256
"""The token limit of the kit's embedding for evaluation (``kit.evaluation.embeddings``)."""


@dataclass(frozen=True)
class Work:
    """Compute a run file plans: ``sequences`` sequences of ``tokens`` tokens through ``model`` (its ``part``,
    ``encoder`` or ``decoder``, of a seq2seq model; ``all`` otherwise), with the backward pass when ``train``.
    Work done inside a training loop's steps names the ``loop`` (a ``FLOOR_OF`` key), and one item of the loop
    counts its ``steps``; work outside any loop names none."""

    what: str
    model: str
    sequences: int
    tokens: int
    train: bool
    part: str = "all"
    steps: int = 0
    loop: str = ""

    @property
    def flops(self) -> float:
        per_token = forward_flops_per_token(self.model, self.tokens, self.part)
        return self.sequences * self.tokens * per_token * (3 if self.train else 1)


@dataclass(frozen=True)
class Shape:
    """What the FLOP count reads of a model (or one part of it): non-embedding parameters, layers, width."""

    parameters: int
    layers: int
    width: int


@functools.cache
def shape(model: str, part: str = "all") -> Shape:
    """``model``'s shape (its ``part``, ``encoder`` or ``decoder``, for a seq2seq model), built on the meta device
    (no weights): a kit alias, a local folder, a hub name whose configuration is cached, or a paper model of
    ``SHAPE_OF``; ValueError naming the model otherwise."""
    import torch
    from transformers import AutoConfig, AutoModel, BartConfig, BertConfig

    from kit.core.models import RANDOM_MODELS, check_available, resolve_model

    name = SHAPE_OF.get(model, model)
    if name in RANDOM_MODELS:
        spec = RANDOM_MODELS[name]
        config = (BertConfig if spec.architecture == "bert" else BartConfig)(**spec.shape)
    else:
        try:
            check_available(name)
        except OSError as err:
            raise ValueError(f"model '{model}': its shape is unknown offline ({err})") from None
        config = AutoConfig.from_pretrained(resolve_model(name).path)
    with torch.device("meta"):
        module = AutoModel.from_config(config)
    if not config.is_encoder_decoder:
        part = "all"  # an encoder warm-starting both halves of a BERT2BERT: each half has its shape
    prefix = "" if part == "all" else f"{part}."
    parameters = sum(p.numel() for n, p in module.named_parameters() if n.startswith(prefix) and not _embedding(n))
    layers = config.num_hidden_layers if part == "all" else getattr(config, f"{part}_layers")
    return Shape(parameters, layers, config.hidden_size)


def _embedding(name: str) -> bool:
    """Token, position and type embeddings (BERT's ``embeddings.``, BART's ``shared``/``embed_*``)."""
    return "embeddings." in name or "embed_" in name or name.startswith("shared.")


def forward_flops_per_token(model: str, context: int, part: str = "all") -> float:
    """C_forward = 2 N + 2 n_layer n_ctx d (see the module's docstring)."""
    s = shape(model, part)
    return 2 * s.parameters + 2 * s.layers * context * s.width


def encoding(
    what: str,
    model: str,
    texts: Sequence[str],
    times: int,
    max_length: int,
    train: bool = False,
    part: str = "all",
    batch: int = 0,
    loop: str = "",
) -> Work:
    """``times`` passes of every text of ``texts`` through ``model``, counted at their mean token count (under its
    tokenizer, a paper model's stand-in's, ``max_length`` at most; over a seeded sample of ``LENGTH_SAMPLE`` texts
    when there are more); training passes in batches of ``batch`` texts make ``times`` x ceil(texts / batch)
    steps of ``loop``."""
    sample = list(texts)
    if len(sample) > LENGTH_SAMPLE:
        sample = [sample[i] for i in sorted(random.Random(0).sample(range(len(sample)), LENGTH_SAMPLE))]
    lengths = _token_counts(model, tuple(sample), max_length) if sample else []
    mean = round(sum(lengths) / len(lengths)) if lengths else 0
    steps = times * math.ceil(len(texts) / batch) if batch else 0
    return Work(what, model, times * len(texts), mean, train, part, steps, loop)


@functools.lru_cache(maxsize=64)
def _token_counts(model: str, texts: tuple[str, ...], max_length: int) -> list[int]:
    from kit.core.models import load_tokenizer, token_limit

    tokenizer = load_tokenizer(SHAPE_OF.get(model, model))  # cut at the model's trained positions, as it reads
    limit = token_limit(tokenizer, max_length)
    return [len(ids) for ids in tokenizer(list(texts), truncation=True, max_length=limit)["input_ids"]]


def combined(work: Sequence[Work]) -> list[Work]:
    """``work`` with the items of one kind (the same ``what``, model, part, pass and loop) summed: their sequences
    and steps add up and their token count is the sequences' mean, in first-seen order."""
    kinds: dict[tuple, list[Work]] = {}
    for w in work:
        kinds.setdefault((w.what, w.model, w.train, w.part, w.loop), []).append(w)
    out = []
    for (what, model, train, part, loop), items in kinds.items():
        sequences = sum(w.sequences for w in items)
        tokens = round(sum(w.sequences * w.tokens for w in items) / sequences) if sequences else 0
        out.append(Work(what, model, sequences, tokens, train, part, sum(w.steps for w in items), loop))
    return out


def contrastive_training(model: str, trainings: int, steps: int, batch: int, max_length: int) -> Work:
    """``trainings`` runs of ``steps`` steps of the kit's contrastive loop: every step passes two views of each
    sentence of the batch (SimCSE's dropout views, an augmented copy, ConSERT's views, contrastive tension's two
    towers) forward and backward, at ``max_length`` tokens."""
    what = "contrastive training: two views per sentence"
    return Work(what, model, trainings * steps * batch * 2, max_length, True, steps=trainings * steps, loop="kit")


def checkpoint_evaluations(steps: int, eval_every: int) -> int:
    """The evaluations of one run of the contrastive loop (``kit.core.train.train_contrastive``): before the first
    step, every ``eval_every`` steps, and after the last."""
    return 1 + math.ceil(steps / eval_every)


@dataclass(frozen=True)
class Rate:
    """The measured GPU: FLOP/s of the reference step at its slowest (``low``) and fastest (``high``) measurement,
    and each loop's floor in seconds per step."""

    low: float
    high: float
    reference_seconds: tuple[float, ...]
    floors: dict[str, float]


def measured_seconds(text: str, model: str, batch: int, length: int, loop: str) -> list[float]:
    """Every measured seconds-per-step of ``loop`` in the benchmark tables ``text`` (``benchmarks/train_step.py``'s
    Markdown) for ``model`` on CUDA at ``batch`` and ``length``."""
    head = f"model {model}, device cuda, batch {batch}, length {length},"
    row = re.compile(rf"^\| {re.escape(loop)} \| ([0-9.]+) \|", re.M)
    return [float(m.group(1)) for part in text.split("\n## ") if head in part for m in [row.search(part)] if m]


def measured_rate(results: Path = H100_RESULTS) -> Rate:
    """The rates of the committed benchmark tables ``results``; ValueError naming the file when a measurement
    the estimate needs is not there."""
    text = Path(results).read_text(encoding="utf-8")
    found = {key: measured_seconds(text, *spec) for key, spec in {"reference": REFERENCE, **FLOOR_OF}.items()}
    missing = [key for key, seconds in found.items() if not seconds]
    if missing:
        raise ValueError(f"{results}: no measured step for {', '.join(missing)}")
    model, batch, length, _ = REFERENCE
    step = contrastive_training(model, 1, 1, batch, length).flops
    seconds = found.pop("reference")
    return Rate(step / max(seconds), step / min(seconds), tuple(seconds), {k: min(v) for k, v in found.items()})


def gpu_hours(work: Sequence[Work], rate: Rate | None = None) -> tuple[float, float]:
    """(fewest, most) GPU hours of ``work`` on the measured GPU: each loop's max(FLOPs / rate, steps x floor), plus
    FLOPs / rate of the work outside any loop, at the rate's fastest and slowest measurement."""
    rate = rate or measured_rate()
    loops: dict[str, list[Work]] = {}
    for w in work:
        loops.setdefault(w.loop, []).append(w)
    fewest = most = 0.0
    for loop, items in loops.items():
        flops = sum(w.flops for w in items)
        floor = sum(w.steps for w in items) * rate.floors[loop] if loop else 0.0
        fewest, most = fewest + max(flops / rate.high, floor), most + max(flops / rate.low, floor)
    return fewest / 3600, most / 3600
