"""Study 2's orchestration: the benchmarks' splits, cached runs of ``method.compare``, and the report's
tables (the paper's Table 2 layout). A *benchmark* is what the paper calls a task: a dataset with its
train/test protocol (the word *task* is kept for the evaluation suite's tasks).

Benchmarks (each a list of train/test ``Split``s):

- ``biosses_blurb``: BIOSSES, BLURB split: train on the 64 train pairs, score the 20 test pairs.
- ``biosses_kfold``: BIOSSES, k-fold cross-validation over all 100 pairs (folds fixed by
  ``fold_seed``, the same for every training seed): every pair is scored once, by a model that
  never saw it. Less noisy than the 20-pair test; the two numbers are reported side by side.
- ``rqe``: Recognizing Question Entailment (binary), the public stand-in for MedNLI.
- ``mednli``: MedNLI (three classes), for users who hold the credentialed files (``mednli_path``).

The silver pool of a split is the set of sentences of its *training* pairs (plus optional PubMed
sentences for the STS benchmarks). BIOSSES reuses sentences across pairs, so a test pair's sentences can both be in
the pool; no silver set holds a test pair (``method.compare``'s ``held_out``), so no model trains on a pair it is
scored on.

Every run also scores its three bi-encoders (final models: the study selects no checkpoint) on the
evaluation-suite tasks of ``suite`` and keeps their item outputs (``suite_file``), and its cross-encoder, the
silver labeller, on the suite's pair tasks (STS and pair classification: its predicted score in place of the
cosine, ``cross_encoder_outputs``); ``suite_report`` compares each silver condition with gold, and gold with the
untrained starting model, by paired bootstrap over the suite task's items and the benchmark's runs
(``kit.evaluation.rows``). Its positive control (``Study.control``) comes first: Augmented SBERT rests on a teacher
better than its student, so the cross-encoder must beat the gold-only bi-encoder it labels silver pairs for on
held-out gold pairs; unless it does, no comparison of the report is a finding.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.compute import Work, combined, encoding
from kit.core.fingerprint import digest
from kit.core.models import FP32_WEIGHTS, model_fingerprint
from kit.core.progress import bar
from kit.data import load_biosses, load_mednli, load_pubmed_sentences, load_rqe
from kit.evaluation import rows as suite_rows
from kit.evaluation.rows import RunOutputs
from kit.evaluation.sts import spearman
from kit.evaluation.task import PairCosineTask, within_ranks
from kit.evaluation.task import Task as SuiteTask
from kit.report.model_card import MODELS, mark
from kit.report.tables import mean_std
from kit.studies.augmented_sbert.held_out import ALL_PAIRS, HELD_OUT, KFOLD, cross_fitted, held_out_task
from kit.studies.augmented_sbert.method import (
    CONDITIONS,
    Pair,
    bi_encoder,
    compare,
    cosine_scores,
    model_folder_name,
    pair_scores,
    silver_labels,
    unordered,
    warm_up,
)
from kit.studies.augmented_sbert.params import BENCHMARKS, CROSS_ENCODER, STARTING, AugSBERTParams, suite_row
from kit.study import StudyBase, cached_run

STS_MAX = 4.0  # BIOSSES scores are 0-4; the models learn score / 4 in [0, 1]
PREMISE = "the cross-encoder teacher beats the gold-only student it labels silver pairs for"
"""What study 2's positive control shows (``Study.control``)."""


def texts_of(pairs: list[Pair]) -> list[str]:
    """Both texts of every pair, in order."""
    return [text for pair in pairs for text in pair]


def joined(pairs: list[Pair]) -> list[str]:
    """Each pair as the one sequence a cross-encoder reads."""
    return [f"{a} {b}" for a, b in pairs]


def suite_file(condition: str) -> str:
    """The file of a run's item outputs on the suite tasks, per condition (``suite-gold+random_silver.npz``), and of
    its cross-encoder's on the pair tasks (``CROSS_ENCODER``: ``suite-cross-encoder.npz``)."""
    return f"suite-{model_folder_name(condition)}.npz"


def pair_tasks(tasks: Sequence[SuiteTask]) -> list[SuiteTask]:
    """The tasks among ``tasks`` that a cross-encoder can score: those whose items are text pairs scored by a
    similarity (STS and pair classification, ``PairCosineTask``); not retrieval, probes or summarization."""
    return [task for task in tasks if isinstance(task, PairCosineTask)]


def cross_encoder_outputs(predict: Callable[[list[Pair]], np.ndarray], tasks: Sequence[SuiteTask]) -> RunOutputs:
    """A pair scorer's item outputs on the pair tasks among ``tasks`` (``pair_tasks``), in the shape
    ``kit.evaluation.rows.score_run`` gives a bi-encoder's: per task, its main metric's outputs, the predicted
    scores of its pairs (``predict(pairs) -> one score per pair``, higher: more alike) as ranks within its items
    (``within_ranks``), where a bi-encoder's are its cosines' ranks (``PairCosineTask.score``). The task's statistic
    (Spearman against the gold scores, average precision against the labels) reads them as it reads a bi-encoder's."""
    out: RunOutputs = {}
    for task in pair_tasks(tasks):
        first, second = task.pairs()
        scores = np.asarray(predict(list(zip(first, second))), dtype=np.float64)
        if scores.shape != (task.items,):
            raise ValueError(f"{task.name}: {scores.shape} scores for {task.items} pairs")
        out[task.name] = {task.main_metric: within_ranks(scores)}
    return out


