"""Study 4's rows (``ROWS``) and parameters (``MedSEParams``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kit.core.models import MIN_MAX_LENGTH
from kit.data import load_disease_ontology, load_pubmed_sentences, load_sts_tsv
from kit.params import (
    ContrastiveTrainingParams,
    Correction,
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
    name: str
    label: str
    kind: str  # zero_shot, simcse, ct, consert_cutoff, consert_shuffle, medse
    pooler: str | None = None  # zero-shot rows: their pooler; trained rows use the parameter
    whitening: bool = False


def _zero_shot_rows() -> list[Row]:
    poolers = {
        **{name: pooler for name, (pooler, _) in TRAINING_FREE_POOLERS.items()},
        "embed_last_avg": "embed_last_avg",
    }
    return [
        Row(
            f"{name}{'_whitening' if w else ''}",
            f"starting model, {name}{' + whitening' if w else ''}",
            "zero_shot",
            pooler,
            w,
        )
        for name, pooler in poolers.items()
        for w in (False, True)
    ]


ROWS = {
    r.name: r
    for r in [
        *_zero_shot_rows(),
        Row("simcse", "SimCSE", "simcse"),
        Row("ct", "contrastive tension", "ct"),
        Row("consert_cutoff", "ConSERT token cutoff", "consert_cutoff"),
        Row("consert_shuffle", "ConSERT token shuffle", "consert_shuffle"),
        Row("medse", "MED-SE (SimCSE + entity-definition loss)", "medse"),
    ]
}
TRAINED = [name for name, row in ROWS.items() if row.kind != "zero_shot"]


@dataclass
class MedSEParams(ContrastiveTrainingParams):
    """Study 4: MED-SE, SimCSE plus an entity-definition loss, with its baselines. Defaults: a demo
    (offline MiniLM, the mean pooler with and without whitening, SimCSE and MED-SE, 2 seeds of 20 steps at
    batch 32, no sweeps)."""

    rows: list[str] = param(
        ["mean", "mean_whitening", "simcse", "medse"],
        "rows of the results table",
        choices=ROWS,
        nonempty=True,
        unique=True,
    )
    train_size: int = param(4000, "training sentences per run (a mixture of S_ent and S_none)", min=1)
    none_share: float = param(0.1, "share of the training sentences without a linked entity (S_none)", min=0, max=1)
    lam: float = param(0.1, "lambda: weight of the entity loss in L_sen + lambda L_ent", min=0)
    entity_encoder: Literal["mean", "transformer", "cross"] = param(
        "transformer", "how entity token states become the entity's embedding"
    )
    entity_temperature: float = param(0.05, "temperature of the entity-definition InfoNCE", gt=0)
    definition_trainable: bool = param(False, "train the definition encoder (else frozen, definitions embedded once)")
    definition_max_length: int = param(64, "tokens per definition", min=MIN_MAX_LENGTH)
    dedup: Literal["naive", "remove", "replace"] = param("replace", "sentences whose entity is already in the batch")
    cutoff_rate: float = param(0.15, "ConSERT token cutoff: share of content tokens zeroed", gt=0, lt=1)
    whitening_sentences: int = whitening_sentences_param()
    whitening_dim: int | None = whitening_dim_param()
    none_share_sweep: list[float] = param(
        [], "S_none shares swept for the sweep rows (the main share is added)", min=0, max=1, unique=True
    )
    lambda_sweep: list[float] = param(
        [], "lambda values swept for MED-SE (the main lambda is added)", min=0, unique=True
    )
    dedup_sweep: list[Literal["naive", "remove", "replace"]] = param(
        [], "duplicate handlings swept for MED-SE (the main one is added)", unique=True
    )
    sweep_rows: list[str] = param(["simcse", "medse"], "rows of the S_none sweep", choices=TRAINED, unique=True)
    sweep_seeds: list[int] = seeds_param([0], "seeds of every sweep")
    corpus_seed: int = param(1234, "seed of the training mixtures, chosen entities and whitening sample", min=0)
    examples: int = param(5, "linked training sentences shown", min=0)
    biosses_path: str | None = biosses_param()
    corpus_path: str | None = data_param(
        "training sentences, one per line (.txt or .txt.gz); None: shared PubMed", load_pubmed_sentences
    )
    ontology_path: str | None = data_param(
        "a Disease Ontology definitions file instead of the shared one", load_disease_ontology
    )
    medsts_path: str | None = data_param(
        "your MedSTS / ClinicalSTS file (credentialed): adds a MedSTS column", load_sts_tsv, shared=False
    )
    suite: list[str] = suite_param(["biosses-all", "biosses-test", "rqe-test"])
    select_on: list[str] = selection_param("BIOSSES dev (16 pairs)")
    correction: Correction = correction_param()
    compare: list[str] = compare_param()
    primary: str | None = primary_param("medse - simcse on biosses-all")
    control_task: str | None = control_task_param("medse_entity_definitions")
    primary_effect: float | None = primary_effect_param()
    save_models: bool = save_models_param()

    def validate(self) -> None:
        super().validate()
        check_task_languages(self, "en")
        if self.train_size < self.batch_size:
            raise ParameterError(
                f"parameter 'train_size': {self.train_size} sentences are fewer than one batch "
                f"(batch_size {self.batch_size})"
            )

    def check_resources(self) -> None:
        """The models and device, then what needs the data: the corpus holds a run's training sentences, and
        the whitening sample is wider than the model (a covariance needs more samples than dimensions)."""
        super().check_resources()
        corpus = len(load_pubmed_sentences(self.corpus_path))
        if self.train_size > corpus:
            raise ParameterError(
                f"parameter 'train_size': {self.train_size:,} sentences per run, but the corpus has {corpus:,}"
                + ("; pass corpus_path with a larger corpus" if self.corpus_path is None else "")
            )
        check_whitening(self, any(ROWS[r].whitening for r in self.table_rows()))

    def table_rows(self) -> list[str]:
        """``rows`` and the positive control's rows (``kit.study.with_control_rows``)."""
        return with_control_rows(self.rows)
