"""ChineseBLUE (Zhang et al. 2020): Chinese medical question pairs, intents, question-answer matching
and trial criteria; the Chinese evaluation of study 1 and its unlabeled corpus."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, SplitNotAvailableError, open_text, resolve
from kit.data.types import LabeledTexts
from kit.paths import shown

SOURCE = "alibaba-research/ChineseBLUE @ 52eefc9 : data/"
CITATION = "Zhang et al. (2020). Conceptualized Representation Learning for Chinese Biomedical Text Mining."


@dataclass(frozen=True)
class ChineseBlueDataset:
    """One ChineseBLUE dataset (what the benchmark calls a task): its declaration, its text columns, the metric
    the first seed paper reports for it (``f1``, ``weighted_f1`` or ``macro_f1``) and what is missing from the
    public release."""

    spec: DatasetSpec
    text_columns: tuple[str, ...]
    metric: str
    missing_note: str = ""

    @property
    def name(self) -> str:
        return self.spec.name.split("/")[1]

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.spec.splits)


def _task(
    name: str,
    columns: tuple[str, ...],
    splits: dict[str, int],
    metric: str,
    description: str,
    missing_note: str = "",
    licence: str = "Apache-2.0 (repository)",
) -> ChineseBlueDataset:
    spec = DATASETS.add(
        DatasetSpec(
            name=f"chineseblue/{name}",
            relpath=f"chineseblue/{name}/{{split}}.txt",
            description=description,
            source=SOURCE,
            licence=licence,
            citation=CITATION,
            splits=splits,
            metric=metric,
            load=lambda split: load_chineseblue(name, split),
        )
    )
    return ChineseBlueDataset(spec, columns, metric, missing_note)


CHINESEBLUE = {
    t.name: t
    for t in [
        _task(
            "cMedQQ",
            ("query1", "query2"),
            {"train": 16_071, "dev": 1_793, "test": 1_935},
            "f1",
            "medical question pairs, 1 = same intent",
        ),
        _task(
            "cMedIC",
            ("text",),
            {"train": 1_683, "dev": 123, "test": 84},
            "weighted_f1",
            "medical intent classification, 3 classes",
        ),
        _task(
            "cMedQA",
            ("question", "answer"),
            {"dev": 5_475, "test": 6_149},
            "weighted_f1",
            "question-answer matching, 1 = the answer fits (labels look noisy)",
            "cMedQA has no training split in the public release: train on dev, test on test.",
            licence="Apache-2.0 (repository); cMedQA: non-commercial research only",
        ),
        _task(
            "cMedTC",
            ("text",),
            {"train": 14_610, "dev": 1_550, "test": 1_800},
            "macro_f1",
            "clinical trial criterion classification, 44 classes",
        ),
        _task(
            "cMedQNLI",
            ("question", "answer"),
            {},
            "f1",
            "question-answer entailment",
            "cMedQNLI could not be obtained for the public data folder; it is not available.",
        ),
    ]
}


def load_chineseblue(task: str, split: str, path: str | os.PathLike | None = None) -> LabeledTexts:
    """Load ``label \\t text [\\t text2]`` lines (no quoting, as in ChineseBLUE's own readers)."""
    if task not in CHINESEBLUE:
        raise KeyError(f"unknown ChineseBLUE task '{task}'; tasks: {sorted(CHINESEBLUE)}")
    t = CHINESEBLUE[task]
    if split not in t.splits:
        raise SplitNotAvailableError(
            f"{task} has no '{split}' split here (available: {list(t.splits) or 'none'}). {t.missing_note}".strip()
        )
    file = resolve(t.spec, path, split)
    n = 1 + len(t.text_columns)
    labels, columns = [], tuple([] for _ in t.text_columns)
    with open_text(file) as f:
        for line, raw in enumerate(f, 1):
            row = raw.rstrip("\r\n").split("\t")
            if len(row) != n:
                raise MalformedDataError(f"{file}:{line}: expected {n} tab-separated columns, got {len(row)}")
            for col, name, text in zip(columns, t.text_columns, row[1:]):
                if not text.strip():
                    raise MalformedDataError(f"{file}:{line}: empty {name}")
                col.append(text.strip())
            labels.append(row[0].strip())
    return LabeledTexts(task, split, columns, np.asarray(labels), shown(file))


def chineseblue_corpus(tasks: tuple[str, ...] = ("cMedQQ", "cMedIC", "cMedTC")) -> list[str]:
    """Unlabeled Chinese sentences: every text of the tasks' *train* files (labels dropped),
    de-duplicated in first-seen order, with any text that occurs in a dev or test split of any
    available ChineseBLUE task removed, so the probes never see a training sentence.
    (cMedQA has no train split; its dev split trains its probe, so it is excluded too.)"""
    held_out = {
        text
        for task in CHINESEBLUE.values()
        for split in task.splits
        if split != "train"
        for column in load_chineseblue(task.name, split).texts
        for text in column
    }
    pooled = (text for task in tasks for column in load_chineseblue(task, "train").texts for text in column)
    return [text for text in dict.fromkeys(pooled) if text not in held_out]
