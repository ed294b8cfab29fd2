"""Augmenter throughput: kit vs nlpaug 1.1.11 RandomWordAug, same sentences, same process.

Target (issue 2): the kit at least 10x nlpaug for deletion and swap, and no exception on
any sentence of the PubMed corpus. ``--quick`` uses 300 sentences and writes nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best_of, record

from kit.core.augment import AUGMENTERS, make_augmenter
from kit.data import load_pubmed_sentences


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    corpus = load_pubmed_sentences()
    sents = corpus[: 300 if args.quick else 5000]
    import nlpaug.augmenter.word as naw

    rows = ["| operation | kit sent/s | nlpaug sent/s | ratio (target >= 10x) |", "|---|---:|---:|---:|"]
    for kit_name, action in (("deletion", "delete"), ("swap", "swap")):
        kit_aug, rng = make_augmenter(kit_name, 0.1), np.random.default_rng(0)
        nl_aug = naw.RandomWordAug(action=action, aug_p=0.1)
        t_kit = best_of(lambda aug=kit_aug, rng=rng: [aug(s, rng) for s in sents], 3)
        t_nl = best_of(lambda aug=nl_aug: [aug.augment(s) for s in sents], 3)
        rows.append(f"| {kit_name} | {len(sents) / t_kit:,.0f} | {len(sents) / t_nl:,.0f} | {t_nl / t_kit:.1f}x |")

    whole = corpus[:2000] if args.quick else corpus
    rows += ["", "| augmenter | sentences | exceptions (kit) |", "|---|---:|---:|"]
    for name in sorted(AUGMENTERS):
        aug, rng, errors = make_augmenter(name, 0.2), np.random.default_rng(0), 0
        for s in whole:
            try:
                aug(s, rng)
            except Exception:
                errors += 1
        rows.append(f"| {name} | {len(whole):,} | {errors} |")
    crop, fails = naw.RandomWordAug(action="crop", aug_p=0.1), 0
    for s in whole[:5000]:
        try:
            crop.augment(s)
        except Exception:
            fails += 1
    rows.append(f"| nlpaug RandomWordAug(crop), for comparison | {min(len(whole), 5000):,} | {fails} |")
    record("augment.py: kit augmenters vs nlpaug 1.1.11", "\n".join(rows), args.quick)


if __name__ == "__main__":
    main()
