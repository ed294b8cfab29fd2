"""Where a SimCSE training step's time goes on CUDA: the kit's loop under ``torch.profiler``.

Prints, per step: wall time, GPU kernel time and their ratio (the GPU-busy share; below 1 the GPU
waits for the host), the time of the matrix kernels (GEMMs and attention) and the step's matrix
FLOPs at the GPU's bf16 dense peak, then the kernels and operators with the most time. Diagnostic
only: it writes no results file.
``python benchmarks/profile_step.py --model random-bert-base --batch-size 128 [--cuda-graphs]``.
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

from kit.core.config import TrainConfig
from kit.core.models import Encoder
from kit.core.train import train_contrastive
from kit.data import load_pubmed_sentences

MATRIX_KERNEL = re.compile(r"gemm|xmma|cutlass|nvjet|wgmma|flash|fmha|attention|sm90_|sm80_", re.IGNORECASE)
BF16_PEAK = {"H100": 989e12, "H200": 989e12, "A100": 312e12}  # dense bf16 FLOP/s (SXM data sheets)


def matrix_flops(enc: Encoder, sequences: int, length: int) -> float:
    """Forward + backward FLOPs of the transformer layers' matrix products for ``sequences`` x ``length``
    tokens: 3 x 2 x tokens x (4 d^2 + 2 d d_ff) per layer for the projections, plus attention's
    3 x 2 x 2 x sequences x length^2 x d per layer (the embedding lookups are not products)."""
    c = enc.backbone.config
    tokens = sequences * length
    per_layer = 6 * tokens * (4 * c.hidden_size**2 + 2 * c.hidden_size * c.intermediate_size)
    per_layer += 12 * sequences * length**2 * c.hidden_size
    return c.num_hidden_layers * per_layer


def padded_length(enc: Encoder, corpus: list[str], cfg: TrainConfig) -> float:
    """Mean padded length of a training batch: max_length with static shapes, else over 20 random batches."""
    if cfg.cuda_graphs:
        return cfg.max_length
    rng = np.random.default_rng(0)
    batches = [[corpus[i] for i in rng.choice(len(corpus), cfg.batch_size, replace=False)] for _ in range(20)]
    return float(np.mean([enc.tokenize(b, cfg.max_length)["input_ids"].shape[1] for b in batches]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="random-bert-base")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--max-length", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--cuda-graphs", action="store_true")
    args = ap.parse_args()
    corpus = load_pubmed_sentences(limit=5000)
    if args.max_length > 32:  # long enough sentences to fill the length (pairs of sentences joined)
        corpus = [a + " " + b for a, b in zip(corpus[::2], corpus[1::2])]
        corpus = [c + " " + c for c in corpus] if args.max_length > 64 else corpus
    cfg = TrainConfig(
        steps=args.steps,
        eval_every=10_000,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device="cuda",
        precision=args.precision,
        compile=args.compile,
        cuda_graphs=args.cuda_graphs,
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
    length = padded_length(enc, corpus, cfg)
    kernels = [e for e in prof.key_averages() if e.device_type == DeviceType.CUDA]
    gpu = sum(e.self_device_time_total for e in kernels) / 1e6 / args.steps
    matrix = sum(e.self_device_time_total for e in kernels if MATRIX_KERNEL.search(e.key)) / 1e6 / args.steps
    flops = matrix_flops(enc, 2 * args.batch_size, round(length))
    peak = next((v for k, v in BF16_PEAK.items() if k in torch.cuda.get_device_name()), None)
    at_peak = f"{flops / peak * 1e3:.1f} ms at the bf16 dense peak" if peak else "no peak known for this GPU"
    mode = "cuda_graphs" if args.cuda_graphs else "compile" if args.compile else "eager"
    print(
        f"{args.model}, batch {args.batch_size}, length {args.max_length} (padded length {length:.1f}), "
        f"{args.precision}, {mode}: wall {wall * 1e3:.1f} ms/step (under the profiler), GPU kernels "
        f"{gpu * 1e3:.1f} ms/step, busy {gpu / wall:.0%}; matrix kernels (GEMM, attention) {matrix * 1e3:.1f} ms/step "
        f"= {matrix / wall:.0%} of the wall time; matrix work {flops / 1e12:.2f} TFLOP/step = {at_peak}; "
        f"wall / matrix kernels {wall / matrix:.2f}x"
    )
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=15, max_name_column_width=70))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10, max_name_column_width=70))


if __name__ == "__main__":
    main()
