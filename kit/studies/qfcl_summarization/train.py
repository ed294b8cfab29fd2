"""Fine-tuning a summarizer with QFCL's objective, with dev ROUGE and similarities after every epoch."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch

from kit.core.config import TrainSettings
from kit.core.devices import autocast, resolve_device
from kit.core.models import MIN_MAX_LENGTH
from kit.core.progress import bar
from kit.core.settings import redefault, setting
from kit.core.train import clip_gradients
from kit.evaluation.summarization import rouge
from kit.studies.qfcl_summarization.focus import QFCLPair
from kit.studies.qfcl_summarization.objective import QFCLConfig, QFCLObjective, collate
from kit.studies.qfcl_summarization.seq2seq import Summarizer, generate, labelled_forward, similarity_probe


@dataclass
class Seq2SeqSettings:
    """Optimisation settings of the summarizer's runs, declared once (study 3's parameters extend them)."""

    epochs: int = setting(4, "training epochs", min=1)
    batch_size: int = setting(16, "pairs per batch", min=1)
    lr: float = setting(
        3e-5,
        "AdamW learning rate of the warm-started weights, linear warm-up and decay (the paper: 3e-5 for its BART "
        "baseline, 1e-5 for QFCL)",
        gt=0,
    )
    new_lr: float = setting(
        3e-4, "AdamW learning rate of the newly initialised weights (a BERT2BERT's cross-attention and LM head)", gt=0
    )
    epoch: str = setting(
        "best-dev",
        "the epoch whose weights are kept: best-dev (the highest dev ROUGE-L) or last",
        choices=("best-dev", "last"),
    )
    warmup: float = setting(0.1, "share of the steps with a linear warm-up", min=0, lt=1)
    max_source: int = setting(96, "tokens per question", min=MIN_MAX_LENGTH)
    max_target: int = setting(24, "tokens per summary (and new tokens generated)", min=MIN_MAX_LENGTH)
    n_hard: int = setting(4, "hard negatives per pair, N_h (the paper: 64)", min=1)
    max_grad_norm: float | None = redefault(TrainSettings, "max_grad_norm", 1.0)
    device: str = redefault(TrainSettings, "device", "auto")


@dataclass
class Seq2SeqFit(Seq2SeqSettings):
    """One summarizer run: the settings and its seed."""

    seed: int = 0


def train(
    s: Summarizer,
    train_pairs: list[QFCLPair],
    dev_pairs: list[QFCLPair],
    cfg: QFCLConfig,
    fit: Seq2SeqFit,
    desc: str = "qfcl",
) -> list[dict]:
    """Fine-tune ``s`` in place with ``QFCLObjective``; after every epoch, greedy summaries of the
    dev CHQs give dev ROUGE and the similarity probe. Returns one history row per epoch (mean of
    each loss term over the steps that had it, dev ROUGE, probe cosines)."""
    from transformers import get_linear_schedule_with_warmup

    device = resolve_device(fit.device)
    torch.manual_seed(fit.seed)
    s.model.to(device)
    objective = QFCLObjective(s, cfg)
    n_hard = fit.n_hard if cfg.hard else 0
    opt = optimizer(s, fit)
    params = [p for group in opt.param_groups for p in group["params"]]
    steps = fit.epochs * -(-len(train_pairs) // fit.batch_size)
    schedule = get_linear_schedule_with_warmup(opt, int(fit.warmup * steps), steps)
    rng = np.random.default_rng(fit.seed)
    history, best = [], None
    for epoch in bar(range(1, fit.epochs + 1), desc=desc):
        s.model.train()
        order, sums, counts = rng.permutation(len(train_pairs)), defaultdict(lambda: 0.0), defaultdict(int)
        for start in range(0, len(order), fit.batch_size):
            batch = collate(
                [train_pairs[i] for i in order[start : start + fit.batch_size]],
                s.tokenizer,
                fit.max_source,
                fit.max_target,
                n_hard,
            )
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with autocast(device), labelled_forward():
                loss, terms = objective(batch)
            loss.backward()
            clip_gradients(params, fit.max_grad_norm)
            opt.step()
            schedule.step()
            opt.zero_grad(set_to_none=True)
            objective.after_step()
            for k, v in terms.items():  # detached tensors: no host synchronisation per step
                sums[k], counts[k] = sums[k] + v.detach(), counts[k] + 1
        summaries = generate(s, [p.chq for p in dev_pairs], fit.max_source, fit.max_target, num_beams=1)
        history.append(
            {
                "epoch": epoch,
                **{f"loss_{k}": float(v) / counts[k] for k, v in sums.items()},
                **{f"dev_{k}": v for k, v in rouge(summaries, [p.faq for p in dev_pairs]).items()},
                **similarity_probe(s, dev_pairs, summaries, fit.max_source, fit.max_target),
            }
        )
        if fit.epoch == "best-dev" and (best is None or history[-1]["dev_rougeL"] > best[0]):
            best = (history[-1]["dev_rougeL"], epoch, {k: v.detach().clone() for k, v in s.model.state_dict().items()})
    kept = best[1] if best else fit.epochs
    if best:
        s.model.load_state_dict(best[2])
    for row in history:
        row["kept"] = row["epoch"] == kept
    return history


def optimizer(s: Summarizer, fit: Seq2SeqFit) -> torch.optim.AdamW:
    """AdamW over the trainable parameters in two groups: the warm-started ones at ``fit.lr`` (a rate at which
    fine-tuning keeps what the start knew: the paper's 3e-5 for BART) and the new ones (``s.new``) at
    ``fit.new_lr``, which start from random values."""
    named = [(n, p) for n, p in s.model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in named if n not in s.new], "lr": fit.lr, "name": "warm-started"},
        {"params": [p for n, p in named if n in s.new], "lr": fit.new_lr, "name": "new"},
    ]
    return torch.optim.AdamW([g for g in groups if g["params"]])
