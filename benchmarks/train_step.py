"""SimCSE training-step time: ``kit.train.train_contrastive`` vs a minimal hand-written
PyTorch loop on the same model, batches, length and optimiser, in one process.

Target (issue 2): the kit within 10% of the minimal loop. ``--quick`` uses the tiny
random model and writes nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.nn import functional as F

from _common import record
from kit.data import load_pubmed_sentences
from kit.models import Encoder
from kit.train import TrainConfig, train_contrastive


def minimal_loop(enc: Encoder, corpus, cfg: TrainConfig) -> float:
    """The reference: tokenize two copies, forward, cosine/temperature, cross-entropy, AdamW."""
    rng = np.random.default_rng(cfg.seed)
    opt = torch.optim.AdamW(enc.parameters(), lr=cfg.lr)
    enc.train()
    t = time.perf_counter()
    for _ in range(cfg.steps):
        texts = [corpus[i] for i in rng.choice(len(corpus), cfg.batch_size, replace=False)]
        feats = enc.tokenizer(texts + texts, padding=True, truncation=True, max_length=cfg.max_length, return_tensors="pt")
        h = enc.mlp(enc.backbone(**feats).last_hidden_state[:, 0])
        z1, z2 = F.normalize(h[: cfg.batch_size], dim=-1), F.normalize(h[cfg.batch_size :], dim=-1)
        loss = F.cross_entropy(z1 @ z2.T / cfg.temperature, torch.arange(cfg.batch_size))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return (time.perf_counter() - t) / cfg.steps


def kit_loop(enc: Encoder, corpus, cfg: TrainConfig) -> float:
    t = time.perf_counter()
    train_contrastive(enc, corpus, cfg, lambda e: {"spearman_dev": 0.0})
    return (time.perf_counter() - t) / cfg.steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--model", default=None)
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    model = args.model or ("tiny-random-bert" if args.quick else "minilm")
    cfg = TrainConfig(steps=3 if args.quick else 12, eval_every=10_000, batch_size=16 if args.quick else 64, max_length=32, device="cpu")
    corpus = load_pubmed_sentences(limit=5000)
    times = {"kit": [], "minimal": []}
    for _ in range(args.rounds or (1 if args.quick else 3)):  # alternate to share the machine's drift
        for name, fn in (("minimal", minimal_loop), ("kit", kit_loop)):
            enc = Encoder.from_pretrained(model, "cls_before_pooler", seed=0)
            times[name].append(fn(enc, corpus, cfg))
    k, m = min(times["kit"]), min(times["minimal"])
    table = "\n".join([
        f"model {model}, batch {cfg.batch_size}, length {cfg.max_length}, {cfg.steps} steps, best of {len(times['kit'])} rounds",
        "", "| loop | s/step | ratio to minimal (target <= 1.10) |", "|---|---:|---:|",
        f"| minimal PyTorch | {m:.3f} | 1.00 |", f"| kit train_contrastive | {k:.3f} | {k / m:.2f} |",
    ])
    record("train_step.py: kit SimCSE step vs minimal PyTorch step", table, args.quick)


if __name__ == "__main__":
    main()
