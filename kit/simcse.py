"""Study 1: unsupervised SimCSE with text augmentations and MixCSE with instance weighting.

The rows of the study are named ``Method``s; ``Study`` trains each (method, seed, corpus
share) once, caches its result under ``<report_dir>/runs/``, and never recomputes a
finished run whose settings are unchanged (a changed setting gets a new run folder).
"""

from __future__ import annotations

import hashlib
import json
import math
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from kit.augment import AUGMENTERS, make_augmenter
from kit.chineseblue import ChineseBlueEval, chineseblue_table, chineseblue_verdict, cmedqq_pairs
from kit.data import chineseblue_corpus, load_biosses, load_chineseblue, load_pubmed_sentences
from kit.metrics import nearest_neighbours, paraphrase_hit_at_1, sts_report
from kit.models import POOLERS, Encoder, resolve_model
from kit.params import ParameterError, Params
from kit.report import cached_run, mean_std, write_tables
from kit.train import TrainConfig, train_contrastive


@dataclass(frozen=True)
class Method:
    """One row: an optional augmenter for the positive view, and the loss options."""

    name: str
    label: str
    augmenter: str | None = None
    ratio: float = 0.1
    mix: bool = False
    iw: bool = False
    trained: bool = True


def _aug_rows(aug: str, label: str, ratios=(0.1, 0.2, 0.3)) -> list[Method]:
    return [Method(f"{aug}_{round(r * 100)}", f"+ {label} {round(r * 100)}%", aug, r) for r in ratios]


METHODS: dict[str, Method] = {
    m.name: m
    for m in [
        Method("zero_shot", "starting model (no training)", trained=False),
        Method("simcse", "SimCSE (dropout views)"),
        *_aug_rows("deletion", "word deletion"),
        *_aug_rows("crop", "random crop"),
        *_aug_rows("stopword_insertion", "stopword insertion", (0.1,)),
        *_aug_rows("swap", "random swap", (0.1,)),
        *_aug_rows("punctuation_insertion", "punctuation insertion", (0.1,)),
        Method("mixcse_iw", "+ MixCSE-IW", mix=True, iw=True),
        Method("mixcse_iw_no_mix", "MixCSE-IW without MixCSE (IW only)", iw=True),
        Method("mixcse_iw_no_iw", "MixCSE-IW without instance weighting (MixCSE only)", mix=True),
        Method("punctuation_mixcse", "+ punctuation insertion 10% + MixCSE", "punctuation_insertion", 0.1, mix=True),
    ]
}
assert all(m.augmenter in (None, *AUGMENTERS) for m in METHODS.values())
PoolerName = Literal["cls", "cls_before_pooler", "mean", "first_last_avg", "embed_last_avg"]
assert set(typing.get_args(PoolerName)) == set(POOLERS)


