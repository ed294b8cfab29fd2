"""MedSTS / n2c2 2019 ClinicalSTS: clinical sentence similarity (credentialed; read from a local file)."""

from __future__ import annotations

import csv
import os

import numpy as np

from kit.data.resolver import DataNotFoundError, DatasetSpec, MalformedDataError, resolve
from kit.data.types import STSPairs

MEDSTS = DatasetSpec(
    name="medsts",
    relpath="medsts/medsts.tsv",
    description="MedSTS / n2c2 2019 ClinicalSTS: clinical sentence pairs scored 0-5, one "
    "'sentence1<TAB>sentence2<TAB>score' line each, no header; every pair is in split 'test'. Credentialed: pass "
    "the path of your copy.",
    source="n2c2 2019 Track 1 (https://n2c2.dbmi.hms.harvard.edu/); Mayo Clinic MedSTS",
    licence="n2c2 / Mayo Clinic data use agreement",
    citation="Wang et al. (2020). MedSTS: a resource for clinical semantic textual similarity. Language Resources "
    "and Evaluation 54.",
    splits={"test": None},
    metric="cosine Spearman (x100)",
    credentialed=True,
    load=lambda split: load_sts_tsv(None),
)


def load_sts_tsv(path: str | os.PathLike | None, name: str = "MedSTS") -> STSPairs:
    """A clinical STS file held locally (``sentence1 \\t sentence2 \\t score`` per line, no header),
    at ``path`` or at ``medsts/medsts.tsv`` under a data root; every pair is in split 'test'."""
    try:
        file = resolve(MEDSTS, path)
    except DataNotFoundError as err:
        raise DataNotFoundError(
            f"{name} is credentialed (n2c2 / Mayo Clinic) and not redistributed. {err} "
            "Leave the path unset to evaluate on BIOSSES instead."
        ) from None
    s1, s2, scores = [], [], []
    with open(file, encoding="utf-8", newline="") as f:
        for line, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            try:
                a, b, score = row[0].strip(), row[1].strip(), float(row[2])
            except (IndexError, ValueError):
                raise MalformedDataError(
                    f"{file}:{line}: expected 'sentence1<TAB>sentence2<TAB>score', got {row!r}"
                ) from None
            s1.append(a)
            s2.append(b)
            scores.append(score)
    if not scores:
        raise MalformedDataError(f"{file}: no rows")
    return STSPairs(s1, s2, np.asarray(scores), np.asarray(["test"] * len(scores)), str(file))
