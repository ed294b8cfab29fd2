"""MedSTS / n2c2 2019 ClinicalSTS: clinical sentence similarity (credentialed; read from a local file)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from kit.data.resolver import DATA_PAGE, DATASETS, DataNotFoundError, DatasetSpec, MalformedDataError, open_text
from kit.data.types import STSPairs
from kit.paths import shown

MEDSTS = DATASETS.add(
    DatasetSpec(
        name="medsts",
        relpath="",  # never read from a data root
        description="MedSTS / n2c2 2019 ClinicalSTS: clinical sentence pairs scored 0-5, one "
        "'sentence1<TAB>sentence2<TAB>score' line each, no header; every pair is in split 'test'. Credentialed: read "
        "only from the explicit path of your copy, never from the data roots.",
        source="n2c2 2019 Track 1 (https://n2c2.dbmi.hms.harvard.edu/); Mayo Clinic MedSTS",
        licence="n2c2 / Mayo Clinic data use agreement",
        citation="Wang et al. (2020). MedSTS: a resource for clinical semantic textual similarity. Language Resources "
        "and Evaluation 54.",
        splits={"test": None},
        metric="cosine Spearman (x100)",
        credentialed=True,
        load=lambda split: load_sts_tsv(None),
    )
)


def load_sts_tsv(path: str | os.PathLike | None, name: str = "MedSTS") -> STSPairs:
    """A clinical STS file held locally (``sentence1 \\t sentence2 \\t score`` per line, no header), read
    from its explicit path only; every pair is in split 'test'."""
    if path is None or not Path(path).is_file():
        given = "no path was given" if path is None else f"the explicit path {path} is not a file"
        raise DataNotFoundError(
            f"{name} is credentialed ({MEDSTS.licence}) and not redistributed; {given}. Pass the path of your "
            f"copy, or leave it unset to evaluate on BIOSSES instead; how to get it: {DATA_PAGE}"
        )
    file = Path(path)
    s1, s2, scores = [], [], []
    with open_text(file) as f:
        for line, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            try:
                a, b, score = row[0].strip(), row[1].strip(), float(row[2])
            except (IndexError, ValueError):
                raise MalformedDataError(
                    f"{file}:{line}: expected 'sentence1<TAB>sentence2<TAB>score' with a numeric score, got "
                    f"{len(row)} tab-separated column(s)"
                ) from None
            s1.append(a)
            s2.append(b)
            scores.append(score)
    if not scores:
        raise MalformedDataError(f"{file}: no rows")
    return STSPairs(s1, s2, np.asarray(scores), np.asarray(["test"] * len(scores)), shown(file))
