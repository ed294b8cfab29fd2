"""A public subset of HealthCareMagic question-summary pairs (study 3's second dataset)."""

from __future__ import annotations

import os

from kit.data.resolver import DATASETS, DatasetSpec, read_jsonl, resolve
from kit.data.types import SummaryPairs
from kit.paths import shown

HEALTHCAREMAGIC = DATASETS.add(
    DatasetSpec(
        name="healthcaremagic",
        relpath="healthcaremagic/hcm_sum.jsonl",
        description="A public subset of HealthCareMagic question-summary pairs (train 1,314, valid 329); not the full "
        "~226k set of Mrini et al. (2021), which is not available here.",
        source="zekaouinoureddine/MedQSum @ 8cbd7d1 : data/hcm_sum/{train,valid}.json",
        licence="Apache-2.0 (repository); text from healthcaremagic.com",
        citation="Mrini et al. (2021). A Gradually Soft Multi-Task and Data-Augmented Approach to Medical Question "
        "Understanding. ACL.",
        splits={"train": 1_314, "valid": 329},
        metric="ROUGE-1/2/L F1",
        load=lambda split: load_healthcaremagic(split),
    )
)


def load_healthcaremagic(split: str, path: str | os.PathLike | None = None) -> SummaryPairs:
    """The public HealthCareMagic subset, split 'train' or 'valid'."""
    if split not in HEALTHCAREMAGIC.splits:
        raise ValueError(f"HealthCareMagic subset has splits 'train' and 'valid', not '{split}'")
    file = resolve(HEALTHCAREMAGIC, path)
    rows = [r for r in read_jsonl(file, ("split", "chq", "summary")) if r["split"] == split]
    return SummaryPairs([r["chq"].strip() for r in rows], [r["summary"].strip() for r in rows], shown(file))
