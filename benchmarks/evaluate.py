"""Scoring one encoder on the whole English evaluation suite: ``kit.evaluation.suite.evaluate`` with a cold
embedding cache (every text encoded, the model's fingerprint, loading and any ONNX export included), then with
the warm cache, in one process, for each backend: PyTorch in fp32 and under bf16 autocast, ONNX Runtime in fp32
(``kit.evaluate``'s default on the CPU, ``--backend auto``) and int8.

Targets (issue 48): MiniLM (all-MiniLM-L6-v2) on the English suite in at most 90 s on the 2-core CPU machine,
cold cache, exact scores. The reference in the same process is ``SentenceTransformer.encode`` of the same distinct
text lists in fp32, 64 texts per batch, nothing else (``--no-reference`` skips it); the ratio shows what the
suite's length-bucketed batches (1,024 padded tokens each) and backends save, and what its data, scoring and
intervals cost. Every backend's main score per task is printed beside PyTorch fp32's, so what int8 and bf16
move is measured. ``--quick`` scores tiny-random-bert on three small tasks with 200 resamples and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from unittest import mock

import torch
from _common import record

from kit.core.models import model_folder  # imported here: the runs time the work, not the imports of transformers
from kit.evaluation.embeddings import Embedder, EmbeddingCache
from kit.evaluation.suite import SuiteResult, evaluate
from kit.evaluation.tasks import select

VARIANTS = {
    "torch fp32": ("torch", "fp32"),
    "onnx fp32": ("onnx", "fp32"),
    "onnx int8": ("onnx-int8", "fp32"),
    "torch bf16": ("torch", "bf16"),
}
TARGET = 90


def timed_suite(model: str, tasks, backend: str, precision: str, batch_tokens: int, resamples: int):
    """(cold seconds, cold result, warm seconds, warm result, texts encoded cold) with a fresh cache (embeddings
    and ONNX exports)."""
    with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"KIT_CACHE": folder}):  # ONNX too
        cache = EmbeddingCache(folder)

        def run() -> tuple[float, SuiteResult, Embedder]:
            t = time.perf_counter()  # the model's fingerprint (the cache key) is part of the cost
            embedder = Embedder.from_name(
                model, precision=precision, device="cpu", cache=cache, batch_tokens=batch_tokens, backend=backend
            )
            result = evaluate({model: embedder}, tasks, resamples=resamples)
            return time.perf_counter() - t, result, embedder

        cold, cold_result, cold_embedder = run()
        warm, warm_result, warm_embedder = run()
    assert warm_embedder.encoded == 0, "the warm run encoded texts"
    return cold, cold_result, warm, warm_result, cold_embedder.encoded


def ratio(reference: float | None, seconds: float) -> str:
    return f"{reference / seconds:.2f}" if reference else ""


def score_changes(runs: dict, model: str) -> list[str]:
    """Each variant's main score per task (x100) against PyTorch fp32's, and the largest change."""
    if "torch fp32" not in runs:
        return []
    base = runs["torch fp32"][1].tasks
    others = [v for v in runs if v != "torch fp32"]
    lines = [
        "| task | metric | torch fp32 | " + " | ".join(f"{v} (change)" for v in others) + " |",
        "|---|---|---:|" + "---:|" * len(others),
    ]
    largest = dict.fromkeys(others, 0.0)
    for i, result in enumerate(base):
        metric = result.task.main_metric
        ref = 100 * result.estimates[model][metric].value
        cells = [result.task.name, metric, f"{ref:.2f}"]
        for v in others:
            value = 100 * runs[v][1].tasks[i].estimates[model][metric].value
            largest[v] = max(largest[v], abs(value - ref))
            cells.append(f"{value:.2f} ({value - ref:+.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "largest change of a main score, x100: " + "; ".join(f"{v} {d:.2f}" for v, d in largest.items())]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--model", default=None, help="default: minilm (tiny-random-bert with --quick)")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--batch-tokens", type=int, default=1024)
    ap.add_argument("--resamples", type=int, default=None, help="default 2000 (200 with --quick)")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args()
    model = args.model or ("tiny-random-bert" if args.quick else "minilm")
    tasks = select(["biosses-all", "biosses-test", "rqe-test"] if args.quick else ["en"])
    resamples = args.resamples or (200 if args.quick else 2000)
    for task in tasks:  # the data is read first: the runs time encoding, scoring and intervals
        task.texts()

    runs = {v: timed_suite(model, tasks, *VARIANTS[v], args.batch_tokens, resamples) for v in args.variants}

    reference, lists = None, {tuple(texts): None for task in tasks for texts in task.texts()}
    if not args.no_reference:
        from sentence_transformers import SentenceTransformer

        t = time.perf_counter()
        st = SentenceTransformer(model_folder(model), device="cpu", model_kwargs={"dtype": torch.float32})
        st.max_seq_length = 256
        for texts in lists:  # the distinct lists, as the cache holds them
            st.encode(list(texts), batch_size=64, convert_to_numpy=True, show_progress_bar=False)
        reference = time.perf_counter() - t

    first = next(iter(runs.values()))
    rows = [
        "| task | items | texts encoded (cold) | intervals s | "
        + " | ".join(f"{v}: embed + score, cold s" for v in runs)
        + " |",
        "|---|---:|---:|---:|" + "---:|" * len(runs),
    ]
    for i, c in enumerate(first[1].tasks):
        cells = [c.task.name, f"{c.task.items:,}", f"{c.texts[model][0]:,}", f"{c.interval_seconds:.1f}"]
        cells += [f"{run[1].tasks[i].seconds[model]:.1f}" for run in runs.values()]
        rows.append("| " + " | ".join(cells) + " |")

    speed = "speed-up over sentence-transformers' encode alone"
    total = ["", f"| run | seconds | {speed} |", "|---|---:|---:|"]
    for v, (cold, _, warm, _, _) in runs.items():
        met = "met" if cold <= TARGET else "**not met**"
        total.append(f"| {v}, cold cache (target <= {TARGET} s: {met}) | {cold:.1f} | {ratio(reference, cold)} |")
        total.append(f"| {v}, warm cache | {warm:.1f} | {ratio(reference, warm)} |")
    if reference:
        total.append(
            f"| reference: `SentenceTransformer.encode` of the same {len(lists)} distinct text lists, fp32, batch 64 | "
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
            "",
            *score_changes(runs, model),
        ]
    )
    what = "three small tasks (--quick)" if args.quick else "the English evaluation suite"
    record(f"evaluate.py: {model} on {what}, cold and warm embedding cache", table, args.quick)


if __name__ == "__main__":
    main()
