"""Study 3's ablation rows (``ROWS``), parameters (``QFCLParams``) and the fixed data split."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from kit.core.settings import settings_from
from kit.data import DataNotFoundError, MalformedDataError, SummaryPairs, load_healthcaremagic, load_meqsum
from kit.params import (
    Correction,
    ParameterError,
    Params,
    check_task_languages,
    compare_param,
    correction_param,
    model_param,
    param,
    primary_effect_param,
    primary_param,
    seeds_param,
    suite_param,
)
from kit.studies.qfcl_summarization.objective import QFCLConfig, QFCLSettings
from kit.studies.qfcl_summarization.train import Seq2SeqFit, Seq2SeqSettings


@dataclass(frozen=True)
class Row:
    name: str
    label: str
    simple: bool
    hard: bool
    decoder: bool


ROWS = {
    r.name: r
    for r in [
        Row("baseline", "baseline (cross-entropy only)", False, False, False),
        Row("s", "+S", True, False, False),
        Row("sh", "+S+H", True, True, False),
        Row("qfcl", "+S+H+D (QFCL)", True, True, True),
    ]
}


@dataclass
class _QFCLRuns(Params):
    """What study 3 trains: the model, the data and its split, the rows and their seeds."""

    model: str = model_param(what="seq2seq model (bart-*, t5-*) or an encoder to warm-start a BERT2BERT from")
    dataset: Literal["meqsum", "healthcaremagic"] = param("meqsum", "question-summary pairs to train and test on")
    data_path: str | None = param(None, "a MeQSum or HealthCareMagic file to use instead of the shared one")
    rows: list[str] = param(list(ROWS), "ablation rows", choices=ROWS, nonempty=True, unique=True)
    seeds: list[int] = seeds_param([0], "training seeds of every row")
    split_seed: int = param(1234, "seed of the train / dev / test split and of the hard negatives", min=0)
    split_sizes: list[int] = param(
        [200, 50, 100],
        "train, dev and test pairs (MeQSum: drawn from its 1,000; the "
        "HealthCareMagic subset: train and dev from its train split, test from valid)",
        min=1,
    )


@dataclass
class QFCLParams(QFCLSettings, Seq2SeqSettings, _QFCLRuns):
    """Study 3: QFCL, focus-driven contrastive learning for question summarization. Defaults: a demo that shows
    the report, too short for the summarizer to learn (BERT2BERT from the offline MiniLM, a 200/50/100 MeQSum
    split, all four rows, one seed, 52 steps; every row's CHQ encoder scored on BIOSSES test and RQE test).
    The optimisation settings (``Seq2SeqSettings``) and the method's (``QFCLSettings``) are declared where
    they are used."""

    num_beams: int = param(2, "beam search width for the test summaries", min=1)
    examples: int = param(5, "test questions shown with every row's summary", min=0)
    suite: list[str] = suite_param(["biosses-test", "rqe-test"])
    correction: Correction = correction_param()
    compare: list[str] = compare_param()
    primary: str | None = primary_param("qfcl - baseline on meqsum-test-rougeL")
    primary_effect: float | None = primary_effect_param()

    def primary_tasks(self) -> list[str]:
        """The ROUGE tasks on the run's test questions (``<dataset>-test-<rouge>``) and the suite's."""
        return [*(f"{self.dataset}-test-{m}" for m in ("rougeL", "rouge1", "rouge2")), *super().primary_tasks()]

    def validate(self) -> None:
        check_task_languages(self, "en", ("suite",))
        if len(self.split_sizes) != 3:
            raise ParameterError(f"parameter 'split_sizes': three sizes (train, dev, test), got {self.split_sizes}")
        try:
            self.split()  # the file must load and the sizes must fit it: fail before any run starts
        except (DataNotFoundError, MalformedDataError) as err:
            raise ParameterError(f"parameter 'data_path': {err}") from None

    def config(self, row: Row) -> QFCLConfig:
        return settings_from(self, QFCLConfig, simple=row.simple, hard=row.hard, decoder=row.decoder)

    def fit(self, seed: int) -> Seq2SeqFit:
        return settings_from(self, Seq2SeqFit, seed=seed)

    def split(self) -> tuple[SummaryPairs, SummaryPairs, SummaryPairs, str]:
        """The seeded train / dev / test split and a sentence stating it; ParameterError if the sizes do not fit.

        MeQSum: one permutation of its pairs. HealthCareMagic subset: train and dev from its train split,
        test from the start of its valid split.
        """
        n_train, n_dev, n_test = self.split_sizes
        if self.dataset == "meqsum":
            data = load_meqsum(self.data_path)
            if sum(self.split_sizes) > len(data):
                raise ParameterError(
                    f"parameter 'split_sizes': {self.split_sizes} needs {sum(self.split_sizes)} pairs, "
                    f"MeQSum has {len(data)}"
                )
            order = np.random.default_rng(self.split_seed).permutation(len(data))
            parts = (
                order[:n_train],
                order[n_train : n_train + n_dev],
                order[n_train + n_dev : n_train + n_dev + n_test],
            )
            note = (
                f"MeQSum has no official split: a seeded permutation (seed {self.split_seed}) of its {len(data):,} "
                f"pairs gives train {n_train} / dev {n_dev} / test {n_test} (the paper uses 400 / 100 / 500)."
            )
            return (*(data.take(i) for i in parts), note)
        train, valid = load_healthcaremagic("train", self.data_path), load_healthcaremagic("valid", self.data_path)
        if n_train + n_dev > len(train) or n_test > len(valid):
            raise ParameterError(
                f"parameter 'split_sizes': {self.split_sizes} does not fit the HealthCareMagic subset "
                f"(train + dev <= {len(train)} from its train split, test <= {len(valid)} from its "
                "valid split)"
            )
        order = np.random.default_rng(self.split_seed).permutation(len(train))
        note = (
            f"HealthCareMagic public subset: train {n_train} and dev {n_dev} drawn from its train split of "
            f"{len(train):,} (seed {self.split_seed}); test = the first {n_test} of its valid split ({len(valid)} "
            "pairs). The full HealthCareMagic (~226k) and iCliniq sets of the paper are not available here."
        )
        return train.take(order[n_dev : n_dev + n_train]), train.take(order[:n_dev]), valid.take(range(n_test)), note
