"""A study's rows on the evaluation suite: the same tasks, intervals and paired comparisons as
``python -m kit.evaluate``, for models that exist only inside a study's runs.

Each training run scores the study's tasks with its selected checkpoint and keeps the item outputs
(``score_run``, saved beside its result with ``save_outputs``), so a report never needs the model again.
The report stacks a row's seeds and compares rows (``compare``): each row's score with its bootstrap
interval over items and seeds, and each comparison's paired difference (items and seeds resampled
together, ``kit.evaluation.bootstrap.paired_bootstrap``) with its p-value from the same replicates and the
smallest difference it could detect. A ``SuiteReport`` groups the tasks (headline, or apart when the study
trains on a task's data), treats the comparisons of each group as a family (``kit.evaluation.families``:
adjusted p-values, intervals at the family's level) and writes the verdicts from the adjusted results, so
that no verdict is read off a table by eye. Items that share a text with the data the checkpoints were
selected on are left out of their task (``shared_items``), not the whole task.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.files import write_atomic
from kit.evaluation.bootstrap import (
    Difference,
    ItemScores,
    bootstrap_interval,
    format_p,
    paired_bootstrap,
)
from kit.evaluation.families import correct, family_resamples, format_adjusted
from kit.evaluation.suite import Embed, score_task
from kit.evaluation.task import Task

RunOutputs = dict[str, dict[str, np.ndarray]]
"""One run's item outputs: task name -> metric -> outputs [items]."""


def score_run(embed: Embed, tasks: Sequence[Task]) -> RunOutputs:
    """The item outputs of one model (a function texts -> embeddings) on every task, every metric."""
    return {t.name: {m: s.outputs[0] for m, s in score_task(embed, t).items()} for t in tasks}


def main_score(embed: Embed, task: Task) -> float:
    """One model's main metric on ``task`` (a selection score during training)."""
    return score_task(embed, task)[task.main_metric].value


def save_outputs(path: Path, outputs: RunOutputs) -> Path:
    """``outputs`` as one ``.npz`` (arrays named ``<task>/<metric>``), written whole or not at all."""
    arrays = {f"{task}/{metric}": v for task, metrics in outputs.items() for metric, v in metrics.items()}
    return write_atomic(Path(path), lambda tmp: np.savez(tmp, **arrays))


def load_outputs(path: Path, tasks: Sequence[Task] = ()) -> RunOutputs:
    """What ``save_outputs`` wrote. Raises OSError / ValueError on a missing or damaged file, or when it
    lacks one of ``tasks`` or holds another number of items than one has (saved before its data changed)."""
    out: RunOutputs = {}
    with np.load(path, allow_pickle=False) as data:
        for key in data.files:
            task, metric = key.split("/", 1)
            out.setdefault(task, {})[metric] = data[key]
    missing = sorted({t.name for t in tasks} - set(out))
    if missing:
        raise ValueError(f"{Path(path).name} has no outputs for {missing}")
    stale = [t.name for t in tasks if any(len(v) != t.items for v in out[t.name].values())]
    if stale:
        raise ValueError(f"{Path(path).name}: the outputs of {stale} are for another number of items than now")
    return out


def stacked(task: Task, metric: str, runs: Sequence[RunOutputs]) -> ItemScores:
    """A row's seeds on one metric of ``task``, as one ``ItemScores`` [seeds, items]."""
    statistic = task.statistic(metric)
    return ItemScores.stack([ItemScores(metric, r[task.name][metric], statistic) for r in runs])


def shared_items(task: Task, texts: frozenset[str]) -> np.ndarray:
    """For every item of ``task``, whether one of its texts is in ``texts`` (the checkpoint-selection data)."""
    return np.array([any(t in texts for t in item) for item in task.item_texts()], dtype=bool)


