"""Study 4 (``notebooks/medse_entity_definitions.ipynb``): MED-SE against its baselines on one
linked corpus, cached runs, the entity-centric evaluation view and the report's tables.

Rows: the starting model with each pooler, with and without whitening (no training); SimCSE;
contrastive tension; ConSERT token cutoff / token shuffle; MED-SE. Every trained row uses the
same training mixture (S_ent plus a share of S_none), seeds, steps and checkpoint policy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from kit.data import load_biosses, load_disease_ontology, load_pubmed_sentences, load_sts_tsv
from kit.medse import (ConSERTObjective, ContrastiveTensionObjective, DefinitionEncoder, DictionaryLinker, Linker,
                       MedSEObjective, Mention, Whitening, corpus_statistics, link_corpus, training_mixture)
from kit.metrics import STSEmbeddings, cosine_spearman
from kit.models import Encoder, resolve_model
from kit.params import ParameterError, Params
from kit.report import cached_run, write_tables
from kit.simcse import PoolerName, summarize
from kit.train import SimCSEObjective, TrainConfig, train_contrastive

METRICS = ("spearman_test", "spearman_all", "spearman_entity", "spearman_dev", "alignment", "uniformity")


@dataclass(frozen=True)
class Row:
    name: str
    label: str
    kind: str  # zero_shot, simcse, ct, consert_cutoff, consert_shuffle, medse
    pooler: str | None = None  # zero-shot rows: their pooler; trained rows use the parameter
    whitening: bool = False


def _zero_shot_rows() -> list[Row]:
    poolers = {"cls": "cls_before_pooler", "mean": "mean", "first_last_avg": "first_last_avg", "embed_last_avg": "embed_last_avg"}
    return [Row(f"{name}{'_whitening' if w else ''}", f"starting model, {name}{' + whitening' if w else ''}", "zero_shot", pooler, w)
            for name, pooler in poolers.items() for w in (False, True)]


ROWS = {r.name: r for r in [
    *_zero_shot_rows(),
    Row("simcse", "SimCSE", "simcse"),
    Row("ct", "contrastive tension", "ct"),
    Row("consert_cutoff", "ConSERT token cutoff", "consert_cutoff"),
    Row("consert_shuffle", "ConSERT token shuffle", "consert_shuffle"),
    Row("medse", "MED-SE (SimCSE + entity-definition loss)", "medse"),
]}


@dataclass
class MedSEParams(Params):
    """Parameters of ``notebooks/medse_entity_definitions.ipynb`` (defaults: the offline CPU setting)."""

    model: str = "minilm"
    pooler: PoolerName = "mean"
    rows: list[str] = field(default_factory=lambda: list(ROWS))
    seeds: list[int] = field(default_factory=lambda: [0, 1])
    steps: int = 30
    eval_every: int = 10
    batch_size: int = 64
    lr: float = 3e-5
    max_length: int = 32
    temperature: float = 0.05
    train_size: int = 4000
    none_share: float = 0.1
    lam: float = 0.1
    entity_encoder: Literal["mean", "transformer", "cross"] = "transformer"
    entity_temperature: float = 0.05
    definition_trainable: bool = False
    definition_max_length: int = 64
    dedup: Literal["naive", "remove", "replace"] = "replace"
    cutoff_rate: float = 0.15
    whitening_sentences: int = 2000
    whitening_dim: int | None = None
    none_share_sweep: list[float] = field(default_factory=lambda: [0.0, 0.5])
    lambda_sweep: list[float] = field(default_factory=list)
    dedup_sweep: list[Literal["naive", "remove", "replace"]] = field(default_factory=list)
    sweep_rows: list[str] = field(default_factory=lambda: ["simcse", "medse"])
    sweep_seeds: list[int] = field(default_factory=lambda: [0])
    corpus_seed: int = 1234
    examples: int = 5
    device: str = "auto"
    biosses_path: str | None = None
    corpus_path: str | None = None
    ontology_path: str | None = None
    medsts_path: str | None = None

    def validate(self) -> None:
        self.check_members(("rows", "sweep_rows"), ROWS)
        if any(ROWS[r].kind == "zero_shot" for r in self.sweep_rows):
            raise ParameterError("parameter 'sweep_rows': only trained rows can be swept")
        if not self.seeds:
            raise ParameterError("parameter 'seeds': give at least one seed")
        for share in [self.none_share, *self.none_share_sweep]:
            if not 0 <= share <= 1:
                raise ParameterError(f"S_none shares must be in [0, 1], got {share}")
        if self.lam < 0 or any(v < 0 for v in self.lambda_sweep):
            raise ParameterError("lambda values must be >= 0")

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(lr=self.lr, batch_size=self.batch_size, max_length=self.max_length, temperature=self.temperature,
                           steps=self.steps, eval_every=self.eval_every, seed=seed, device=self.device)


class Study:
    """Links the corpus once, fixes the training mixtures, runs (or loads) each (row, seed, variant).

    ``linker``: any object with ``link(text) -> list[Mention]`` whose entity ids are Disease Ontology
    ids (a MedCAT or scispaCy wrapper, say); default: ``DictionaryLinker`` over the ontology."""

    def __init__(self, params: MedSEParams, report_dir: str | Path, linker: Linker | None = None):
        self.p = params
        self.report_dir = Path(report_dir)
        self.model_source = resolve_model(params.model)
        self.run_seconds: dict[str, float] = {}
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
        linked = [bool(self.linker.link(a) or self.linker.link(b)) for a, b in zip(self.sts.sentence1, self.sts.sentence2)]
        self.entity_pairs = np.flatnonzero(linked)
        if len(self.entity_pairs) < 3:
            raise ValueError(f"only {len(self.entity_pairs)} evaluation pairs mention a linked entity: no entity-centric view")

    # ---- data --------------------------------------------------------------------
    def mixture(self, none_share: float) -> list[int]:
        """The training rows for an S_none share: fixed by the corpus seed, the same for every row and seed."""
        rng = np.random.default_rng([self.p.corpus_seed, round(none_share * 1000)])
        return training_mixture(self.with_entity, self.without, none_share, self.p.train_size, rng)

    def corpus_table(self) -> pd.DataFrame:
        """The paper's Tables 1-2: the linked unlabeled corpus and the main training mixture."""
        mix = self.mixture(self.p.none_share)
        rows = [{"corpus": f"PubMed sentences ({len(self.sentences):,}, BIOSSES sentences removed)", **corpus_statistics(self.mentions)},
                {"corpus": f"training mixture, S_none share {self.p.none_share:.0%}", **corpus_statistics([self.mentions[i] for i in mix])}]
        return pd.DataFrame(rows).round(3)

    def top_entities(self, n: int = 10) -> pd.DataFrame:
        from collections import Counter

        counts = Counter(m.entity for ms in self.mentions for m in ms)
        return pd.DataFrame([{"entity": self.ontology[e].name, "id": e, "mentions": c, "definition": self.ontology[e].definition}
                             for e, c in counts.most_common(n)])

    def linked_examples(self) -> pd.DataFrame:
        """Training sentences with the chosen entity marked and the definition it is pulled toward."""
        rows = self.mixture(self.p.none_share)
        picked = [r for r in rows if self.chosen[r]][: self.p.examples]
        out = []
        for r in picked:
            m, s = self.chosen[r], self.sentences[r]
            out.append({"sentence": f"{s[:m.start]}[{s[m.start:m.end]}]{s[m.end:]}", "entity": self.ontology[m.entity].name,
                        "definition": self.ontology[m.entity].definition})
        return pd.DataFrame(out)

    def describe(self) -> str:
        p, m = self.p, self.model_source
        sub = f" **Substitute** for {m.substitute_for}." if m.substitute_for else ""
        evaluation = (f"a local MedSTS/ClinicalSTS file ({self.medsts.source}, {len(self.medsts)} pairs) and BIOSSES"
                      if self.medsts else "**BIOSSES stands in for MedSTS** (MedSTS / ClinicalSTS are credentialed and not "
                      "available here; pass `medsts_path` to evaluate on a local copy)")
        return (
            f"**Model**: `{p.model}`: {m.description}; trained rows pool with `{p.pooler}`.{sub}\n\n"
            f"**Entities**: the Human Disease Ontology's names and synonyms ({len(self.ontology):,} diseases), linked by "
            "longest match on word tokens (case-insensitive; abbreviations case-sensitive; stop-word names skipped). "
            "The paper links UMLS concepts with MedCAT in clinical notes; here only diseases are linkable.\n\n"
            f"**Training data**: {p.train_size:,} PubMed sentences per run, {1 - p.none_share:.0%} with a linked entity "
            f"(S_ent) and {p.none_share:.0%} without (S_none), fixed by corpus seed {p.corpus_seed} for every row and seed; "
            f"one entity per sentence chosen at random (same seed).\n\n"
            f"**Evaluation**: {evaluation}. BIOSSES cosine Spearman x100 on the BLURB test split (20 pairs), on all 100 "
            f"pairs and on the **entity-centric view**: the {len(self.entity_pairs)} pairs in which a linked entity occurs. "
            "Alignment over pairs with gold >= 4, uniformity over all sentences (L2-normalised, alpha 2, t 2).\n\n"
            f"**Training** (every trained row): {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length {p.max_length}, "
            f"temperature {p.temperature}, seeds {p.seeds}; the checkpoint with the best BIOSSES dev Spearman (16 pairs, "
            f"evaluated every {p.eval_every} steps) is kept. MED-SE: lambda {p.lam}, entity encoder `{p.entity_encoder}`, "
            f"entity temperature {p.entity_temperature}, definition encoder {'trained' if p.definition_trainable else 'frozen'} "
            f"(a copy of the starting model, mean pooling), duplicate entities: `{p.dedup}`. ConSERT cutoff rate "
            f"{p.cutoff_rate}. Whitening fitted on {p.whitening_sentences:,} PubMed sentences (never on the "
            "evaluation sentences)" + (f", kept dimensions {p.whitening_dim}." if p.whitening_dim else ".")
        )

    # ---- evaluation ----------------------------------------------------------------
    def evaluate(self, encoder: Encoder, whitening: Whitening | None = None) -> dict[str, float]:
        """BIOSSES Spearman (dev, test, all, entity-centric view), alignment and uniformity, and
        the MedSTS Spearman when a local file is given."""

        def embed(pairs) -> STSEmbeddings:
            emb = STSEmbeddings.compute(encoder, pairs)
            return emb if whitening is None else STSEmbeddings(pairs, whitening(emb.e1), whitening(emb.e2))

        emb, ent = embed(self.sts), self.entity_pairs
        out = {"spearman_dev": emb.spearman("dev"), "spearman_test": emb.spearman("test"), "spearman_all": emb.spearman("all"),
               "spearman_entity": cosine_spearman(emb.e1[ent], emb.e2[ent], self.sts.scores[ent]),
               "alignment": emb.alignment(), "uniformity": emb.uniformity()}
        if self.medsts is not None:
            out["spearman_medsts"] = embed(self.medsts).spearman("all")
        return out

    def whitening(self, encoder: Encoder) -> Whitening:
        rng = np.random.default_rng(self.p.corpus_seed + 1)
        idx = rng.choice(len(self.sentences), min(self.p.whitening_sentences, len(self.sentences)), replace=False)
        return Whitening.fit(encoder.encode([self.sentences[i] for i in idx], max_length=self.p.max_length * 2), self.p.whitening_dim)

    # ---- runs ------------------------------------------------------------------------
    def objective(self, row: Row, encoder: Encoder, config: TrainConfig, corpus_rows: list[int], lam: float, dedup: str):
        if row.kind == "simcse":
            return SimCSEObjective(encoder, config)
        if row.kind == "ct":
            return ContrastiveTensionObjective(encoder, config)
        if row.kind.startswith("consert"):
            return ConSERTObjective(encoder, config, row.kind.split("_")[1], self.p.cutoff_rate)
        mentions = [self.chosen[r] for r in corpus_rows]
        definitions = {m.entity: self.ontology[m.entity].definition for m in mentions if m}
        bank = DefinitionEncoder(encoder, definitions, self.p.definition_trainable, self.p.definition_max_length)
        return MedSEObjective(encoder, config, mentions, bank, self.p.entity_encoder, lam, self.p.entity_temperature, dedup)

    def _run_key(self, row: Row, seed: int, variant: dict) -> str:
        p = self.p
        settings = {"row": asdict(row), "seed": seed, "model": p.model, "variant": variant,
                    "data": [p.corpus_seed, p.train_size, p.corpus_path, p.ontology_path, p.biosses_path, p.medsts_path]}
        if row.kind == "zero_shot":
            settings["whitening"] = [p.whitening_sentences, p.whitening_dim, p.max_length] if row.whitening else None
        else:
            settings["train"] = p.train_config(seed).run_key()
            settings["pooler"] = p.pooler
            if row.kind == "medse":
                settings["medse"] = [p.entity_encoder, p.entity_temperature, p.definition_trainable, p.definition_max_length]
            if row.kind == "consert_cutoff":
                settings["cutoff"] = p.cutoff_rate
        digest = hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
        return f"{row.name}-seed{seed}-{digest}"

    def run(self, row_name: str, seed: int, none_share: float | None = None, lam: float | None = None,
            dedup: str | None = None) -> dict:
        """One row at one seed (cached); ``none_share``, ``lam`` and ``dedup`` override the parameters (sweeps)."""
        row, p = ROWS[row_name], self.p
        variant = {"none_share": p.none_share if none_share is None else none_share,
                   "lam": p.lam if lam is None else lam, "dedup": dedup or p.dedup}
        if row.kind != "medse":
            variant = {"none_share": variant["none_share"]} if row.kind != "zero_shot" else {}
        run_dir = self.report_dir / "runs" / self._run_key(row, seed, variant)

        def compute() -> dict:
            encoder = Encoder.from_pretrained(p.model, row.pooler or p.pooler, seed=seed)
            history = None
            if row.kind == "zero_shot":
                metrics = self.evaluate(encoder, self.whitening(encoder) if row.whitening else None)
            else:
                config = p.train_config(seed)
                rows = self.mixture(variant["none_share"])
                objective = self.objective(row, encoder, config, rows, variant.get("lam", p.lam), variant.get("dedup", p.dedup))
                history = train_contrastive(encoder, [self.sentences[r] for r in rows], config, self.evaluate, run_dir=run_dir,
                                            desc=f"{row_name} seed {seed}", objective=objective)
                metrics = self.evaluate(encoder)
                history = asdict(history)
            return {"row": row_name, "label": row.label, "seed": seed, "variant": variant, "metrics": metrics, "history": history}

        result = cached_run(run_dir, compute, self.run_seconds)
        (run_dir / "checkpoint.pt").unlink(missing_ok=True)
        return result

    # ---- tables ------------------------------------------------------------------------
    def _table_runs(self) -> list[tuple[str, int]]:
        return [(name, seed) for name in self.p.rows for seed in (self.p.seeds if ROWS[name].kind != "zero_shot" else self.p.seeds[:1])]

    def _sweep_runs(self, key: Literal["none_share", "lam", "dedup"]) -> list[tuple[str, int, dict]]:
        """(row, seed, {key: value}) of a sweep: its values and the main setting, over the sweep seeds."""
        values = {"none_share": self.p.none_share_sweep, "lam": self.p.lambda_sweep, "dedup": self.p.dedup_sweep}[key]
        main = {"none_share": self.p.none_share, "lam": self.p.lam, "dedup": self.p.dedup}[key]
        if not values:
            return []
        rows = self.p.sweep_rows if key == "none_share" else ["medse"]
        ordered = sorted(set(values) | {main}) if key != "dedup" else list(dict.fromkeys([*values, main]))
        return [(name, seed, {key: v}) for name in rows for v in ordered for seed in self.p.sweep_seeds]

    def planned_runs(self) -> list[tuple]:
        """The arguments of every ``run`` the notebook makes (``kit.batch --jobs`` computes them ahead)."""
        sweeps = [(name, seed, *[variant.get(k) for k in ("none_share", "lam", "dedup")])
                  for key in ("none_share", "lam", "dedup") for name, seed, variant in self._sweep_runs(key)]
        return [*self._table_runs(), *sweeps]

    def results(self) -> pd.DataFrame:
        """One row per (row, seed); zero-shot rows are deterministic and run once."""
        out = []
        for name, seed in self._table_runs():
            r = self.run(name, seed)
            out.append({"method": name, "label": ROWS[name].label, "seed": seed, **r["metrics"]})
        return pd.DataFrame(out)

    def histories(self) -> pd.DataFrame:
        return pd.DataFrame([{"method": name, "seed": seed, **h}
                             for name in self.p.rows if ROWS[name].kind != "zero_shot" for seed in self.p.seeds
                             for h in self.run(name, seed)["history"]["rows"]])

    def table(self, results: pd.DataFrame) -> pd.DataFrame:
        metrics = METRICS + (("spearman_medsts",) if self.medsts is not None else ())
        return summarize(results, metrics)

    def sweep(self, key: Literal["none_share", "lam", "dedup"]) -> pd.DataFrame:
        """The sweep of one setting (S_none share for the sweep rows; lambda and duplicate
        handling for MED-SE), the main setting included, over the sweep seeds."""
        out = []
        for name, seed, variant in self._sweep_runs(key):
            r = self.run(name, seed, **variant)
            out.append({"method": name, "label": ROWS[name].label, key: variant[key], "seed": seed, **r["metrics"]})
        return pd.DataFrame(out)

    def sweep_table(self, sweep: pd.DataFrame, key: str) -> pd.DataFrame:
        name = sweep["label"] + " @ " + sweep[key].map(lambda v: f"{v:g}" if isinstance(v, float) else str(v))
        return summarize(sweep.assign(method=name, label=name), ("spearman_test", "spearman_all", "spearman_entity"))

    def verdict(self, results: pd.DataFrame) -> str:
        """MED-SE against SimCSE, paired by seed, and the ordering of all rows (Markdown)."""
        means = results.groupby("method", sort=False)[["spearman_all", "spearman_test", "spearman_entity"]].mean() * 100
        order = " > ".join(f"{ROWS[m].label} {v:.2f}" for m, v in means.spearman_all.sort_values(ascending=False).items())
        lines = [f"- BIOSSES all-pairs Spearman, highest first: {order}."]
        if {"medse", "simcse"} <= set(results.method):
            a = results[results.method == "medse"].set_index("seed")
            b = results[results.method == "simcse"].set_index("seed")
            d = (a[["spearman_all", "spearman_test", "spearman_entity"]] - b[["spearman_all", "spearman_test", "spearman_entity"]]) * 100
            wins = int((d.spearman_all > 0).sum())
            lines.append(
                f"- MED-SE minus SimCSE, paired over {len(d)} seed(s): all pairs {d.spearman_all.mean():+.2f}, test "
                f"{d.spearman_test.mean():+.2f}, entity-centric view {d.spearman_entity.mean():+.2f}; MED-SE higher on all "
                f"pairs in {wins} of {len(d)} seeds. The paper: MED-SE 0.767 vs SimCSE 0.730 on MedSTS test.")
        for name, row in ROWS.items():
            white = f"{name}_whitening"
            if row.kind == "zero_shot" and not row.whitening and {name, white} <= set(means.index):
                lines.append(f"- Whitening on the `{name}` pooler: all pairs {means.loc[name, 'spearman_all']:.2f} -> "
                             f"{means.loc[white, 'spearman_all']:.2f}, entity-centric view {means.loc[name, 'spearman_entity']:.2f} -> "
                             f"{means.loc[white, 'spearman_entity']:.2f}.")
        if "medse" in set(results.method):
            h = self.histories()
            h = h[(h.method == "medse") & (h.step > 0)]
            first, last = h[h.step == h.step.min()].entity_loss.mean(), h[h.step == h.step.max()].entity_loss.mean()
            lines.append(f"- MED-SE's entity loss (mean over seeds) went from {first:.3f} in the first evaluation window to "
                         f"{last:.3f} in the last (uniform guessing over the batch's n entity rows gives log n, here about "
                         f"{np.log((1 - self.p.none_share) * self.p.batch_size):.2f}).")
        spread = results.groupby("method")["spearman_all"].std().dropna() * 100
        if len(spread):
            lines.append(f"- Seed-to-seed std of all-pairs Spearman: {spread.min():.2f}-{spread.max():.2f} points; smaller "
                         "differences are noise at this budget.")
        return "\n".join(lines)


