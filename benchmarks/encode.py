"""Encoding throughput: ``kit.core.models.Encoder.encode`` vs ``SentenceTransformer.encode`` on the
same MiniLM checkpoint, PubMed sentences, batch size and maximum length, in one process.

Target (issue 7): the kit at least 1.2x sentence-transformers on CPU, with embeddings equal to
1e-5 (both L2-normalised, as the MiniLM checkpoint's own Normalize module does). Both sort by
length before batching; the table reports what is measured. ``--quick`` encodes 256 sentences and
writes nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from _common import best_of, record

from kit.core.models import Encoder, resolve_model
from kit.data import load_pubmed_sentences


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sentences", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    from sentence_transformers import SentenceTransformer

    texts = load_pubmed_sentences(limit=args.sentences or (256 if args.quick else 2000))
    kit = Encoder.from_pretrained("minilm").to(args.device)
    st = SentenceTransformer(resolve_model("minilm").path, device=args.device, model_kwargs={"dtype": torch.float32})
    length = st.max_seq_length
    runs = {
        "sentence-transformers encode()": lambda: st.encode(
            texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True
        ),
        "kit Encoder.encode()": lambda: kit.encode(
            texts, batch_size=args.batch_size, max_length=length, normalize=True, show_progress=False
        ),
    }
    diff = float(np.abs(runs["kit Encoder.encode()"]() - runs["sentence-transformers encode()"]()).max())
    rounds = args.rounds or (1 if args.quick else 3)
    times = {name: [] for name in runs}
    for _ in range(rounds):  # alternate, so both share the machine's drift
        for name, fn in runs.items():
            times[name].append(best_of(fn, 1))
    times = {name: min(t) for name, t in times.items()}
    ref = times["sentence-transformers encode()"]
    rows = [f"| {name} | {t:.2f} | {len(texts) / t:,.0f} | {ref / t:.2f} |" for name, t in times.items()]
    table = "\n".join(
        [
            f"MiniLM (all-MiniLM-L6-v2), device {args.device}, {len(texts):,} PubMed sentences, batch "
            f"{args.batch_size}, "
            f"max length {length}, best of {rounds} rounds, {torch.get_num_threads()} torch threads",
            "",
            "| encoder | seconds | sentences/s | speed-up over sentence-transformers (target >= 1.2) |",
            "|---|---:|---:|---:|",
            *rows,
            "",
            f"largest absolute difference between the two embeddings: {diff:.2e} (target <= 1e-5)",
        ]
    )
    record("encode.py: kit encode() vs SentenceTransformer.encode()", table, args.quick)
    if diff > 1e-5:
        raise SystemExit(f"embeddings differ by {diff:.2e} > 1e-5")


if __name__ == "__main__":
    main()
