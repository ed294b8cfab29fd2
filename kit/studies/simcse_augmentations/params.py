"""Study 1's rows (``ROWS``) and parameters (``SimCSEParams``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kit.core.augment import AUGMENTERS
from kit.core.config import TrainConfig, TrainSettings
from kit.core.models import MIN_MAX_LENGTH, PoolerName
from kit.core.settings import redefault
from kit.data import CHINESEBLUE, chineseblue_corpus, load_pubmed_sentences
from kit.evaluation.tasks import dev_split, select
from kit.params import (
    ContrastiveTrainingParams,
    Correction,
    EncoderParams,
    ParameterError,
    biosses_param,
    check_task_languages,
    check_whitening,
    compare_param,
    control_task_param,
    correction_param,
    data_param,
    param,
    primary_effect_param,
    primary_param,
    save_models_param,
    seeds_param,
    selection_param,
    suite_param,
    whitening_dim_param,
    whitening_sentences_param,
)
from kit.study import TRAINING_FREE_POOLERS, with_control_rows


@dataclass(frozen=True)
class Row:
    """One row: an optional augmenter for the positive view, and the loss options."""

    name: str
    label: str
    augmenter: str | None = None
    ratio: float = 0.1
    mix: bool = False
    iw: bool = False
    trained: bool = True
    pooler: str | None = None  # an untrained row's own pooler (None: the ``pooler`` parameter)
    whitening: bool = False


def _aug_rows(aug: str, label: str, ratios=(0.1, 0.2, 0.3)) -> list[Row]:
    return [Row(f"{aug}_{round(r * 100)}", f"+ {label} {round(r * 100)}%", aug, r) for r in ratios]


ROWS: dict[str, Row] = {
    m.name: m
    for m in [
        Row("zero_shot", "starting model (no training)", trained=False),
        *(
            Row(
                f"{name}{'_whitening' * w}",
                f"starting model, {label}{' + whitening' * w}",
                trained=False,
                pooler=pooler,
                whitening=w,
            )
            for name, (pooler, label) in TRAINING_FREE_POOLERS.items()
            for w in (False, True)
        ),
        Row("simcse", "SimCSE (dropout views)"),
        *_aug_rows("deletion", "word deletion"),
        *_aug_rows("crop", "random crop"),
        *_aug_rows("stopword_insertion", "stopword insertion", (0.1,)),
        *_aug_rows("swap", "random swap", (0.1,)),
        *_aug_rows("punctuation_insertion", "punctuation insertion", (0.1,)),
        Row("mixcse_iw", "+ MixCSE-IW", mix=True, iw=True),
        Row("mixcse_iw_no_mix", "MixCSE-IW without MixCSE (IW only)", iw=True),
        Row("mixcse_iw_no_iw", "MixCSE-IW without instance weighting (MixCSE only)", mix=True),
        Row("punctuation_mixcse", "+ punctuation insertion 10% + MixCSE", "punctuation_insertion", 0.1, mix=True),
    ]
}
assert all(m.augmenter in (None, *AUGMENTERS) for m in ROWS.values())
TRAINED = [name for name, m in ROWS.items() if m.trained]


@dataclass
class SimCSEParams(ContrastiveTrainingParams):
    """Study 1: unsupervised SimCSE with text augmentations and MixCSE-IW. Defaults: the demo, the setting in
    which the methods separate on two CPU cores: the kit's raw pubmed-bert-mini ([CLS] with the training MLP),
    the starting model, SimCSE and random swap 10%, 3 seeds (the fewest the calibrated test reads) of 100 steps at
    batch 64, lr 1e-4, checkpoints selected on RQE validation; the positive control and the primary (swap 10% -
    SimCSE, sized for the paper's +4.34) on doid-definition-name, 9,962 queries, BIOSSES beside them. (On the
    trained MiniLM, the ``cpu`` run, the objectives have little to add.)"""

    model: str = redefault(EncoderParams, "model", "pubmed-bert-mini")
    pooler: PoolerName = redefault(EncoderParams, "pooler", "cls_before_pooler")
    seeds: list[int] = redefault(EncoderParams, "seeds", [0, 1, 2])
    steps: int = redefault(TrainSettings, "steps", 100)
    eval_every: int = redefault(TrainSettings, "eval_every", 25)
    batch_size: int = redefault(TrainSettings, "batch_size", 64)
    lr: float = redefault(TrainSettings, "lr", 1e-4)
    language: Literal["en", "zh"] = param("en", "en: PubMed sentences, BIOSSES; zh: ChineseBLUE sentences and probes")
    rows: list[str] = param(
        ["zero_shot", "simcse", "swap_10"],
        "rows of the results table (with simcse, the positive control's training-free rows are added: each pooler "
        "with and without whitening)",
        choices=ROWS,
        nonempty=True,
        unique=True,
    )
    mix_lambda: float = param(0.2, "MixCSE: weight lambda of the positive in the mixed negative", min=0, max=1)
    iw_phi: float = param(
        0.9, "instance weighting: negatives whose complementary-model cosine reaches phi are dropped", min=-1, max=1
    )
    mlm_weight: float | None = param(
        None,
        "SimCSE's auxiliary MLM loss on every trained row: the loss is SimCSE's plus mlm_weight times the "
        "masked-token loss on a 15%-masked copy of each batch (Gao et al. 2021 use 0.1); its head starts untrained. "
        "None: off",
        gt=0,
    )
    crop_placeholder: str | None = param(None, "random crop puts this token in place of the span; None removes it")
    corpus_size: int | None = param(20000, "sentences of the unlabeled corpus (seeded sample); None: all", min=1)
    corpus_seed: int = param(
        1234, "seed of the corpus sample, the held-out map sentences and the probe subsamples", min=0
    )
    fewshot_percents: list[float] = param(
        [10, 100], "few-shot curve: shares of the corpus in %, same steps", gt=0, max=100, unique=True
    )
    fewshot_rows: list[str] = param(["swap_10"], "rows trained at every few-shot share", choices=TRAINED, unique=True)
    fewshot_seeds: list[int] = seeds_param([0], "seeds of the few-shot runs")
    whitening_sentences: int = whitening_sentences_param()
    whitening_dim: int | None = whitening_dim_param()
    retrieval_queries: int = param(4, "queries in the nearest-neighbour table", min=1)
    map_sentences: int = param(300, "PubMed sentences held out of training for the embedding map (en)", min=0)
    map_points: int = param(
        1000,
        "most points per panel of the embedding map: a seeded sample of the retrieval texts and map sentences; 0: all",
        min=0,
    )
    biosses_path: str | None = biosses_param()
    corpus_path: str | None = data_param(
        "unlabeled corpus, one sentence per line (.txt or .txt.gz); None: the shared PubMed sentences (en) or "
        "the pooled ChineseBLUE train sentences (zh)",
        load_pubmed_sentences,
        shared=False,
    )
    probe_train_size: int | None = param(None, "zh: probe-train examples per task (seeded subsample); None: all", min=1)
    probe_eval_size: int | None = param(
        None, "zh: probe dev and test examples per task (seeded subsample); None: all", min=1
    )
    probe_max_length: int = param(64, "zh: tokens per probe text", min=MIN_MAX_LENGTH)
    cosine_view_pairs: int | None = param(
        400, "zh: cMedQQ dev and test pairs each in the checkpoint-selection view; None: all", min=1
    )
    suite: list[str] | None = suite_param(
        None, "doid-definition-name, biosses-all, biosses-test and rqe-test (en), cmedqq-test-unseen (zh)"
    )
    select_on: list[str] | None = selection_param(
        "the dev split of the cosine view (BIOSSES dev, 16 pairs; zh: cMedQQ dev)",
        none="the control task's dev split where it has one (doid-definition-name-dev for doid-definition-name), "
        "else rqe-validation (en: disjoint from BIOSSES, so all 100 pairs are headline items), dev (zh)",
    )
    correction: Correction = correction_param()
    compare: list[str] = compare_param()
    primary: str | None = primary_param("swap_10 - simcse on doid-definition-name")
    control_task: str | None = control_task_param("simcse_augmentations")
    primary_effect: float | None = primary_effect_param()  # the paper's +4.34 is BIOSSES Spearman, not nDCG@10
    save_models: bool = save_models_param()

    DEFAULT_SUITE = {
        "en": ["doid-definition-name", "biosses-all", "biosses-test", "rqe-test"],
        "zh": ["cmedqq-test-unseen"],
    }
    DEFAULT_SELECTION = {"en": ["rqe-validation"], "zh": ["dev"]}

    def validate(self) -> None:
        """Also fills in ``suite`` and ``select_on`` (None: ``DEFAULT_SUITE`` and ``DEFAULT_SELECTION`` of the
        language), so the record names them."""
        super().validate()
        if self.suite is None:
            self.suite = list(self.DEFAULT_SUITE[self.language])
        if self.select_on is None:
            declared = self.declared_task()
            dev = dev_split(declared) if declared in {t.name for t in select(self.suite)} else None
            self.select_on = [dev] if dev else list(self.DEFAULT_SELECTION[self.language])
        check_task_languages(self, self.language)
        if not any(ROWS[r].trained for r in self.rows):
            raise ParameterError(f"parameter 'rows': {self.rows} has no trained row; add one of {TRAINED}")
        if self.corpus_size is not None and self.corpus_size < self.batch_size:
            raise ParameterError(
                f"parameter 'corpus_size': {self.corpus_size} sentences are fewer than one batch "
                f"(batch_size {self.batch_size})"
            )

    def declared_task(self) -> str | None:
        """The task the run file names for its control (``control_task``) or, else, its primary's, read without
        checking the primary's rows (``validate`` checks them, and says so first)."""
        from kit.evaluation.rows import Primary

        if self.control_task or not self.primary:
            return self.control_task
        try:
            return Primary.parse(self.primary).task
        except ValueError:
            return None

    def primary_tasks(self) -> list[str]:
        """The suite's tasks, and for zh the ChineseBLUE probes the study fits (``<task>-probe``)."""
        suite = super().primary_tasks()
        probes = [f"{t.name.lower()}-probe" for t in CHINESEBLUE.values() if t.splits] if self.language == "zh" else []
        return [*suite, *(name for name in probes if name not in suite)]

    def check_resources(self) -> None:
        """The models and device, then the corpus: it must hold the sample (``corpus_size``, besides the
        sentences held out for the map) and at least one batch; a larger size is refused, not clipped."""
        super().check_resources()
        if self.language == "zh" and self.corpus_path is None:
            available, what = len(chineseblue_corpus()), "the pooled ChineseBLUE train sentences"
        else:
            held = self.map_sentences if self.language == "en" else 0
            corpus = self.corpus_path or "the shared PubMed corpus"
            available = len(load_pubmed_sentences(self.corpus_path)) - held
            if available <= 0:
                raise ParameterError(
                    f"parameter 'map_sentences': {held:,} sentences held out for the map, but {corpus} has "
                    f"{available + held:,} in all; give fewer, or 0"
                )
            what = f"{corpus} (after the {held} held out for the map)"
        if self.corpus_size is not None and self.corpus_size > available:
            raise ParameterError(
                f"parameter 'corpus_size': {self.corpus_size:,} sentences, but {what} has {available:,}; "
                "give at most that many, or null for all"
            )
        if available < self.batch_size:
            raise ParameterError(
                f"parameter 'batch_size': {self.batch_size} sentences per batch, but {what} has {available:,}"
            )
        check_whitening(self, any(ROWS[r].whitening for r in self.table_rows()), self.corpus_size or available)

    def table_rows(self) -> list[str]:
        """``rows`` and the positive control's rows (``kit.study.with_control_rows``)."""
        return with_control_rows(self.rows)

    def row_config(self, row: Row, seed: int) -> TrainConfig:
        """The run's ``TrainConfig``: MixCSE and instance weighting as the row asks."""
        return self.train_config(
            seed, mix_lambda=self.mix_lambda if row.mix else None, iw_phi=self.iw_phi if row.iw else None
        )
