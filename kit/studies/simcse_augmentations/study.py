"""Study 1's orchestration: each (row, seed, corpus share) trained once and cached, the report's tables,
the verdict computed from them, and the record.

``language: en`` trains on PubMed sentences and evaluates on BIOSSES; ``language: zh`` trains on the
pooled ChineseBLUE training sentences and evaluates with the ChineseBLUE probes, checkpoints being
selected on the cMedQQ dev cosine view (``chineseblue``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.augment import make_augmenter
from kit.core.compute import EVALUATION_LENGTH, Work, checkpoint_evaluations, contrastive_training, encoding
from kit.core.files import write_atomic
from kit.core.fingerprint import digest
from kit.core.losses import instance_weights
from kit.core.models import Encoder
from kit.core.objectives import SimCSEWithMLMObjective
from kit.core.train import train_contrastive
from kit.core.whitening import Whitened, fit_whitening
from kit.data import (
    CHINESEBLUE,
    PUBMED_SENTENCES,
    chineseblue_corpus,
    load_biosses,
    load_chineseblue,
    load_pubmed_sentences,
)
from kit.evaluation.probes import ProbeFit, ProbeTask, chineseblue_probes
from kit.evaluation.retrieval import nearest_neighbours, paraphrase_hit_at_1
from kit.evaluation.rows import PaperEffect, SuiteReport
from kit.evaluation.sts import sts_report
from kit.evaluation.task import Task
from kit.evaluation.tasks import select
from kit.report.tables import summarize
from kit.studies.simcse_augmentations.chineseblue import (
    chineseblue_table,
    cmedqq_pairs,
    probe_setup,
    source_task,
)
from kit.studies.simcse_augmentations.params import ROWS, Row, SimCSEParams
from kit.study import TRAINING_FREE_POOLERS, StudyBase, best_row

METRICS = ("spearman_test", "spearman_all", "spearman_dev", "alignment", "uniformity")


EXAMPLE_EMBEDDINGS = "example_embeddings.npy"
"""A run's embeddings of the retrieval examples and the map sentences (fp16), beside its result."""