def compare(
    rows: Mapping[str, Sequence[RunOutputs]],
    pairs: Sequence[tuple[str, str]],
    tasks: Sequence[Task],
    labels: Mapping[str, str] | None = None,
    seed: int = 0,
    resamples: int = 2000,
    scale: float = 100.0,
    keep: Mapping[str, np.ndarray] | None = None,
    correction: str = "holm",
) -> pd.DataFrame:
    """One line per (task, row, baseline) on the task's main metric x ``scale``: the row's score with its 95%
    interval and, for a (row, baseline) of ``pairs``, the paired difference row - baseline with its interval,
    p-value, replicates and smallest detectable difference; a row compared with nothing gets one line without
    a baseline, a row compared with several gets a line each. ``rows`` maps a row to its runs (one per seed,
    in the same seed order for every row, so that rows pair by seed). ``keep``: per task name, the indices of
    the items to score (the others are left out); every item otherwise. Each task draws from its own seeded
    stream (the seed and the task's name), as ``kit.evaluate`` does. A row's interval takes ``resamples``
    replicates; a comparison takes ``family_resamples`` for the largest family it can join under ``correction``
    (every pair on every task), so that its interval at the family's level is as deep in its replicates as a
    lone interval."""
    labels, keep = labels or {}, keep or {}
    deep = family_resamples(resamples, len(pairs) * len(tasks), correction)
    baselines: dict[str, list[str]] = {}
    for row, baseline in pairs:
        baselines.setdefault(row, []).append(baseline)
    out = []
    for task in tasks:
        metric = task.main_metric
        stream = (seed, zlib.crc32(task.name.encode()))
        idx = keep.get(task.name)
        scores = {row: stacked(task, metric, runs) for row, runs in rows.items()}
        if idx is not None:
            scores = {row: s.subset(idx) for row, s in scores.items()}
        for row, s in scores.items():
            e = bootstrap_interval(s, stream, resamples).scaled(scale)
            line = {
                "task": task.name,
                "metric": task.metric_labels[metric],
                "items": s.items,
                "left_out": task.items - s.items,
                "row": row,
                "method": labels.get(row, row),
                "seeds": s.seeds,
                "score": e.value,
                "score_low": e.low,
                "score_high": e.high,
                "baseline": None,
            }
            for baseline in baselines.get(row, [None]):
                if baseline is None:
                    out.append(line)
                    continue
                c = paired_bootstrap(s, scores[baseline], stream, deep).scaled(scale)
                out.append(
                    {
                        **line,
                        "baseline": baseline,
                        "difference": c.estimate,
                        "low": c.low,
                        "high": c.high,
                        "p": c.p_value,
                        "se": c.se,
                        "detectable": c.detectable,
                        "resamples": c.resamples,
                        "replicates": c.replicates,
                    }
                )
    return pd.DataFrame(out)


def _interval(estimate: float, low: float, high: float, digits: int) -> str:
    return format(Difference(estimate, low, high, 0), f".{digits}f")


def _bounds(low: float, high: float, digits: int) -> str:
    return f"[{low:+.{digits}f}, {high:+.{digits}f}]".replace("-", "−")


def _p(p: float, resamples: float) -> str:
    return format_p(p, int(resamples)) if p == p else ""


def compared_lines(compared: pd.DataFrame) -> pd.DataFrame:
    """The lines of ``compared`` that compare a row with a baseline."""
    return compared[compared.baseline.map(lambda b: isinstance(b, str))]


def table(compared: pd.DataFrame, digits: int = 1, correction: str = "holm") -> pd.DataFrame:
    """``compare``'s lines (with the family columns of ``SuiteReport``) as the report shows them, indexed by
    (task, method): the metric, the items scored, score [interval], the baseline, the difference [interval],
    its p, the family's interval and adjusted p (``*`` where the adjusted result is significant) and the
    smallest difference detectable at the family's level."""
    names = {(t, r): m for t, r, m in zip(compared.task, compared.row, compared.method)}
    adjusted = correction != "none"
    rows = []
    for line in compared.itertuples():
        has_baseline = isinstance(line.baseline, str)
        row = {
            "task": line.task,
            "method": line.method,
            "metric": line.metric,
            "items": f"{line.items:,}" + (f" ({line.left_out} left out)" if line.left_out else ""),
            "seeds": line.seeds,
            "score": f"{line.score:.{digits}f} [{line.score_low:.{digits}f}, {line.score_high:.{digits}f}]",
            "vs": names.get((line.task, line.baseline), "") if has_baseline else "",
            "difference": _interval(line.difference, line.low, line.high, digits) if has_baseline else "",
            "p": _p(line.p, line.resamples) if has_baseline else "",
        }
        mark = " *" if has_baseline and line.significant else ""
        if adjusted:
            row["family interval"] = (
                _interval(line.difference, line.family_low, line.family_high, digits) if has_baseline else ""
            )
            row[f"p ({correction})"] = (
                format_adjusted(line.p_adjusted, line.resamples, line.family_size) if has_baseline else ""
            ) + mark
        else:
            row["p"] += mark
        row["detectable"] = f"{line.family_detectable:.{digits}f}" if has_baseline else ""
        rows.append(row)
    return pd.DataFrame(rows).set_index(["task", "method"])