def best_trained(results: pd.DataFrame) -> str:
    trained = results[results.method.map(lambda m: ROWS[m].kind != "zero_shot")]
    pool = trained if len(trained) else results
    return pool.groupby("method", sort=False)["spearman_dev"].mean().idxmax()


def write_record(record, study: Study, results: pd.DataFrame, sweeps: dict[str, pd.DataFrame],
                 tables: dict[str, pd.DataFrame]) -> Path:
    """``results.json`` (per-seed metrics, sweeps, histories, tables, provenance) and ``results_table.txt``."""
    records = write_tables(study.report_dir, tables)
    head = "medse" if "medse" in set(results.method) else best_trained(results)
    means = results.drop(columns=["label", "seed"]).groupby("method").mean()
    return record.write(
        metrics={"per_seed": results.to_dict("records"), "mean": means.to_dict("index"),
                 "sweeps": {k: v.to_dict("records") for k, v in sweeps.items()},
                 "histories": study.histories().to_dict("records") if any(ROWS[r].kind != "zero_shot" for r in study.p.rows) else []},
        headline={"name": f"BIOSSES all-pairs Spearman x100 ({ROWS[head].label})", "value": float(means.loc[head, "spearman_all"] * 100)},
        tables=records, model=study.model_source.description, substitute_for=study.model_source.substitute_for,
        entity_pairs=len(study.entity_pairs), runs=len(study.run_seconds),
        compute_seconds=round(sum(study.run_seconds.values()), 1),
    )

