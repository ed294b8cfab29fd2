"""Scoring models on the suite: every (model, task) scored once from its (cached) embeddings, every score
with its interval, and every model after the first compared with the first (the baseline), and any other pair
asked for: the difference with its calibrated interval and p-value (``kit.evaluation.inference``) and what the
comparison resolves, each comparison on a task's main metric corrected within the family of all of them
(``kit.evaluation.families``), but those on a task whose items lie within another task's (``nested``), which are
part of that task's finding.

A model is an ``Embedder`` (or any function texts -> embeddings), compared as a fixed artefact (its items are
the only source of variation), or a list of them (one per seed of a trained row): the seeds' item outputs are
stacked and the comparison carries their run-to-run spread. Lexical anchors (``kit.evaluation.lexical``: TF-IDF,
BM25) are scored where they apply and every model is compared with each, as context: those comparisons are no
member of the family, and say which regime a model is in (``SuiteResult.regime``). Each task draws from its own
stream, seeded by (seed, task name), so adding a model or a task changes no other number.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from kit.evaluation.bootstrap import ItemScores
from kit.evaluation.embeddings import Embedder
from kit.evaluation.families import Adjusted, correct
from kit.evaluation.inference import Comparison, Difference, Estimate, format_p, paired_comparison, score_interval
from kit.evaluation.lexical import Lexical
from kit.evaluation.task import Task, nested


def task_seed(seed: int, task: Task) -> tuple[int, int]:
    """The bootstrap seed of one task: (the run's seed, CRC-32 of the task's name)."""
    return seed, zlib.crc32(task.name.encode())


Embed = Callable[[list[str]], np.ndarray]


def _runs(model: Embed | Sequence[Embed]) -> list[Embed]:
    return list(model) if isinstance(model, (list, tuple)) else [model]


def score_task(model: Embed | Sequence[Embed], task: Task) -> dict[str, ItemScores]:
    """A model's item scores on ``task`` (one ``ItemScores`` per metric); a list of embedders are its seeds, a single
    one a fixed model (``ItemScores.fixed``)."""
    runs = _runs(model)
    scored = [task.score(tuple(run(texts) for texts in task.texts())) for run in runs]
    fixed = not isinstance(model, (list, tuple))
    return {metric: replace(ItemScores.stack([s[metric] for s in scored]), fixed=fixed) for metric in task.metrics}


Pair = tuple[str, str]
"""(model, baseline): a comparison of model minus baseline."""


def comparison_pairs(models: Sequence[str], extra: Sequence[Pair] = ()) -> list[Pair]:
    """Every model after the first against the first, then ``extra`` pairs; a pair named already, in either
    order, once. Raises ``ValueError`` on a pair naming an unknown model or one model twice."""
    out: dict[frozenset[str], Pair] = {}
    for a, b in [*((m, models[0]) for m in models[1:]), *extra]:
        unknown = [m for m in (a, b) if m not in models]
        if unknown or a == b:
            raise ValueError(
                f"comparison {a} - {b}: " + (f"{unknown[0]} is not one of the models" if unknown else "the same model")
            )
        out.setdefault(frozenset((a, b)), (a, b))
    return list(out.values())


@dataclass
class TaskResult:
    """One task's results: per model and metric the item scores and the estimate; per compared pair and
    metric the paired comparison, and on the main metric its result within the family of every comparison
    of the run (``adjusted``; none on a task ``within`` another, whose comparisons are that task's finding); the
    seconds each model took to embed and score (its model's loading included, for the first task that encodes),
    the texts it encoded, read from the cache and cut at the model's trained positions (or the suite's length),
    and the seconds of the task's intervals."""

    task: Task
    scores: dict[str, dict[str, ItemScores]] = field(default_factory=dict, repr=False)
    estimates: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    comparisons: dict[Pair, dict[str, Comparison]] = field(default_factory=dict)
    adjusted: dict[Pair, Adjusted] = field(default_factory=dict)
    within: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    texts: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    interval_seconds: float = 0.0
    anchors: dict[str, Estimate] = field(default_factory=dict)
    anchored: dict[Pair, Comparison] = field(default_factory=dict)


@dataclass
class SuiteResult:
    models: list[str]
    tasks: list[TaskResult]
    pairs: list[Pair]
    seed: int
    resamples: int
    confidence: float
    correction: str
    seconds: float = 0.0

    @property
    def baseline(self) -> str:
        return self.models[0]

    def regime(self, model: str) -> str:
        """One sentence on where ``model`` stands against the lexical anchors: on how many of the tasks any anchor
        scores it is significantly below the best anchor there, significantly above it, or neither (the anchored
        comparison's interval, alpha not corrected: context, not a finding); '' without anchors."""
        counts = {"below": 0, "above": 0, "level with": 0}
        for result in self.tasks:
            if not result.anchors or result.within:  # a nested task is part of its parent's finding
                continue
            best = max(result.anchors, key=lambda a: result.anchors[a].value)
            c = result.anchored[(model, best)].difference
            counts["below" if c.high < 0 else "above" if c.low > 0 else "level with"] += 1
        n = sum(counts.values())
        if not n:
            return ""
        parts = ", ".join(f"{k} it on {v}" for k, v in counts.items() if v)
        return f"{model} against the best bag-of-words anchor of each of the {n} tasks they score: {parts}."

    def rows(self, scale: float = 100.0, digits: int = 2) -> list[dict]:
        """One row per (task, model) on the task's main metric, x``scale``, with its score and interval; a
        model compared with others gets a row per comparison: the difference with its interval, the p-value,
        the interval and adjusted p-value within the family (``*`` where the adjusted result is significant)
        and the difference it resolves with 80% power at the family's level (a comparison on a task within another
        says so, and is not a member)."""
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
                    "vs": "",
                    "difference": "",
                    "p": "",
                    **({"family interval": "", f"p ({self.correction})": ""} if self.correction != "none" else {}),
                    "resolves": "",
                }
                pairs = [pair for pair in self.pairs if pair[0] == model]
                out += [row] if not pairs else [self._compared(row, result, pair, scale, digits) for pair in pairs]
            for anchor, estimate in result.anchors.items():  # the base row's comparison columns are empty
                score = f"{estimate.scaled(scale):.{digits}f}"
                out.append({**row, "model": f"{anchor} (lexical anchor)", "score": score})
        return out

    def _compared(self, row: dict, result: TaskResult, pair: Pair, scale: float, digits: int) -> dict:
        c = result.comparisons[pair][result.task.main_metric].scaled(scale)
        if not c.tested:
            return {**row, "vs": pair[1], "difference": f"{c:.{digits}f}"}
        row = {**row, "vs": pair[1], "difference": f"{c.difference:.{digits}f}", "p": format_p(c.p_value)}
        a = result.adjusted.get(pair)
        if a is None:
            return {**row, "family interval": f"within {result.within}" if self.correction != "none" else ""}
        mark = " *" if a.significant else ""
        if self.correction == "none":
            row["p"] += mark
        else:
            row["family interval"] = (
                f"{Difference(c.estimate, a.low * scale, a.high * scale, c.difference.n):.{digits}f}"
            )
            row[f"p ({self.correction})"] = format_p(a.p) + mark
        row["resolves"] = f"{a.detectable * scale:.{digits}f}"
        return row

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
                "comparisons": [
                    {
                        "model": a,
                        "baseline": b,
                        **{metric: _comparison(c) for metric, c in metrics.items()},
                        "family": asdict(result.adjusted[(a, b)]) if (a, b) in result.adjusted else None,
                    }
                    for (a, b), metrics in result.comparisons.items()
                ],
                "anchors": {anchor: _estimate(e) for anchor, e in result.anchors.items()},
                "anchored": [{"model": a, "anchor": b, **_comparison(c)} for (a, b), c in result.anchored.items()],
                "seconds": {model: round(s, 2) for model, s in result.seconds.items()},
                "texts_encoded": {model: n[0] for model, n in result.texts.items()},
                "texts_cut": {model: n[2] for model, n in result.texts.items()},
                "interval_seconds": round(result.interval_seconds, 2),
                "within": result.within,
            }
        return {
            "models": self.models,
            "baseline": self.baseline,
            "comparisons": [list(pair) for pair in self.pairs],
            "seed": self.seed,
            "resamples": self.resamples,
            "confidence": self.confidence,
            "correction": self.correction,
            "interval": "t interval (Satterthwaite's degrees of freedom) whose variance adds the item part (the "
            "variance over item draws with replacement, the same draws for both models) and each seeded model's "
            "run-to-run part (kit.evaluation.inference); p from the same t distribution; family: every comparison "
            f"on every task's main metric but those on a task within another, corrected by {self.correction}, with "
            "intervals and resolved differences at the family's level; resolves: (t_(df,1-alpha/2) + t_(df,0.8)) x "
            "the standard error",
            "seconds": round(self.seconds, 2),
            "regime": {model: self.regime(model) for model in self.models},
            "tasks": tasks,
        }


