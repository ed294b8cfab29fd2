"""Study 4's orchestration: the corpus linked once, the training mixtures, each (row, seed, variant)
trained and cached, the entity-centric evaluation view, the report's tables and the record.

Rows: the starting model with each pooler, with and without whitening (no training); SimCSE;
contrastive tension; ConSERT token cutoff / token shuffle; MED-SE. Every trained row uses the
same training mixture (S_ent plus a share of S_none), seeds, steps and checkpoint policy.

Every table run also scores the evaluation suite (``suite``, ``kit.evaluation``) with the embeddings its
row reports (a whitening row's whitened vectors, a trained row's selected checkpoint) and keeps the item
outputs; ``suite_report`` compares each row with its baseline row (``baseline_of``) by paired bootstrap. The runs
of the S_none sweep score the suite too: ``share_report`` compares MED-SE with SimCSE at each share.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from kit.core.compute import EVALUATION_LENGTH, Work, checkpoint_evaluations, contrastive_training, encoding
from kit.core.config import TrainConfig
from kit.core.fingerprint import digest
from kit.core.models import Encoder
from kit.core.objectives import ConSERTObjective, ContrastiveTensionObjective, SimCSEObjective
from kit.core.train import train_contrastive
from kit.core.whitening import Whitened, Whitening, fit_whitening
from kit.data import (
    DISEASE_ONTOLOGY,
    PUBMED_SENTENCES,
    load_biosses,
    load_disease_ontology,
    load_pubmed_sentences,
    load_sts_tsv,
)
from kit.evaluation import rows as suite_rows
from kit.evaluation.sts import STSEmbeddings
from kit.params import ParameterError
from kit.report.tables import summarize
from kit.studies.medse_entity_definitions.linking import (
    DictionaryLinker,
    Linker,
    Mention,
    corpus_statistics,
    link_corpus,
)
from kit.studies.medse_entity_definitions.method import (
    DefinitionEncoder,
    MedSEObjective,
    largest_mixture,
    mixture_fits,
    training_mixture,
)
from kit.studies.medse_entity_definitions.params import ROWS, TRAINED, MedSEParams, Row
from kit.study import SUITE_FILE, StudyBase

METRICS = ("spearman_test", "spearman_all", "spearman_entity", "spearman_dev", "alignment", "uniformity")


def table_seeds(p: MedSEParams) -> dict[str, list[int]]:
    """Each table row's seeds (one for a zero-shot row: it is deterministic), the control's rows included."""
    return {name: list(p.seeds if ROWS[name].kind != "zero_shot" else p.seeds[:1]) for name in p.table_rows()}


def sweep_runs(p: MedSEParams, key: Literal["none_share", "lam", "dedup"]) -> list[tuple[str, int, dict]]:
    """(row, seed, {key: value}) of a sweep: its values and the main setting, over the sweep seeds."""
    values = {"none_share": p.none_share_sweep, "lam": p.lambda_sweep, "dedup": p.dedup_sweep}[key]
    main = {"none_share": p.none_share, "lam": p.lam, "dedup": p.dedup}[key]
    if not values:
        return []
    rows = p.sweep_rows if key == "none_share" else ["medse"]
    ordered = sorted(set(values) | {main}) if key != "dedup" else list(dict.fromkeys([*values, main]))
    return [(name, seed, {key: v}) for name in rows for v in ordered for seed in p.sweep_seeds]


def run_variant(
    p: MedSEParams, row: Row, none_share: float | None = None, lam: float | None = None, dedup: str | None = None
) -> dict:
    """The settings a run of ``row`` varies, the parameters' unless given (sweeps): the S_none share of a trained
    row, with lambda and the duplicate handling for MED-SE; none for a zero-shot row."""
    if row.kind == "zero_shot":
        return {}
    variant = {"none_share": p.none_share if none_share is None else none_share}
    if row.kind == "medse":
        variant |= {"lam": p.lam if lam is None else lam, "dedup": dedup or p.dedup}
    return variant


SHARE_ROWS = ("simcse", "medse")
"""The rows ``share_report`` compares at each S_none share."""


def scores_suite(p: MedSEParams, row: Row, variant: dict) -> bool:
    """Whether a run scores the suite: a run at the main settings (every table run), or a SimCSE or MED-SE run at
    another S_none share with the main lambda and duplicate handling (the S_none sweep's, which ``share_report``
    compares); not the other sweep runs."""

    def others(v: dict) -> dict:
        return {k: x for k, x in v.items() if k != "none_share"}

    main = run_variant(p, row)
    return variant == main or (row.name in SHARE_ROWS and others(variant) == others(main))


def share_row(row: str, share: float) -> str:
    """The S_none sweep's name of ``row`` trained at ``share``: ``medse@0.5`` (the share as Python writes it, so
    that two shares never share a name)."""
    return f"{row}@{float(share)!r}"


class Study(StudyBase):
    """Links the corpus once, fixes the training mixtures, runs (or loads) each (row, seed, variant).

    ``linker``: any object with ``link(text) -> list[Mention]`` whose entity ids are Disease Ontology
    ids (a MedCAT or scispaCy wrapper, say); default: ``DictionaryLinker`` over the ontology."""

    p: MedSEParams
    TRAINING_FREE_CONTROL = "simcse"
    eval_name = "BIOSSES"

    def __init__(self, params: MedSEParams, report_dir: str | Path, linker: Linker | None = None):
        super().__init__(params, report_dir)
        self.ontology = {e.id: e for e in load_disease_ontology(params.ontology_path)}
        self.linker = linker or DictionaryLinker(list(self.ontology.values()))
        self.sts = load_biosses(params.biosses_path)
        self.medsts = load_sts_tsv(params.medsts_path) if params.medsts_path else None
        held = set(self.sts.sentence1 + self.sts.sentence2)
        self.sentences = [s for s in load_pubmed_sentences(params.corpus_path) if s not in held]
        self.mentions = link_corpus(self.sentences, self.linker)
        rng = np.random.default_rng(params.corpus_seed)
        self.chosen: list[Mention | None] = [ms[rng.integers(len(ms))] if ms else None for ms in self.mentions]
        self.with_entity = [i for i, m in enumerate(self.chosen) if m]
        self.without = [i for i, m in enumerate(self.chosen) if not m]
        linked = [
            bool(self.linker.link(a) or self.linker.link(b)) for a, b in zip(self.sts.sentence1, self.sts.sentence2)
        ]
        self.entity_pairs = np.flatnonzero(linked)
        # Everything a run reads: the corpus, its linked mentions (the linker's output), the ontology, the STS sets.
        self.data_digest = digest(self.sentences, self.chosen, self.ontology, self.sts, self.medsts)
        if len(self.entity_pairs) < 3:
            raise ValueError(
                f"only {len(self.entity_pairs)} evaluation pairs mention a linked entity: no entity-centric view"
            )
        self.check_mixtures()

    # ---- data --------------------------------------------------------------------
    def mixture(self, none_share: float) -> list[int]:
        """The training rows for an S_none share: fixed by the corpus seed, the same for every row and seed."""
        rng = np.random.default_rng([self.p.corpus_seed, round(none_share * 1000)])
        return training_mixture(self.with_entity, self.without, none_share, self.p.train_size, rng)

    def check_mixtures(self) -> None:
        """Every S_none share a run trains on (the main one and the sweep's) fits the linked corpus: checked when
        the study is built, not when its first trained row reaches it after the baselines."""
        for share in sorted({self.p.none_share, *self.p.none_share_sweep}):
            if mixture_fits(self.p.train_size, share, len(self.with_entity), len(self.without)):
                continue
            largest = largest_mixture(share, len(self.with_entity), len(self.without))
            where = "none_share" if share == self.p.none_share else "none_share_sweep"
            raise ParameterError(
                f"parameter 'train_size': {self.p.train_size:,} sentences with an S_none share of {share:.0%} "
                f"({where}) need more than this corpus links ({len(self.with_entity):,} sentences with an entity, "
                f"{len(self.without):,} without); the largest that fits is {largest:,} (lower train_size, change "
                f"{where}, or pass corpus_path with a larger corpus)"
            )

    def corpus_table(self) -> pd.DataFrame:
        """The paper's Tables 1-2: the linked unlabeled corpus and the main training mixture."""
        mix = self.mixture(self.p.none_share)
        rows = [
            {
                "corpus": f"PubMed sentences ({len(self.sentences):,}, BIOSSES sentences removed)",
                **corpus_statistics(self.mentions),
            },
            {
                "corpus": f"training mixture, S_none share {self.p.none_share:.0%}",
                **corpus_statistics([self.mentions[i] for i in mix]),
            },
        ]
        return pd.DataFrame(rows).round(3)

    def top_entities(self, n: int = 10) -> pd.DataFrame:
        counts = Counter(m.entity for ms in self.mentions for m in ms)
        return pd.DataFrame(
            [
                {"entity": self.ontology[e].name, "id": e, "mentions": c, "definition": self.ontology[e].definition}
                for e, c in counts.most_common(n)
            ]
        )

    def linked_examples(self) -> pd.DataFrame:
        """Training sentences with the chosen entity marked and the definition it is pulled toward."""
        rows = self.mixture(self.p.none_share)
        picked = [r for r in rows if self.chosen[r]][: self.p.examples]
        out = []
        for r in picked:
            m, s = self.chosen[r], self.sentences[r]
            out.append(
                {
                    "sentence": f"{s[: m.start]}[{s[m.start : m.end]}]{s[m.end :]}",
                    "entity": self.ontology[m.entity].name,
                    "definition": self.ontology[m.entity].definition,
                }
            )
        return pd.DataFrame(out)

    # ---- evaluation ----------------------------------------------------------------
    def own_dev(self) -> tuple[str, list[str]]:
        dev = self.sts.subset("dev")
        return f"BIOSSES dev Spearman ({len(dev)} pairs)", dev.sentence1 + dev.sentence2

    def evaluate(self, encoder: Encoder, whitening: Whitening | None = None) -> dict[str, float]:
        """BIOSSES Spearman (dev, test, all, entity-centric view), alignment and uniformity, and
        the MedSTS Spearman when a local file is given."""

        def embed(pairs) -> STSEmbeddings:
            emb = STSEmbeddings.compute(encoder, pairs)
            return emb if whitening is None else emb.transformed(whitening)

        emb = embed(self.sts)
        out = {
            "spearman_dev": emb.spearman("dev"),
            "spearman_test": emb.spearman("test"),
            "spearman_all": emb.spearman("all"),
            "spearman_entity": emb.spearman(self.entity_pairs),
            "alignment": emb.alignment(),
            "uniformity": emb.uniformity(),
        }
        if self.medsts is not None:
            out["spearman_medsts"] = embed(self.medsts).spearman("all")
        return out

    def _dev_evaluator(self, encoder: Encoder) -> dict[str, float]:
        """``evaluate`` during training, with the selection columns (``StudyBase.selection``)."""
        metrics = self.evaluate(encoder)
        return {**metrics, **self.selection(encoder, metrics["spearman_dev"])}

    def _score_suite(self, encoder: Encoder, whitening: Whitening | None, run_dir: Path) -> None:
        """The run's suite outputs (``SUITE_FILE``) from the embeddings its row reports: the encoder's, or
        for a whitening row the whitened ones."""
        if whitening is None:
            self.score_suite(encoder, run_dir)
        else:
            self.score_whitened(encoder, whitening, run_dir, self.suite_tasks, SUITE_FILE)

    def whitens_main(self, row: Row, variant: dict) -> bool:
        """Whether this run scores its trained model whitened too (``whitens_trained``): the table's run of the
        control's base row, not a sweep's."""
        return self.whitens_trained(row.name) and variant == run_variant(self.p, row)

    def whitening(self, encoder: Encoder) -> Whitening:
        p = self.p
        return fit_whitening(encoder, self.sentences, p.whitening_sentences, p.corpus_seed + 1, p.whitening_dim)

    # ---- runs ------------------------------------------------------------------------
    def objective(
        self, row: Row, encoder: Encoder, config: TrainConfig, corpus_rows: list[int], lam: float, dedup: str
    ):
        if row.kind == "simcse":
            return SimCSEObjective(encoder, config)
        if row.kind == "ct":
            return ContrastiveTensionObjective(encoder, config)
        if row.kind.startswith("consert"):
            return ConSERTObjective(encoder, config, row.kind.split("_")[1], self.p.cutoff_rate)
        mentions = [self.chosen[r] for r in corpus_rows]
        definitions = {m.entity: self.ontology[m.entity].definition for m in mentions if m}
        bank = DefinitionEncoder(encoder, definitions, self.p.definition_trainable, self.p.definition_max_length)
        return MedSEObjective(
            encoder, config, mentions, bank, self.p.entity_encoder, lam, self.p.entity_temperature, dedup
        )

    def main_variant(self, row: Row) -> dict:
        """The variant of ``row``'s table runs (the main settings); sweeps vary it."""
        return run_variant(self.p, row)

    def saves_model(self, row: Row, seed: int, variant: dict) -> bool:
        """``save_models``: the first seed of every trained table row."""
        return (
            self.p.save_models
            and row.kind != "zero_shot"
            and row.name in self.p.rows
            and seed == self.p.seeds[0]
            and variant == self.main_variant(row)
        )

    def row_run_dir(self, row: str, seed: int) -> Path:
        """The folder of a table run (``row`` at ``seed``, main settings)."""
        return self._run_dir(ROWS[row], seed, self.main_variant(ROWS[row]))

    def row_label(self, row: str) -> str:
        return ROWS[row].label

    def training_data(self, row: str) -> str:
        corpus = self.p.corpus_path or f"PubMed sentences ({PUBMED_SENTENCES.source.split(' : ')[0]})"
        text = (
            f"{self.p.train_size:,} unlabeled {corpus}, BIOSSES sentences removed, {self.p.none_share:.0%} of them "
            "without a linked Disease Ontology entity"
        )
        if ROWS[row].kind == "medse":
            text += f"; the entities' definitions ({DISEASE_ONTOLOGY.source.split(' : ')[0]})"
        return text

    def _run_dir(self, row: Row, seed: int, variant: dict) -> Path:
        p = self.p
        settings = {
            "row": asdict(row),
            "seed": seed,
            "model": p.model,
            "variant": variant,
            "sampling": [p.corpus_seed, p.train_size],
            "suite": p.suite if scores_suite(p, row, variant) else None,
        }
        if row.kind == "zero_shot":
            fitted = [p.whitening_sentences, p.whitening_dim, EVALUATION_LENGTH]  # the length it reads
            settings["whitening"] = fitted if row.whitening else None
            settings["selection"] = p.select_on  # scored for the choice of the premise ladder's rung (c)
        else:
            settings["train"] = p.train_config(seed).keyed()
            settings["pooler"] = p.pooler
            settings["select_on"] = p.select_on
            if self.saves_model(row, seed, variant):
                settings["save_model"] = "in its run folder"  # only then, so that other runs keep their keys
            if row.kind == "medse":
                settings["medse"] = [
                    p.entity_encoder,
                    p.entity_temperature,
                    p.definition_trainable,
                    p.definition_max_length,
                ]
            if row.kind == "consert_cutoff":
                settings["cutoff"] = p.cutoff_rate
            if self.whitens_main(row, variant):
                settings["whitened"] = self.whitened_settings()  # only then, so that other runs keep their keys
        return self.run_dir(f"{row.name}-seed{seed}", settings, self.data_digest)

    def run(
        self,
        row_name: str,
        seed: int,
        none_share: float | None = None,
        lam: float | None = None,
        dedup: str | None = None,
    ) -> dict:
        """One row at one seed (cached); ``none_share``, ``lam`` and ``dedup`` override the parameters (sweeps)."""
        row, p = ROWS[row_name], self.p
        variant = run_variant(p, row, none_share, lam, dedup)
        run_dir = self._run_dir(row, seed, variant)

        def compute() -> dict:
            pooler = row.pooler or p.pooler
            history, whitening = None, None
            if row.kind == "zero_shot":
                encoder = self.training_free_encoder(pooler, seed)
                whitening = self.whitening(encoder) if row.whitening else None
                metrics = self.evaluate(encoder, whitening)
                shown = encoder if whitening is None else Whitened(encoder, whitening)
                metrics.update(self.selection(shown, metrics["spearman_dev"]))  # rung (c)'s choice
            else:
                encoder = Encoder.from_pretrained(p.model, pooler, seed=seed)
                config = p.train_config(seed)
                rows = self.mixture(variant["none_share"])
                objective = self.objective(
                    row, encoder, config, rows, variant.get("lam", p.lam), variant.get("dedup", p.dedup)
                )
                history = train_contrastive(
                    encoder,
                    [self.sentences[r] for r in rows],
                    config,
                    self._dev_evaluator,
                    run_dir=run_dir,
                    desc=self.run_label(row_name, seed, none_share, lam, dedup),
                    objective=objective,
                    selection_metric="selection",
                )
                metrics = self.evaluate(encoder)
                history = asdict(history)
            if scores_suite(p, row, variant):
                self._score_suite(encoder, whitening, run_dir)
            if self.whitens_main(row, variant):
                self.score_trained_whitened(encoder, run_dir, self.sentences)
            if self.saves_model(row, seed, variant):
                self.save_model(encoder, row_name, seed, run_dir)
            return {
                "row": row_name,
                "label": row.label,
                "seed": seed,
                "variant": variant,
                "metrics": metrics,
                "history": history,
            }

        return self.cached(run_dir, compute)

    def run_label(
        self,
        row_name: str,
        seed: int,
        none_share: float | None = None,
        lam: float | None = None,
        dedup: str | None = None,
    ) -> str:
        """``medse seed 0``, with a sweep's setting: ``medse seed 0, lam 0.5``."""
        sweep = {"none_share": none_share, "lam": lam, "dedup": dedup}
        return f"{row_name} seed {seed}" + "".join(f", {k} {v}" for k, v in sweep.items() if v is not None)

    def run_trains(self, row_name: str, seed: int, *sweep) -> bool:
        """Every row but the zero-shot ones (the start pooled, whitened or not) trains."""
        return row_name in TRAINED

    # ---- tables ------------------------------------------------------------------------
    def trained_rows(self) -> list[str]:
        return [name for name in self.p.rows if ROWS[name].kind != "zero_shot"]

    def row_seeds(self) -> dict[str, list[int]]:
        return table_seeds(self.p)

    def training_free_poolers(self) -> list[str]:
        """The poolers of the table's pooling and whitening rows (the untrained start)."""
        rows = (ROWS[name] for name, _ in self.table_runs())
        return list(dict.fromkeys(row.pooler or self.p.pooler for row in rows if row.kind == "zero_shot"))

    def row_fixed(self, row: str) -> bool:
        """The pooling and whitening rows: the untrained model, one set of outputs."""
        return ROWS[row].kind == "zero_shot"

    @classmethod
    def workload(cls, p: MedSEParams) -> list[Work]:
        """Every distinct run (a sweep's run at the main settings is its table run): a trained row is ``steps``
        contrastive steps, inside which MED-SE's trainable definition encoder reads the definition of every batch
        sentence with an entity (a share 1 - S_none), forward and backward (a frozen one embeds the definitions
        once: counted over every ontology definition, an upper bound), and a checkpoint evaluation (the STS sets
        and the ``select_on`` tasks) before the first step, every ``eval_every`` steps and after the last; a
        whitening row embeds ``whitening_sentences`` PubMed sentences (the corpus's, at most); after training
        every run embeds the STS sets, and a run that ``scores_suite`` scores the suite; the pooling and whitening rows
        of one seed share their forward passes (``training_free_encoder``), so they count as one model."""

        def key(name: str, seed: int, variant: dict) -> tuple:
            return name, seed, tuple(sorted(variant.items()))

        runs = {key(name, seed, run_variant(p, ROWS[name])) for name, seeds in table_seeds(p).items() for seed in seeds}
        runs |= {
            key(name, seed, run_variant(p, ROWS[name], **variant))
            for sweep in ("none_share", "lam", "dedup")
            for name, seed, variant in sweep_runs(p, sweep)
        }
        kinds = [(ROWS[name], dict(variant)) for name, _seed, variant in runs]
        trained = [(row, variant) for row, variant in kinds if row.kind != "zero_shot"]
        medse = [1 - variant["none_share"] for row, variant in trained if row.kind == "medse"]
        starts = {seed for name, seed, _ in runs if ROWS[name].kind == "zero_shot"}  # one shared start per seed
        whitened = len({seed for name, seed, _ in runs if ROWS[name].whitening})
        rung_b = len(table_seeds(p)["simcse"]) if "simcse" in p.rows else 0  # the ladder's rung b (at most)
        whitened += rung_b
        definitions = [e.definition for e in load_disease_ontology(p.ontology_path)]
        work = [contrastive_training(p.model, len(trained), p.steps, p.batch_size, p.max_length)]
        if medse and p.definition_trainable:
            what = "MED-SE: the definition encoder reads the batch's definitions"
            each = encoding(what, p.model, definitions, 1, p.definition_max_length, train=True, loop="kit")
            work.append(replace(each, sequences=round(sum(medse) * p.steps * p.batch_size)))
        elif medse:
            what = "MED-SE: the frozen definition encoder embeds the definitions (all: an upper bound)"
            work.append(encoding(what, p.model, definitions, len(medse), p.definition_max_length))
        if whitened:
            sentences = load_pubmed_sentences(p.corpus_path)
            what = "whitening: PubMed sentences embedded"
            each = encoding(what, p.model, sentences, 1, EVALUATION_LENGTH)
            work.append(replace(each, sequences=whitened * min(p.whitening_sentences, len(sentences))))
        work += cls.whitened_control_work(p, rung_b)
        biosses = load_biosses(p.biosses_path)
        sts = list(dict.fromkeys(biosses.sentence1 + biosses.sentence2))
        if p.medsts_path:
            medsts = load_sts_tsv(p.medsts_path)
            sts += list(dict.fromkeys(medsts.sentence1 + medsts.sentence2))
        work.append(
            encoding("after training: the STS sets", p.model, sts, len(trained) + len(starts), EVALUATION_LENGTH)
        )
        main = sum(scores_suite(p, row, variant) for row, variant in trained) + len(
            {seed for name, seed, v in runs if ROWS[name].kind == "zero_shot" and scores_suite(p, ROWS[name], dict(v))}
        )
        evaluations = len(trained) * checkpoint_evaluations(p.steps, p.eval_every)
        return work + cls.evaluation_work(p, main, evaluations, sts)

    @classmethod
    def saved_rows(cls, p) -> list[str]:
        return [name for name in p.rows if ROWS[name].kind != "zero_shot"] if p.save_models else []

    def planned_runs(self) -> list[tuple]:
        """The arguments of every ``run`` the notebook makes (``kit.batch`` computes them ahead)."""
        sweeps = [
            (name, seed, *[variant.get(k) for k in ("none_share", "lam", "dedup")])
            for key in ("none_share", "lam", "dedup")
            for name, seed, variant in sweep_runs(self.p, key)
        ]
        return [*self.table_runs(), *sweeps]

    def results(self) -> pd.DataFrame:
        """One row per (row, seed); zero-shot rows are deterministic and run once."""
        out = []
        for name, seed in self.table_runs():
            r = self.run(name, seed)
            out.append({"method": name, "label": ROWS[name].label, "seed": seed, **r["metrics"]})
        return pd.DataFrame(out)

    def histories(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"method": name, "label": ROWS[name].label, "seed": seed, **h}
                for name in self.trained_rows()
                for seed in self.p.seeds
                for h in self.run(name, seed)["history"]["rows"]
            ]
        )

    def table(self, results: pd.DataFrame) -> pd.DataFrame:
        metrics = METRICS + (("spearman_medsts",) if self.medsts is not None else ())
        return summarize(results, metrics)

    def sweep(self, key: Literal["none_share", "lam", "dedup"]) -> pd.DataFrame:
        """The sweep of one setting (S_none share for the sweep rows; lambda and duplicate
        handling for MED-SE), the main setting included, over the sweep seeds."""
        out = []
        for name, seed, variant in sweep_runs(self.p, key):
            r = self.run(name, seed, **variant)
            out.append({"method": name, "label": ROWS[name].label, key: variant[key], "seed": seed, **r["metrics"]})
        return pd.DataFrame(out)

    def share_report(self, suite: suite_rows.SuiteReport) -> suite_rows.SuiteReport | None:
        """The paper's Table 4 claim at every mix: MED-SE against SimCSE trained on the same S_none share, one
        comparison per swept share other than the main one (whose comparison is the table's, in ``suite``) on
        ``declared_task`` over the sweep seeds, the shares one family corrected by ``correction`` (Hwang, Yoo, Choi
        2022). A finding only where ``suite``'s positive control passed (its sentences are the premise). None
        without an S_none sweep of both rows away from the main share."""
        p = self.p
        runs = [
            (name, seed, variant)
            for name, seed, variant in sweep_runs(p, "none_share")
            if name in SHARE_ROWS and variant["none_share"] != p.none_share
        ]
        if not set(SHARE_ROWS) <= {name for name, _, _ in runs}:
            return None
        tasks = [t for t in self.suite_tasks if t.name == self.declared_task()]
        outputs: dict[str, list[suite_rows.RunOutputs]] = {}
        for name, seed, variant in runs:
            run_dir = self._run_dir(ROWS[name], seed, run_variant(p, ROWS[name], **variant))
            rerun = functools.partial(self.run, name, seed, **variant)
            outputs.setdefault(share_row(name, variant["none_share"]), []).append(self.suite_outputs(run_dir, rerun))
        shares = sorted({variant["none_share"] for _, _, variant in runs})
        pairs = [(share_row("medse", share), share_row("simcse", share)) for share in shares]
        labels = {key: f"{ROWS[key.split('@')[0]].label}, S_none {key.split('@')[1]}" for key in outputs}
        evidence = suite_rows.Evidence.of(outputs, pairs, tasks, labels, keep=self.kept_items(tasks))
        return self.report_of(evidence, tasks, "MED-SE against SimCSE at each S_none share", premise=suite.withheld())

    def sweep_table(self, sweep: pd.DataFrame, key: str) -> pd.DataFrame:
        name = sweep["label"] + " @ " + sweep[key].map(lambda v: f"{v:g}" if isinstance(v, float) else str(v))
        return summarize(sweep.assign(method=name, label=name), ("spearman_test", "spearman_all", "spearman_entity"))

    # ---- the evaluation suite ------------------------------------------------------------
    def paper_effect(self) -> suite_rows.PaperEffect:
        return suite_rows.PaperEffect(
            "biosses-all",
            3.7,
            "MED-SE over SimCSE on MedSTS test (Spearman 0.767 vs 0.730; BIOSSES stands in for the credentialed "
            "MedSTS here)",
        )

    def baseline_of(self, name: str) -> str | None:
        """The row each row is compared with: MED-SE with SimCSE, the paper's comparison (the same objective
        without the entity loss; the starting model when SimCSE is not in the table); SimCSE, contrastive
        tension and ConSERT, the paper's unsupervised baselines, with the starting model pooled as they are
        (``starting_row``: what the objective adds); a whitening row with its pooler without whitening.
        None: no such row in the table (the other pooling rows are shown without a comparison)."""
        row, rows = ROWS[name], self.p.rows
        if name not in rows:  # a row the positive control added: compared with nothing else
            return None
        if row.kind == "zero_shot":
            plain = name.removesuffix("_whitening")
            return plain if row.whitening and plain in rows else None
        if row.kind == "medse" and "simcse" in rows:
            return "simcse"
        return self.starting_row if self.starting_row in rows else None
