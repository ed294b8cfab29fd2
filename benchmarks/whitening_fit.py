"""How much a BERT-whitening row's score depends on its fitting sample and on the length its fit reads (issue 71,
item 3b): a whitened baseline that moves with its sample cannot decide a premise.

    python benchmarks/whitening_fit.py                    # pubmed-bert-mini, 50,000 PubMed sentences
    python benchmarks/whitening_fit.py --model minilm
    python benchmarks/whitening_fit.py --quick            # tiny random model, 600 sentences: that it runs (no file)

The model embeds ``--sentences`` PubMed sentences (a seeded permutation) under each training-free pooling, once at
the length every evaluation reads (``EVALUATION_LENGTH``, capped at the model's trained positions) and once cut at
``--short`` tokens (what study 1 fitted on until 2026-12-07). Whitenings (``kit.core.whitening.Whitening``) are fitted
on disjoint samples of 2,000, 10,000 and 20,000 of them (25, 5 and 2 samples) and score Spearman x100 on all 100
BIOSSES pairs: the table gives,
per pooling and sample size, the unwhitened score, the whitened scores' range and standard deviation over the
disjoint samples, and the score of a fit on the short reads, with the ratio of its distance from the full-length fit
to the 20,000-sentence spread. A full run appends to ``benchmarks/results/<machine>.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import record  # noqa: E402

from kit.core.compute import EVALUATION_LENGTH  # noqa: E402
from kit.core.models import Encoder  # noqa: E402
from kit.core.progress import quiet_libraries  # noqa: E402
from kit.core.shared_poolings import SharedPoolings  # noqa: E402
from kit.core.whitening import Whitening  # noqa: E402
from kit.data import load_biosses, load_pubmed_sentences  # noqa: E402
from kit.evaluation.sts import cosine_spearman  # noqa: E402
from kit.study import TRAINING_FREE_POOLERS  # noqa: E402

SIZES = (2000, 10000, 20000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="pubmed-bert-mini")
    parser.add_argument("--sentences", type=int, default=50000, help="PubMed sentences embedded (disjoint samples)")
    parser.add_argument("--short", type=int, default=32, help="the cut length of the short fit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    quiet_libraries()
    model, total, sizes = args.model, args.sentences, SIZES
    if args.quick:
        model, total, sizes = "tiny-random-bert", 600, (150, 200, 300)
    corpus = load_pubmed_sentences()
    if not sizes[-1] <= total <= len(corpus):
        sys.exit(f"--sentences: between {sizes[-1]:,} and {len(corpus):,}, got {total:,}")
    sample = [corpus[i] for i in np.random.default_rng(args.seed).permutation(len(corpus))[:total]]
    poolers = [pooler for pooler, _ in TRAINING_FREE_POOLERS.values()]
    shared = SharedPoolings(Encoder.from_pretrained(model, "cls_before_pooler", seed=args.seed), poolers)  # frozen
    sts = load_biosses()
    gold = np.asarray(sts.scores, dtype=float)
    encoder = shared.encoder
    left, right = (encoder.encode_poolers(t, poolers, 64, EVALUATION_LENGTH) for t in (sts.sentence1, sts.sentence2))
    full = encoder.encode_poolers(sample, poolers, 64, EVALUATION_LENGTH, False, True)
    short = encoder.encode_poolers(sample[: sizes[-1]], poolers, 64, args.short, False, True)

    def score(pooler: str, whitening: Whitening | None) -> float:
        a, b = left[pooler], right[pooler]
        return 100 * cosine_spearman(*((a, b) if whitening is None else (whitening(a), whitening(b))), gold)

    rows = ["| pooling | unwhitened | sentences | disjoint fits | range | sd | fit on short reads | distance / sd |"]
    rows.append("|---|---|---|---|---|---|---|---|")
    for pooler in poolers:
        for n in sizes:
            fits = [score(pooler, Whitening.fit(full[pooler][k * n : (k + 1) * n])) for k in range(total // n)]
            cut = score(pooler, Whitening.fit(short[pooler][:n]))
            sd = float(np.std(fits, ddof=1))
            rows.append(
                f"| {pooler} | {score(pooler, None):.1f} | {n:,} | {len(fits)} | {min(fits):.1f}-{max(fits):.1f} | "
                f"{sd:.2f} | {cut:.1f} | {abs(cut - fits[0]) / sd:.0f} |"
            )
    title = f"BERT-whitening's fit: disjoint samples and the read length ({model}, BIOSSES all pairs, Spearman x100)"
    record(title, "\n".join(rows), args.quick)


if __name__ == "__main__":
    main()