def verdicts(compared: pd.DataFrame, task: str, digits: int = 1, correction: str = "holm") -> list[str]:
    """One sentence per comparison on ``task``, from its adjusted result: ``+ random crop 10% vs SimCSE: −0.8
    [−2.1, +0.5] (p = 0.31); Holm over the 36 comparisons of its family: p = 1.00, 99.86% interval
    [−3.0, +1.4]: not significant; this comparison detects differences of 1.9 or more (80% power)``."""
    lines = compared_lines(compared[compared.task == task])
    names = dict(zip(compared.row, compared.method))
    out = []
    for line in lines.itertuples():
        if line.detectable == 0 and line.difference == 0:
            out.append(f"{line.method} vs {names[line.baseline]}: the same output on every item, no difference")
            continue
        p = _p(line.p, line.resamples)
        alone = f"{_interval(line.difference, line.low, line.high, digits)} (p {p if p.startswith('<') else '= ' + p})"
        family = ""
        if correction != "none" and line.family_size > 1:
            q = format_adjusted(line.p_adjusted, line.resamples, line.family_size)
            family = (
                f"; {CORRECTION_NAMES[correction]} over the {line.family_size:.0f} comparisons of its family: "
                f"p {q if q.startswith('<') else '= ' + q}, {100 * line.family_confidence:.4g}% interval "
                f"{_bounds(line.family_low, line.family_high, digits)}"
            )
        side = "better" if line.low > 0 else "worse"  # significant: the comparison's own interval excludes zero
        verdict = f"{side}, significant" if line.significant else "not significant"
        if line.significant and correction == "holm" and line.family_low <= 0 <= line.family_high:
            verdict += (
                " (Holm's step-down rejects where Bonferroni's family interval, which does not step down, reaches zero)"
            )
        out.append(
            f"{line.method} vs {names[line.baseline]}: {alone}{family}: {verdict}; this comparison detects "
            f"differences of {line.family_detectable:.{digits}f} or more (80% power at its family's level)"
        )
    return out


FAMILY_COLUMNS = ("p_adjusted", "family_low", "family_high", "family_confidence", "family_size", "family_detectable")
"""What ``SuiteReport`` adds to every comparison line: its result within its family (nan on other lines)."""
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}


@dataclass(frozen=True)
class PaperEffect:
    """What a study's paper claims for its main comparison: ``effect`` points (main metric x100) on ``task``
    (``claim`` says which rows, on which data, with the paper's numbers)."""

    task: str
    effect: float
    claim: str

    def against(self, detectable: float, where: str = "the comparisons here") -> str:
        """The claim beside the difference ``where`` detects with 80% power: whether an effect of the claimed size
        would be found with at least that power. The claim is the paper's, with its model and corpus; a run on
        another model or corpus may have an effect of another size."""
        power = "at least" if detectable <= abs(self.effect) else "less than"
        return (
            f"The paper claims {self.claim}, {self.effect:+.1f} points with its model and corpus; {where} have 80% "
            f"power to detect {detectable:.1f} on `{self.task}`, so they would find an effect of the claimed size with "
            f"{power} 80% power."
        )


