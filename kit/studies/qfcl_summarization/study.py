"""Study 3's orchestration: the fixed split with focus and hard negatives prepared once, each (row, seed)
trained and cached, the report's tables, the paired comparisons and the record.

Rows: the cross-entropy baseline, + S (simple negatives at the encoder), + S + H (and hard
negatives), + S + H + D (QFCL: both at the decoder too). Every row shares seeds, data and budget.

Every run keeps its per-question ROUGE on the test split and its CHQ encoder's outputs on the suite tasks
of ``suite``; ``rouge_report`` and ``suite_report`` compare each contrastive row with the row before it in the
paper's ablation order (``Study.baseline_of``) by the paired test of ``kit.evaluation.rows`` (over the test
questions, or the task's items, and the seeds). The ROUGE report also holds an extractive floor, the lead row
(``lead_summaries``: each test question's first sentence, no training), and the positive control
(``Study.control``): the baseline must beat that floor and must not be collapsed to a template
(``repeated_share``, ``COLLAPSE_SHARE``, ``COLLAPSE_RATIO``) before any comparison is a finding.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
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

LEAD = "lead"
"""The extractive floor's row: no training, each test question's first sentence as its summary (``lead_summaries``)."""
LEAD_LABEL = "extractive floor: the question's first sentence"

ABLATION_ORDER = tuple(ROWS)
"""The rows in the order the paper's ablation study adds QFCL's components (Zhang et al. 2022, COLING: its ablation
table, which the design notes (DESIGN.md) list as "ROUGE-1/2/L table with ablations (+S, +S+H, +S+H+D)"): the
baseline, + S, + S + H, + S + H + D (full QFCL). The paper claims each component adds to the ones before it, so each
row is compared with the row before it (``Study.baseline_of``)."""

COLLAPSE_SHARE = 0.5
"""A summarizer is collapsed to a template when more than this share of its test summaries (at one seed) repeats
another summary of the same seed: most questions then get a stock output, and its ROUGE measures the template's overlap
with the references' common wording ("What are the treatments for ..."), not summaries of the questions; a contrastive
row that beats it may only have escaped the collapse, which says nothing of the component it adds."""
COLLAPSE_RATIO = 2.0
"""... and that share is more than this multiple of the reference summaries' own share (their stock phrasings may
repeat too: a summarizer that repeats no more than twice as often as the gold summaries is not collapsed)."""

_FIELD_LABEL = re.compile(r"^[ \t]*(?:SUBJECT|MESSAGE)[ \t]*:[ \t]*", re.MULTILINE | re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+|\s*\n\s*")


def first_sentence(question: str) -> str:
    """A question's first sentence: its text up to the first '.', '?' or '!' followed by white space, or up to its
    first line break, stripped (a rule, not a trained splitter: "Dr. X" ends a sentence at "Dr."). MeQSum's field
    labels (``SUBJECT:`` and ``MESSAGE:`` at the start of a line) are not words of the question and are dropped first,
    so a question with a subject line leads with its subject. '' for a question without words."""
    text = _FIELD_LABEL.sub("", question)
    return next((part.strip() for part in _SENTENCE_BREAK.split(text) if part.strip()), "")


def truncated(text: str, tokenizer, max_tokens: int) -> str:
    """``text`` cut after its first ``max_tokens`` tokens of ``tokenizer`` (no special tokens), at the end of the last
    token kept (the original characters, not the tokenizer's decoding); ``text`` itself when it has no more."""
    if tokenizer.is_fast:
        offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        return text if len(offsets) <= max_tokens else text[: offsets[max_tokens - 1][1]].rstrip()
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return text if len(ids) <= max_tokens else tokenizer.decode(ids[:max_tokens]).strip()


def lead_summaries(questions: Sequence[str], tokenizer, max_tokens: int) -> list[str]:
    """The lead-1 baseline of summarization papers: each question's ``first_sentence``, truncated to its first
    ``max_tokens`` tokens when it is longer (``truncated``; the summarizer's tokenizer and ``max_target``: the
    generated summaries' budget). Computed from the questions alone: no model, no training."""
    return [truncated(first_sentence(q), tokenizer, max_tokens) for q in questions]


def repeated_share(summaries: Sequence[str]) -> float:
    """The share of ``summaries`` identical to another of them (case and runs of white space ignored; empty ones
    count, as identical to each other): 3 of 4 the same, 0.75; all distinct, 0. 0 for none."""
    keys = [" ".join(s.lower().split()) for s in summaries]
    counts = Counter(keys)
    return sum(counts[k] > 1 for k in keys) / len(keys) if keys else 0.0


@dataclass(frozen=True)
class Collapse:
    """A row's template-collapse check: ``shares`` (``repeated_share`` of its test summaries at each of ``seeds``)
    against ``reference`` (the same share of the reference summaries)."""

    row: str
    label: str
    seeds: tuple[int, ...]
    shares: tuple[float, ...]
    reference: float

    @property
    def share(self) -> float:
        """The largest share over the seeds."""
        return max(self.shares)

    @property
    def seed(self) -> int:
        """The seed of the largest share (the first, on a tie)."""
        return self.seeds[self.shares.index(self.share)]

    @property
    def collapsed(self) -> bool:
        """More than ``COLLAPSE_SHARE`` of the summaries repeat another, and more than ``COLLAPSE_RATIO`` times the
        references' share."""
        return self.share > COLLAPSE_SHARE and self.share > COLLAPSE_RATIO * self.reference

    def veto(self) -> str | None:
        """The positive control's veto sentence when the row is collapsed; None when not."""
        if not self.collapsed:
            return None
        at = f"seed {self.seed}" + (f", the most of its {len(self.seeds)} seeds" if len(self.seeds) > 1 else "")
        return (
            f"{self.label} is collapsed to a template: {self.share:.0%} of its test summaries ({at}) repeat another "
            f"summary of the same seed, against {self.reference:.0%} of the reference summaries (the limit: more than "
            f"{COLLAPSE_SHARE:.0%}, and more than {COLLAPSE_RATIO:g} times the references' share)."
        )

    def record(self) -> dict:
        return {
            "row": self.row,
            "seeds": list(self.seeds),
            "shares": list(self.shares),
            "share": self.share,
            "reference": self.reference,
            "collapsed": self.collapsed,
        }


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
        """CHQ, gold FAQ, the extractive floor's summary and each row's (first seed) for evenly spaced test
        questions."""
        idx = np.linspace(0, len(self.test_data) - 1, min(self.p.examples, len(self.test_data))).astype(int)
        runs = {
            LEAD_LABEL: self.lead,
            **{ROWS[r].label: self.run(r, self.p.seeds[0])["summaries"] for r in self.p.rows},
        }
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
        return LEAD_LABEL if row == LEAD else ROWS[row].label

    def row_fixed(self, row: str) -> bool:
        """The extractive floor (no training): one set of outputs, no run-to-run variance."""
        return row == LEAD

    def row_run_dir(self, row: str, seed: int) -> Path:
        return self._run_dir(ROWS[row], seed)

    def paper_effect(self) -> suite_rows.PaperEffect | None:
        """The paper's MeQSum ROUGE-L gain (its HealthCareMagic numbers are not among the kit's references)."""
        if self.p.dataset != "meqsum":
            return None
        return suite_rows.PaperEffect("meqsum-test-rougeL", 5.33, "QFCL over BART on MeQSum (ROUGE-L 49.08 vs 43.75)")

    def baseline_of(self, row: str) -> str | None:
        """The row before ``row`` in the paper's ablation order (``ABLATION_ORDER``: + S against the baseline, + S + H
        against + S, + S + H + D (QFCL) against + S + H), as the paper claims each component adds to the ones before
        it; the nearest earlier row of the order when that one is not in the run's rows; None for the baseline and the
        extractive floor (the positive control compares them) or when no earlier row is in the run."""
        if row not in ABLATION_ORDER:
            return None
        earlier = [r for r in ABLATION_ORDER[: ABLATION_ORDER.index(row)] if r in self.p.rows]
        return earlier[-1] if earlier else None

    # ---- the extractive floor and the template-collapse check -------------------------------------------------
    @functools.cached_property
    def lead(self) -> list[str]:
        """The extractive floor's summary of every test question (``lead_summaries``): its first sentence, at most
        ``max_target`` tokens of the summarizer's tokenizer."""
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(self.model_source.path)
        return lead_summaries(self.test_data.chq, tokenizer, self.p.max_target)

    def lead_outputs(self) -> suite_rows.RunOutputs:
        """The floor's per-question ROUGE on every ROUGE task, by the code that scores the generated summaries."""
        return rouge_outputs(self.rouge_tasks, rouge_items(self.lead, self.test_data.summary))

    def collapse_of(self, row: str) -> Collapse:
        """``row``'s template-collapse check: the ``repeated_share`` of its test summaries at each seed, against the
        reference summaries'."""
        seeds = self.row_seeds()[row]
        return Collapse(
            row,
            self.row_label(row),
            tuple(seeds),
            tuple(repeated_share(self.run(row, seed)["summaries"]) for seed in seeds),
            repeated_share(self.test_data.summary),
        )

    def collapse(self) -> pd.DataFrame:
        """The template-collapse check of every trained row (the positive control vetoes a collapsed baseline): the
        share of its test summaries that repeat another summary of the same seed, per seed and the largest, beside the
        reference summaries' share, in %."""
        checks = [self.collapse_of(row) for row in self.p.rows]
        reference = {
            "summaries": "reference summaries (gold FAQs)",
            "per seed %": "",
            "largest %": round(100 * checks[0].reference, 1),
            "collapsed": "",
        }
        return pd.DataFrame(
            [
                reference,
                *(
                    {
                        "summaries": c.label,
                        "per seed %": ", ".join(f"{100 * x:.1f}" for x in c.shares),
                        "largest %": round(100 * c.share, 1),
                        "collapsed": "yes" if c.collapsed else "no",
                    }
                    for c in checks
                ),
            ]
        )

    def collapse_text(self) -> str:
        """The collapse check in a sentence (Markdown), with its limit."""
        checks = [self.collapse_of(row) for row in self.p.rows]
        collapsed = [c.label for c in checks if c.collapsed]
        return (
            f"**Template collapse**: the share of each row's test summaries identical to another summary of the same "
            f"seed (the largest over its seeds), against {checks[0].reference:.0%} of the reference summaries; a row "
            f"is collapsed when more than {COLLAPSE_SHARE:.0%} of its summaries repeat another and more than "
            f"{COLLAPSE_RATIO:g} times the references' share. "
            + (f"Collapsed here: {', '.join(collapsed)}." if collapsed else "No row is collapsed here.")
        )

    def collapse_record(self) -> dict:
        """The collapse check for ``results.json``: its limit, the references' share and each row's."""
        return {
            "limit": {"share": COLLAPSE_SHARE, "ratio_to_references": COLLAPSE_RATIO},
            "rows": [self.collapse_of(row).record() for row in self.p.rows],
        }

    # ---- the positive control -----------------------------------------------------------------------------------
    def control(self) -> suite_rows.Control | None:
        """The baseline summarizer against the extractive floor (``LEAD``), on the primary's task when that is a ROUGE
        task, else on ROUGE-L (the first ROUGE task; the paper's main metric), vetoed when the baseline is collapsed to
        a template (``Collapse.veto``); None when the run has no baseline row. A summarizer that cannot beat the
        question's first sentence, or writes one stock summary for most questions, has not learned the task: no
        ablation of it can test the paper's claim."""
        if "baseline" not in self.p.rows:
            return None
        primary = self.primary()
        names = [t.name for t in self.rouge_tasks]
        task = primary.task if primary is not None and primary.task in names else names[0]
        veto = self.collapse_of("baseline").veto()
        return suite_rows.Control(
            "baseline",
            LEAD,
            task,
            "the baseline summarizer beats the question's first sentence and is not collapsed to a template",
            "",
            (veto,) if veto else (),
        )

    def control_report(self) -> suite_rows.SuiteReport:
        """The report that holds the positive control: ROUGE on the test questions (``rouge_report``)."""
        return self.rouge_report()

    def rouge_report(self) -> suite_rows.SuiteReport:
        """ROUGE-L, -1 and -2 on the test questions: the extractive floor (``LEAD``, deterministic, one set of
        outputs) and every trained row, each contrastive row against ``baseline_of`` it and the baseline against the
        floor (the positive control) by the paired test over the test questions and the seeds (the runs'
        ``rouge_items``). The floor has no encoder: it is not in the suite report."""
        outputs = {
            LEAD: [self.lead_outputs()],
            **{
                r: [rouge_outputs(self.rouge_tasks, self.run(r, seed)["rouge_items"]) for seed in seeds]
                for r, seeds in self.row_seeds().items()
            },
        }
        return self.row_report(outputs, self.rouge_tasks, "ROUGE on the test questions")
