"""Encoding throughput of every CPU backend against ``SentenceTransformer.encode`` on the same checkpoint (MiniLM;
``--model`` another), PubMed sentences (``--texts doid``: Disease Ontology definitions), batch size and maximum
length, in one process.

Rows: sentence-transformers (the reference), the kit's PyTorch ``Encoder.encode``, its ONNX Runtime export
(``kit.core.onnx_encoder``) in fp32 (exact) and int8 (dynamic quantisation: not exact, an option), and, when
``openvino`` is installed, OpenVINO compiling the same fp32 export. Every row L2-normalises, as the MiniLM
checkpoint's own Normalize module does, and sorts by length before batching; each row's largest absolute
difference to sentence-transformers' embeddings and smallest cosine to them are printed beside its speed.

The last two rows batch as the kit's evaluations do, by about 1,024 padded tokens instead of 64 texts
(``kit.evaluation.embeddings.token_batches``), on PyTorch and on ONNX Runtime fp32, the path the kit takes for frozen
weights on the CPU (``kit.core.onnx_encoder.fastest_exact``, ``kit.evaluate --backend auto``).

Two more exact rows show what else was tried for the 1.5x target: ONNX Runtime on a fused graph (the export of an
eager-attention copy, through ONNX Runtime's transformer optimizer: fused attention, skip-layernorm and bias-GELU)
and, in full runs only, ``torch.compile`` (inductor, frozen weights, dynamic shapes), its compilation timed apart.

Targets (issue 48): an exact backend at least 1.5x sentence-transformers, equal to 1e-4. ``--quick`` encodes 64
sentences with the kit's small ``pubmed-bert-mini`` (mean pooling, as sentence-transformers pools a plain
transformer folder) and writes nothing.
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import numpy as np
import torch
from _common import best_of, record

from kit.core.models import Encoder, resolve_model
from kit.core.onnx_encoder import OnnxEncoder
from kit.data import load_pubmed_sentences
from kit.evaluation.embeddings import Embedder

REFERENCE = "sentence-transformers encode()"
EXACT = 1e-4


def openvino_encoder(fast: OnnxEncoder):
    """The fp32 export compiled by OpenVINO for the CPU at fp32 precision, behind ``OnnxEncoder.encode``; None when
    openvino is not installed."""
    try:
        import openvino as ov
    except ImportError:
        return None
    compiled = ov.Core().compile_model(
        str(fast.path),
        "CPU",
        {"INFERENCE_NUM_THREADS": torch.get_num_threads(), "INFERENCE_PRECISION_HINT": "f32"},
    )
    request = compiled.create_infer_request()

    class Session:  # ONNX Runtime's run(), on OpenVINO's request
        def run(self, _outputs, feeds):
            return [request.infer(feeds)[0].copy()]

    clone = object.__new__(OnnxEncoder)
    clone.__dict__.update(fast.__dict__, session=Session())
    return clone


def fused_encoder(kit: Encoder, cache: Path) -> tuple[OnnxEncoder, str]:
    """ONNX Runtime on the transformer optimizer's fused graph of an eager-attention copy of ``kit`` (the SDPA
    export leaves attention unfused), and the fused operators counted; SystemExit when no attention was fused."""
    from onnxruntime.transformers.optimizer import optimize_model

    eager = copy.deepcopy(kit)
    eager.backbone.set_attn_implementation("eager")
    plain = OnnxEncoder.from_encoder(eager, cache=cache)
    config = kit.backbone.config
    fused = optimize_model(
        str(plain.path), model_type="bert", num_heads=config.num_attention_heads, hidden_size=config.hidden_size
    )
    counts = {op: n for op, n in fused.get_fused_operator_statistics().items() if n}
    if not counts.get("Attention"):
        raise SystemExit(f"the transformer optimizer fused no attention ({counts}): its row would time no fusion")
    path = plain.path.with_name("model.fused.onnx")
    fused.save_model_to_file(str(path))
    fused_ops = ", ".join(f"{n} {op}" for op, n in counts.items())
    threads = torch.get_num_threads()
    return OnnxEncoder(path, plain.tokenizer, plain.names, plain.dim, threads, plain.outputs), fused_ops


def compiled_encoder(kit: Encoder) -> Encoder:
    """A copy of ``kit`` whose backbone is ``torch.compile``d (inductor, frozen weights, dynamic shapes)."""
    clone = copy.deepcopy(kit)
    clone.backbone = torch.compile(clone.backbone, dynamic=True, options={"freezing": True})
    return clone


def normalized(emb: np.ndarray) -> np.ndarray:
    return emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sentences", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--model", default=None, help="an offline alias with a folder of its own (default minilm)")
    ap.add_argument(
        "--texts",
        choices=("pubmed", "doid"),
        default="pubmed",
        help="PubMed sentences (default) or doid-definition-name's texts (definitions, then names)",
    )
    args = ap.parse_args()
    model = args.model or ("pubmed-bert-mini" if args.quick else "minilm")
    from sentence_transformers import SentenceTransformer

    limit = args.sentences or (64 if args.quick else 2000)
    if args.texts == "doid":
        from kit.evaluation.tasks import TASKS

        texts = [t for part in TASKS["doid-definition-name"].texts() for t in part][:limit]
    else:
        texts = load_pubmed_sentences(limit=limit)
    what = {"pubmed": "PubMed sentences", "doid": "doid-definition-name texts"}[args.texts]
    source = resolve_model(model)
    kit = Encoder.from_pretrained(model, "mean")
    st = SentenceTransformer(source.path, device="cpu", model_kwargs={"dtype": torch.float32})
    length = st.max_seq_length
    with tempfile.TemporaryDirectory() as cache:  # a fresh export, timed apart from encoding
        exact = OnnxEncoder.from_encoder(kit, cache=Path(cache))
        int8 = OnnxEncoder.from_encoder(kit, int8=True, cache=Path(cache))
        vino = openvino_encoder(exact)
        fused, fused_ops = fused_encoder(kit, Path(cache))

        def of(encoder, sample=texts):
            return lambda: encoder.encode(
                sample, batch_size=args.batch_size, max_length=length, normalize=True, show_progress=False
            )

        compiled, compile_seconds = None, 0.0
        if not args.quick:  # its compilation alone outlasts the quick run
            compiled = compiled_encoder(kit)
            # compiled on one batch; the untimed pass below over every text makes any recompilation
            compile_seconds = best_of(of(compiled, texts[: args.batch_size]), 1)

        def batched(encoder):  # the kit's own path: batches of about 1,024 padded tokens (kit.evaluation.embeddings)
            embed = Embedder.from_encoder(encoder, "benchmark", max_length=length)
            return lambda: normalized(embed(texts))

        runs = {
            REFERENCE: lambda: st.encode(
                texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True
            ),
            "kit Encoder.encode() (PyTorch)": of(kit),
            "kit ONNX Runtime fp32": of(exact),
            "kit ONNX Runtime int8 (not exact)": of(int8),
            **({"OpenVINO fp32 (same export)": of(vino)} if vino else {}),
            "kit ONNX Runtime fp32, fused graph": of(fused),
            **({"kit PyTorch, torch.compile (compiled apart)": of(compiled)} if compiled else {}),
            "kit PyTorch, token batches": batched(kit),
            "kit ONNX Runtime fp32, token batches (the default for frozen weights)": batched(exact),
        }
        embeddings = {name: fn() for name, fn in runs.items()}
        rounds = args.rounds or (1 if args.quick else 3)
        times = {name: [] for name in runs}
        for _ in range(rounds):  # alternate, so every row shares the machine's drift
            for name, fn in runs.items():
                times[name].append(best_of(fn, 1))
    ref = min(times[REFERENCE])
    rows, failures = [], []
    for name, t in ((name, min(t)) for name, t in times.items()):
        diff = float(np.abs(embeddings[name] - embeddings[REFERENCE]).max())
        cosine = float((embeddings[name] * embeddings[REFERENCE]).sum(1).min())
        rows.append(f"| {name} | {t:.2f} | {len(texts) / t:,.0f} | {ref / t:.2f} | {diff:.1e} | {cosine:.4f} |")
        if "not exact" not in name and diff > EXACT:
            failures.append(f"{name} differs by {diff:.2e} > {EXACT:.0e}")
    table = "\n".join(
        [
            f"{source.description}, CPU, {len(texts):,} {what}, batch {args.batch_size}, max length "
            f"{length}, best of {rounds} rounds, {torch.get_num_threads()} threads"
            + ("" if vino else "; OpenVINO not installed (pip install openvino adds its row)")
            + f"; fused graph: {fused_ops}"
            + (f"; torch.compile's first batch (compiling) took {compile_seconds:.1f} s" if compiled else ""),
            "",
            "| encoder | seconds | sentences/s | speed-up over sentence-transformers (target >= 1.5, exact) "
            "| largest difference | smallest cosine |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    record("encode.py: every CPU backend vs SentenceTransformer.encode()", table, args.quick)
    if failures:
        raise SystemExit("; ".join(failures))


if __name__ == "__main__":
    main()
