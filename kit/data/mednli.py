"""MedNLI: clinical natural language inference (credentialed; read from a local copy)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from kit.data.resolver import DATASETS, DatasetSpec, read_jsonl, resolve
from kit.data.types import LabeledTexts
from kit.paths import shown

MEDNLI = DATASETS.add(
    DatasetSpec(
        name="mednli",
        relpath="mednli/mli_{split}_v1.jsonl",
        description="MedNLI: clinical premise-hypothesis pairs from MIMIC-III, entailment/neutral/contradiction. "
        "Credentialed (PhysioNet): not redistributed; pass the folder holding the official files.",
        source="https://physionet.org/content/mednli/ (version 1.0.0)",
        licence="PhysioNet Credentialed Health Data License 1.5.0",
        citation="Romanov, Shivade (2018). Lessons from Natural Language Inference in the Clinical Domain. EMNLP.",
        splits={"train": None, "dev": None, "test": None},
        metric="accuracy",
        credentialed=True,
        load=lambda split: load_mednli(split),
    )
)


def load_mednli(split: str, folder: str | os.PathLike | None = None) -> LabeledTexts:
    """MedNLI pairs of one split from the official ``mli_{train,dev,test}_v1.jsonl`` files (fields
    sentence1, sentence2, gold_label) in ``folder``, or in a ``mednli/`` folder of a data root."""
    if split not in MEDNLI.splits:
        raise ValueError(f"MedNLI has no split '{split}'; splits: {list(MEDNLI.splits)}")
    file = resolve(MEDNLI, None if folder is None else Path(folder) / Path(MEDNLI.file(split)).name, split)
    rows = read_jsonl(file, ("sentence1", "sentence2", "gold_label"))
    return LabeledTexts(
        "mednli",
        split,
        ([r["sentence1"].strip() for r in rows], [r["sentence2"].strip() for r in rows]),
        np.asarray([r["gold_label"] for r in rows]),
        shown(file),
    )
