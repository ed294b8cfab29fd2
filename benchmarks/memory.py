"""Peak memory: the resident set of a whole study run (``params/simcse_augmentations/demo.yaml``
through ``kit.batch``, kernel included) and, on CUDA, the peak GPU memory of SimCSE training
steps with a bert-base-sized model at length 32: batch 128, and batch 512 with and without
GradCache (``kit.core.gradcache``, mini-batches of 64).

Target (issue 7): the demo run under 4 GB of RSS. ``--quick`` runs the explorer's smoke file (one notebook, no
training: the test suite's check that this script still runs) into a temporary folder and writes nothing;
``--gpu-only`` skips the demo run.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time

import torch
from _common import record

from kit.paths import PROJECT_ROOT


def peak_rss_of_run(param_file: str) -> tuple[float, float]:
    """(peak RSS in GB of the largest process of the run, wall seconds); Linux reports ru_maxrss in KiB."""
    with tempfile.TemporaryDirectory() as reports:
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "kit.batch", param_file, "--reports", reports],
            cwd=PROJECT_ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - t
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2, seconds


def peak_gpu_memory(batch_size: int, mini_batch_size: int | None = None, max_length: int = 32) -> float:
    """Peak allocated GPU memory (GB: weights, AdamW state and activations) over 3 SimCSE steps of
    random-bert-base with bf16 autocast; ``mini_batch_size`` trains through GradCache."""
    from kit.core.config import TrainConfig
    from kit.core.gradcache import CachedSimCSEObjective
    from kit.core.models import Encoder
    from kit.core.train import train_contrastive
    from kit.data import load_pubmed_sentences

    enc = Encoder.from_pretrained("random-bert-base", "cls_before_pooler")
    cfg = TrainConfig(steps=3, eval_every=10_000, batch_size=batch_size, max_length=max_length, device="cuda")
    objective = CachedSimCSEObjective(enc, cfg, mini_batch_size) if mini_batch_size else None
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    train_contrastive(enc, load_pubmed_sentences(limit=2000), cfg, lambda e: {"spearman_dev": 0.0}, objective=objective)
    return torch.cuda.max_memory_allocated() / 1024**3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--gpu-only", action="store_true")
    args = ap.parse_args()
    rows = []
    if not args.gpu_only:
        param_file = (
            "params/explore_augmentations/smoke.yaml" if args.quick else "params/simcse_augmentations/demo.yaml"
        )
        rss, seconds = peak_rss_of_run(param_file)
        rows.append(
            f"| `python -m kit.batch {param_file}` | peak RSS of its largest process | {rss:.2f} GB | under 4 GB: "
            f"{'yes' if rss < 4 else 'NO'} ({seconds:.0f} s wall) |"
        )
    if torch.cuda.is_available():
        for batch, mini in ((128, None), (512, None), (512, 64)):
            how = f"GradCache, mini-batches of {mini}" if mini else "one pass"
            rows.append(
                f"| SimCSE steps, random bert-base, batch {batch}, length 32, bf16 autocast, {how} | "
                f"peak GPU memory allocated | {peak_gpu_memory(batch, mini):.2f} GB | reported |"
            )
    else:
        rows.append("| SimCSE step, bert-base, batch 128, length 32 | peak GPU memory | n/a: no CUDA device here | |")
    table = "\n".join(["| run | measure | value | target |", "|---|---|---:|---|", *rows])
    record("memory.py: peak memory", table, args.quick)


if __name__ == "__main__":
    main()
