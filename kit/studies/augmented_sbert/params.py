"""Study 2's benchmarks (``BENCHMARKS``: the paper's tasks, a dataset with its train/test protocol) and
parameters (``AugSBERTParams``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kit.core.settings import settings_from
from kit.data import load_mednli, load_rqe
from kit.params import (
    Correction,
    ParameterError,
    Params,
    biosses_param,
    check_task_languages,
    compare_param,
    correction_param,
    data_param,
    model_param,
    param,
    primary_effect_param,
    primary_param,
    seeds_param,
    suite_param,
)
from kit.studies.augmented_sbert.held_out import ALL_PAIRS, HELD_OUT, KFOLD
from kit.studies.augmented_sbert.method import CONDITIONS, FitConfig, FitSettings

STARTING = "starting model (no training)"
"""The evaluation suite's row of the untrained bi-encoder."""


CROSS_ENCODER = "cross-encoder"
"""The evaluation suite's row name (after ``<benchmark>: ``) of a benchmark's cross-encoders, the silver labellers:
compared only as the positive control, against the gold bi-encoders they label silver pairs for."""


def suite_row(benchmark: str, condition: str) -> str:
    """The evaluation suite's row of a condition's bi-encoders trained on ``benchmark`` (or of its cross-encoders,
    ``CROSS_ENCODER``)."""
    return f"{benchmark}: {condition}"


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str  # the column header of the results table
    kind: Literal["sts", "nli"]
    metric: str
    classes: tuple[str, ...] = ()
    short: str = ""  # names the benchmark in the evaluation suite's rows: "gold (BIOSSES BLURB)"
    suite_task: str | None = None  # the evaluation-suite task on the same test pairs (the headline comparison's)
    entails: str = ""  # NLI: the class whose probability is the cross-encoder's similarity of a pair (``pair_scores``)

    @property
    def positive(self) -> int:
        """The index of the class whose probability scores a pair on the suite's pair tasks (0 for STS: one output)."""
        return self.classes.index(self.entails) if self.entails else 0


BENCHMARKS = {
    t.name: t
    for t in [
        Benchmark(
            "biosses_blurb",
            "BIOSSES (BLURB test, 20 pairs)",
            "sts",
            "cosine Spearman x100",
            short="BIOSSES BLURB",
            suite_task="biosses-test",
        ),
        Benchmark(
            "biosses_kfold", "BIOSSES (k-fold CV, all 100 pairs)", "sts", "cosine Spearman x100", short="BIOSSES k-fold"
        ),
        Benchmark(
            "rqe",
            "RQE (MedNLI stand-in)",
            "nli",
            "accuracy %",
            ("false", "true"),
            short="RQE",
            suite_task="rqe-test",
            entails="true",
        ),
        Benchmark(
            "mednli",
            "MedNLI",
            "nli",
            "accuracy %",
            ("contradiction", "entailment", "neutral"),
            short="MedNLI",
            entails="entailment",
        ),
    ]
}


@dataclass
class _AugSBERTData(Params):
    """What study 2 compares: the model, the benchmarks, their seeds and folds, and how silver pairs are sampled."""

    model: str = model_param(what="bi-encoder start, and the cross-encoder's unless cross_model")
    cross_model: str | None = model_param(None, "the cross-encoder teacher's start", "model's, as in the paper")
    benchmarks: list[str] = param(
        ["biosses_blurb"],
        "benchmarks: datasets with their train/test protocol (columns of the results table)",
        choices=BENCHMARKS,
        nonempty=True,
        unique=True,
    )
    seeds: list[int] = seeds_param([0, 1], "training seeds of every benchmark but biosses_kfold")
    kfold_seeds: list[int] = seeds_param([0], "training seeds of biosses_kfold (each over every fold)")
    folds: int = param(5, "biosses_kfold: number of folds over the 100 pairs", min=2)
    fold_seed: int = param(
        1234, "seed of the biosses_kfold folds (the same for every training seed) and of the pool_pubmed sample", min=0
    )
    top_k: int = param(1, "semantic sampling: new nearest neighbours per pool sentence (the paper: 5)", min=1)
    pool_pubmed: int = param(0, "STS benchmarks: seeded PubMed sentences added to the silver pool", min=0)