class Study(StudyBase):
    """Runs and caches the study's trainings; every public method returns plain tables."""

    p: SimCSEParams
    TRAINING_FREE_CONTROL = "simcse"

    def __init__(self, params: SimCSEParams, report_dir: str | Path):
        super().__init__(params, report_dir)
        if params.language == "en":
            self.sts, self.eval_name, self.positive_threshold = load_biosses(params.biosses_path), "BIOSSES", 4.0
            full = load_pubmed_sentences(params.corpus_path)
            held_out = params.map_sentences
            self.probe_tasks = []
        else:
            self.sts = cmedqq_pairs(params.cosine_view_pairs, params.corpus_seed)
            self.eval_name, self.positive_threshold = "cMedQQ", 1.0
            full = load_pubmed_sentences(params.corpus_path) if params.corpus_path else chineseblue_corpus()
            held_out = 0
            self.probe_tasks = chineseblue_probes(params.probe_train_size, params.probe_eval_size, params.corpus_seed)
        order = np.random.default_rng(params.corpus_seed).permutation(len(full))
        # Sentences for the embedding map are held out from every training corpus share.
        pool, held = order[: len(full) - held_out], order[len(full) - held_out :]
        self.corpus = [full[i] for i in pool[: min(params.corpus_size or len(pool), len(pool))]]
        self.map_sentences = [full[i] for i in held]
        self.retrieval_texts, self.partners = self._retrieval_set()
        self.example_texts = self.retrieval_texts + self.map_sentences
        # Everything a run reads: the corpus as sampled, the evaluation pairs, the probe tasks, the retrieval set.
        probes = [task.parts for task in self.probe_tasks] or None
        self.data_digest = digest(self.corpus, self.sts, probes, self.example_texts, self.partners)

    def _retrieval_set(self) -> tuple[list[str], dict[int, set[int]]]:
        """The sentences searched in the retrieval table and metric, and each one's gold partners
        (BIOSSES pairs scored >= 4; cMedQQ test pairs labelled 1, the whole test set)."""
        if self.p.language == "en":
            s1, s2, positive = self.sts.sentence1, self.sts.sentence2, self.sts.scores >= self.positive_threshold
        else:
            qq = load_chineseblue("cMedQQ", "test")
            s1, s2, positive = qq.texts[0], qq.texts[1], qq.labels == "1"
        texts = list(dict.fromkeys(s1 + s2))
        row = {t: i for i, t in enumerate(texts)}
        partners: dict[int, set[int]] = {}
        for a, b, pos in zip(s1, s2, positive):
            if pos and a != b:
                partners.setdefault(row[a], set()).add(row[b])
                partners.setdefault(row[b], set()).add(row[a])
        return texts, partners

    @classmethod
    def workload(cls, p: SimCSEParams) -> list[Work]:
        """Every distinct run (the table's rows at their seeds, the few-shot runs; a few-shot run on the whole corpus
        at a table seed is that table run): a trained one is ``steps`` contrastive steps, the instance-weighting rows'
        frozen starting model embedding each batch inside them, and a checkpoint evaluation (the STS set and the
        ``select_on`` tasks) before the first step, every ``eval_every`` steps and after the last; after training,
        every run embeds the STS set and the example texts (and in Chinese fits the probes on their examples),
        and a run on the whole corpus scores the suite; an untrained row scores the selection data once (the positive
        control's choice) and a whitening row embeds ``whitening_sentences`` corpus sentences; the untrained rows of
        one seed share their forward passes (``training_free_encoder``), so they count as one model."""
        study = cls(p, Path())
        runs = {(name, seed, 100.0) for name, seeds in study.row_seeds().items() for seed in seeds}
        runs |= {(name, seed, float(pct)) for name, seed, pct in study.fewshot_runs()}
        trained = [name for name, _, _ in runs if ROWS[name].trained]
        starts = len({seed for name, seed, _ in runs if not ROWS[name].trained})  # one shared start per seed
        weighted = sum(ROWS[name].iw for name in trained)
        sts = list(dict.fromkeys(study.sts.sentence1 + study.sts.sentence2))
        work = [contrastive_training(p.model, len(trained), p.steps, p.batch_size, p.max_length)]
        if p.mlm_weight is not None:
            masked = "auxiliary MLM: a masked copy of each batch, forward and backward"
            work.append(Work(masked, p.model, len(trained) * p.steps * p.batch_size, p.max_length, True, loop="kit"))
        if weighted:
            frozen = "instance weighting: the frozen starting model embeds each batch"
            work.append(Work(frozen, p.model, weighted * p.steps * p.batch_size, p.max_length, False, loop="kit"))
        after = "after training: the STS set and the example texts"
        work.append(encoding(after, p.model, sts + study.example_texts, len(trained) + starts, EVALUATION_LENGTH))
        probes = [text for task in study.probe_tasks for texts in task.texts() for text in texts]
        if probes:
            work.append(
                encoding(
                    "after training: the probes' examples", p.model, probes, len(trained) + starts, p.probe_max_length
                )
            )
        whitened = len({seed for name, seed, _ in runs if ROWS[name].whitening})
        rung_b = sum(study.whitens_trained(name) for name, _, percent in runs if percent == 100)
        whitened += rung_b
        if whitened:
            sample = study.corpus[: p.whitening_sentences]
            work.append(encoding("whitening: corpus sentences embedded", p.model, sample, whitened, EVALUATION_LENGTH))
        work += cls.whitened_control_work(p, rung_b)
        whole = sum(percent == 100 and ROWS[name].trained for name, _, percent in runs) + starts
        evaluations = len(trained) * checkpoint_evaluations(p.steps, p.eval_every) + starts  # + the control's choice
        return work + cls.evaluation_work(p, whole, evaluations, sts, [task.name for task in study.probe_tasks])

    # ---- runs -----------------------------------------------------------------
    def _run_dir(self, row: Row, seed: int, percent: float) -> Path:
        p = self.p
        settings = {
            "row": asdict(row),
            "seed": seed,
            "percent": percent,
            "model": p.model,
            "pooler": p.pooler,
            "train": p.row_config(row, seed).keyed() if row.trained else None,
            "language": p.language,
            "crop_placeholder": p.crop_placeholder,
            "probe_max_length": p.probe_max_length,
            "suite": p.suite if percent == 100 else None,
            "select_on": p.select_on,
        }
        if row.whitening:
            settings["whitening"] = [p.whitening_sentences, p.whitening_dim, EVALUATION_LENGTH]  # the length it reads
        if row.trained and p.mlm_weight is not None:
            settings["mlm_weight"] = p.mlm_weight  # only then, so that other runs keep their keys
        if percent == 100 and self.whitens_trained(row.name):
            settings["whitened"] = self.whitened_settings()  # only then, so that other runs keep their keys
        if self.saves_model(row, seed, percent):
            settings["save_model"] = "in its run folder"  # only then, so that other runs keep their keys
        return self.run_dir(f"{row.name}-seed{seed}-{percent:g}pct", settings, self.data_digest)

    def run(self, row_name: str, seed: int, percent: float = 100.0) -> dict:
        """Train (or load the cached result of) one row at one seed on a share of the corpus."""
        row = ROWS[row_name]
        run_dir = self._run_dir(row, seed, percent)

        def compute() -> dict:
            pooler = row.pooler or self.p.pooler
            if row.trained:
                encoder = Encoder.from_pretrained(self.p.model, pooler, seed=seed)
            else:
                encoder = self.training_free_encoder(pooler, seed)
            history = None
            if row.whitening:
                p = self.p
                whitening = fit_whitening(
                    encoder, self.corpus, p.whitening_sentences, p.corpus_seed + 1, p.whitening_dim
                )
                encoder = Whitened(encoder, whitening)
            if row.trained:
                corpus = self.corpus[: max(self.p.batch_size, math.ceil(len(self.corpus) * percent / 100))]
                aug = None
                if row.augmenter:
                    extra = {"placeholder": self.p.crop_placeholder} if row.augmenter == "crop" else {}
                    aug = make_augmenter(row.augmenter, row.ratio, language=self.p.language, **extra)
                config = self.p.row_config(row, seed)
                objective = (
                    None
                    if self.p.mlm_weight is None
                    else SimCSEWithMLMObjective(encoder, config, self.p.mlm_weight, aug)
                )
                history = train_contrastive(
                    encoder,
                    corpus,
                    config,
                    self._dev_evaluator,
                    aug,
                    run_dir,
                    desc=self.run_label(row_name, seed, percent),
                    objective=objective,
                    selection_metric="selection",
                )
            probes = self.fit_probes(encoder)
            if percent == 100:
                self.score_suite(encoder, run_dir, {t.name: {t.f1: fit.predictions} for t, fit in probes})
            if percent == 100 and self.whitens_trained(row_name):
                self.score_trained_whitened(encoder, run_dir, self.corpus)
            if self.saves_model(row, seed, percent):
                self.save_model(encoder, row_name, seed, run_dir)
            embeddings = encoder.encode(self.example_texts, show_progress=False).astype(np.float16)
            write_atomic(run_dir / EXAMPLE_EMBEDDINGS, lambda tmp: np.save(tmp, embeddings))
            metrics = sts_report(encoder, self.sts, positive_threshold=self.positive_threshold)
            if not row.trained:  # what rung (c) of the premise ladder chooses its training-free read-out on
                metrics.update(self.selection(encoder, metrics["spearman_dev"]))
            for task, fit in probes:
                metrics.update({source_task(task): fit.test, f"{source_task(task)}_dev": fit.dev})
            return {
                "method": row_name,
                "label": row.label,
                "seed": seed,
                "percent": percent,
                "metrics": metrics,
                "history": asdict(history) if history else None,
            }

        return self.cached(run_dir, compute)

    def training_free_poolers(self) -> list[str]:
        """The poolers of the starting-model row and the positive control's candidates in the table."""
        rows = (ROWS[name] for name, _ in self.table_runs())
        return list(dict.fromkeys(row.pooler or self.p.pooler for row in rows if not row.trained))

    def run_label(self, row_name: str, seed: int, percent: float = 100.0) -> str:
        """``simcse seed 0``, or for a few-shot run ``simcse seed 0 on 10% of the corpus``."""
        return f"{row_name} seed {seed}" + (f" on {percent:g}% of the corpus" if percent != 100 else "")

    def run_trains(self, row_name: str, seed: int, percent: float = 100.0) -> bool:
        """The starting model and the positive control's candidates do not train."""
        return ROWS[row_name].trained

    def saves_model(self, row: Row, seed: int, percent: float) -> bool:
        """``save_models``: the first seed of every trained table row."""
        return self.p.save_models and row.trained and seed == self.p.seeds[0] and percent == 100

    def _dev_evaluator(self, encoder: Encoder) -> dict[str, float]:
        """The cosine view's metrics and the selection columns (``StudyBase.selection``)."""
        metrics = sts_report(encoder, self.sts, positive_threshold=self.positive_threshold)
        return {**metrics, **self.selection(encoder, metrics["spearman_dev"])}

    def fit_probes(self, encoder: Encoder) -> list[tuple[ProbeTask, ProbeFit]]:
        """The zh probe tasks on the encoder's embeddings of all their texts, encoded together once at
        ``probe_max_length``: each probe's dev and test F1 (the table) and test predictions (the suite)."""
        if not self.probe_tasks:
            return []
        texts = list(dict.fromkeys(t for task in self.probe_tasks for t in task.texts()[0]))
        emb = encoder.encode(texts, max_length=self.p.probe_max_length, show_progress=False)
        row = {t: i for i, t in enumerate(texts)}
        return [(task, task.fit((emb[[row[t] for t in task.texts()[0]]],))) for task in self.probe_tasks]

    @functools.cached_property
    def suite_tasks(self) -> list[Task]:
        """The ``suite`` tasks and, for zh, the study's probe tasks, on its own subsamples (in place of the
        declared probes of the same names, should ``suite`` name them)."""
        own = {task.name for task in self.probe_tasks}
        return [*(t for t in select(self.p.suite) if t.name not in own), *self.probe_tasks]

    def example_embeddings(self, row_name: str, seed: int) -> np.ndarray:
        """A run's embeddings of ``example_texts`` (the retrieval examples and the map); when they are missing
        or damaged, the run's result is set aside and the run computed again."""
        self.run(row_name, seed)
        run_dir = self._run_dir(ROWS[row_name], seed, 100.0)
        read = lambda file: np.load(file, allow_pickle=False).astype(np.float32)  # noqa: E731
        return self.run_artefact(run_dir, EXAMPLE_EMBEDDINGS, read, lambda: self.run(row_name, seed))

    def paper_effect(self) -> PaperEffect | None:
        """The paper's BIOSSES gain of random crop 10% over SimCSE (none for the Chinese tasks)."""
        if self.p.language != "en":
            return None
        return PaperEffect(
            "biosses-all", 4.34, "random crop 10% over unsup-SimCSE on BIOSSES (85.36 vs 81.02, bert-base-uncased)"
        )

    def baseline_of(self, name: str) -> str | None:
        """The row each row is compared with: SimCSE with the starting model; MixCSE-IW with MixCSE alone when both
        are in the table (what instance weighting adds, the ablation of Zhou et al. 2022); every other trained row
        with SimCSE (or with the starting model when SimCSE is not in the table); an untrained row with none (the
        premise ladder compares SimCSE with them: ``kit.study.StudyBase.rungs``)."""
        rows = self.p.rows
        if not ROWS[name].trained:
            return None
        if name == "mixcse_iw" and "mixcse_iw_no_iw" in rows:
            return "mixcse_iw_no_iw"
        if name == "simcse" or "simcse" not in rows:
            return "zero_shot" if "zero_shot" in rows else None
        return "simcse"

    def control_baseline(self) -> str:
        """``zero_shot`` when the table has it and it is the start under the control's pooler (its pair with SimCSE,
        ``baseline_of``, is then the control, compared once), else ``starting_row``."""
        pooler = TRAINING_FREE_POOLERS[self.starting_row][0]
        return "zero_shot" if "zero_shot" in self.p.rows and self.p.pooler == pooler else self.starting_row

    def own_dev(self) -> tuple[str, list[str]]:
        dev = self.sts.subset("dev")
        return f"the {self.eval_name} dev split of the cosine view ({len(dev)} pairs)", dev.sentence1 + dev.sentence2

    def row_label(self, row: str) -> str:
        return ROWS[row].label

    def training_data(self, row: str) -> str:
        if self.p.corpus_path:
            what = f"sentences of {self.p.corpus_path}"
        elif self.p.language == "en":
            what = f"PubMed sentences ({PUBMED_SENTENCES.source.split(' : ')[0]})"
        else:
            what = f"ChineseBLUE training sentences ({CHINESEBLUE['cMedQQ'].spec.source.split(' : ')[0]})"
        view = f", its positive view made by {ROWS[row].label.lstrip('+ ')}" if ROWS[row].augmenter else ""
        return f"{len(self.corpus):,} {what}, unlabeled{view}"

    def row_run_dir(self, row: str, seed: int) -> Path:
        return self._run_dir(ROWS[row], seed, 100.0)

    def instance_weighting_effect(self, n_batches: int = 40) -> dict:
        """How many in-batch negatives instance weighting removes: the share of off-diagonal
        pairs with cos >= phi under the frozen starting model (the complementary model), on
        random training batches. A share near 0 means the IW rows equal their non-IW twins."""
        import torch

        b = self.p.batch_size
        n = min(n_batches, len(self.corpus) // b) * b
        idx = np.random.default_rng(self.p.corpus_seed).choice(len(self.corpus), n, replace=False)
        encoder = Encoder.from_pretrained(self.p.model, self.p.pooler, seed=self.p.seeds[0])
        emb = torch.from_numpy(
            encoder.encode([self.corpus[i] for i in idx], max_length=self.p.max_length, show_progress=False)
        )
        removed = sum(int((instance_weights(emb[i : i + b], self.p.iw_phi) == 0).sum()) for i in range(0, n, b))
        pairs = (n // b) * b * (b - 1)
        return {
            "phi": self.p.iw_phi,
            "batches": n // b,
            "pairs": pairs,
            "removed": removed,
            "share": removed / max(pairs, 1),
        }

    # ---- tables ---------------------------------------------------------------
    def row_seeds(self) -> dict[str, list[int]]:
        """Each table row's seeds (one for an untrained row), the control's rows included (``table_rows``)."""
        return {name: list(self.p.seeds if ROWS[name].trained else self.p.seeds[:1]) for name in self.p.table_rows()}

    def row_fixed(self, row: str) -> bool:
        """The starting model (no training): one set of outputs."""
        return not ROWS[row].trained

    def fewshot_runs(self) -> list[tuple[str, int, float]]:
        """(row, seed, share of the corpus in %) of every few-shot run."""
        return [
            (name, seed, float(pct))
            for name in self.p.fewshot_rows
            for pct in self.p.fewshot_percents
            for seed in self.p.fewshot_seeds
        ]

    @classmethod
    def saved_rows(cls, p) -> list[str]:
        return [name for name in p.rows if ROWS[name].trained] if p.save_models else []

    def planned_runs(self) -> list[tuple]:
        """The arguments of every ``run`` the notebook makes (``kit.batch`` computes them ahead)."""
        return [*self.table_runs(), *self.fewshot_runs()]

    def results(self) -> pd.DataFrame:
        """One row per (row, seed): BIOSSES metrics at the selected checkpoint, and its selection scores (a trained
        row's from its history, where its result holds none)."""
        rows = []
        for name, seed in self.table_runs():
            r = self.run(name, seed)
            history = r["history"]
            best = history["best_step"] if history else 0
            chosen = next((h for h in history["rows"] if h["step"] == best), {}) if history else {}
            selection = chosen.get(history["selection_metric"], float("nan")) if history else float("nan")
            rows.append(
                {"method": name, "label": r["label"], "seed": seed, "best_step": best, "selection": selection}
                | {k: v for k, v in chosen.items() if k.startswith("dev ")}
                | r["metrics"]
            )
        return pd.DataFrame(rows)

    def histories(self) -> pd.DataFrame:
        """Every evaluation of every trained run: the curves behind the table."""
        rows = []
        for name in self.p.rows:
            if ROWS[name].trained:
                for seed in self.p.seeds:
                    for h in self.run(name, seed)["history"]["rows"]:
                        rows.append({"method": name, "label": ROWS[name].label, "seed": seed, **h})
        return pd.DataFrame(rows)

    def fewshot(self) -> pd.DataFrame:
        """Spearman at each corpus share, same number of steps (the paper's few-shot curve)."""
        rows = []
        for name, seed, pct in self.fewshot_runs():
            r = self.run(name, seed, pct)
            n = max(self.p.batch_size, math.ceil(len(self.corpus) * pct / 100))
            rows.append(
                {
                    "method": name,
                    "label": ROWS[name].label,
                    "percent": pct,
                    "sentences": n,
                    "seed": seed,
                    **r["metrics"],
                }
            )
        return pd.DataFrame(rows)

    def retrieval(self, methods: list[str], k: int = 2) -> pd.DataFrame:
        """Top-k neighbours of evenly spaced queries that have a gold partner, under each method
        (first seed), side by side as in the MixCSE paper's Table 7; ``partner``: yes for a gold partner, else no."""
        texts, with_partner = self.retrieval_texts, sorted(self.partners)
        step = max(1, len(with_partner) // max(1, self.p.retrieval_queries))
        queries = with_partner[::step][: self.p.retrieval_queries]
        rows = []
        for name in methods:
            emb = self.example_embeddings(name, self.p.seeds[0])[: len(texts)]
            for q, hits in zip(queries, nearest_neighbours(emb, queries, k)):
                for rank, (cid, score) in enumerate(hits, 1):
                    rows.append(
                        {
                            "query": texts[q],
                            "method": ROWS[name].label,
                            "rank": rank,
                            "neighbour": texts[cid],
                            "cosine": round(score, 3),
                            "partner": "yes" if cid in self.partners[q] else "no",
                        }
                    )
        return pd.DataFrame(rows)

    def retrieval_metric(self) -> pd.DataFrame:
        """Paraphrase hit@1 over the whole retrieval set for every (row, seed): is a query's nearest
        other sentence one of its gold partners? ``chance`` is what a random ranking reaches."""
        rows = []
        for name, seeds in self.row_seeds().items():
            for seed in seeds:
                emb = self.example_embeddings(name, seed)[: len(self.retrieval_texts)]
                rows.append(
                    {
                        "method": name,
                        "label": ROWS[name].label,
                        "seed": seed,
                        **paraphrase_hit_at_1(emb, self.partners),
                    }
                )
        return pd.DataFrame(rows)

    def probe_setup(self) -> pd.DataFrame:
        """What each zh probe is trained, selected and scored on (``chineseblue.probe_setup``)."""
        return probe_setup(self.probe_tasks)

    @property
    def probe_text_count(self) -> int:
        return len({t for task in self.probe_tasks for t in task.texts()[0]})

    def example_sources(self) -> list[str]:
        """Where each example text comes from (legend of the embedding map)."""
        label = "cMedQQ test" if self.p.language == "zh" else self.eval_name
        return [label] * len(self.retrieval_texts) + ["PubMed (held out)"] * len(self.map_sentences)

    def embedding_map_inputs(self, rows: Sequence[str], seed: int) -> tuple[dict[str, np.ndarray], list[str]]:
        """Each row's embeddings of the texts the embedding map draws (by its label) and their sources: every
        example text, or a sample of ``map_points`` of them drawn with ``corpus_seed`` (UMAP's layout time grows
        with its points: in Chinese the example texts are all 3,453 cMedQQ test questions)."""
        n, cap = len(self.example_texts), self.p.map_points
        shown = np.arange(n)
        if cap and n > cap:
            shown = np.sort(np.random.default_rng(self.p.corpus_seed).choice(n, cap, replace=False))
        sources = self.example_sources()
        maps = {self.row_label(r): self.example_embeddings(r, seed)[shown] for r in rows}
        return maps, [sources[i] for i in shown]

    def tables(self, results: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """The study's result tables, titled; the first is the headline table."""
        cosine_title = f"{self.eval_name}: cosine Spearman x100 (test, all pairs, dev), alignment and uniformity" + (
            " of the cosine view (0/1 labels as scores)" if self.p.language == "zh" else ""
        )
        tables = {cosine_title: summarize(results, METRICS)}
        if self.p.language == "zh":
            tables = {"ChineseBLUE: probe scores x100 on test": chineseblue_table(results), **tables}
        return tables

    def headline_task(self, suite: SuiteReport, column: str | None = None) -> str | None:
        """``StudyBase.headline_task`` in English; None in Chinese: no suite task holds just the cosine view's pairs."""
        return super().headline_task(suite, column) if self.p.language == "en" else None

    def best_trained_method(self, results: pd.DataFrame) -> str:
        """The trained row with the highest mean selection score at its selected checkpoints (what ``select_on``
        names: dev Spearman by default, RQE validation AP, ...; never a test split); a tie goes to the row
        listed first (SimCSE before its variants)."""
        return best_row(results, "selection", [m for m in results.method.unique() if ROWS[m].trained])

    def uses_instance_weighting(self) -> bool:
        return any(ROWS[r].iw for r in self.p.rows)

    def reference_score(self, results: pd.DataFrame, metric: str = "spearman_all") -> float | None:
        """The starting model's score, when the zero-shot row is in the table."""
        rows = results.loc[results.method == "zero_shot", metric]
        return float(rows.mean()) if len(rows) else None

    def summarize_fewshot(self, fewshot: pd.DataFrame) -> pd.DataFrame:
        """The few-shot points as a table: one row per (method, corpus share)."""
        name = fewshot.label + " @ " + fewshot.percent.map("{:g}%".format)
        return summarize(fewshot.assign(method=name, label=name), ("spearman_test", "spearman_all"))