def _estimate(e: Estimate) -> dict:
    return {"value": e.value, "low": e.low, "high": e.high, "se": e.se, "items": e.items, "seeds": e.seeds, "df": e.df}


def _comparison(c: Comparison) -> dict:
    return {
        "difference": c.estimate,
        "low": c.low,
        "high": c.high,
        "excludes_zero": c.excludes_zero,
        "p_value": c.p_value,
        "se": c.se,
        "df": c.df,
        "detectable": c.detectable,
        "variance": c.variance.record(),
        "seeds": list(c.seeds),
        "resamples": c.resamples,
        "reason": c.reason,
    }


def _counts(runs: list[Embed]) -> tuple[int, int, int]:
    """Texts encoded, read from the cache and cut at the trained positions so far by a model's embedders."""
    return tuple(sum(getattr(r, what, 0) for r in runs) for what in ("encoded", "cached", "cut"))


def evaluate(
    models: Mapping[str, Embed | Sequence[Embed]],
    tasks: Sequence[Task],
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    pairs: Sequence[Pair] = (),
    correction: str = "holm",
    progress: Callable[[str], None] | None = None,
    anchors: Sequence[Lexical] = (),
) -> SuiteResult:
    """Score every model on every task and compare every model after the first with the first, and each of
    ``pairs`` (``comparison_pairs``); the comparisons on the tasks' main metrics are one family, corrected by
    ``correction`` (``kit.evaluation.families``), but those on a task within another (``nested``); every interval
    and comparison from ``resamples`` item draws. ``anchors`` are scored on the tasks they apply to, each model
    compared with each there, outside the family. ``progress`` receives one line per (model, task) with its time,
    and one per task for its intervals."""
    compared = comparison_pairs(list(models), pairs)
    say = progress or (lambda line: None)
    started = time.perf_counter()
    within = nested(tasks)
    results = [TaskResult(task, within=within.get(task.name)) for task in tasks]
    for name, model in models.items():
        runs = _runs(model)
        for result in results:
            before = _counts(runs)
            t = time.perf_counter()
            result.scores[name] = score_task(model if isinstance(model, (list, tuple)) else runs[0], result.task)
            result.seconds[name] = time.perf_counter() - t
            encoded, cached, cut = result.texts[name] = tuple(now - then for now, then in zip(_counts(runs), before))
            texts = ", ".join(
                [f"{encoded:,} texts encoded"] * bool(encoded)
                + [f"{cached:,} texts from the cache"] * bool(cached)
                + [f"{cut:,} cut at the model's trained positions or the length asked for"] * bool(cut)
            )
            say(f"{name} · {result.task.name}: {result.seconds[name]:.1f}s ({texts})")
        for run in runs:
            if isinstance(run, Embedder):
                run.release()
    anchor_scores = {}
    for anchor in anchors:
        for result in results:
            if anchor.applies(result.task):
                t = time.perf_counter()
                anchor_scores[(anchor.name, result.task.name)] = anchor.score_task(result.task)
                say(f"{anchor.name} (lexical anchor) · {result.task.name}: {time.perf_counter() - t:.1f}s")
    for result in results:
        t = time.perf_counter()
        stream = task_seed(seed, result.task)
        scores = result.scores
        main = result.task.main_metric
        for anchor in anchors:
            if (lexical := anchor_scores.get((anchor.name, result.task.name))) is None:
                continue
            fixed = replace(lexical[main], fixed=True)
            result.anchors[anchor.name] = score_interval(fixed, stream, resamples, confidence)
            for name in scores:
                c = paired_comparison(scores[name][main], fixed, stream, resamples, confidence)
                result.anchored[(name, anchor.name)] = c
        for name, metrics in scores.items():
            result.estimates[name] = {m: score_interval(s, stream, resamples, confidence) for m, s in metrics.items()}
        for a, b in compared:
            result.comparisons[(a, b)] = {
                m: paired_comparison(s, scores[b][m], stream, resamples, confidence) for m, s in scores[a].items()
            }
        result.interval_seconds = time.perf_counter() - t
        say(f"intervals · {result.task.name}: {result.interval_seconds:.1f}s")
    family = [(r, pair, r.comparisons[pair][r.task.main_metric]) for r in results if not r.within for pair in compared]
    for (result, pair, c), adjusted in zip(family, correct([c for *_, c in family], correction, confidence)):
        if c.tested:  # an untested comparison (identical outputs) is not a member
            result.adjusted[pair] = adjusted
    return SuiteResult(
        list(models), results, compared, seed, resamples, confidence, correction, time.perf_counter() - started
    )