@dataclass
class StudyParams(Params):
    """Parameters of ``notebooks/simcse_augmentations.ipynb`` (defaults: the offline CPU setting)."""

    language: Literal["en", "zh"] = "en"
    model: str = "minilm"
    pooler: PoolerName = "mean"
    rows: list[str] = field(default_factory=lambda: list(METHODS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    steps: int = 30
    eval_every: int = 10
    batch_size: int = 64
    lr: float = 3e-5
    max_length: int = 32
    temperature: float = 0.05
    mix_lambda: float = 0.2
    iw_phi: float = 0.9
    crop_placeholder: str | None = None
    corpus_size: int | None = None
    corpus_seed: int = 1234
    fewshot_percents: list[float] = field(default_factory=lambda: [1, 10, 20, 40, 60, 80, 100])
    fewshot_rows: list[str] = field(default_factory=lambda: ["simcse", "mixcse_iw"])
    fewshot_seeds: list[int] = field(default_factory=lambda: [0])
    retrieval_queries: int = 4
    map_sentences: int = 300
    device: str = "auto"
    compile: bool = False
    biosses_path: str | None = None
    corpus_path: str | None = None
    probe_train_size: int | None = None
    probe_eval_size: int | None = None
    probe_max_length: int = 64
    cosine_view_pairs: int | None = 400

    def validate(self) -> None:
        self.check_members(("rows", "fewshot_rows"), METHODS)
        if not self.seeds:
            raise ParameterError("parameter 'seeds': give at least one seed")
        if any(not 0 < p <= 100 for p in self.fewshot_percents):
            raise ParameterError(f"parameter 'fewshot_percents': values must be in (0, 100], got {self.fewshot_percents}")

    def train_config(self, method: Method, seed: int) -> TrainConfig:
        return TrainConfig(
            lr=self.lr, batch_size=self.batch_size, max_length=self.max_length, temperature=self.temperature,
            steps=self.steps, eval_every=self.eval_every, seed=seed, device=self.device,
            mix_lambda=self.mix_lambda if method.mix else None, iw_phi=self.iw_phi if method.iw else None,
            compile=self.compile,
        )


class Study:
    """Runs and caches the study's trainings; every public method returns plain tables.

    ``language: en`` trains on PubMed sentences and evaluates on BIOSSES; ``language: zh``
    trains on the pooled ChineseBLUE training sentences and evaluates with the ChineseBLUE
    probes, checkpoints being selected on the cMedQQ dev cosine view (``kit.chineseblue``).
    """

    def __init__(self, params: StudyParams, report_dir: str | Path):
        self.p = params
        self.report_dir = Path(report_dir)
        self.model_source = resolve_model(params.model)
        self.run_seconds: dict[str, float] = {}  # compute time of every run used, cached or not
        if params.language == "en":
            self.sts, self.eval_name, self.positive_threshold = load_biosses(params.biosses_path), "BIOSSES", 4.0
            full = load_pubmed_sentences(params.corpus_path)
            held_out = params.map_sentences
            self.probe = None
        else:
            self.sts = cmedqq_pairs(params.cosine_view_pairs, params.corpus_seed)
            self.eval_name, self.positive_threshold = "cMedQQ", 1.0
            full = load_pubmed_sentences(params.corpus_path) if params.corpus_path else chineseblue_corpus()
            held_out = 0
            self.probe = ChineseBlueEval(params.probe_train_size, params.probe_eval_size, params.corpus_seed, params.probe_max_length)
        order = np.random.default_rng(params.corpus_seed).permutation(len(full))
        # Sentences for the embedding map are held out from every training corpus share.
        pool, held = order[: len(full) - held_out], order[len(full) - held_out :]
        self.corpus = [full[i] for i in pool[: min(params.corpus_size or len(pool), len(pool))]]
        self.map_sentences = [full[i] for i in held]
        self.retrieval_texts, self.partners = self._retrieval_set()
        self.probe_texts = self.retrieval_texts + self.map_sentences

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

    def describe(self) -> str:
        """What this run uses, in Markdown, stating substitutes plainly."""
        return self._describe_en() if self.p.language == "en" else self._describe_zh()

    def _describe_zh(self) -> str:
        p, m = self.p, self.model_source
        encoder = Encoder.from_pretrained(p.model, p.pooler)
        unk = encoder.unknown_token_share(self.corpus[:2000])
        sub = (f" **Substitute** for hfl/chinese-bert-wwm-ext (no Chinese model is available offline). Its vocabulary "
               f"maps {unk:.0%} of the corpus's tokens to [UNK] (measured on 2,000 training sentences), so it sees "
               "mostly sentence length, punctuation, digits and the few common characters it knows: the numbers test "
               "the kit's Chinese pipeline, not the methods, and are not comparable with the paper's."
               if m.substitute_for else f" Its vocabulary maps {unk:.1%} of the corpus's tokens to [UNK].")
        corpus = (f"{len(self.corpus):,} sentences from {p.corpus_path}" if p.corpus_path else
                  f"{len(self.corpus):,} sentences pooled from the cMedQQ, cMedIC and cMedTC train files (labels "
                  "dropped, de-duplicated, every sentence of any dev or test split removed)")
        return (
            f"**Model**: `{p.model}`: {m.description}, pooler `{p.pooler}`.{sub}\n\n"
            f"**Unlabeled corpus**: {corpus}; augmenters work on characters (Latin and digit runs kept whole).\n\n"
            f"**Evaluation**: ChineseBLUE transfer probes on frozen embeddings (below), mean ± std over the training "
            f"seeds, each probe seeded with its run's seed; {len(self.probe.texts):,} texts encoded per model at max "
            f"length {p.probe_max_length}. Retrieval over all {len(self.retrieval_texts):,} cMedQQ test questions.\n\n"
            f"**Checkpoint policy**: evaluate every {p.eval_every} steps and keep the evaluation with the best cMedQQ "
            f"*dev* cosine Spearman (cosine vs the 0/1 label, {int((self.sts.split == 'dev').sum())} dev pairs); the "
            f"cosine view's test half ({int((self.sts.split == 'test').sum())} pairs) is never used for selection.\n\n"
            f"**Training**: {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length {p.max_length}, "
            f"temperature {p.temperature}, seeds {p.seeds}; MixCSE lambda {p.mix_lambda}, instance-weighting phi {p.iw_phi}."
        )

    def _describe_en(self) -> str:
        p, m = self.p, self.model_source
        sub = f" **Substitute** for {m.substitute_for}." if m.substitute_for else ""
        corpus_note = (" This is a substitute for the papers' 1M PubMed sentences (about 2% of PubMed 200k RCT)."
                       if p.corpus_path is None else "")
        return (
            f"**Model**: `{p.model}`: {m.description}, pooler `{p.pooler}`.{sub}\n\n"
            f"**Unlabeled corpus**: {len(self.corpus):,} PubMed sentences (seeded sample, corpus seed {p.corpus_seed}).{corpus_note}\n\n"
            f"**Evaluation**: BIOSSES ({self.sts.source}), cosine Spearman x100 on the BLURB test split (20 pairs) "
            f"and on all 100 pairs; alignment over pairs with gold score >= 4, uniformity over all 200 sentences "
            f"(L2-normalised, alpha 2, t 2).\n\n"
            f"**Training**: {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length {p.max_length}, "
            f"temperature {p.temperature}, seeds {p.seeds}; MixCSE lambda {p.mix_lambda}, instance-weighting phi {p.iw_phi}.\n\n"
            f"**Checkpoint policy**: evaluate every {p.eval_every} steps and keep the evaluation with the best BIOSSES "
            f"*dev* Spearman (16 pairs; step 0 excluded); test and all-pairs numbers are read at that checkpoint and "
            f"never used for selection. With 16 dev pairs this selection is itself noisy."
        )

    # ---- runs -----------------------------------------------------------------
    def run(self, method_name: str, seed: int, percent: float = 100.0) -> dict:
        """Train (or load the cached result of) one method at one seed on a share of the corpus."""
        method = METHODS[method_name]
        run_dir = self.report_dir / "runs" / self._run_key(method, seed, percent)

        def compute() -> dict:
            encoder = Encoder.from_pretrained(self.p.model, self.p.pooler, seed=seed)
            history = None
            if method.trained:
                corpus = self.corpus[: max(self.p.batch_size, math.ceil(len(self.corpus) * percent / 100))]
                aug = None
                if method.augmenter:
                    extra = {"placeholder": self.p.crop_placeholder} if method.augmenter == "crop" else {}
                    aug = make_augmenter(method.augmenter, method.ratio, language=self.p.language, **extra)
                history = train_contrastive(
                    encoder, corpus, self.p.train_config(method, seed), self._dev_evaluator, aug, run_dir,
                    desc=f"{method_name} seed {seed} {percent:g}%",
                )
            run_dir.mkdir(parents=True, exist_ok=True)
            np.save(run_dir / "probe_embeddings.npy", encoder.encode(self.probe_texts, show_progress=False).astype(np.float16))
            return {"method": method_name, "label": method.label, "seed": seed, "percent": percent,
                    "metrics": self._evaluate(encoder, seed), "history": asdict(history) if history else None}

        result = cached_run(run_dir, compute, self.run_seconds)
        (run_dir / "checkpoint.pt").unlink(missing_ok=True)  # finished: the result is the record
        return result

    def _dev_evaluator(self, encoder: Encoder) -> dict[str, float]:
        return sts_report(encoder, self.sts, positive_threshold=self.positive_threshold)

    def _evaluate(self, encoder: Encoder, seed: int) -> dict[str, float]:
        """The final metrics of a run: the cosine view, plus the ChineseBLUE probes for zh."""
        metrics = self._dev_evaluator(encoder)
        return {**metrics, **self.probe.evaluate(encoder, seed)} if self.probe else metrics

    def _run_key(self, method: Method, seed: int, percent: float) -> str:
        train = self.p.train_config(method, seed).run_key() if method.trained else None
        settings = {
            "method": asdict(method), "seed": seed, "percent": percent, "model": self.p.model, "pooler": self.p.pooler,
            "train": train,
            "corpus": [len(self.corpus), self.p.corpus_seed, self.p.corpus_path, self.p.crop_placeholder],
        }
        if self.p.language != "en":  # added only here, so English run folders keep their names
            settings["language"] = [self.p.language, self.p.probe_train_size, self.p.probe_eval_size,
                                    self.p.probe_max_length, self.p.cosine_view_pairs]
        digest = hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
        return f"{method.name}-seed{seed}-{percent:g}pct-{digest}"

    def probe_embeddings(self, method_name: str, seed: int) -> np.ndarray:
        self.run(method_name, seed)
        key = self._run_key(METHODS[method_name], seed, 100.0)
        return np.load(self.report_dir / "runs" / key / "probe_embeddings.npy").astype(np.float32)

    def instance_weighting_effect(self, n_batches: int = 40) -> dict:
        """How many in-batch negatives instance weighting removes: the share of off-diagonal
        pairs with cos >= phi under the frozen starting model (the complementary model), on
        random training batches. A share near 0 means the IW rows equal their non-IW twins."""
        import torch

        from kit.losses import instance_weights

        b = self.p.batch_size
        n = min(n_batches, len(self.corpus) // b) * b
        idx = np.random.default_rng(self.p.corpus_seed).choice(len(self.corpus), n, replace=False)
        encoder = Encoder.from_pretrained(self.p.model, self.p.pooler, seed=self.p.seeds[0])
        emb = torch.from_numpy(encoder.encode([self.corpus[i] for i in idx], max_length=self.p.max_length, show_progress=False))
        removed = sum(int((instance_weights(emb[i : i + b], self.p.iw_phi) == 0).sum()) for i in range(0, n, b))
        pairs = (n // b) * b * (b - 1)
        return {"phi": self.p.iw_phi, "batches": n // b, "pairs": pairs, "removed": removed, "share": removed / max(pairs, 1)}

    def fewshot_note(self) -> str:
        """What the few-shot curve can show at this budget (Markdown)."""
        seen = self.p.steps * self.p.batch_size
        share = 100 * seen / len(self.corpus)
        return (
            f"Each run sees {self.p.steps} x {self.p.batch_size} = {seen:,} sentences of the {len(self.corpus):,}-sentence corpus "
            f"({share:.1f}%). Shares above {share:.1f}% are never read in full, so at this budget differences between those "
            "points reflect which sentences were sampled, not how much text was available."
        )

    # ---- tables ---------------------------------------------------------------
    def _table_runs(self) -> list[tuple[str, int]]:
        return [(name, seed) for name in self.p.rows for seed in (self.p.seeds if METHODS[name].trained else self.p.seeds[:1])]

    def _fewshot_runs(self) -> list[tuple[str, int, float]]:
        return [(name, seed, float(pct)) for name in self.p.fewshot_rows for pct in self.p.fewshot_percents
                for seed in self.p.fewshot_seeds]

    def planned_runs(self) -> list[tuple]:
        """The arguments of every ``run`` the notebook makes (``kit.batch --jobs`` computes them ahead)."""
        return [*self._table_runs(), *self._fewshot_runs()]

    def results(self) -> pd.DataFrame:
        """One row per (method, seed): BIOSSES metrics at the selected checkpoint."""
        rows = []
        for name, seed in self._table_runs():
            r = self.run(name, seed)
            best = r["history"]["best_step"] if r["history"] else 0
            rows.append({"method": name, "label": r["label"], "seed": seed, "best_step": best, **r["metrics"]})
        return pd.DataFrame(rows)

    def histories(self) -> pd.DataFrame:
        """Every evaluation of every trained run: the curves behind the table."""
        rows = []
        for name in self.p.rows:
            if METHODS[name].trained:
                for seed in self.p.seeds:
                    for h in self.run(name, seed)["history"]["rows"]:
                        rows.append({"method": name, "seed": seed, **h})
        return pd.DataFrame(rows)

    def fewshot(self) -> pd.DataFrame:
        """Spearman at each corpus share, same number of steps (the paper's few-shot curve)."""
        rows = []
        for name, seed, pct in self._fewshot_runs():
            r = self.run(name, seed, pct)
            n = max(self.p.batch_size, math.ceil(len(self.corpus) * pct / 100))
            rows.append({"method": name, "percent": pct, "sentences": n, "seed": seed, **r["metrics"]})
        return pd.DataFrame(rows)

    def retrieval(self, methods: list[str], k: int = 2) -> pd.DataFrame:
        """Top-k neighbours of evenly spaced queries that have a gold partner, under each method
        (first seed), side by side as in the MixCSE paper's Table 7; ``partner`` marks a gold partner."""
        texts, with_partner = self.retrieval_texts, sorted(self.partners)
        step = max(1, len(with_partner) // max(1, self.p.retrieval_queries))
        queries = with_partner[::step][: self.p.retrieval_queries]
        rows = []
        for name in methods:
            emb = self.probe_embeddings(name, self.p.seeds[0])[: len(texts)]
            for q, hits in zip(queries, nearest_neighbours(emb, queries, k)):
                for rank, (cid, score) in enumerate(hits, 1):
                    rows.append({"query": texts[q], "method": name, "rank": rank, "neighbour": texts[cid],
                                 "cosine": round(score, 3), "partner": cid in self.partners[q]})
        return pd.DataFrame(rows)

    def retrieval_metric(self) -> pd.DataFrame:
        """Paraphrase hit@1 over the whole retrieval set for every (row, seed): is a query's nearest
        other sentence one of its gold partners? ``chance`` is what a random ranking reaches."""
        rows = []
        for name in self.p.rows:
            for seed in self.p.seeds if METHODS[name].trained else self.p.seeds[:1]:
                emb = self.probe_embeddings(name, seed)[: len(self.retrieval_texts)]
                rows.append({"method": name, "label": METHODS[name].label, "seed": seed, **paraphrase_hit_at_1(emb, self.partners)})
        return pd.DataFrame(rows)

    def probe_sources(self) -> list[str]:
        """Where each probe text comes from (legend of the embedding map)."""
        label = "cMedQQ test" if self.p.language == "zh" else self.eval_name
        return [label] * len(self.retrieval_texts) + ["PubMed (held out)"] * len(self.map_sentences)

    def tables(self, results: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """The study's result tables, titled; the first is the headline table."""
        cosine_title = (f"{self.eval_name}: cosine Spearman x100 (dev, test, all pairs), alignment and uniformity"
                        + (" of the cosine view (0/1 labels as scores)" if self.p.language == "zh" else ""))
        tables = {cosine_title: summarize(results)}
        if self.p.language == "zh":
            tables = {"ChineseBLUE: probe scores x100 on test": chineseblue_table(results), **tables}
        return tables

    def verdict(self, results: pd.DataFrame, iw_effect: dict | None = None) -> str:
        """``verdict`` of the cosine view, preceded by the per-task reading for zh."""
        lines = verdict(results, iw_effect)
        return f"{chineseblue_verdict(results)}\n{lines}" if self.p.language == "zh" else lines


def summarize(results: pd.DataFrame, metrics=("spearman_test", "spearman_all", "spearman_dev", "alignment", "uniformity")) -> pd.DataFrame:
    """Mean ± std (sample std) over seeds per method, Spearman and hit rates x100 as in the papers,
    in row order; a single-seed row shows its value alone."""
    out = []
    for _, grp in results.groupby("method", sort=False):
        row = {"method": grp["label"].iloc[0], "seeds": len(grp)}
        for m in metrics:
            percent = m.startswith(("spearman", "hit_at", "chance"))
            row[m] = mean_std(grp[m].to_numpy() * (100 if percent else 1), 2 if percent else 3)
        out.append(row)
    return pd.DataFrame(out)



def uses_instance_weighting(rows: list[str]) -> bool:
    return any(METHODS[r].iw for r in rows)


def best_trained_method(results: pd.DataFrame) -> str:
    """The trained row with the highest mean BIOSSES dev Spearman (selection never looks at test);
    a tie goes to the row listed first (SimCSE before its variants)."""
    trained = results[results.method.map(lambda m: METHODS[m].trained)]
    return trained.groupby("method", sort=False)["spearman_dev"].mean().idxmax()


def verdict(results: pd.DataFrame, iw_effect: dict | None = None) -> str:
    """A plain-language reading of the table, computed from it (Markdown); ``iw_effect`` is
    ``Study.instance_weighting_effect()``, reported when the table has instance-weighted rows."""
    means = results.groupby("method", sort=False)[["spearman_test", "spearman_all", "spearman_dev"]].mean() * 100
    lines = []
    if "zero_shot" in means.index:
        base = means.loc["zero_shot"]
        better = [m for m in means.index if m != "zero_shot" and means.loc[m, "spearman_all"] > base.spearman_all]
        lines.append(
            f"- Starting model: all-pairs {base.spearman_all:.2f}, test {base.spearman_test:.2f}. "
            f"{len(better)} of {len(means) - 1} trained rows beat it on all pairs (mean over seeds)"
            + (f": {', '.join(better)}." if better else ".")
        )
    if "simcse" in means.index:
        s = means.loc["simcse"]
        aug = [m for m in means.index if m not in ("zero_shot", "simcse") and means.loc[m, "spearman_all"] > s.spearman_all]
        lines.append(f"- SimCSE: all-pairs {s.spearman_all:.2f}. Rows above it: {', '.join(aug) if aug else 'none'}.")
    best = best_trained_method(results)
    lines.append(
        f"- Best trained row by dev Spearman: **{best}** (dev {means.loc[best, 'spearman_dev']:.2f}, "
        f"test {means.loc[best, 'spearman_test']:.2f}, all pairs {means.loc[best, 'spearman_all']:.2f})."
    )
    if iw_effect is not None:
        lines.append(
            f"- Instance weighting (phi {iw_effect['phi']}) removed {iw_effect['removed']} of {iw_effect['pairs']:,} in-batch "
            f"negative pairs ({iw_effect['share']:.2e}) on {iw_effect['batches']} sampled batches under the frozen starting "
            "model" + (": it is close to a no-op here, so each IW row matches its twin without IW." if iw_effect["share"] < 1e-3 else ".")
        )
    spread = results.groupby("method")["spearman_all"].std().dropna() * 100
    if len(spread):
        lines.append(f"- Seed-to-seed std of all-pairs Spearman ranges {spread.min():.2f}-{spread.max():.2f} points: "
                     "differences smaller than that are noise at this budget.")
    return "\n".join(lines)


def reference_score(results: pd.DataFrame, metric: str = "spearman_all") -> float | None:
    """The starting model's score, when the zero-shot row is in the table."""
    rows = results.loc[results.method == "zero_shot", metric]
    return float(rows.mean()) if len(rows) else None


def summarize_fewshot(fewshot: pd.DataFrame) -> pd.DataFrame:
    """The few-shot points as a table: one row per (method, corpus share)."""
    name = fewshot.method + " @ " + fewshot.percent.map("{:g}%".format)
    return summarize(fewshot.assign(method=name, label=name), ("spearman_test", "spearman_all"))


def write_record(
    record, study: Study, results: pd.DataFrame, fewshot: pd.DataFrame, tables: dict[str, pd.DataFrame],
    iw_effect: dict | None, retrieval: pd.DataFrame | None = None,
) -> Path:
    """``results.json`` (metrics, headline, provenance, compute time of every run used) and
    ``results_table.txt`` (every table, titled; printed by the batch runner)."""
    best = best_trained_method(results)
    means = results.drop(columns=["label", "seed", "best_step"]).groupby("method").mean()
    records = write_tables(study.report_dir, tables)
    return record.write(
        metrics={"per_seed": results.to_dict("records"), "mean": means.to_dict("index"),
                 "fewshot": fewshot.to_dict("records"), "best_by_dev": best, "instance_weighting_effect": iw_effect,
                 "retrieval": None if retrieval is None else retrieval.to_dict("records")},
        headline={"name": f"{study.eval_name} all-pairs Spearman x100 ({best}, best by dev)",
                  "value": float(means.loc[best, "spearman_all"] * 100)},
        tables=records, model=study.model_source.description,
        substitute_for=study.model_source.substitute_for, corpus_sentences=len(study.corpus),
        runs=len(study.run_seconds), compute_seconds=round(sum(study.run_seconds.values()), 1),
    )
