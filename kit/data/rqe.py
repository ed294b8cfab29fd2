"""RQE: does a consumer health question entail an FAQ? The public stand-in for MedNLI (study 2)."""

from __future__ import annotations

import os
import warnings

import numpy as np

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, excerpt, read_jsonl, resolve
from kit.data.types import LabeledTexts
from kit.paths import shown

RQE = DATASETS.add(
    DatasetSpec(
        name="rqe",
        relpath="rqe/rqe.jsonl",
        description="Recognizing Question Entailment: does a consumer health question entail an FAQ (true/false)? "
        "The file's train split has 8,588 pairs; the loader drops the one with an empty FAQ (pid 5860).",
        source="abachaa/RQE_Data_AMIA2016 @ 9302fb9; abachaa/MEDIQA2019 @ ae5d382 : MEDIQA_Task2_RQE/",
        licence="CC BY 4.0",
        citation="Ben Abacha, Demner-Fushman (2016). Recognizing Question Entailment for Medical Question Answering. "
        "AMIA; Ben Abacha, Shivade, Demner-Fushman (2019). Overview of the MEDIQA 2019 Shared Task.",
        splits={"train": 8_587, "validation_amia2016_test": 302, "test_mediqa2019": 230},
        metric="accuracy",
        load=lambda split: load_rqe(split),
    )
)

RQE_SPLITS = tuple(RQE.splits)


def load_rqe(split: str, path: str | os.PathLike | None = None) -> LabeledTexts:
    """RQE pairs of one split: texts (consumer question, FAQ), labels 'true' / 'false'."""
    if split not in RQE_SPLITS:
        raise ValueError(f"RQE has no split '{split}'; splits: {list(RQE_SPLITS)}")
    file = resolve(RQE, path)
    rows = [r for r in read_jsonl(file, ("split", "label", "chq", "faq")) if r["split"] == split]
    empty = [r.get("pid", "?") for r in rows if not (r["chq"].strip() and r["faq"].strip())]
    if empty:  # the public train split has one (pid 5860, empty FAQ)
        warnings.warn(
            f"{shown(file)}: dropped {len(empty)} {split} pair(s) with an empty question (pid {', '.join(empty)})",
            stacklevel=2,
        )
        rows = [r for r in rows if r.get("pid", "?") not in empty]
    bad = sorted({str(r["label"]) for r in rows} - {"true", "false"})
    if bad:
        raise MalformedDataError(f"{file}: labels {', '.join(map(excerpt, bad[:5]))} are not 'true'/'false'")
    return LabeledTexts(
        "rqe",
        split,
        ([r["chq"].strip() for r in rows], [r["faq"].strip() for r in rows]),
        np.asarray([r["label"] for r in rows]),
        shown(file),
    )
