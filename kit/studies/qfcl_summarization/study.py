"""Study 3's orchestration: the fixed split with focus and hard negatives prepared once, each (row, seed)
trained and cached, the report's tables, the paired comparisons and the record.

Rows: the cross-entropy baseline, + S (simple negatives at the encoder), + S + H (and hard
negatives), + S + H + D (QFCL: both at the decoder too). Every row shares seeds, data and budget.

Every run keeps its per-question ROUGE on the test split and its CHQ encoder's outputs on the suite tasks
of ``suite``; ``rouge_report`` and ``suite_report`` compare every row with the baseline by the paired
bootstrap of ``kit.evaluation.rows`` (over the test questions, or the task's items, and the seeds).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.compute import Work, encoding
from kit.core.fingerprint import digest
from kit.evaluation import rows as suite_rows
from kit.evaluation.summarization import rouge_items, rouge_outputs, rouge_tasks
from kit.report.tables import mean_std
from kit.studies.qfcl_summarization.focus import focus_accuracy, prepare_pairs, spacy_pipeline
from kit.studies.qfcl_summarization.params import ROWS, QFCLParams, Row
from kit.studies.qfcl_summarization.seq2seq import CHQEncoder, generate, summarizer
from kit.studies.qfcl_summarization.train import train
from kit.study import StudyBase


class Study(StudyBase):
    """Fixes the split, prepares focus and hard negatives once, runs (or loads) each (row, seed). The suite
    section compares every row's CHQ encoder with the baseline's; the tasks whose data this study trains on
    (MeQSum, HealthCareMagic) are reported apart."""

    NO_SELECTION = "no data: every row keeps the weights of its last epoch (this study selects no checkpoint)"
    SUITE_TITLE = "CHQ encoder on the evaluation suite"

    p: QFCLParams

    def __init__(self, params: QFCLParams, report_dir: str | Path):
        super().__init__(params, report_dir)
        self.train_data, self.dev_data, self.test_data, self.split_note = params.split()
        nlp = spacy_pipeline()
        self.train_pairs, self.dictionary = prepare_pairs(
            self.train_data.chq, self.train_data.summary, nlp, params.n_hard, params.split_seed
        )
        self.dev_pairs, _ = prepare_pairs(
            self.dev_data.chq, self.dev_data.summary, nlp, params.n_hard, params.split_seed, self.dictionary
        )
        self.test_pairs, _ = prepare_pairs(
            self.test_data.chq, self.test_data.summary, nlp, 0, params.split_seed, self.dictionary
        )
        # Everything a run reads: the pairs as split, with their foci and hard negatives (spaCy's output included).
        self.data_digest = digest(self.train_pairs, self.dev_pairs, self.test_pairs)
        self.rouge_tasks = rouge_tasks(params.dataset, self.test_data, f"the run's test split ({self.split_note})")

    # ---- runs -------------------------------------------------------------------
    def _run_dir(self, row: Row, seed: int) -> Path:
        p = self.p
        settings = {
            "row": asdict(row),
            "seed": seed,
            "model": p.model,
            "dataset": p.dataset,
            "cfg": asdict(p.config(row)),
            "fit": asdict(p.fit(seed)),
            "num_beams": p.num_beams,
            "suite": p.suite,
        }
        return self.run_dir(f"{row.name}-seed{seed}", settings, self.data_digest)

    def run(self, row_name: str, seed: int) -> dict:
        """Train one row at one seed, then summarize the test CHQs by beam search, keeping every question's
        ROUGE, and score the CHQ encoder on the suite tasks (``SUITE_FILE`` beside the result) (cached)."""
        row = ROWS[row_name]
        run_dir = self._run_dir(row, seed)

        def compute() -> dict:
            s = summarizer(self.p.model, seed)
            history = train(
                s,
                self.train_pairs,
                self.dev_pairs,
                self.p.config(row),
                self.p.fit(seed),
                desc=self.run_label(row_name, seed),
            )
            summaries = generate(s, self.test_data.chq, self.p.max_source, self.p.max_target, self.p.num_beams)
            self.score_suite(CHQEncoder(s), run_dir)
            items = rouge_items(summaries, self.test_data.summary)
            return {
                "row": row_name,
                "label": row.label,
                "seed": seed,
                "history": history,
                "summaries": summaries,
                "rouge": {k: 100 * float(np.mean(v)) for k, v in items.items()},
                "rouge_items": items,
                "focus_accuracy": focus_accuracy(summaries, [p.focus for p in self.test_pairs]),
                "model": s.description,
            }

        return self.cached(run_dir, compute)

    def run_label(self, row_name: str, seed: int) -> str:
        return f"{row_name} seed {seed}"

    @classmethod
    def workload(cls, p: QFCLParams) -> list[Work]:
        """Per run (row, seed): ``epochs`` passes over the training pairs in steps of the study's own loop (the
        encoder reads each question and the decoder writes its summary, forward and backward; the contrastive rows'
        key encoder reads each summary and, with hard negatives, ``n_hard`` negatives a pair, counted at the
        summaries' length); after every epoch, greedy dev summaries and the similarity probe; then beam search on
        the test questions and the encoder on the suite. Generated summaries count at their references' length.
        The loop's floor is the kit's contrastive loop's (``kit.core.compute.FLOOR_OF``), a plain PyTorch loop
        like this one."""
        train, dev, test, _ = p.split()
        runs = [ROWS[row] for row in p.rows for _ in p.seeds]
        contrastive, hard = sum(r.simple or r.hard for r in runs), sum(r.hard for r in runs)
        n, epochs = len(runs), p.epochs
        source = {"max_length": p.max_source, "part": "encoder"}  # questions through the encoder
        target = {"max_length": p.max_target, "part": "decoder"}  # summaries through the decoder
        faq = {"max_length": p.max_target, "part": "encoder"}  # summaries and negatives through the (key) encoder
        step = {"loop": "kit"}  # work inside the training steps
        learn = {"train": True, "batch": p.batch_size}  # the one item that counts the steps
        dev_summaries, probe = "after each epoch: greedy dev summaries", "after each epoch, the probe"
        return [
            encoding("the encoder reads each question", p.model, train.chq, n * epochs, **learn, **source, **step),
            encoding(
                "the decoder writes its summary", p.model, train.summary, n * epochs, train=True, **target, **step
            ),
            encoding("the key encoder reads each summary", p.model, train.summary, contrastive * epochs, **faq, **step),
            encoding(
                "the key encoder reads hard negatives", p.model, train.summary, hard * epochs * p.n_hard, **faq, **step
            ),
            encoding(dev_summaries, p.model, dev.chq, n * epochs, **source),
            encoding(dev_summaries, p.model, dev.summary, n * epochs, **target),
            encoding(f"{probe}: the questions", p.model, dev.chq, 2 * n * epochs, **source),
            encoding(f"{probe}: the greedy summaries", p.model, dev.summary, n * epochs, **target),
            encoding(f"{probe}: references, hard negatives", p.model, dev.summary, n * epochs * (1 + p.n_hard), **faq),
            encoding("beam search on the test questions", p.model, test.chq, n, **source),
            encoding("beam search on the test questions", p.model, test.summary, n * p.num_beams, **target),
            *cls.evaluation_work(p, n, 0, part="encoder"),
        ]

    def planned_runs(self) -> list[tuple[str, int]]:
        """The arguments of every ``run`` the notebook makes (``kit.batch`` computes them ahead)."""
        return self.table_runs()

    def results(self) -> pd.DataFrame:
        """One row per (row, seed): test ROUGE-1/2/L and focus accuracy."""
        return pd.DataFrame(
            [
                {
                    "row": r,
                    "label": ROWS[r].label,
                    "seed": seed,
                    **res["rouge"],
                    "focus_accuracy": res["focus_accuracy"],
                }
                for r, seed in self.planned_runs()
                for res in [self.run(r, seed)]
            ]
        )

    def histories(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"row": r, "label": ROWS[r].label, "seed": seed, **h}
                for r in self.p.rows
                for seed in self.p.seeds
                for h in self.run(r, seed)["history"]
            ]
        )

    def table(self, results: pd.DataFrame) -> pd.DataFrame:
        """ROUGE-1/2/L F1 x100 and focus accuracy %, mean ± std over seeds, in row order."""
        return pd.DataFrame(
            [
                {
                    "model": g.label.iloc[0],
                    "seeds": len(g),
                    **{m: mean_std(g[m]) for m in ("rouge1", "rouge2", "rougeL", "focus_accuracy")},
                }
                for _, g in results.groupby("row", sort=False)
            ]
        )

    def examples(self) -> pd.DataFrame:
        """CHQ, gold FAQ and each row's summary (first seed) for evenly spaced test questions."""
        idx = np.linspace(0, len(self.test_data) - 1, min(self.p.examples, len(self.test_data))).astype(int)
        runs = {ROWS[r].label: self.run(r, self.p.seeds[0])["summaries"] for r in self.p.rows}
        return pd.DataFrame(
            [
                {
                    "CHQ": self.test_data.chq[i],
                    "gold FAQ": self.test_data.summary[i],
                    **{label: s[i] for label, s in runs.items()},
                }
                for i in idx
            ]
        )

    def hard_negative_examples(self, n: int = 5) -> pd.DataFrame:
        """Training FAQs with their focus and two of their hard negatives."""
        with_hard = [p for p in self.train_pairs if p.hard][:n]
        return pd.DataFrame(
            [{"FAQ": p.faq, "focus": "; ".join(p.focus), "hard negatives": " | ".join(p.hard[:2])} for p in with_hard]
        )

    def focus_stats(self) -> dict:
        pairs = self.train_pairs
        return {
            "train pairs": len(pairs),
            "with a focus phrase": sum(bool(p.focus) for p in pairs),
            "with hard negatives": sum(bool(p.hard) for p in pairs),
            "NP dictionary phrases": sum(len(v) for v in self.dictionary.values()),
            "labels": len(self.dictionary),
        }

    # ---- paired comparisons (StudyBase's table-row protocol, kit.evaluation.rows) ---------------------------
    def row_seeds(self) -> dict[str, list[int]]:
        return {r: list(self.p.seeds) for r in self.p.rows}

    def row_label(self, row: str) -> str:
        return ROWS[row].label

    def row_run_dir(self, row: str, seed: int) -> Path:
        return self._run_dir(ROWS[row], seed)

    def paper_effect(self) -> suite_rows.PaperEffect | None:
        """The paper's MeQSum ROUGE-L gain (its HealthCareMagic numbers are not among the kit's references)."""
        if self.p.dataset != "meqsum":
            return None
        return suite_rows.PaperEffect("meqsum-test-rougeL", 5.33, "QFCL over BART on MeQSum (ROUGE-L 49.08 vs 43.75)")

    def baseline_of(self, row: str) -> str | None:
        """Every row against the baseline (cross-entropy only), when the table has it."""
        return "baseline" if row != "baseline" and "baseline" in self.p.rows else None

    def rouge_report(self) -> suite_rows.SuiteReport:
        """ROUGE-L, -1 and -2 on the test questions, every row against the baseline by the paired bootstrap
        over the test questions and the seeds (the runs' ``rouge_items``)."""
        outputs = {
            r: [rouge_outputs(self.rouge_tasks, self.run(r, seed)["rouge_items"]) for seed in seeds]
            for r, seeds in self.row_seeds().items()
        }
        return self.row_report(outputs, self.rouge_tasks, "ROUGE on the test questions")