@dataclass
class AugSBERTParams(FitSettings, _AugSBERTData):
    """Study 2: Augmented SBERT, bi-encoders on gold and on gold + cross-encoder-labelled silver pairs.
    Defaults: a demo (offline MiniLM, BIOSSES BLURB split, 2 seeds, the top-1 semantic neighbour). The
    trainer's settings (``FitSettings``) are declared where they are used."""

    cross_epochs: int = param(10, "cross-encoder epochs on the gold pairs", min=1)
    cross_lr: float = param(1e-4, "cross-encoder learning rate", gt=0)
    cross_warmup: int | None = param(
        0,
        "STS benchmarks: RQE training pairs (seeded sample, seed nli_seed; None: all) the cross-encoder learns for one "
        "epoch before its gold pairs, an entailed question pair as 1 and any other as 0; 0: none",
        min=0,
    )
    nli_train_size: int | None = param(100, "NLI benchmarks: gold training pairs (seeded sample); None: all", min=1)
    nli_seed: int = param(1234, "seed of the NLI training sample and of the cross-encoder's warm-up sample", min=0)
    examples: int = param(5, "silver pairs shown per sampling", min=0)
    save_models: list[str] = param(
        ["biosses_blurb"],
        "benchmarks whose first bi-encoders are saved in sentence-transformers format",
        choices=BENCHMARKS,
        unique=True,
    )
    suite: list[str] = suite_param(["biosses-test", "rqe-test"])
    correction: Correction = correction_param()
    compare: list[str] = compare_param()
    primary: str | None = primary_param("biosses_blurb: gold + semantic silver - biosses_blurb: gold on biosses-test")
    primary_effect: float | None = primary_effect_param()
    biosses_path: str | None = biosses_param()
    rqe_path: str | None = data_param("an RQE file to use instead of the shared one", lambda p: load_rqe("train", p))
    mednli_path: str | None = data_param(
        "the folder holding MedNLI's mli_{train,dev,test}_v1.jsonl (credentialed)",
        lambda p: load_mednli("train", p),
        shared=False,
    )

    def validate(self) -> None:
        check_task_languages(self, "en", ("suite",))
        if self.cross_model is not None and self.cross_model in ("", self.model):
            raise ParameterError(
                f"parameter 'cross_model': {self.cross_model!r} is not another model than model's; give null for "
                "model's own"
            )

    @property
    def teacher_model(self) -> str:
        """Where the cross-encoder teacher starts: ``cross_model``, else ``model``."""
        return self.model if self.cross_model is None else self.cross_model

    def fit_config(self, seed: int) -> FitConfig:
        return settings_from(self, FitConfig, seed=seed)

    def cross_config(self, seed: int) -> FitConfig:
        return settings_from(self, FitConfig, seed=seed, epochs=self.cross_epochs, lr=self.cross_lr)

    def warmup_config(self, seed: int) -> FitConfig:
        """The cross-encoder's warm-up (``cross_warmup``): one epoch at its learning rate."""
        return settings_from(self, FitConfig, seed=seed, epochs=1, lr=self.cross_lr)

    def primary_tasks(self) -> list[str]:
        """The suite's tasks, and the held-out task (``kit.studies.augmented_sbert.held_out``) when the run has the
        k-fold benchmark and its suite scores all BIOSSES pairs."""
        tasks = super().primary_tasks()
        return [*tasks, HELD_OUT] if KFOLD in self.benchmarks and ALL_PAIRS in tasks else tasks

    def table_rows(self) -> list[str]:
        """The suite's rows: the starting model and every condition of every benchmark (``suite_row``)."""
        return [STARTING, *(suite_row(b, c) for b in self.benchmarks for c in CONDITIONS)]

    def seeds_for(self, benchmark: str) -> list[int]:
        return self.kfold_seeds if benchmark == "biosses_kfold" else self.seeds
