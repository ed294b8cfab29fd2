"""Summarization: a model's summaries of the test questions against the gold summaries, ROUGE-1/2/L F1
(Lin 2004) with Porter stemming (Google's ``rouge-score`` package, as in the QFCL paper). The items are the
questions and each metric is a mean over them, so the bootstrap draws questions (and seeds).

A study builds its tasks from the test split of each run (``rouge_tasks``): the outputs come from generated
summaries (``SummaryRougeTask.score_summaries``), not from embeddings, and a run keeps them per question
(``rouge_items``) so that a report compares rows with the paired bootstrap of ``kit.evaluation.rows``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.data import HEALTHCAREMAGIC, MEQSUM, SummaryPairs
from kit.evaluation.bootstrap import ItemScores, Mean
from kit.evaluation.rows import RunOutputs
from kit.evaluation.task import Task

ROUGE = ("rouge1", "rouge2", "rougeL")


def rouge_items(predictions: list[str], references: list[str]) -> dict[str, list[float]]:
    """ROUGE-1/2/L F1 of every prediction against its reference, in [0, 1], with Porter stemming (Google's
    ``rouge-score`` package): the per-question outputs that the paired bootstrap resamples."""
    from rouge_score import rouge_scorer

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    scorer = rouge_scorer.RougeScorer(list(ROUGE), use_stemmer=True)
    scores = [scorer.score(ref, pred) for pred, ref in zip(predictions, references)]
    return {k: [float(s[k].fmeasure) for s in scores] for k in ROUGE}


def rouge(predictions: list[str], references: list[str]) -> dict[str, float]:
    """Mean ROUGE-1/2/L F1 x100: the mean of ``rouge_items`` over the questions."""
    return {k: 100 * float(np.mean(v)) for k, v in rouge_items(predictions, references).items()}


ROUGE_LABELS = {"rouge1": "ROUGE-1 F1", "rouge2": "ROUGE-2 F1", "rougeL": "ROUGE-L F1"}
DATASETS = {"meqsum": ("MeQSum", MEQSUM), "healthcaremagic": ("HealthCareMagic subset", HEALTHCAREMAGIC)}


@dataclass(frozen=True)
class SummaryRougeTask(Task):
    """The study's test split as a task: the items are the test questions (``load()`` returns the test
    ``SummaryPairs``), a row's outputs are the ROUGE-1/2/L F1 of its summary of each question against the
    gold summary (``rouge_items``), and each metric is their mean (``Mean``). ``rouge`` is the main metric,
    the one ``kit.evaluation.rows.compare`` compares: one task per ROUGE variant gives each its intervals.
    ``texts()`` and ``item_texts()`` are the test CHQs. Outputs come from generated summaries
    (``score_summaries``), not from embeddings."""

    rouge: str = "rougeL"

    type = "summarization"
    metric_labels = ROUGE_LABELS

    @property
    def metrics(self) -> tuple[str, ...]:  # the main metric first
        return (self.rouge, *(m for m in ROUGE if m != self.rouge))

    @property
    def items(self) -> int:
        return len(self.data)

    def texts(self) -> tuple[list[str]]:
        return (list(self.data.chq),)

    def item_texts(self) -> list[tuple[str, ...]]:
        return [(q,) for q in self.data.chq]

    def score(self, embeddings: tuple[np.ndarray, ...]) -> dict[str, ItemScores]:
        raise NotImplementedError(f"{self.name} is scored from generated summaries: score_summaries(summaries)")

    def score_summaries(self, summaries: list[str]) -> dict[str, ItemScores]:
        """Each metric's per-question outputs of one row's summaries of the test questions, in their order."""
        items = rouge_items(summaries, self.data.summary)
        return {m: ItemScores(m, np.asarray(items[m]), self.statistic(m)) for m in self.metrics}

    def outputs(self, items: dict[str, list[float]]) -> dict[str, np.ndarray]:
        """A run's saved ``rouge_items`` as this task's outputs (metric -> [questions])."""
        out = {m: np.asarray(items[m], dtype=np.float64) for m in self.metrics}
        if any(len(v) != self.items for v in out.values()):
            raise ValueError(f"{self.name}: ROUGE outputs for {len(out[self.rouge])} of {self.items} questions")
        return out

    def statistic(self, metric: str) -> Mean:
        return Mean()


def rouge_tasks(dataset: str, test: SummaryPairs, split: str) -> list[SummaryRougeTask]:
    """``<dataset>-test-rougeL``, ``-rouge1`` and ``-rouge2`` on the test pairs ``test`` (``split`` says which
    they are), ROUGE-L first: the reports' headline comparison is on it."""
    title, spec = DATASETS[dataset]
    return [
        SummaryRougeTask(
            name=f"{dataset}-test-{metric}",
            description=f"{title} test questions of this run: {ROUGE_LABELS[metric]} of each row's summary (beam "
            "search) against the gold summary",
            dataset=spec,
            split=split,
            positive="the gold summary (FAQ) written for the question",
            load=lambda: test,
            rouge=metric,
        )
        for metric in ("rougeL", "rouge1", "rouge2")
    ]


def rouge_outputs(tasks: list[SummaryRougeTask], items: dict[str, list[float]]) -> RunOutputs:
    """One run's ``rouge_items`` as the ``RunOutputs`` of every ROUGE task."""
    return {t.name: t.outputs(items) for t in tasks}
