"""Where a SimCSE training step's time goes on CUDA: the kit's loop under ``torch.profiler``.

Prints wall time per step, GPU kernel time per step and their ratio (below 1: the GPU waits for
the host), then the operators with the most host time. Diagnostic only: it writes no results
file. ``python benchmarks/profile_step.py --model random-bert-base --batch-size 128``.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.profiler import ProfilerActivity, profile

from kit.core.models import Encoder
from kit.core.train import TrainConfig, train_contrastive
from kit.data import load_pubmed_sentences


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="random-bert-base")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--max-length", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    corpus = load_pubmed_sentences(limit=5000)
    cfg = TrainConfig(
        steps=args.steps,
        eval_every=10_000,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device="cuda",
        precision=args.precision,
        compile=args.compile,
    )
    quiet = lambda e: {"spearman_dev": 0.0}  # noqa: E731
    enc = Encoder.from_pretrained(args.model, "cls_before_pooler")
    train_contrastive(enc, corpus, cfg, quiet)  # warm-up; the profiled run reuses the encoder already on the GPU
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t = time.perf_counter()
        train_contrastive(enc, corpus, cfg, quiet)
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t) / args.steps
    events = prof.key_averages()
    gpu = sum(e.self_device_time_total for e in events) / 1e6 / args.steps
    print(
        f"{args.model}, batch {args.batch_size}, length {args.max_length}, {args.precision}, compile {args.compile}: "
        f"wall {wall * 1e3:.1f} ms/step (under the profiler), GPU kernels {gpu * 1e3:.1f} ms/step, busy "
        f"{gpu / wall:.0%}"
    )
    print(events.table(sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=60))


if __name__ == "__main__":
    main()