def item_pairs(task: SuiteTask) -> set[Pair]:
    """A pair task's items as unordered text pairs (STS and pair classification; none for other types)."""
    data = task.data
    if task.type == "sts":
        return {unordered(a, b) for a, b in zip(data.sentence1, data.sentence2)}
    if task.type == "pair_classification":
        return {unordered(a, b) for a, b in zip(data[0], data[1])}
    return set()


@dataclass
class SuiteReport(suite_rows.SuiteReport):
    """``kit.evaluation.rows.SuiteReport`` with what study 2 adds to its reading: how a row is made, and the
    rows left out of a suite task because their training pairs include the task's pairs (``left_out``: suite
    task -> benchmarks)."""

    left_out: dict[str, list[str]] = field(default_factory=dict)

    def about(self) -> str:
        out = (
            "Rows: the untrained starting model, and each condition's bi-encoders trained on a benchmark (named "
            "in parentheses) over all of the benchmark's runs (its seeds; k-fold: folds x seeds), compared run by "
            "run: each silver condition with gold of the same benchmark and runs, gold with the starting model. "
            "The cross-encoder teacher of a benchmark (the silver labeller of the same runs) is scored on the pair "
            "tasks alone (STS, pair classification), by its predicted score in place of the cosine (an NLI "
            "benchmark's: the probability of its entailment class), and compared only as the positive control, with "
            "the gold bi-encoder of its runs. " + super().about()
        )
        if any(task.name == HELD_OUT for task in self.tasks):
            out += (
                f" On `{HELD_OUT}` a k-fold row is scored on every BIOSSES pair by the model of the fold that held the "
                "pair out, each seed's folds pooled into one run (each fold model's scores read as their ranks among "
                "its scores of all pairs: `kit.studies.augmented_sbert.held_out`); only the k-fold rows and the "
                "starting model are scored there. Its intervals are cross-validation's naive ones: each fold's "
                "held-out pairs count as fresh draws for its model, though the other folds trained on them, and how "
                "well a fold's training pairs suit a method, shared by its pairs and every seed, is not counted, so a "
                "verdict there is weaker than on a task with a fixed training set and can be too sure of itself "
                "(`kit.evaluation.inference`)." + self.fold_spreads()
            )
        if self.left_out:
            out += " Left out, because their gold or silver training pairs include pairs of the task: " + "; ".join(
                f"the {', '.join(benchmarks)} rows on `{task}`" for task, benchmarks in self.left_out.items()
            )
            out += "."
        return out

    def fold_spreads(self) -> str:
        """How the control's and the primary's differences on the held-out task spread over the folds
        (``kit.evaluation.rows.cluster_spread``), as a sentence; '' when neither is on it."""
        declared = [(d.task, d.row, d.baseline) for d in (self.control, self.primary) if d and d.task == HELD_OUT]
        parts = suite_rows.declared_spreads(self.evidence, declared)
        if not parts:
            return ""
        return " Fold by fold (each fold's contribution to the difference, x100): " + "; ".join(parts) + "."

    def record(self) -> dict:
        return {**super().record(), "left_out": self.left_out}


@dataclass
class Split:
    """One train/test split of a task; labels are scores in [0, 1] (STS) or class indices (NLI)."""

    name: str
    train: list[Pair]
    train_labels: np.ndarray
    test: list[Pair]
    test_labels: np.ndarray  # STS: the gold 0-4 scores; NLI: class indices


def _pairs(texts: tuple[list[str], ...], idx) -> list[Pair]:
    return [(texts[0][i], texts[1][i]) for i in idx]


