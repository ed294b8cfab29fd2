"""Scoring models on the suite: every (model, task) scored once from its (cached) embeddings, every score
with its bootstrap interval, and every model after the first compared with the first (the baseline):
paired bootstrap interval of the difference, permutation p-value, smallest detectable difference.

A model is an ``Embedder`` (or any function texts -> embeddings), or a list of them (one per seed of a
trained row): the seeds' item outputs are stacked and the bootstrap resamples seeds and items together.
Each task draws from its own stream, seeded by (seed, task name), so adding a model or a task changes no
other number.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kit.evaluation.bootstrap import (
    Comparison,
    Estimate,
    ItemScores,
    bootstrap_interval,
    format_p,
    paired_bootstrap,
)
from kit.evaluation.embeddings import Embedder
from kit.evaluation.task import Task


def task_seed(seed: int, task: Task) -> tuple[int, int]:
    """The bootstrap seed of one task: (the run's seed, CRC-32 of the task's name)."""
    return seed, zlib.crc32(task.name.encode())


Embed = Callable[[list[str]], np.ndarray]


def _runs(model: Embed | Sequence[Embed]) -> list[Embed]:
    return list(model) if isinstance(model, (list, tuple)) else [model]


def score_task(model: Embed | Sequence[Embed], task: Task) -> dict[str, ItemScores]:
    """A model's item scores on ``task`` (one ``ItemScores`` per metric); a list of embedders are its seeds."""
    runs = _runs(model)
    scored = [task.score(tuple(run(texts) for texts in task.texts())) for run in runs]
    return {metric: ItemScores.stack([s[metric] for s in scored]) for metric in task.metrics}


@dataclass
class TaskResult:
    """One task's results: per model and metric the item scores and the estimate; per model other than
    the baseline and metric the comparison with the baseline; the seconds each model took to embed and score
    (its model's loading included, for the first task that encodes), the texts it encoded and read from the
    cache, and the seconds of the task's intervals."""

    task: Task
    scores: dict[str, dict[str, ItemScores]] = field(default_factory=dict, repr=False)
    estimates: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    comparisons: dict[str, dict[str, Comparison]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    texts: dict[str, tuple[int, int]] = field(default_factory=dict)
    interval_seconds: float = 0.0


@dataclass
class SuiteResult:
    models: list[str]
    tasks: list[TaskResult]
    seed: int
    resamples: int
    permutations: int
    confidence: float
    seconds: float = 0.0

    @property
    def baseline(self) -> str:
        return self.models[0]

    def rows(self, scale: float = 100.0, digits: int = 2) -> list[dict]:
        """One row per (task, model) on the task's main metric, x``scale``: the score with its interval and,
        for every model but the baseline, the difference with its interval, ``*`` when the interval excludes
        zero, the p-value and the smallest detectable difference."""
        out = []
        for result in self.tasks:
            task, metric = result.task, result.task.main_metric
            for model in self.models:
                estimate = result.estimates[model][metric].scaled(scale)
                row = {
                    "task": task.name,
                    "items": task.items,
                    "metric": task.metric_labels[metric],
                    "seen by": ", ".join(task.seen_by) or "-",
                    "model": model,
                    "score": f"{estimate:.{digits}f}",
                    f"vs {self.baseline}": "baseline",
                    "p": "",
                    "detectable": "",
                }
                if model in result.comparisons:
                    c = result.comparisons[model][metric].scaled(scale)
                    row[f"vs {self.baseline}"] = f"{c.difference:.{digits}f}" + (" *" if c.excludes_zero else "")
                    row["p"] = format_p(c.p_value, c.permutations)
                    row["detectable"] = f"{c.detectable:.{digits}f}"
                out.append(row)
        return out

    def to_dict(self) -> dict:
        """Every number (on the metrics' own 0-1 scale), the settings and each task's declaration."""
        tasks = {}
        for result in self.tasks:
            tasks[result.task.name] = {
                "declaration": result.task.describe(),
                "scores": {
                    model: {metric: _estimate(e) for metric, e in metrics.items()}
                    for model, metrics in result.estimates.items()
                },
                "comparisons": {
                    model: {metric: _comparison(c) for metric, c in metrics.items()}
                    for model, metrics in result.comparisons.items()
                },
                "seconds": {model: round(s, 2) for model, s in result.seconds.items()},
                "texts_encoded": {model: n[0] for model, n in result.texts.items()},
                "interval_seconds": round(result.interval_seconds, 2),
            }
        return {
            "models": self.models,
            "baseline": self.baseline,
            "seed": self.seed,
            "resamples": self.resamples,
            "permutations": self.permutations,
            "confidence": self.confidence,
            "interval": "percentile bootstrap over the task's items (and seeds); differences paired: the same "
            "item draws for both models; p: paired permutation test (two-sided); detectable: 2.80 x the "
            "bootstrap standard error of the difference (80% power at alpha 0.05)",
            "seconds": round(self.seconds, 2),
            "tasks": tasks,
        }


def _estimate(e: Estimate) -> dict:
    return {"value": e.value, "low": e.low, "high": e.high, "se": e.se, "items": e.items, "seeds": e.seeds}


def _comparison(c: Comparison) -> dict:
    return {
        "difference": c.estimate,
        "low": c.low,
        "high": c.high,
        "excludes_zero": c.excludes_zero,
        "p_value": c.p_value,
        "se": c.se,
        "detectable": c.detectable,
        "seeds": list(c.seeds),
    }


def _counts(runs: list[Embed]) -> tuple[int, int]:
    """Texts encoded and texts read from the cache so far by a model's embedders."""
    return sum(getattr(r, "encoded", 0) for r in runs), sum(getattr(r, "cached", 0) for r in runs)


def evaluate(
    models: Mapping[str, Embed | Sequence[Embed]],
    tasks: Sequence[Task],
    seed: int = 0,
    resamples: int = 2000,
    permutations: int = 2000,
    confidence: float = 0.95,
    progress: Callable[[str], None] | None = None,
) -> SuiteResult:
    """Score every model on every task; the first model is the baseline of the comparisons. ``progress``
    receives one line per (model, task) with its time, and one per task for its intervals."""
    say = progress or (lambda line: None)
    started = time.perf_counter()
    results = [TaskResult(task) for task in tasks]
    for name, model in models.items():
        runs = _runs(model)
        for result in results:
            before = _counts(runs)
            t = time.perf_counter()
            result.scores[name] = score_task(runs, result.task)
            result.seconds[name] = time.perf_counter() - t
            encoded, cached = result.texts[name] = tuple(now - then for now, then in zip(_counts(runs), before))
            texts = ", ".join(
                [f"{encoded:,} texts encoded"] * bool(encoded) + [f"{cached:,} texts from the cache"] * bool(cached)
            )
            say(f"{name} · {result.task.name}: {result.seconds[name]:.1f}s ({texts})")
        for run in runs:
            if isinstance(run, Embedder):
                run.release()
    baseline = next(iter(models))
    for result in results:
        t = time.perf_counter()
        stream = task_seed(seed, result.task)
        for name, metrics in result.scores.items():
            result.estimates[name] = {
                m: bootstrap_interval(s, stream, resamples, confidence) for m, s in metrics.items()
            }
            if name != baseline:
                result.comparisons[name] = {
                    m: paired_bootstrap(s, result.scores[baseline][m], stream, resamples, confidence, permutations)
                    for m, s in metrics.items()
                }
        result.interval_seconds = time.perf_counter() - t
        say(f"intervals · {result.task.name}: {result.interval_seconds:.1f}s")
    return SuiteResult(list(models), results, seed, resamples, permutations, confidence, time.perf_counter() - started)