@dataclass
class SuiteReport:
    """What a study report shows of the suite: ``compared`` (``compare``'s lines), its tasks grouped into the
    headline tasks and the tasks whose data ``study`` trains on (``Task.seen_by``), reported apart; items that
    share a text with the data the checkpoints were selected on (``selection_texts``, described by
    ``selected_on``) were left out of their task by ``compare``, and a task whose every item does is reported
    apart. The comparisons of each group are a family, corrected by ``correction`` (``kit.evaluation.families``)
    at ``confidence``; the verdicts follow the adjusted results. ``paper_effect``: what the study's paper claims,
    set beside what this design can detect. ``title`` heads its tables."""

    compared: pd.DataFrame
    tasks: Sequence[Task]
    study: str
    selected_on: str
    selection_texts: frozenset[str] = frozenset()
    title: str = "Evaluation suite"
    correction: str = "holm"
    confidence: float = 0.95
    paper_effect: PaperEffect | None = None

    def __post_init__(self):
        self.compared = self._with_families(self.compared.copy())

    def shared_with_selection(self, task: Task) -> bool:
        """Every item of ``task`` shares a text with the selection data: nothing is left to report it on."""
        shared = shared_items(task, self.selection_texts) if self.selection_texts else np.zeros(0, bool)
        return bool(len(shared)) and bool(shared.all())

    def groups(self) -> dict[str, list[Task]]:
        """Headline and reported-apart tasks, in suite order (empty groups dropped)."""
        out: dict[str, list[Task]] = {"headline tasks": []}
        for task in self.tasks:
            if task.seen(self.study):
                key = f"tasks whose data {self.study} trains on (reported apart)"
            elif self.shared_with_selection(task):
                key = "tasks whose every item shares texts with the checkpoint-selection data (reported apart)"
            else:
                key = "headline tasks"
            out.setdefault(key, []).append(task)
        return {group: tasks for group, tasks in out.items() if tasks}

    def headline_tasks(self) -> list[Task]:
        return self.groups().get("headline tasks", [])

    def _with_families(self, compared: pd.DataFrame) -> pd.DataFrame:
        """``compared`` with, for every comparison line, its family's size, adjusted p-value, interval at the
        family's level and the verdict (``significant``: the adjusted p-value below 1 - confidence)."""
        for column in FAMILY_COLUMNS:
            compared[column] = np.nan
        compared["significant"] = False
        if "p" not in compared:
            return compared
        for tasks in self.groups().values():
            family = compared.index[
                compared.task.isin([t.name for t in tasks]) & compared.baseline.map(lambda b: isinstance(b, str))
            ]
            if not len(family):
                continue
            lines = compared.loc[family]
            corrected = correct(lines.p, lines.replicates, lines.se, self.correction, self.confidence)
            for index, a in zip(family, corrected):
                compared.loc[index, list(FAMILY_COLUMNS)] = a.p, a.low, a.high, a.confidence, a.size, a.detectable
                compared.at[index, "significant"] = a.significant
        return compared

    def tables(self) -> dict[str, pd.DataFrame]:
        """One table per group, titled."""
        return {
            f"{self.title}, {group}: main metric x100 [95% interval]": table(
                self.compared[self.compared.task.isin([t.name for t in tasks])], correction=self.correction
            )
            for group, tasks in self.groups().items()
        }

    def about(self) -> str:
        """How to read the tables (Markdown): tasks, intervals, families, selection, what the design detects."""
        described = "; ".join(f"`{t.name}`: {t.description} ({t.items:,} items)" for t in self.tasks)
        lines = compared_lines(self.compared)
        smallest = self.power() if len(lines) else ""
        left_out = {line.task: line.left_out for line in self.compared.itertuples() if line.left_out}
        shared = (
            " Left out of their task because they share a text with the checkpoint-selection data: "
            + ", ".join(f"{n} item{'s' * (n != 1)} of `{t}`" for t, n in left_out.items())
            + "."
            if left_out
            else ""
        )
        family = (
            f" The comparisons of each group of tasks are one family: each gets its p-value and its interval at the "
            f"family's level after {CORRECTION_NAMES[self.correction]}'s correction ("
            + {
                "holm": "Holm's step-down procedure controls the chance of any false verdict; its intervals are "
                "Bonferroni's simultaneous ones, which can reach zero where Holm's later steps reject",
                "bh": "Benjamini-Hochberg's procedure controls the expected share of false verdicts; its intervals "
                "are Benjamini-Yekutieli's false-coverage-rate intervals",
                "none": "",
            }[self.correction]
            + "); the verdicts and `*` follow the adjusted result."
            if self.correction != "none"
            else " No correction for the number of comparisons: each verdict stands alone."
        )
        return (
            f"Tasks: {described}. Scores x100 with 95% percentile bootstrap intervals over the task's items and "
            "the row's seeds; each comparison (column `vs`): the paired difference (the same item draws for both "
            "rows; each draw resamples the seeds too, seed by seed when both rows have the same seeds) with its "
            "interval and its p-value from the same replicates (twice the share of replicates beyond zero), so "
            "the two never disagree. A replicate at exactly zero counts on both sides: two rows that differ on few "
            "items, whose replicates are mostly zero, get p near 1 beside an interval that ends at zero."
            f"{self._depth(lines)}{family} Checkpoints were selected on {self.selected_on}."
            f"{shared}{smallest}"
        )

    def _depth(self, lines: pd.DataFrame) -> str:
        """How many replicates the comparisons rest on, and how many lie at or beyond each end of the shallowest
        interval at its family's level (``compare`` draws enough for 50 at 2,000 resamples); below 10 it says
        that the interval's ends are only a few extreme replicates."""
        if not len(lines) or "resamples" not in lines:
            return ""
        drawn = lines.resamples.astype(float)
        tail = int(np.floor((drawn * (1 - lines.family_confidence.astype(float)) / 2).min() + 1e-9))
        out = f" Each comparison rests on {int(drawn.max()):,} replicates"
        if self.correction == "none":
            return out + "."
        out += " (a lone interval's resamples times the comparisons the report makes, 100 at most), and "
        out += f"{tail:,} or more lie at or beyond each end of every interval at its family's level"
        return out + (
            ": too few for those ends to be more than the most extreme replicates; draw more resamples."
            if tail < 10
            else "."
        )

    def power(self) -> str:
        """The smallest difference the comparisons of each task detect (80% power at their family's level,
        median over the rows whose outputs differ from their baseline's), and the paper's claimed effect beside it
        (``PaperEffect.against``)."""
        lines = compared_lines(self.compared)
        lines = lines[lines.family_detectable > 0]  # a row with its baseline's outputs detects nothing to compare
        per_task = lines.groupby("task", sort=False).family_detectable.median()
        out = (
            " Smallest difference the comparisons detect (80% power at their family's level; median over the rows): "
            + ", ".join(f"`{task}` {d:.1f}" for task, d in per_task.items())
            + " points."
        )
        claim = self.paper_effect
        if claim and claim.task not in per_task:
            out += (
                f" The paper claims {claim.claim}, {claim.effect:+.1f} points on `{claim.task}`, which this run "
                "does not compare on."
            )
        elif claim:
            out += " " + claim.against(per_task[claim.task])
        return out

    def verdict(self) -> str:
        """The comparisons on every headline task (on every task, said so, when none is headline), as
        Markdown bullets; a task's comparisons are listed only when it has any."""
        headline = self.headline_tasks()
        caveat = "" if headline else " (no headline task: every task is the training or the selection data)"
        blocks = []
        for task in headline or self.tasks:
            lines = [
                line.replace("+", "\\+", 1) if line.startswith("+") else line
                for line in verdicts(self.compared, task.name, correction=self.correction)
            ]
            if lines:
                items = self.compared[self.compared.task == task.name]["items"].iloc[0]
                blocks.append(f"On `{task.name}` ({items:,} items){caveat}:\n" + "\n".join(f"- {x}" for x in lines))
        return "\n\n".join(blocks)

    def comparison(self, row: str, task: str | None = None) -> str | None:
        """The verdict sentence of ``row`` on ``task`` (default: the headline task with the most items, the
        most powerful comparison), or None when the row has no baseline; the reports index shows it."""
        name = task or max(self.headline_tasks() or self.tasks, key=lambda t: t.items).name
        method = self.compared[(self.compared.task == name) & (self.compared.row == row)].method
        line = next(
            (
                v
                for v in verdicts(self.compared, name, correction=self.correction)
                if len(method) and v.startswith(f"{method.iloc[0]} vs ")
            ),
            None,
        )
        return f"{line} (on {name})" if line else None

    def record(self) -> dict:
        """Every line of ``compared`` (without the replicates) and how the tasks were grouped, for ``results.json``."""
        lines = self.compared.drop(columns=["replicates"], errors="ignore")
        return {
            "selected_on": self.selected_on,
            "correction": self.correction,
            "confidence": self.confidence,
            "paper_effect": asdict(self.paper_effect) if self.paper_effect else None,
            "groups": {group: [t.name for t in tasks] for group, tasks in self.groups().items()},
            "lines": lines.astype(object).where(lines.notna(), None).to_dict("records"),
        }
