"""Scoring one encoder on the whole English evaluation suite: ``kit.evaluation.suite.evaluate`` with a cold
embedding cache (every text encoded, the model's fingerprint and loading included), then with the warm
cache, in one process, in fp32 and under bf16 autocast.

Target (issue 17): MiniLM (all-MiniLM-L6-v2) on the English suite in at most 2 minutes on the 2-core CPU
machine, cold cache. The reference in the same process is what the kit's evaluators did before the suite:
``Encoder.encode`` of the same distinct text lists in fp32, 64 texts per batch, nothing else
(``--no-reference`` skips it); the ratio shows what the suite's length-bucketed batches (3,072 padded
tokens each) and bf16 save, and what its data, scoring and intervals cost. ``--quick`` scores
tiny-random-bert on three small tasks with 200 resamples and writes nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from _common import record

from kit.core.models import Encoder  # imported here: the runs time the work, not the imports of transformers
from kit.evaluation.embeddings import Embedder, EmbeddingCache
from kit.evaluation.suite import SuiteResult, evaluate
from kit.evaluation.tasks import select


def timed_suite(model: str, tasks, precision: str, batch_tokens: int, resamples: int):
    """(cold seconds, cold result, warm seconds, warm result, texts encoded cold) with a fresh cache."""
    with tempfile.TemporaryDirectory() as folder:
        cache = EmbeddingCache(folder)

        def run() -> tuple[float, SuiteResult, Embedder]:
            t = time.perf_counter()  # the model's fingerprint (the cache key) is part of the cost
            embedder = Embedder.from_name(
                model, precision=precision, device="cpu", cache=cache, batch_tokens=batch_tokens
            )
            result = evaluate({model: embedder}, tasks, resamples=resamples)
            return time.perf_counter() - t, result, embedder

        cold, cold_result, cold_embedder = run()
        warm, warm_result, warm_embedder = run()
    assert warm_embedder.encoded == 0, "the warm run encoded texts"
    return cold, cold_result, warm, warm_result, cold_embedder.encoded


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--model", default=None, help="default: minilm (tiny-random-bert with --quick)")
    ap.add_argument("--precision", nargs="+", default=["fp32", "bf16"], choices=("fp32", "bf16"))
    ap.add_argument("--batch-tokens", type=int, default=3072)
    ap.add_argument("--resamples", type=int, default=None, help="default 2000 (200 with --quick)")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args()
    model = args.model or ("tiny-random-bert" if args.quick else "minilm")
    tasks = select(["biosses-all", "biosses-test", "rqe-test"] if args.quick else ["en"])
    resamples = args.resamples or (200 if args.quick else 2000)
    for task in tasks:  # the data is read first: the runs time encoding, scoring and intervals
        task.texts()

    runs = {p: timed_suite(model, tasks, p, args.batch_tokens, resamples) for p in args.precision}

    reference, lists = None, {tuple(texts): None for task in tasks for texts in task.texts()}
    if not args.no_reference:
        t = time.perf_counter()
        encoder = Encoder.from_pretrained(model)
        for texts in lists:  # the distinct lists, as the cache holds them
            encoder.encode(list(texts), batch_size=64, max_length=256, show_progress=False)
        reference = time.perf_counter() - t

    rows = [
        "| task | items | texts encoded (cold) | "
        + " | ".join(f"{p}: embed + score, cold s | {p}: intervals s | {p}: warm s" for p in runs)
        + " |",
        "|---|---:|---:|" + "---:|---:|---:|" * len(runs),
    ]
    first = next(iter(runs.values()))
    for i, c in enumerate(first[1].tasks):
        cells = [c.task.name, f"{c.task.items:,}", f"{c.texts[model][0]:,}"]
        for cold, cold_result, warm, warm_result, _ in runs.values():
            ct, wt = cold_result.tasks[i], warm_result.tasks[i]
            cells += [
                f"{ct.seconds[model]:.1f}",
                f"{ct.interval_seconds:.1f}",
                f"{wt.seconds[model] + wt.interval_seconds:.2f}",
            ]
        rows.append("| " + " | ".join(cells) + " |")

    total = ["", "| run | seconds | ratio to the encode-only reference |", "|---|---:|---:|"]
    for p, (cold, _, warm, _, _) in runs.items():
        met = "met" if cold <= 120 else "**not met**"
        total.append(
            f"| {p}, cold cache (target <= 120 s: {met}) | {cold:.1f} | {cold / reference:.2f} |"
            if reference
            else f"| {p}, cold cache (target <= 120 s: {met}) | {cold:.1f} | |"
        )
        total.append(
            f"| {p}, warm cache | {warm:.1f} | {warm / reference:.3f} |"
            if reference
            else f"| {p}, warm cache | {warm:.1f} | |"
        )
    if reference:
        total.append(
            f"| reference: `Encoder.encode` of the same {len(lists)} distinct text lists, fp32, batch 64 | "
            f"{reference:.1f} | 1.00 |"
        )
    table = "\n".join(
        [
            f"model {model}, cpu, {torch.get_num_threads()} torch threads, max length 256, batches of "
            f"{args.batch_tokens:,} padded tokens, {len(tasks)} tasks, {first[4]:,} texts encoded cold, "
            f"{resamples:,} resamples per interval",
            "",
            *rows,
            *total,
        ]
    )
    what = "three small tasks (--quick)" if args.quick else "the English evaluation suite"
    record(f"evaluate.py: {model} on {what}, cold and warm embedding cache", table, args.quick)


if __name__ == "__main__":
    main()