class Study(StudyBase):
    """Builds the splits, runs (or loads) one ``compare`` per (benchmark, split, seed) under
    ``<report_dir>/runs/``, and turns the results into the report's tables. Its table rows on the suite are the
    starting model and every condition's bi-encoders of every benchmark (``suite_row``), over all of the
    benchmark's runs."""

    p: AugSBERTParams
    NO_SELECTION = (
        "no data: study 2 selects no checkpoint; each bi-encoder is scored as its training left it, after the last "
        "epoch"
    )

    def __init__(self, params: AugSBERTParams, report_dir: str | Path):
        super().__init__(params, report_dir)
        self._splits: dict[str, list[Split]] = {}
        self._data_digests: dict[tuple[str, int], str] = {}
        self._silver_pairs: dict[str, set[Pair]] = {}

    # ---- benchmarks ------------------------------------------------------------------
    def splits(self, benchmark: str) -> list[Split]:
        if benchmark not in self._splits:
            self._splits[benchmark] = getattr(
                self, f"_{'nli' if BENCHMARKS[benchmark].kind == 'nli' else benchmark}_splits"
            )(benchmark)
        return self._splits[benchmark]

    def _biosses_blurb_splits(self, benchmark: str) -> list[Split]:
        b = load_biosses(self.p.biosses_path)
        tr, te = b.subset("train"), b.subset("test")
        return [
            Split(
                "BLURB",
                list(zip(tr.sentence1, tr.sentence2)),
                tr.scores / STS_MAX,
                list(zip(te.sentence1, te.sentence2)),
                te.scores,
            )
        ]

    def _biosses_kfold_splits(self, benchmark: str) -> list[Split]:
        from sklearn.model_selection import KFold

        b = load_biosses(self.p.biosses_path)
        pairs = list(zip(b.sentence1, b.sentence2))
        folds = KFold(self.p.folds, shuffle=True, random_state=self.p.fold_seed).split(pairs)
        return [
            Split(
                f"fold {i + 1}/{self.p.folds}",
                [pairs[j] for j in tr],
                b.scores[tr] / STS_MAX,
                [pairs[j] for j in te],
                b.scores[te],
            )
            for i, (tr, te) in enumerate(folds)
        ]

    def _nli_splits(self, benchmark: str) -> list[Split]:
        if benchmark == "rqe":
            train, test = load_rqe("train", self.p.rqe_path), load_rqe("test_mediqa2019", self.p.rqe_path)
        else:
            train, test = load_mednli("train", self.p.mednli_path), load_mednli("test", self.p.mednli_path)
        classes = BENCHMARKS[benchmark].classes
        index = {c: i for i, c in enumerate(classes)}
        n = len(train) if self.p.nli_train_size is None else min(self.p.nli_train_size, len(train))
        keep = np.sort(np.random.default_rng(self.p.nli_seed).choice(len(train), n, replace=False))
        return [
            Split(
                test.split,
                _pairs(train.texts, keep),
                np.array([index[x] for x in train.labels[keep]]),
                _pairs(test.texts, range(len(test))),
                np.array([index[x] for x in test.labels]),
            )
        ]

    def pool(self, benchmark: str, split: Split) -> list[str]:
        """The sentences silver pairs are drawn from: those of the split's training pairs, plus
        ``pool_pubmed`` seeded PubMed sentences for STS benchmarks."""
        pool = list(dict.fromkeys(s for pair in split.train for s in pair))
        if self.p.pool_pubmed and BENCHMARKS[benchmark].kind == "sts":
            pubmed = load_pubmed_sentences()
            pick = np.random.default_rng(self.p.fold_seed).choice(len(pubmed), self.p.pool_pubmed, replace=False)
            pool += [pubmed[i] for i in pick]
        return list(dict.fromkeys(pool))

    # ---- runs -------------------------------------------------------------------
    def _run_dir(self, benchmark: str, split: int, seed: int) -> Path:
        p = self.p
        settings = {
            "benchmark": benchmark,
            "split": split,
            "seed": seed,
            "model": p.model,
            "fit": asdict(p.fit_config(seed)),
            "cross": asdict(p.cross_config(seed)),
            "top_k": p.top_k,
            "suite": p.suite,
            "cross_encoder_outputs": "suite pair tasks",  # runs before its suite-cross-encoder.npz hold none
            "silver_excludes": "gold and test pairs",  # runs before could draw a test pair as a silver pair
        }
        if self.saves_models(benchmark, split, seed):
            settings["save_models"] = "in its run folder"  # only then, so that other runs keep their keys
        if p.cross_model is not None:  # only then, as save_models
            settings["cross_model"] = self.teacher_weights
        if (warm := self.warmup_pairs(benchmark)) is not None:  # only then, as save_models
            settings["cross_warmup"] = {"rqe_train_pairs": len(warm[0]), "sample_seed": p.nli_seed, "epochs": 1}
        return self.run_dir(f"{benchmark}-split{split}-seed{seed}", settings, self.data_digest(benchmark, split))

    def saves_models(self, benchmark: str, split: int, seed: int) -> bool:
        """``save_models``: a benchmark's bi-encoders of its first split's first seed."""
        return split == 0 and seed == self.p.seeds_for(benchmark)[0] and benchmark in self.p.save_models

    def data_digest(self, benchmark: str, split: int) -> str:
        """``digest`` of everything a run reads: the split's pairs and labels and the silver pool."""
        key = (benchmark, split)
        if key not in self._data_digests:
            data, warm = self.splits(benchmark)[split], self.warmup_pairs(benchmark)
            self._data_digests[key] = digest(data, self.pool(benchmark, data), *([warm] if warm else []))
        return self._data_digests[key]

    @functools.cached_property
    def rqe_warmup(self) -> tuple[list[Pair], np.ndarray]:
        """``cross_warmup`` RQE training pairs (a seeded sample, seed ``nli_seed``) and their labels: 1 for an
        entailed question pair, else 0."""
        with warnings.catch_warnings():  # the pair the loader drops was reported by the parameters' check of rqe_path
            warnings.simplefilter("ignore")
            train = load_rqe("train", self.p.rqe_path)
        n = len(train) if self.p.cross_warmup is None else min(self.p.cross_warmup, len(train))
        keep = np.sort(np.random.default_rng(self.p.nli_seed).choice(len(train), n, replace=False))
        return _pairs(train.texts, keep), (train.labels[keep] == "true").astype(float)

    def warmup_pairs(self, benchmark: str) -> tuple[list[Pair], np.ndarray] | None:
        """The pairs and labels a benchmark's cross-encoder learns before its gold pairs (``rqe_warmup``), or None:
        none asked, or an NLI benchmark."""
        if self.p.cross_warmup == 0 or BENCHMARKS[benchmark].kind != "sts":
            return None
        return self.rqe_warmup

    def teacher_start(self, benchmark: str, seed: int) -> str | None:
        """The folder a benchmark's cross-encoders at ``seed`` start from: the model warmed up on ``warmup_pairs``
        (``method.warm_up``), computed once per seed into the run cache and shared by every split; None without a
        warm-up. Its time is not recorded apart: the run that computes it counts it in its own."""
        warm = self.warmup_pairs(benchmark)
        if warm is None:
            return None
        cfg = self.p.warmup_config(seed)
        teacher, settings = self.p.teacher_model, {"model": self.p.teacher_model, "fit": asdict(cfg)}
        if self.p.cross_model is not None:  # only then, so that other warm-ups keep their keys
            settings["cross_model"] = self.teacher_weights
        run_dir = self.run_dir(f"cross-warmup-seed{seed}", settings, digest(*warm))

        def compute() -> dict:
            warm_up(teacher, *warm, cfg, run_dir)
            return {"pairs": len(warm[0]), "seed": seed}

        cached_run(run_dir, compute, {})
        return str(run_dir)

    @functools.cached_property
    def teacher_weights(self) -> dict[str, str]:
        """``cross_model``'s name and ``model_fingerprint``: a teacher's run keys on its weights as on the student's
        (``run_dir``)."""
        return {"name": self.p.cross_model, "weights": model_fingerprint(self.p.cross_model)}

    def models_dir(self, benchmark: str) -> Path:
        """Where the first seed's bi-encoders of the benchmark's first split are saved (one folder per condition):
        its run's folder (the report publishes them as ``<report>/models/<benchmark>/``)."""
        return self._run_dir(benchmark, 0, self.p.seeds_for(benchmark)[0]) / MODELS

    def run(self, benchmark: str, split: int, seed: int) -> dict:
        """One comparison (gold / + random silver / + semantic silver, and the labeller), cached; each
        bi-encoder's item outputs on the suite tasks, and the cross-encoder's on the suite's pair tasks
        (``cross_encoder_outputs``; an NLI benchmark's scores a pair by the probability of its entailment class),
        are saved in the run folder (``suite_file``)."""
        run_dir = self._run_dir(benchmark, split, seed)

        def score_suite(condition: str, st) -> None:
            outputs = suite_rows.score_run(self._embed(st), self.suite_tasks)
            suite_rows.save_outputs(run_dir / suite_file(condition), outputs)

        def score_cross_encoder(ce) -> None:
            positive = BENCHMARKS[benchmark].positive
            outputs = cross_encoder_outputs(lambda pairs: pair_scores(ce, pairs, positive), self.suite_tasks)
            suite_rows.save_outputs(run_dir / suite_file(CROSS_ENCODER), outputs)

        def compute() -> dict:
            s, kind = self.splits(benchmark)[split], BENCHMARKS[benchmark].kind
            pool = self.pool(benchmark, s)
            save = self.saves_models(benchmark, split, seed)
            cmp = compare(
                self.p.model,
                s.train,
                s.train_labels,
                pool,
                self.p.top_k,
                lambda predict: self._score(kind, predict, s),
                self.p.fit_config(seed),
                self.p.cross_config(seed),
                num_labels=len(BENCHMARKS[benchmark].classes) or None,
                save_to=run_dir / MODELS if save else None,
                each_bi_encoder=score_suite,
                each_cross_encoder=score_cross_encoder,
                held_out=s.test,
                cross_start=self.teacher_start(benchmark, seed),
                cross_model=self.p.cross_model,
            )
            if save:
                self.mark_models(benchmark, s, seed, run_dir, {n: len(p) for n, (p, _) in cmp.silver.items()})
            return {
                "benchmark": benchmark,
                "split": s.name,
                "seed": seed,
                "scores": cmp.scores,
                "sizes": {"gold": len(s.train), "pool": len(pool), **{n: len(p) for n, (p, _) in cmp.silver.items()}},
                "silver": {n: {"pairs": p, "scores": sc.tolist()} for n, (p, sc) in cmp.silver.items()},
            }

        return self.cached(run_dir, compute)

    def mark_models(self, benchmark: str, split: Split, seed: int, run_dir: Path, silver: dict[str, int]) -> None:
        """Mark each saved bi-encoder with its suite row, seed, run and training pairs (its model card's facts)."""
        gold = f"{len(split.train):,} gold pairs of {BENCHMARKS[benchmark].short} ({split.name})"
        sampling = {CONDITIONS[1]: "random", CONDITIONS[2]: "semantic"}
        for condition in CONDITIONS:
            data, sampled = gold, sampling.get(condition)
            if sampled:
                data += f" + {silver[sampled]:,} {sampled} silver pairs labelled by its cross-encoder"
            row = suite_row(benchmark, condition)
            place = f"{benchmark}/{model_folder_name(condition)}"
            mark(
                run_dir / MODELS / model_folder_name(condition),
                row,
                self.row_label(row),
                seed,
                run_dir.name,
                data,
                self.p.seeds_for(benchmark),
                place,
            )

    @staticmethod
    def _embed(st):
        """A sentence-transformers model as the suite's ``texts -> embeddings`` function."""
        return lambda texts: st.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False)

    @staticmethod
    def _score(kind: str, predict, split: Split) -> float:
        """STS: Spearman x100 of predicted scores vs gold; NLI: accuracy in % of predicted classes."""
        pred = predict(split.test)
        if kind == "sts":
            return spearman(pred, split.test_labels) * 100
        return float((np.asarray(pred) == split.test_labels).mean() * 100)

    def run_label(self, benchmark: str, split: int, seed: int) -> str:
        return f"{benchmark} split {split} seed {seed}"

    def benchmark_runs(self, benchmark: str) -> list[tuple[str, int, int]]:
        """The runs of ``benchmark``: every split, every seed, in (split, seed) order."""
        return [
            (benchmark, i, seed) for i in range(len(self.splits(benchmark))) for seed in self.p.seeds_for(benchmark)
        ]

    @classmethod
    def workload(cls, p: AugSBERTParams) -> list[Work]:
        """Per run (benchmark, split, seed), ``method.compare``: a bi-encoder and a cross-encoder trained on gold (from
        its ``cross_warmup`` start when asked: one warm-up per seed, ``teacher_start``),
        the pool embedded by the gold bi-encoder, both silver sets (pool x ``top_k`` pairs each; counted as pool
        sentences paired at random, since the semantic pairs depend on the trained model) labelled by the
        cross-encoder, two bi-encoders trained on gold + silver (every training in steps of sentence-transformers'
        trainer); the three bi-encoders embed the split's test pairs and the suite tasks, the cross-encoder scores
        the test pairs and the suite's pair tasks; once, the starting model embeds the STS benchmarks' test pairs and
        the suite. A cross-encoder reads a pair as one sequence."""
        study, work, teacher = cls(p, Path()), [], p.teacher_model
        fit = {"train": True, "loop": "sentence-transformers"}
        bi, cross = {**fit, "batch": 2 * p.batch_size}, {**fit, "batch": p.batch_size}  # in texts: two a pair
        runs = study.planned_runs()
        suite_pairs = joined([pair for task in pair_tasks(study.suite_tasks) for pair in zip(*task.pairs())])
        for benchmark, index, _seed in runs:
            split = study.splits(benchmark)[index]
            pool = study.pool(benchmark, split)
            order = np.random.default_rng(0).permutation(len(pool))
            silver = [(pool[i], pool[j]) for _ in range(p.top_k) for i, j in zip(order, np.roll(order, 1))]
            gold, test = texts_of(split.train), texts_of(split.test)
            work += [
                encoding("bi-encoder on gold", p.model, gold, p.epochs, p.max_length, **bi),
                encoding("cross-encoder on gold", teacher, joined(split.train), p.cross_epochs, p.max_length, **cross),
                encoding("the gold bi-encoder embeds the pool", p.model, pool, 1, p.max_length),
                encoding("the cross-encoder labels both silver sets", teacher, joined(silver), 2, p.max_length),
                encoding(
                    "two bi-encoders on gold + silver",
                    p.model,
                    gold + texts_of(silver),
                    2 * p.epochs,
                    p.max_length,
                    **bi,
                ),
                encoding("the test pairs", p.model, test, 3, p.max_length),
                encoding("the cross-encoder scores the test pairs", teacher, joined(split.test), 1, p.max_length),
                encoding("the cross-encoder scores the suite's pair tasks", teacher, suite_pairs, 1, p.max_length),
            ]
        if warmed := {seed for benchmark, _, seed in runs if study.warmup_pairs(benchmark)}:
            warm = joined(study.rqe_warmup[0])
            work.append(encoding("cross-encoder warm-up", teacher, warm, len(warmed), p.max_length, **cross))
        sts = [b for b in p.benchmarks if BENCHMARKS[b].kind == "sts"]
        tests = [text for b in sts for split in study.splits(b) for text in texts_of(split.test)]
        work.append(encoding("the starting model: the STS test pairs", p.model, tests, 1, p.max_length))
        return combined(work) + cls.evaluation_work(p, 1 + 3 * len(runs), max_length=p.max_length)

    @classmethod
    def saved_rows(cls, p) -> list[str]:
        return [suite_row(b, c) for b in p.benchmarks if b in p.save_models for c in CONDITIONS]

    def planned_runs(self) -> list[tuple[str, int, int]]:
        """The arguments of every ``run`` the notebook makes (``kit.batch`` computes them ahead)."""
        return [job for t in self.p.benchmarks for job in self.benchmark_runs(t)]

    def all_runs(self) -> list[dict]:
        return [self.run(*job) for job in bar(self.planned_runs(), desc="runs")]

    # ---- tables -----------------------------------------------------------------
    def results(self) -> pd.DataFrame:
        """One row per (benchmark, split, seed, condition) with its score; STS benchmarks also get the
        untrained starting model once per split (seed None)."""
        rows = [
            {"benchmark": r["benchmark"], "split": r["split"], "seed": r["seed"], "condition": c, "score": v}
            for r in self.all_runs()
            for c, v in r["scores"].items()
        ]
        return pd.DataFrame(rows + self.starting_model())

    @functools.cached_property
    def starting_bi_encoder(self):
        """The untrained starting model as a bi-encoder (the first seed's, for a random alias)."""
        return bi_encoder(self.p.model, self.p.seeds[0], self.p.max_length, self.p.device)

    def starting_model(self) -> list[dict]:
        """Cosine scores of the untrained starting model on each STS split's test pairs (an NLI
        score needs a trained classifier, so NLI benchmarks have none)."""
        sts = [t for t in self.p.benchmarks if BENCHMARKS[t].kind == "sts"]
        if not sts:
            return []
        st = self.starting_bi_encoder
        return [
            {
                "benchmark": t,
                "split": s.name,
                "seed": None,
                "condition": STARTING,
                "score": self._score("sts", lambda pairs: cosine_scores(st, pairs), s),
            }
            for t in sts
            for s in self.splits(t)
        ]

    def table(self, results: pd.DataFrame) -> pd.DataFrame:
        """The paper's Table 2 layout: conditions as rows, benchmarks as columns, mean ± std over seeds
        (k-fold: over folds x seeds); the untrained starting model first (STS only) and the
        labelling cross-encoder's own score last."""
        rows = []
        for condition in (STARTING, *CONDITIONS, "cross-encoder"):
            row = {
                "training data": condition if condition != "cross-encoder" else "cross-encoder (the silver labeller)"
            }
            for benchmark in self.p.benchmarks:
                scores = results[(results.benchmark == benchmark) & (results.condition == condition)].score
                row[BENCHMARKS[benchmark].title] = mean_std(scores) if len(scores) else "n/a"
            rows.append(row)
        return pd.DataFrame(rows)

    def sizes(self) -> pd.DataFrame:
        """Gold pairs, pool sentences and silver-set sizes of each benchmark (first split and seed; k-fold:
        every fold alike)."""
        return pd.DataFrame(
            [
                {"benchmark": BENCHMARKS[t].title, **self.run(t, 0, self.p.seeds_for(t)[0])["sizes"]}
                for t in self.p.benchmarks
            ]
        )

    def silver_labels(self) -> pd.DataFrame:
        """Every silver and gold label of the first split and seed of each benchmark, long format
        (benchmark, set, label): STS scores in [0, 1], NLI class names."""
        rows = []
        for t in self.p.benchmarks:
            benchmark, split = BENCHMARKS[t], self.splits(t)[0]
            r = self.run(t, 0, self.p.seeds_for(t)[0])
            name = (lambda x: float(x)) if benchmark.kind == "sts" else (lambda x: benchmark.classes[int(x)])
            rows += [{"benchmark": t, "set": "gold (train)", "label": name(x)} for x in split.train_labels]
            for n, s in r["silver"].items():
                rows += [
                    {"benchmark": t, "set": f"{n} silver", "label": name(x)}
                    for x in silver_labels(np.asarray(s["scores"]))
                ]
        return pd.DataFrame(rows)

    def label_distribution(self) -> pd.DataFrame:
        """The silver label distributions as a table: STS: share of labels per score fifth and the
        mean; NLI: share of each class."""
        labels, rows = self.silver_labels(), []
        for (t, s), grp in labels.groupby(["benchmark", "set"], sort=False):
            row = {"benchmark": BENCHMARKS[t].title, "set": s, "pairs": len(grp)}
            if BENCHMARKS[t].kind == "sts":
                x = grp.label.astype(float).to_numpy()
                counts = np.histogram(x, bins=5, range=(0, 1))[0] / len(x)
                row.update({f"{lo:.1f}-{lo + 0.2:.1f}": f"{c:.0%}" for lo, c in zip(np.arange(0, 1, 0.2), counts)})
                row["mean"] = f"{x.mean():.2f}"
            else:
                row.update({c: f"{(grp.label == c).mean():.0%}" for c in BENCHMARKS[t].classes})
            rows.append(row)
        return pd.DataFrame(rows).fillna("")

    def silver_examples(self, benchmark: str) -> pd.DataFrame:
        """A few silver pairs of each sampling with their cross-encoder scores (first split and seed)."""
        r, t = self.run(benchmark, 0, self.p.seeds_for(benchmark)[0]), BENCHMARKS[benchmark]
        rows = []
        for n, s in r["silver"].items():
            scores = np.asarray(s["scores"])
            pick = np.linspace(0, len(scores) - 1, min(self.p.examples, len(scores))).astype(int)
            for i in pick:
                a, b = s["pairs"][i]
                label = (
                    f"{scores[i]:.3f} (= {scores[i] * STS_MAX:.2f} on 0-4)"
                    if t.kind == "sts"
                    else f"{t.classes[int(scores[i].argmax())]} (p {scores[i].max():.2f})"
                )
                rows.append({"sampling": n, "sentence 1": a, "sentence 2": b, "cross-encoder label": label})
        return pd.DataFrame(rows)

    def reload_check(self) -> pd.DataFrame:
        """Reload each saved STS bi-encoder in sentence-transformers format and score it again:
        the score must equal the one recorded when it was trained."""
        from sentence_transformers import SentenceTransformer

        rows = []
        for benchmark in self.p.save_models:
            if benchmark not in self.p.benchmarks or BENCHMARKS[benchmark].kind != "sts":
                continue
            split, recorded = (
                self.splits(benchmark)[0],
                self.run(benchmark, 0, self.p.seeds_for(benchmark)[0])["scores"],
            )
            for condition in CONDITIONS:
                folder = self.models_dir(benchmark) / model_folder_name(condition)
                shown = f"{MODELS}/{benchmark}/{model_folder_name(condition)}"  # where the report publishes it
                row = {"benchmark": benchmark, "model": shown, "recorded": recorded[condition], "reloaded": None}
                if folder.is_dir():
                    st = SentenceTransformer(str(folder), device="cpu", model_kwargs=FP32_WEIGHTS)
                    row["reloaded"] = self._score("sts", lambda p: cosine_scores(st, p), split)
                rows.append(row)
        return pd.DataFrame(rows)

    # ---- the evaluation suite (kit.evaluation) -----------------------------------
    def condition_outputs(self, benchmark: str, split: int, seed: int) -> dict[str, suite_rows.RunOutputs]:
        """A run's suite outputs per condition (``StudyBase.suite_outputs`` of each condition's file, which
        computes the run again when one is unusable) and, when the suite has pair tasks, its cross-encoder's on
        them (``CROSS_ENCODER``: read first, by the same rule on those tasks alone, so that a run computed again for
        it gives every condition's outputs too)."""
        run_dir = self._run_dir(benchmark, split, seed)
        self.run(benchmark, split, seed)
        rerun = functools.partial(self.run, benchmark, split, seed)
        out = {}
        if self.pair_tasks:
            read = functools.partial(suite_rows.load_outputs, tasks=self.pair_tasks)
            out[CROSS_ENCODER] = self.run_artefact(run_dir, suite_file(CROSS_ENCODER), read, rerun)
        return {**{c: self.suite_outputs(run_dir, rerun, suite_file(c)) for c in CONDITIONS}, **out}

    @functools.cached_property
    def pair_tasks(self) -> list[SuiteTask]:
        """The suite tasks the cross-encoders are scored on (``pair_tasks``)."""
        return pair_tasks(self.suite_tasks)

    def trains_on(self, benchmark: str, pairs: set[Pair]) -> bool:
        """Whether a bi-encoder of ``benchmark`` (any run) trained on one of ``pairs`` (unordered): a gold pair of
        a split, or a silver pair of a run (read from the runs only when no gold pair is one)."""
        if pairs & {unordered(a, b) for split in self.splits(benchmark) for a, b in split.train}:
            return True
        if benchmark not in self._silver_pairs:
            self._silver_pairs[benchmark] = {
                unordered(a, b)
                for job in self.benchmark_runs(benchmark)
                for silver in self.run(*job)["silver"].values()
                for a, b in silver["pairs"]
            }
        return bool(pairs & self._silver_pairs[benchmark])

    def left_out(self) -> dict[str, list[str]]:
        """Suite task -> the benchmarks whose bi-encoders trained on some of its pairs (k-fold trains on
        BIOSSES test pairs); their rows are left out of that suite task. A suite task declared as study 2's training
        data (``seen_by``, BIOSSES all pairs) keeps every row: it is reported apart as a whole."""
        out: dict[str, list[str]] = {}
        for suite_task in self.suite_tasks:
            seen = [b for b in self.p.benchmarks if self.left_out_of(b, suite_task)]
            if seen:
                out[suite_task.name] = seen
        return out

    def left_out_of(self, benchmark: str, task: SuiteTask) -> bool:
        """Whether ``benchmark``'s rows are left out of the suite ``task`` (``left_out``); on the held-out task, every
        benchmark's but k-fold's."""
        if task.name == HELD_OUT:
            return benchmark != KFOLD
        return not task.seen("augmented_sbert") and self.trains_on(benchmark, item_pairs(task))

    def row_outputs(self) -> dict[str, list[suite_rows.RunOutputs]]:
        """The starting model's outputs, and each condition's bi-encoders of every benchmark over the benchmark's
        runs (its splits and seeds, paired run by run with the other conditions of the benchmark); when the suite has
        pair tasks, each benchmark's cross-encoders too (``<benchmark>: cross-encoder``, on those tasks alone). With
        the held-out task (``held_out``), the k-fold rows get one more run per seed holding it alone (its folds'
        outputs pooled, ``cross_fitted``), and the starting model its all-pairs outputs there."""
        start = suite_rows.score_run(self._embed(self.starting_bi_encoder), self.suite_tasks)
        outputs = {STARTING: [start]}
        for benchmark in self.p.benchmarks:
            runs = [self.condition_outputs(*job) for job in self.benchmark_runs(benchmark)]
            outputs.update({suite_row(benchmark, c): [r[c] for r in runs] for c in runs[0]})
            if benchmark == KFOLD and self.held_out:
                self.check_held_out()
                for condition in runs[0]:
                    outputs[suite_row(benchmark, condition)] += self.held_out_runs([r[condition] for r in runs])
        if self.held_out:
            start[HELD_OUT] = start[ALL_PAIRS]
        return outputs

    # ---- the held-out task: every BIOSSES pair scored by the k-fold model that did not train on it ----------------
    @functools.cached_property
    def held_out(self) -> SuiteTask | None:
        """The held-out task (``kit.studies.augmented_sbert.held_out``) when the run has the k-fold benchmark and its
        suite scores all BIOSSES pairs (``biosses-all``), else None."""
        all_pairs = next((t for t in self.suite_tasks if t.name == ALL_PAIRS), None)
        if KFOLD not in self.p.benchmarks or all_pairs is None:
            return None
        return held_out_task(all_pairs, self.held_out_items(all_pairs))

    @functools.cached_property
    def report_tasks(self) -> list[SuiteTask]:
        """The tasks of the suite report: the suite's, and the held-out task when the run has it."""
        return [*self.suite_tasks, *([self.held_out] if self.held_out else [])]

    def held_out_items(self, all_pairs: SuiteTask | None = None) -> list[np.ndarray]:
        """Each fold's test pairs as indices into the all-pairs task's items (``all_pairs``; default: the held-out
        task, which has its items). ValueError naming ``biosses_path`` when a fold's pair is not one of them (the folds
        were read from another BIOSSES file)."""
        index = {pair: i for i, pair in enumerate((all_pairs or self.held_out).item_texts())}
        out = []
        for split in self.splits(KFOLD):
            missing = [pair for pair in split.test if pair not in index]
            if missing:
                raise ValueError(
                    f"parameter 'biosses_path': {len(missing)} k-fold test pair(s) are not pairs of {ALL_PAIRS}, "
                    "so no fold's pairs can be scored there"
                )
            out.append(np.array([index[pair] for pair in split.test]))
        return out

    def check_held_out(self) -> None:
        """ValueError when a k-fold run trained on a pair its fold holds out (a silver pair equal to a test pair)."""
        for benchmark, split, seed in self.benchmark_runs(KFOLD):
            test = {unordered(a, b) for a, b in self.splits(KFOLD)[split].test}
            silver = {
                unordered(a, b) for s in self.run(benchmark, split, seed)["silver"].values() for a, b in s["pairs"]
            }
            if test & silver:
                raise ValueError(
                    f"{self.run_label(benchmark, split, seed)} trained on {len(test & silver)} held-out pairs"
                )

    def held_out_runs(self, runs: list[suite_rows.RunOutputs]) -> list[suite_rows.RunOutputs]:
        """A k-fold row's runs (``benchmark_runs`` order: fold by fold, each over its seeds) as one run per seed on the
        held-out task (``cross_fitted``)."""
        seeds, items = len(self.p.kfold_seeds), self.held_out_items()
        return [cross_fitted(runs[s::seeds], items, self.held_out.items) for s in range(seeds)]

    def row_label(self, row: str) -> str:
        """The starting model; ``<condition> (<benchmark>)``; ``cross-encoder teacher (<benchmark>)``, naming its start
        when ``cross_model``."""
        if row == STARTING:
            return row
        benchmark, condition = row.split(": ", 1)
        name = condition
        if condition == CROSS_ENCODER:
            name = "cross-encoder teacher" + ("" if self.p.cross_model is None else f" from {self.p.cross_model}")
        return f"{name} ({BENCHMARKS[benchmark].short})"

    def paper_effect(self) -> suite_rows.PaperEffect:
        return suite_rows.PaperEffect(
            "biosses-test", 17.1, "gold + semantic-search silver pairs over gold alone on BIOSSES (88.5 vs 71.4)"
        )

    def baseline_of(self, row: str) -> str | None:
        """Each silver condition against gold of the same benchmark, gold against the untrained starting model; a
        cross-encoder against nothing (it enters a report as the positive control alone, ``control``)."""
        if row == STARTING:
            return None
        benchmark, condition = row.split(": ", 1)
        if condition == CROSS_ENCODER:
            return None
        return STARTING if condition == CONDITIONS[0] else suite_row(benchmark, CONDITIONS[0])

    def control(self) -> suite_rows.Control | None:
        """Augmented SBERT's premise: the cross-encoder teacher beats the gold-only bi-encoder student it labels
        silver pairs for, on held-out gold pairs. ``<b>: cross-encoder`` against ``<b>: gold`` on the primary's task,
        ``<b>`` the primary's benchmark; without a primary, on the paper's task (``paper_effect``), ``<b>`` the
        first benchmark whose rows are scored there, else on the held-out task with k-fold's rows. None when the
        cross-encoder row cannot be scored on that task (not a pair task of the suite, a task whose data study 2
        trains on, or the benchmark trained on its pairs: ``rows_left_out``): a teacher would be scored on its own
        training pairs. Reads only the runs of the benchmarks it considers (``trains_on``)."""
        primary = self.primary()
        if primary is not None:
            task = primary.task
            named = [row.split(": ", 1)[0] for row in (primary.row, primary.baseline) if row != STARTING]
            candidates = [b for b in named if b in self.p.benchmarks][:1]
        else:
            task, candidates = self.paper_effect().task, list(self.p.benchmarks)
        scored = next(
            (t for t in pair_tasks(self.report_tasks) if t.name == task and not t.seen("augmented_sbert")), None
        )
        benchmark = next((b for b in candidates if scored and not self.left_out_of(b, scored)), None)
        if benchmark is None and primary is None and self.held_out:
            task, benchmark = HELD_OUT, KFOLD
        if benchmark is None:
            return None
        return suite_rows.Control(
            suite_row(benchmark, CROSS_ENCODER), suite_row(benchmark, CONDITIONS[0]), task, PREMISE, ""
        )

    def row_fixed(self, row: str) -> bool:
        """The untrained starting model: one set of outputs."""
        return row == STARTING

    def trains(self, row: str) -> bool:
        """A condition's or the teacher's row of one of this run's benchmarks (``<b>: <condition>``)."""
        return row != STARTING and row.split(": ", 1)[0] in self.p.benchmarks

    def row_run_count(self, row: str, task: str | None = None) -> int:
        """The starting model once; a condition's row over its benchmark's runs (splits x seeds); a k-fold row on the
        held-out task over its seeds."""
        if row == STARTING:
            return 1
        benchmark = row.split(": ", 1)[0]
        return (
            len(self.p.kfold_seeds) if (task, benchmark) == (HELD_OUT, KFOLD) else len(self.benchmark_runs(benchmark))
        )

    def rows_left_out(self) -> dict[str, list[str]]:
        """The rows of the benchmarks ``left_out`` of each suite task (their training pairs include its pairs), their
        cross-encoders' included; the rows of every other benchmark than k-fold out of the held-out task (they have no
        outputs there); and every cross-encoder row out of the tasks that are not pair tasks (retrieval, probes:
        ``pair_tasks``)."""
        others = (
            {HELD_OUT: [b for b in self.p.benchmarks if self.left_out_of(b, self.held_out)]} if self.held_out else {}
        )
        out = {
            task: [suite_row(benchmark, c) for benchmark in benchmarks for c in (*CONDITIONS, CROSS_ENCODER)]
            for task, benchmarks in {**self.left_out(), **others}.items()
            if benchmarks
        }
        paired = {task.name for task in pair_tasks(self.report_tasks)}
        for task in self.report_tasks:
            if task.name not in paired:
                out.setdefault(task.name, []).extend(suite_row(b, CROSS_ENCODER) for b in self.p.benchmarks)
        return out

    def suite_report(self) -> SuiteReport:
        """The base suite report on ``report_tasks`` (the held-out task with the suite's)."""
        return self.row_report(self.row_outputs(), self.report_tasks, self.SUITE_TITLE)

    def report_of(self, evidence: suite_rows.Evidence, tasks: list[SuiteTask], title: str) -> SuiteReport:
        """The base report, which says which benchmarks' rows are ``left_out`` of which task, with the positive
        control (``control``) first."""
        return SuiteReport(
            evidence,
            tasks,
            self.notebook,
            self.selected_on(),
            title=title,
            correction=self.p.correction,
            paper_effect=self.paper_effect(),
            primary=self.primary(),
            left_out=self.left_out(),
            **self.control_of(tasks),
        )
