"""BIOSSES: biomedical sentence similarity, 100 pairs scored 0-4 (the English STS of every study)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, cache_dir, excerpt, open_text, resolve
from kit.data.types import STSPairs
from kit.paths import shown

SPLITS = ("train", "dev", "test")
HUB_SPLIT = "all"
"""The split of every pair of a hub copy (``mteb/biosses-sts`` has no BLURB split): ``subset("all")`` reads it."""
ANNOTATORS = [f"annotator_{c}" for c in "abcde"]
COLUMNS = ["id", "split", "sentence1", "sentence2", *ANNOTATORS, "score"]


def _fetch_from_hub(spec: DatasetSpec) -> Path:
    """``mteb/biosses-sts`` into the cache, in the kit's format. It carries only the mean score (0-4)
    and no BLURB split labels, so every pair is in split ``HUB_SPLIT``."""
    from datasets import load_dataset

    ds = load_dataset(spec.hf_name, split="test")
    out = cache_dir() / "data" / spec.relpath
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(COLUMNS)
        for i, row in enumerate(ds, 1):
            w.writerow([i, HUB_SPLIT, row["sentence1"], row["sentence2"], *[""] * 5, row["score"]])
    return out


BIOSSES = DATASETS.add(
    DatasetSpec(
        name="biosses",
        relpath="biosses/biosses.tsv",
        description="BIOSSES: 100 biomedical sentence pairs, five annotator scores 0-4 and their mean; "
        "BLURB split train 64 / dev 16 / test 20. The hub copy has the mean score only and no split (every pair "
        "in 'all').",
        source="gizemsogancioglu/biosses @ 381b240 : sses-frontend/Downloads/BIOSSES-Dataset.rar; cross-checked "
        "against bigscience-workshop/biomedical @ 9133277 : bigbio/hub/hub_repos/biosses/annotation_pairs_scores.tsv",
        licence="GPL-3.0",
        citation="Sogancioglu, Ozturk, Ozgur (2017). BIOSSES: a semantic sentence similarity estimation "
        "system for the biomedical domain. Bioinformatics 33(14).",
        splits={"train": 64, "dev": 16, "test": 20},
        metric="cosine Spearman (x100)",
        hf_name="mteb/biosses-sts",
        load=lambda split: load_biosses().subset(split),
        fetch=_fetch_from_hub,
    )
)


def load_biosses(path: str | os.PathLike | None = None) -> STSPairs:
    """Load BIOSSES (columns id, split, sentence1, sentence2, annotator_a..e, score)."""
    file = resolve(BIOSSES, path)
    s1, s2, scores, splits = [], [], [], []
    first_line: dict[object, int] = {}  # pair id (a number when it is one: "01" is 1) or pair -> its line
    with open_text(file) as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header != COLUMNS:
            raise MalformedDataError(f"{file}:1: not a BIOSSES header; expected the columns {COLUMNS}")
        for line, row in enumerate(reader, 2):
            if len(row) != len(COLUMNS):
                raise MalformedDataError(
                    f"{file}:{line}: expected {len(COLUMNS)} tab-separated columns, got {len(row)}"
                )
            for col in (2, 3):
                if not row[col].strip():
                    raise MalformedDataError(f"{file}:{line}: empty {COLUMNS[col]}")
            try:
                score = float(row[-1])
            except ValueError:
                raise MalformedDataError(f"{file}:{line}: score {excerpt(row[-1])} is not a number") from None
            if not 0 <= score <= 4:
                raise MalformedDataError(f"{file}:{line}: score {score} is outside BIOSSES' 0-4 scale")
            if row[1] not in (*SPLITS, HUB_SPLIT):  # a hub copy's pairs are all in HUB_SPLIT
                raise MalformedDataError(
                    f"{file}:{line}: split {excerpt(row[1])} is not one of {SPLITS} (or '{HUB_SPLIT}', a hub copy's)"
                )
            pair_id = int(row[0]) if row[0].strip().isdigit() else row[0].strip()
            pair = (row[2].strip(), row[3].strip())
            for key, what in ((pair_id, f"pair id {excerpt(row[0])}"), (pair, "the sentence pair")):
                if key in first_line:
                    raise MalformedDataError(f"{file}:{line}: {what} repeats line {first_line[key]}")
                first_line[key] = line
            s1.append(row[2].strip())
            s2.append(row[3].strip())
            scores.append(score)
            splits.append(row[1])
    if not scores:
        raise MalformedDataError(f"{file}: no rows")
    return STSPairs(s1, s2, np.asarray(scores, dtype=np.float64), np.asarray(splits), shown(file))
