"""Study 3 (``notebooks/qfcl_summarization.ipynb``): the ablation rows, the fixed data split,
cached runs of ``kit.qfcl.train`` and the report's tables.

Rows: the cross-entropy baseline, + S (simple negatives at the encoder), + S + H (and hard
negatives), + S + H + D (QFCL: both at the decoder too). Every row shares seeds, data and budget.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from kit.data import SummaryPairs, load_healthcaremagic, load_meqsum
from kit.params import ParameterError, Params
from kit.qfcl import QFCLConfig, Seq2SeqFit, focus_accuracy, generate, prepare_pairs, rouge, spacy_pipeline, summarizer, train
from kit.report import cached_run, mean_std, write_tables


@dataclass(frozen=True)
class Row:
    name: str
    label: str
    simple: bool
    hard: bool
    decoder: bool


ROWS = {r.name: r for r in [
    Row("baseline", "baseline (cross-entropy only)", False, False, False),
    Row("s", "+S", True, False, False),
    Row("sh", "+S+H", True, True, False),
    Row("qfcl", "+S+H+D (QFCL)", True, True, True),
]}


@dataclass
class QFCLParams(Params):
    """Parameters of ``notebooks/qfcl_summarization.ipynb`` (defaults: the offline CPU setting)."""

    model: str = "minilm"
    dataset: Literal["meqsum", "healthcaremagic"] = "meqsum"
    rows: list[str] = field(default_factory=lambda: list(ROWS))
    seeds: list[int] = field(default_factory=lambda: [0])
    split_seed: int = 1234
    split_sizes: list[int] = field(default_factory=lambda: [400, 100, 500])  # train / dev / test (MeQSum)
    epochs: int = 5
    batch_size: int = 16
    lr: float = 1e-5
    max_source: int = 128
    max_target: int = 32
    n_hard: int = 64
    queue_size: int = 4096
    momentum: float = 0.999
    temperature: float = 0.07
    alpha: float = 1.0
    beta: float = 0.5
    num_beams: int = 4
    examples: int = 5
    device: str = "auto"
    data_path: str | None = None

    def validate(self) -> None:
        self.check_members(("rows",), ROWS)
        if not self.seeds:
            raise ParameterError("parameter 'seeds': give at least one seed")
        if len(self.split_sizes) != 3 or min(self.split_sizes) < 1:
            raise ParameterError(f"parameter 'split_sizes': three positive sizes (train, dev, test), got {self.split_sizes}")
        if not 0 <= self.momentum < 1:
            raise ParameterError(f"parameter 'momentum': in [0, 1), got {self.momentum}")
        fixed_split(self)  # the sizes must fit the dataset: fail before any run starts

    def config(self, row: Row) -> QFCLConfig:
        return QFCLConfig(row.simple, row.hard, row.decoder, self.queue_size, self.momentum, self.temperature,
                          self.alpha, self.beta)

    def fit(self, seed: int) -> Seq2SeqFit:
        return Seq2SeqFit(self.epochs, self.batch_size, self.lr, max_source=self.max_source, max_target=self.max_target,
                          n_hard=self.n_hard, seed=seed, device=self.device)


def fixed_split(p: QFCLParams) -> tuple[SummaryPairs, SummaryPairs, SummaryPairs, str]:
    """The seeded train / dev / test split and a sentence stating it; ParameterError if the sizes do not fit.

    MeQSum: one permutation of its pairs. HealthCareMagic subset: train and dev from its train split,
    test from the start of its valid split.
    """
    n_train, n_dev, n_test = p.split_sizes
    if p.dataset == "meqsum":
        data = load_meqsum(p.data_path)
        if sum(p.split_sizes) > len(data):
            raise ParameterError(f"parameter 'split_sizes': {p.split_sizes} needs {sum(p.split_sizes)} pairs, MeQSum has {len(data)}")
        order = np.random.default_rng(p.split_seed).permutation(len(data))
        parts = (order[:n_train], order[n_train:n_train + n_dev], order[n_train + n_dev:n_train + n_dev + n_test])
        note = (f"MeQSum has no official split: a seeded permutation (seed {p.split_seed}) of its {len(data):,} pairs gives "
                f"train {n_train} / dev {n_dev} / test {n_test} (the paper uses 400 / 100 / 500).")
        return (*(data.take(i) for i in parts), note)
    train, valid = load_healthcaremagic("train", p.data_path), load_healthcaremagic("valid", p.data_path)
    if n_train + n_dev > len(train) or n_test > len(valid):
        raise ParameterError(f"parameter 'split_sizes': {p.split_sizes} does not fit the HealthCareMagic subset "
                             f"(train + dev <= {len(train)} from its train split, test <= {len(valid)} from its valid split)")
    order = np.random.default_rng(p.split_seed).permutation(len(train))
    note = (f"HealthCareMagic public subset: train {n_train} and dev {n_dev} drawn from its train split of {len(train):,} "
            f"(seed {p.split_seed}); test = the first {n_test} of its valid split ({len(valid)} pairs). The full "
            "HealthCareMagic (~226k) and iCliniq sets of the paper are not available here.")
    return train.take(order[n_dev:n_dev + n_train]), train.take(order[:n_dev]), valid.take(range(n_test)), note


class Study:
    """Fixes the split, prepares focus and hard negatives once, runs (or loads) each (row, seed)."""

    def __init__(self, params: QFCLParams, report_dir: str | Path):
        self.p = params
        self.report_dir = Path(report_dir)
        self.run_seconds: dict[str, float] = {}
        self.train_data, self.dev_data, self.test_data, self.split_note = fixed_split(params)
        nlp = spacy_pipeline()
        self.train_pairs, self.dictionary = prepare_pairs(self.train_data.chq, self.train_data.summary, nlp, params.n_hard,
                                                          params.split_seed)
        self.dev_pairs, _ = prepare_pairs(self.dev_data.chq, self.dev_data.summary, nlp, params.n_hard, params.split_seed,
                                          self.dictionary)
        self.test_pairs, _ = prepare_pairs(self.test_data.chq, self.test_data.summary, nlp, 0, params.split_seed,
                                           self.dictionary)

    def describe(self) -> str:
        """What this run uses (Markdown), stating substitutes plainly."""
        from kit.models import resolve_model

        p = self.p
        sub = ""
        if p.model == "minilm" or resolve_model(p.model).substitute_for:
            sub = (" **Substitute** for `facebook/bart-large` (no pretrained seq2seq model is available offline): a BERT2BERT "
                   "encoder-decoder warm-started from the offline encoder, its decoder's cross-attention newly initialised. "
                   "It has never generated text before this training, so absolute ROUGE is far below BART's.")
        return (
            f"**Model**: `{p.model}`.{sub}\n\n**Data**: {self.split_note}\n\n"
            f"**Training** (every row): {p.epochs} epochs, batch {p.batch_size}, lr {p.lr}, source/target max length "
            f"{p.max_source}/{p.max_target}, seeds {p.seeds}. Contrastive rows: queue K {p.queue_size}, momentum m {p.momentum}, "
            f"temperature {p.temperature}, N_h {p.n_hard} hard negatives per pair, alpha {p.alpha}, beta {p.beta}; "
            "L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG. Test summaries by beam search "
            f"({p.num_beams} beams, at most {p.max_target} new tokens); no checkpoint selection (last epoch)."
        )

    # ---- runs -------------------------------------------------------------------
    def _run_key(self, row: Row, seed: int) -> str:
        p = self.p
        settings = {"row": asdict(row), "seed": seed, "model": p.model, "dataset": p.dataset, "data": p.data_path,
                    "split": [p.split_seed, p.split_sizes], "cfg": asdict(p.config(row)), "fit": asdict(p.fit(seed)),
                    "num_beams": p.num_beams}
        digest = hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
        return f"{row.name}-seed{seed}-{digest}"

    def run(self, row_name: str, seed: int) -> dict:
        """Train one row at one seed, then summarize the test CHQs by beam search (cached)."""
        row = ROWS[row_name]

        def compute() -> dict:
            s = summarizer(self.p.model, seed)
            history = train(s, self.train_pairs, self.dev_pairs, self.p.config(row), self.p.fit(seed), desc=f"{row_name} seed {seed}")
            summaries = generate(s, self.test_data.chq, self.p.max_source, self.p.max_target, self.p.num_beams)
            return {"row": row_name, "label": row.label, "seed": seed, "history": history, "summaries": summaries,
                    "rouge": rouge(summaries, self.test_data.summary),
                    "focus_accuracy": focus_accuracy(summaries, [p.focus for p in self.test_pairs]), "model": s.description}

        return cached_run(self.report_dir / "runs" / self._run_key(row, seed), compute, self.run_seconds)

    def planned_runs(self) -> list[tuple[str, int]]:
        """The arguments of every ``run`` the notebook makes (``kit.batch --jobs`` computes them ahead)."""
        return [(r, seed) for r in self.p.rows for seed in self.p.seeds]

    def results(self) -> pd.DataFrame:
        """One row per (row, seed): test ROUGE-1/2/L and focus accuracy."""
        return pd.DataFrame([{"row": r, "label": ROWS[r].label, "seed": seed, **res["rouge"], "focus_accuracy": res["focus_accuracy"]}
                             for r, seed in self.planned_runs() for res in [self.run(r, seed)]])

    def histories(self) -> pd.DataFrame:
        return pd.DataFrame([{"row": r, "label": ROWS[r].label, "seed": seed, **h}
                             for r in self.p.rows for seed in self.p.seeds for h in self.run(r, seed)["history"]])

    def table(self, results: pd.DataFrame) -> pd.DataFrame:
        """ROUGE-1/2/L F1 x100 and focus accuracy %, mean ± std over seeds, in row order."""
        return pd.DataFrame([{"model": g.label.iloc[0], "seeds": len(g),
                              **{m: mean_std(g[m]) for m in ("rouge1", "rouge2", "rougeL", "focus_accuracy")}}
                             for _, g in results.groupby("row", sort=False)])

    def examples(self) -> pd.DataFrame:
        """CHQ, gold FAQ and each row's summary (first seed) for evenly spaced test questions."""
        idx = np.linspace(0, len(self.test_data) - 1, min(self.p.examples, len(self.test_data))).astype(int)
        runs = {ROWS[r].label: self.run(r, self.p.seeds[0])["summaries"] for r in self.p.rows}
        return pd.DataFrame([{"CHQ": self.test_data.chq[i], "gold FAQ": self.test_data.summary[i],
                              **{label: s[i] for label, s in runs.items()}} for i in idx])

    def hard_negative_examples(self, n: int = 5) -> pd.DataFrame:
        """Training FAQs with their focus and two of their hard negatives."""
        with_hard = [p for p in self.train_pairs if p.hard][:n]
        return pd.DataFrame([{"FAQ": p.faq, "focus": "; ".join(p.focus), "hard negatives": " | ".join(p.hard[:2])}
                             for p in with_hard])

    def focus_stats(self) -> dict:
        pairs = self.train_pairs
        return {"train pairs": len(pairs), "with a focus phrase": sum(bool(p.focus) for p in pairs),
                "with hard negatives": sum(bool(p.hard) for p in pairs),
                "NP dictionary phrases": sum(len(v) for v in self.dictionary.values()), "labels": len(self.dictionary)}

    def verdict(self, results: pd.DataFrame) -> str:
        """The measured ordering of the rows by ROUGE-L, against the seed spread (Markdown)."""
        means = results.groupby("row", sort=False).rougeL.mean()
        spread = results.groupby("row").rougeL.std().max()
        order = " > ".join(f"{ROWS[r].label} {v:.2f}" for r, v in means.sort_values(ascending=False).items())
        noise = f" Largest seed std of ROUGE-L: {spread:.2f}." if np.isfinite(spread) else " One seed: no spread measured."
        return f"- Test ROUGE-L, highest first: {order}.{noise} The paper's MeQSum order is QFCL > +S+H > +S > baseline."


def write_record(record, study: Study, results: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> Path:
    """``results.json`` (per-seed scores, histories, tables, provenance) and ``results_table.txt``."""
    records = write_tables(study.report_dir, tables)
    means = results.groupby("row", sort=False)[["rouge1", "rouge2", "rougeL", "focus_accuracy"]].mean()
    best = "qfcl" if "qfcl" in means.index else means.index[-1]
    return record.write(
        metrics={"per_seed": results.to_dict("records"), "mean": means.to_dict("index"),
                 "histories": study.histories().to_dict("records")},
        headline={"name": f"test ROUGE-L ({ROWS[best].label})", "value": float(means.loc[best, "rougeL"])},
        tables=records, split=study.split_note,
        focus=study.focus_stats(), runs=len(study.run_seconds), compute_seconds=round(sum(study.run_seconds.values()), 1),
    )
