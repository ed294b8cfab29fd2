"""MeQSum: consumer health questions with expert-written summaries (study 3)."""

from __future__ import annotations

import csv
import os

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, open_text, resolve
from kit.data.types import SummaryPairs
from kit.paths import shown

MEQSUM = DATASETS.add(
    DatasetSpec(
        name="meqsum",
        relpath="meqsum/meqsum.tsv",
        description="MeQSum: 1,000 consumer health questions (CHQ) with expert-written short questions (FAQ). "
        "No official split: fix one with a seed and say which.",
        source="abachaa/MeQSum @ 51e36cf : MeQSum_ACL2019_BenAbacha_Demner-Fushman.xlsx",
        licence="CC BY 4.0",
        citation="Ben Abacha, Demner-Fushman (2019). On the Summarization of Consumer Health Questions. ACL.",
        splits={"all": 1_000},
        metric="ROUGE-1/2/L F1",
        load=lambda split: load_meqsum(),
    )
)


def load_meqsum(path: str | os.PathLike | None = None) -> SummaryPairs:
    """MeQSum (columns file, chq, summary; CHQ cells are quoted and may hold newlines), in file order."""
    file = resolve(MEQSUM, path)
    with open_text(file) as f:
        reader = csv.DictReader(f, delimiter="\t")
        if reader.fieldnames != ["file", "chq", "summary"]:
            raise MalformedDataError(f"{file}:1: not a MeQSum header; expected the columns ['file', 'chq', 'summary']")
        rows = list(reader)
    for i, r in enumerate(rows, 2):
        if not (r["chq"] or "").strip() or not (r["summary"] or "").strip():
            raise MalformedDataError(f"{file}: record {i - 1}: empty chq or summary")
    return SummaryPairs([r["chq"].strip() for r in rows], [r["summary"].strip() for r in rows], shown(file))
