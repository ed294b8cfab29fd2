"""A study's rows on the evaluation suite: the same tasks, intervals and paired comparisons as
``python -m kit.evaluate``, for models that exist only inside a study's runs.

Each training run scores the study's tasks with its selected checkpoint and keeps the item outputs
(``score_run``, saved beside its result with ``save_outputs``), so a report never needs the model again.
The report stacks a row's seeds and compares each row with its baseline row (``compare``): the row's
score with its bootstrap interval over items and seeds, and the paired difference (items and seeds
resampled together, ``kit.evaluation.bootstrap.paired_bootstrap``) with its permutation p-value and the
smallest difference the comparison could detect. ``verdicts`` writes the report's sentences from those
numbers, so no verdict is read off a table by eye.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.files import write_atomic
from kit.evaluation.bootstrap import Difference, ItemScores, bootstrap_interval, format_p, paired_bootstrap
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


def compare(
    rows: Mapping[str, Sequence[RunOutputs]],
    pairs: Sequence[tuple[str, str]],
    tasks: Sequence[Task],
    labels: Mapping[str, str] | None = None,
    seed: int = 0,
    resamples: int = 2000,
    permutations: int = 2000,
    scale: float = 100.0,
) -> pd.DataFrame:
    """One line per (task, row) on the task's main metric x ``scale``: the row's score with its 95% interval
    and, for every (row, baseline) in ``pairs``, the paired difference row - baseline with its interval,
    p-value and smallest detectable difference. ``rows`` maps a row to its runs (one per seed, in the same
    seed order for every row, so that rows pair by seed). Each task draws from its own seeded stream (the
    seed and the task's name), as ``kit.evaluate`` does."""
    labels = labels or {}
    baselines = dict(pairs)
    out = []
    for task in tasks:
        metric = task.main_metric
        stream = (seed, zlib.crc32(task.name.encode()))
        scores = {row: stacked(task, metric, runs) for row, runs in rows.items()}
        for row, s in scores.items():
            e = bootstrap_interval(s, stream, resamples).scaled(scale)
            line = {
                "task": task.name,
                "metric": task.metric_labels[metric],
                "items": task.items,
                "row": row,
                "method": labels.get(row, row),
                "seeds": s.seeds,
                "score": e.value,
                "score_low": e.low,
                "score_high": e.high,
                "baseline": None,
            }
            if row in baselines:
                c = paired_bootstrap(s, scores[baselines[row]], stream, resamples, permutations=permutations)
                c = c.scaled(scale)
                line.update(
                    baseline=baselines[row],
                    difference=c.estimate,
                    low=c.low,
                    high=c.high,
                    p=c.p_value,
                    detectable=c.detectable,
                    significant=c.excludes_zero,
                    permutations=c.permutations,
                )
            out.append(line)
    return pd.DataFrame(out)


def _difference(line, digits: int) -> str:
    return format(Difference(line.difference, line.low, line.high, line.items), f".{digits}f")


def table(compared: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """``compare``'s lines as the report shows them, indexed by (task, method): the metric, score
    [interval], the baseline, the difference [interval] with ``*`` where the interval excludes zero, p and
    the smallest detectable difference."""
    names = {(t, r): m for t, r, m in zip(compared.task, compared.row, compared.method)}
    rows = []
    for line in compared.itertuples():
        has_baseline = isinstance(line.baseline, str)
        rows.append(
            {
                "task": line.task,
                "method": line.method,
                "metric": line.metric,
                "seeds": line.seeds,
                "score": f"{line.score:.{digits}f} [{line.score_low:.{digits}f}, {line.score_high:.{digits}f}]",
                "vs": names.get((line.task, line.baseline), "") if has_baseline else "",
                "difference": _difference(line, digits) + (" *" if line.significant else "") if has_baseline else "",
                "p": format_p(line.p, line.permutations) if has_baseline else "",
                "detectable": f"{line.detectable:.{digits}f}" if has_baseline else "",
            }
        )
    return pd.DataFrame(rows).set_index(["task", "method"])


def verdicts(compared: pd.DataFrame, task: str, digits: int = 1) -> list[str]:
    """One sentence per compared row on ``task``, from its interval: ``+ random crop 10% vs SimCSE: −0.8
    [−2.1, +0.5] (p = 0.31), not significant; this comparison detects 1.9 (80% power)``."""
    lines = compared[(compared.task == task) & compared.baseline.map(lambda b: isinstance(b, str))]
    names = dict(zip(compared.row, compared.method))
    out = []
    for line in lines.itertuples():
        p = format_p(line.p, line.permutations)
        if line.detectable == 0 and line.difference == 0:
            out.append(f"{line.method} vs {names[line.baseline]}: the same output on every item, no difference")
            continue
        verdict = (
            ("better" if line.low > 0 else "worse") + ", the interval excludes zero"  # its side of zero
            if line.significant
            else "not significant"
        )
        out.append(
            f"{line.method} vs {names[line.baseline]}: {_difference(line, digits)} "
            f"(p {p if p.startswith('≤') else '= ' + p}), {verdict}; this comparison detects differences of "
            f"{line.detectable:.{digits}f} or more (80% power)"
        )
    return out


@dataclass
class SuiteReport:
    """What a study report shows of the suite: ``compared`` (``compare``'s lines), split into the headline
    tasks, the tasks whose data ``study`` trains on (``Task.seen_by``) and the tasks that share texts with
    the data the checkpoints were selected on (``selection_texts``, described by ``selected_on``): the
    last two are reported apart, never in the headline. ``title`` heads its tables (a study with two
    reports names them apart)."""

    compared: pd.DataFrame
    tasks: Sequence[Task]
    study: str
    selected_on: str
    selection_texts: frozenset[str] = frozenset()
    title: str = "Evaluation suite"

    def overlaps_selection(self, task: Task) -> bool:
        return any(t in self.selection_texts for t in task.item_texts())

    def groups(self) -> dict[str, list[Task]]:
        """Headline, seen-in-training and selection-overlap tasks, in suite order (empty groups dropped)."""
        out: dict[str, list[Task]] = {"headline tasks": []}
        for task in self.tasks:
            if task.seen(self.study):
                key = f"tasks whose data {self.study} trains on (reported apart)"
            elif self.overlaps_selection(task):
                key = "tasks that share texts with the checkpoint-selection data (reported apart)"
            else:
                key = "headline tasks"
            out.setdefault(key, []).append(task)
        return {group: tasks for group, tasks in out.items() if tasks}

    def headline_tasks(self) -> list[Task]:
        return self.groups().get("headline tasks", [])

    def tables(self) -> dict[str, pd.DataFrame]:
        """One table per group, titled."""
        return {
            f"{self.title}, {group}: main metric x100 [95% interval]": table(
                self.compared[self.compared.task.isin([t.name for t in tasks])]
            )
            for group, tasks in self.groups().items()
        }

    def about(self) -> str:
        """How to read the tables (Markdown): tasks, intervals, selection, the smallest detectable difference."""
        described = "; ".join(f"`{t.name}`: {t.description} ({t.items:,} items)" for t in self.tasks)
        with_baseline = self.compared.dropna(subset=["detectable"]) if "detectable" in self.compared else None
        smallest = ""
        if with_baseline is not None and len(with_baseline):
            per_task = with_baseline.groupby("task", sort=False).detectable.median()
            smallest = (
                " Smallest difference each comparison could detect (80% power, alpha 0.05; median over the rows): "
                + ", ".join(f"{task} {d:.1f}" for task, d in per_task.items())
                + " points."
            )
        return (
            f"Tasks: {described}. Scores x100 with 95% percentile bootstrap intervals over the task's items and "
            "the row's seeds; each row against its baseline (column `vs`): the paired difference (the same item "
            "draws for both rows; each draw resamples the seeds too, seed by seed when both rows have the same "
            "seeds) with its interval, `*` where it excludes zero: the verdicts "
            "follow this interval. `p` is a paired permutation test over the items of the rows' seed-averaged "
            f"outputs (it ignores the seed-to-seed spread, so it can be small where the interval still includes "
            f"zero). Checkpoints were selected on {self.selected_on}.{smallest}"
        )

    def verdict(self) -> str:
        """The comparisons on every headline task (on every task, said so, when none is headline), as
        Markdown bullets; a task's comparisons are listed only when it has any."""
        headline = self.headline_tasks()
        caveat = "" if headline else " (no headline task: every task shares texts with the training or selection data)"
        blocks = []
        for task in headline or self.tasks:
            lines = [
                line.replace("+", "\\+", 1) if line.startswith("+") else line
                for line in verdicts(self.compared, task.name)
            ]
            if lines:
                blocks.append(
                    f"On `{task.name}` ({task.items:,} items){caveat}:\n" + "\n".join(f"- {line}" for line in lines)
                )
        return "\n\n".join(blocks)

    def comparison(self, row: str, task: str | None = None) -> str | None:
        """The verdict sentence of ``row`` on ``task`` (default: the headline task with the most items, the
        most powerful comparison), or None when the row has no baseline; the reports index shows it."""
        name = task or max(self.headline_tasks() or self.tasks, key=lambda t: t.items).name
        method = self.compared[(self.compared.task == name) & (self.compared.row == row)].method
        line = next(
            (v for v in verdicts(self.compared, name) if len(method) and v.startswith(f"{method.iloc[0]} vs ")), None
        )
        return f"{line} (on {name})" if line else None

    def record(self) -> dict:
        """Every line of ``compared`` and how the tasks were grouped, for ``results.json``."""
        return {
            "selected_on": self.selected_on,
            "groups": {group: [t.name for t in tasks] for group, tasks in self.groups().items()},
            "lines": self.compared.astype(object).where(self.compared.notna(), None).to_dict("records"),
        }
