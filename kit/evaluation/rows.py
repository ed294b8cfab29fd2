"""A study's rows on the evaluation suite: the same tasks, intervals and paired comparisons as
``python -m kit.evaluate``, for models that exist only inside a study's runs.

Each training run scores the study's tasks with its selected checkpoint and keeps the item outputs
(``score_run``, saved beside its result with ``save_outputs``), so a report never needs the model again.
The report gathers what its verdicts rest on as ``Evidence`` (each row's seeds x items on each task's main metric,
the items kept, which rows are deterministic, the pairs compared), saves it beside its record, and compares the
rows from it (``compare``, ``kit.evaluation.inference``): each row's score with its interval over items and seeds,
and each comparison's difference with its calibrated interval and p-value. ``python -m kit.docs recompute`` runs
the same functions on a committed report's evidence, so that a change of inference never needs a training.

A ``SuiteReport`` reads them in the order a run file declares (``kit.evaluation.rows.Primary``): its one primary
comparison, tested alone at alpha and sized beforehand for an effect; then the secondary comparisons of each group
of tasks (headline, or apart when the study trains on a task's data), each group one family
(``kit.evaluation.families``). A comparison whose two sides have the same outputs, or whose trained side has one
seed, is reported and not tested; a comparison on a task whose items lie within another task's of the same family
(BIOSSES test within all pairs) is reported as part of that task's finding, not as a second one. Items that share a
text with the data the checkpoints were selected on are left out of their task (``shared_items``), not the whole
task. The verdict sentences are written from these results, so that no verdict is read off a table by eye.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.files import write_atomic
from kit.evaluation import design
from kit.evaluation.bootstrap import ItemScores, Statistic, statistic_from, statistic_record
from kit.evaluation.families import correct
from kit.evaluation.inference import (
    Difference,
    Variance,
    cluster_contributions,
    format_p,
    paired_comparison,
    score_interval,
)
from kit.evaluation.suite import Embed, score_task
from kit.evaluation.task import Task, nested

RunOutputs = dict[str, dict[str, np.ndarray]]
"""One run's item outputs: task name -> metric -> outputs [items]."""


def score_run(embed: Embed, tasks: Sequence[Task]) -> RunOutputs:
    """The item outputs of one model (a function texts -> embeddings) on every task, every metric."""
    return {t.name: {m: s.outputs[0] for m, s in score_task(embed, t).items()} for t in tasks}


def text_count(tasks: Sequence[Task]) -> int:
    """How many texts scoring ``tasks`` encodes (each task's text lists, counted with their repeats)."""
    return sum(len(part) for task in tasks for part in task.texts())


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


def holding(row: str, runs: Sequence[RunOutputs], task: str) -> list[RunOutputs]:
    """The runs of ``row`` that hold outputs on ``task``; ValueError naming both when none does."""
    held = [r for r in runs if task in r]
    if not held:
        raise ValueError(f"no run of {row!r} has outputs on {task}")
    return held


def shared_items(task: Task, texts: frozenset[str]) -> np.ndarray:
    """For every item of ``task``, whether one of its texts is in ``texts`` (the checkpoint-selection data)."""
    return np.array([any(t in texts for t in item) for item in task.item_texts()], dtype=bool)


# ---- what the verdicts rest on ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskEvidence:
    """One task as its comparisons need it: its main ``metric`` (and ``label``), the ``statistic`` of its kept
    items, ``items`` it holds in all and ``kept`` (indices; None: all), and ``within``: the task of the same evidence
    and metric whose kept items contain all of this one's (``kit.evaluation.task.nested``; None: no such task);
    ``clusters``: the cluster of each kept item when the task's items are scored in groups (``Task.clusters``)."""

    name: str
    metric: str
    label: str
    statistic: Statistic
    items: int
    kept: np.ndarray | None = None
    within: str | None = None
    clusters: np.ndarray | None = None

    @property
    def scored(self) -> int:
        return self.items if self.kept is None else len(self.kept)


def kept_clusters(task: Task, idx: np.ndarray) -> np.ndarray | None:
    """The clusters of a task's kept items ``idx``; None for independent items, or when the kept items fall in one
    cluster (nothing to measure by cluster)."""
    clusters = np.asarray(task.clusters)[idx] if task.clusters else None
    return clusters if clusters is not None and len(np.unique(clusters)) > 1 else None


def cluster_spread(a: ItemScores, b: ItemScores, scale: float = 100.0) -> str:
    """Each cluster's contribution to a - b on clustered items (``kit.evaluation.inference.cluster_contributions``:
    a k-fold task's folds) x ``scale``, and in how many it has the difference's sign: ``+0.3, +0.6, ... (the sign of
    the difference in 5 of 5 folds)``; ``(no difference)`` when a - b is 0."""
    c = cluster_contributions(a, b) * scale
    values = ", ".join(_signed(x, 1) if round(x, 1) else "0.0" for x in c)
    difference = a.value - b.value
    if not difference:
        return f"{values} (no difference)"
    same = int(np.sum(np.sign(c) == np.sign(difference)))
    return f"{values} (the sign of the difference in {same} of {len(c)} folds)"


def spreads_over_clusters(evidence: Evidence, task: TaskEvidence, row: str, baseline: str) -> bool:
    """Whether ``row`` - ``baseline`` on ``task`` can be shown cluster by cluster (``cluster_spread``): clustered
    items, both rows scored there, and their runs paired (a fixed side, or as many seeds)."""
    rows = evidence.outputs.get(task.name, {})
    if task.clusters is None or row not in rows or baseline not in rows:
        return False
    a, b = evidence.scores(task, row), evidence.scores(task, baseline)
    return a.fixed or b.fixed or a.seeds == b.seeds


def declared_spreads(evidence: Evidence, declared: Sequence[tuple[str, str, str]]) -> list[str]:
    """``<row> − <baseline>: <cluster_spread>`` (labels) for each declared (task, row, baseline) comparison that
    ``spreads_over_clusters``: what a report and the docs show of a control's and a primary's folds."""
    tasks = {t.name: t for t in evidence.tasks}
    out = []
    for name, row, baseline in declared:
        task = tasks.get(name)
        if task is not None and spreads_over_clusters(evidence, task, row, baseline):
            spread = cluster_spread(evidence.scores(task, row), evidence.scores(task, baseline))
            out.append(f"{evidence.labels.get(row, row)} − {evidence.labels.get(baseline, baseline)}: {spread}")
    return out


@dataclass
class Evidence:
    """What a report's comparisons are computed from: ``outputs`` (task -> row -> [seeds, kept items] of the task's
    main metric; a row left out of a task is absent from it), the ``tasks``, the ``pairs`` compared (row, baseline),
    the rows' ``labels``, the deterministic rows (``fixed``: one set of outputs, no run-to-run variance) and the
    item-draw ``seed`` and ``resamples``. Saved beside a report (``save``, a compressed ``.npz``) and read back by
    ``load``, it gives the same comparisons without the runs."""

    tasks: list[TaskEvidence]
    outputs: dict[str, dict[str, np.ndarray]]
    pairs: list[tuple[str, str]]
    labels: dict[str, str]
    fixed: frozenset[str] = frozenset()
    seed: int = 0
    resamples: int = 2000

    @classmethod
    def of(
        cls,
        rows: Mapping[str, Sequence[RunOutputs]],
        pairs: Sequence[tuple[str, str]],
        tasks: Sequence[Task],
        labels: Mapping[str, str] | None = None,
        keep: Mapping[str, np.ndarray] | None = None,
        fixed: Collection[str] = (),
        left_out: Mapping[str, Collection[str]] | None = None,
        seed: int = 0,
        resamples: int = 2000,
    ) -> Evidence:
        """The evidence of ``rows`` (row -> its runs' outputs, one per seed, in the same seed order for every row)
        on ``tasks``' main metrics: ``keep`` (task -> item indices) leaves the other items out, ``left_out`` (task ->
        rows) leaves rows out of a task. A row's runs on a task are those that hold it (study 2's k-fold rows: one run
        per fold and seed on the suite's tasks, one per seed on its held-out task); ValueError when none does."""
        keep, left_out = keep or {}, left_out or {}
        infos, outputs = [], {}
        within = nested(tasks, keep)
        for task in tasks:
            metric, kept = task.main_metric, keep.get(task.name)
            statistic = task.statistic(metric)
            idx = np.arange(task.items) if kept is None else np.asarray(kept)
            outputs[task.name] = {
                row: np.stack(
                    [np.asarray(r[task.name][metric], dtype=np.float64) for r in holding(row, runs, task.name)]
                )[:, idx]
                for row, runs in rows.items()
                if row not in left_out.get(task.name, ())
            }
            infos.append(
                TaskEvidence(
                    task.name,
                    metric,
                    task.metric_labels[metric],
                    statistic if kept is None else statistic.subset(idx),
                    task.items,
                    None if kept is None else idx,
                    within.get(task.name),
                    kept_clusters(task, idx),
                )
            )
        labels = {**{r: r for r in rows}, **(labels or {})}
        return cls(infos, outputs, list(pairs), labels, frozenset(fixed), seed, resamples)

    def scores(self, task: TaskEvidence, row: str) -> ItemScores:
        return ItemScores(task.metric, self.outputs[task.name][row], task.statistic, row in self.fixed, task.clusters)

    def save(self, path: Path) -> Path:
        """One compressed ``.npz``: every output array and a JSON ``meta`` entry with the rest."""
        arrays = {f"outputs/{task}/{row}": v for task, rows in self.outputs.items() for row, v in rows.items()}
        arrays.update({f"kept/{t.name}": t.kept for t in self.tasks if t.kept is not None})
        arrays.update({f"clusters/{t.name}": t.clusters for t in self.tasks if t.clusters is not None})
        meta = {
            "tasks": [
                {
                    "name": t.name,
                    "metric": t.metric,
                    "label": t.label,
                    "items": t.items,
                    "within": t.within,
                    "statistic": statistic_record(t.statistic),
                }
                for t in self.tasks
            ],
            "pairs": self.pairs,
            "labels": self.labels,
            "fixed": sorted(self.fixed),
            "seed": self.seed,
            "resamples": self.resamples,
        }
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        return write_atomic(Path(path), lambda tmp: np.savez_compressed(tmp, **arrays))

    @classmethod
    def load(cls, path: Path) -> Evidence:
        """What ``save`` wrote; ValueError naming the file when it is not that."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                arrays = {key: data[key] for key in data.files if key != "meta"}
            outputs: dict[str, dict[str, np.ndarray]] = {t["name"]: {} for t in meta["tasks"]}
            for key, value in arrays.items():
                if key.startswith("outputs/"):
                    _, task, row = key.split("/", 2)
                    outputs[task][row] = value
            tasks = [
                TaskEvidence(
                    t["name"],
                    t["metric"],
                    t["label"],
                    statistic_from(t["statistic"]),
                    t["items"],
                    arrays.get(f"kept/{t['name']}"),
                    t["within"],
                    arrays.get(f"clusters/{t['name']}"),
                )
                for t in meta["tasks"]
            ]
            return cls(
                tasks,
                outputs,
                [tuple(p) for p in meta["pairs"]],
                meta["labels"],
                frozenset(meta["fixed"]),
                meta["seed"],
                meta["resamples"],
            )
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path}: not a report's evidence ({type(err).__name__}: {err})") from None


def compare(evidence: Evidence, scale: float = 100.0, confidence: float = 0.95) -> pd.DataFrame:
    """One line per (task, row, baseline) on the task's main metric x ``scale``: the row's score with its interval
    (``score_interval``) and, for a pair of ``evidence.pairs``, the paired difference row - baseline with its
    interval, p-value, standard error, degrees of freedom, variance parts and the difference it resolves
    (``paired_comparison``); a row compared with nothing gets one line without a baseline, a row compared with several
    a line each. Each task draws its items from its own seeded stream (the seed and the task's name), as
    ``kit.evaluate`` does."""
    baselines: dict[str, list[str]] = {}
    for row, baseline in evidence.pairs:
        baselines.setdefault(row, []).append(baseline)
    out = []
    for task in evidence.tasks:
        stream = (evidence.seed, zlib.crc32(task.name.encode()))
        present = evidence.outputs[task.name]
        for row in present:
            s = evidence.scores(task, row)
            e = score_interval(s, stream, evidence.resamples, confidence).scaled(scale)
            line = {
                "task": task.name,
                "metric": task.label,
                "items": task.scored,
                "left_out": task.items - task.scored,
                "within": task.within,
                "row": row,
                "method": evidence.labels.get(row, row),
                "seeds": s.seeds,
                "fixed": s.fixed,
                "score": e.value,
                "score_low": e.low,
                "score_high": e.high,
                "baseline": None,
            }
            compared = [b for b in baselines.get(row, []) if b in present]
            if not compared:
                out.append(line)
            for baseline in compared:
                c = paired_comparison(s, evidence.scores(task, baseline), stream, evidence.resamples, confidence)
                c = c.scaled(scale)
                out.append(
                    {
                        **line,
                        "baseline": baseline,
                        "difference": c.estimate,
                        "low": c.low,
                        "high": c.high,
                        "p": c.p_value,
                        "se": c.se,
                        "df": c.df,
                        "detectable": c.detectable,
                        "resamples": c.resamples,
                        "reason": c.reason,
                        "variance": c.variance.record(),
                        "comparison": c,
                    }
                )
    return pd.DataFrame(out)


# ---- the primary comparison ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """A comparison declared before the run, ``row`` - ``baseline`` on ``task``, tested alone at alpha."""

    row: str
    baseline: str
    task: str

    def is_line(self, line) -> bool:
        return (line.row, line.baseline, line.task) == (self.row, self.baseline, self.task)

    def __str__(self) -> str:
        """``row - baseline on task``: how reports and run files name a declared comparison."""
        return f"{self.row} - {self.baseline} on {self.task}"


@dataclass(frozen=True)
class Primary(Declared):
    """A run file's one primary comparison, ``row`` - ``baseline`` on ``task``, tested alone at alpha; ``effect``
    (main metric x100) is the difference it is sized to detect (None: none declared)."""

    effect: float | None = None

    @classmethod
    def parse(cls, text: str, effect: float | None = None) -> Primary:
        """``"swap_10 - simcse on biosses-all"`` (a row name may hold spaces, not ' - ' or ' on '); ValueError saying
        the form otherwise."""
        rows, _, task = text.rpartition(" on ")
        parts = [part.strip() for part in rows.split(" - ")]
        if len(parts) != 2 or not all(parts) or not task.strip():
            raise ValueError(f"{text!r} is not 'ROW - ROW on TASK' (two table rows around ' - ', then ' on ' a task)")
        return cls(parts[0], parts[1], task.strip(), effect)


@dataclass(frozen=True)
class Control(Declared):
    """A study's positive control: ``row`` - ``baseline`` on ``task``, tested alone at alpha, must be better (its
    interval above zero) before any method comparison of the run is a finding. ``premise``: what it shows, in words
    (the base method improves on its start read out the same way); ``chosen``: how the baseline was chosen;
    ``vetoes``: checks beside the comparison that failed (a baseline collapsed to one output), one sentence each;
    ``candidates``: how many rows the baseline was chosen from as the best on these same items (1: no choice), which
    a "fails" must allow for (``control_outcome``)."""

    premise: str = ""
    chosen: str = ""
    vetoes: tuple[str, ...] = ()
    candidates: int = 1

    def record(self) -> dict:
        return {**asdict(self), "vetoes": list(self.vetoes)}

    @classmethod
    def from_record(cls, record: dict) -> Control:
        """A recorded control; a record from before ``candidates`` was kept reads the count from its ``chosen`` text
        ("the strongest of 6 training-free embeddings ..."), else 1."""
        keys = ("row", "baseline", "task", "premise", "chosen")
        legacy = LEGACY_CHOICE.match(record.get("chosen", ""))
        candidates = record.get("candidates", int(legacy.group(1)) if legacy else 1)
        return cls(**{k: record[k] for k in keys}, vetoes=tuple(record.get("vetoes", ())), candidates=candidates)


@dataclass(frozen=True)
class Rung(Declared):
    """One rung of a study's premise ladder beyond its positive control: ``row`` - ``baseline`` on ``task``, tested
    alone at alpha and reported, never a gate. ``rung``: its letter (the control is rung a: the trained row against its
    start read out the same way; b: both whitened, like for like; c: against the start's best training-free read-out
    chosen on the selection data; d: against a bag-of-words anchor); ``premise``: what passing it shows, in words."""

    rung: str = ""
    premise: str = ""

    def record(self) -> dict:
        return asdict(self)


RUNG_OUTCOMES = ("above", "below", "level", "not tested")
"""A rung's outcome: the interval above zero, below it, across it, or no test."""


def rung_outcome(compared: pd.DataFrame, rung: Declared) -> tuple[str, object]:
    """A rung's outcome (``RUNG_OUTCOMES``) at alpha, alone, and its comparison line (None when ``compared`` lacks
    it)."""
    line = next((x for x in compared_lines(compared).itertuples() if rung.is_line(x)), None)
    if line is None or line.reason:
        return "not tested", line
    return ("above" if line.low > 0 else "below" if line.high < 0 else "level"), line


def ladder_summary(compared: pd.DataFrame, control: Control | None, rungs: Sequence[Rung], digits: int = 1) -> str:
    """The premise ladder in one paragraph: the control (rung a) and each rung with its difference, interval and
    outcome at alpha, each tested alone; '' without rungs."""
    if not rungs:
        return ""
    names = dict(zip(compared.row, compared.method))
    parts = []
    for rung in ([control] if control else []) + list(rungs):
        outcome, line = (control_outcome if rung is control else rung_outcome)(compared, rung)
        letter = getattr(rung, "rung", "a")
        head = f"({letter}) {names.get(rung.row, rung.row)} − {names.get(rung.baseline, rung.baseline)}"
        if line is None or line.reason:
            parts.append(f"{head}: not tested")
            continue
        p = format_p(line.p)
        parts.append(
            f"{head}: {_interval(line.difference, line.low, line.high, digits)}, "
            f"p {p if p.startswith('<') else '= ' + p}, {outcome}"
        )
    task = (control or rungs[0]).task
    return (
        f"Premise ladder on {task}, each rung tested alone at alpha (not corrected for the others: context, not "
        "findings): " + "; ".join(parts) + ". Rung (a), the trained model against its start read out the same way, is "
        "the gate; (b) whitening both sides like for like, (c) the start's best training-free read-out chosen on the "
        "selection data and (d) bag of words say where the trained model stands against stronger baselines, and are "
        "reported, not gates."
    )


def ladder_record(compared: pd.DataFrame, control: Control | None, rungs: Sequence[Rung]) -> dict:
    """What a family's record keeps of its ladder (nothing without rungs): ``rungs``, each declaration and its
    outcome, and ``ladder``, its sentences (``ladder_summary``)."""
    if not rungs:
        return {}
    declared = [{**rung.record(), "outcome": rung_outcome(compared, rung)[0]} for rung in rungs]
    return {"rungs": declared, "ladder": ladder_summary(compared, control, rungs)}


LEGACY_CHOICE = re.compile(r"(?:the strongest|best) of (\d+) training-free embeddings")
"""How a control record written before ``Control.candidates`` named its baseline's choice."""


NO_CONTROL = (
    "No positive control: this run lacks the rows its study's control compares (the base method, or what it is "
    "tested against), so its premise is not shown and no method comparison is a finding (they are shown, labelled "
    "as such)."
)
"""The premise of a study's reports when its run cannot form the control (``StudyBase.control_of``)."""

OUTCOMES = ("passes", "fails", "not shown", "not tested")
"""A positive control's outcome: better at alpha (and no veto); worse at alpha / candidates or vetoed; neither;
untestable."""


def fail_level(line, control: Control) -> float:
    """The p-value below which a control that came out behind fails: alpha / ``control.candidates`` (Bonferroni).
    A baseline chosen as the best of k on the same items is biased upwards, so "behind it at alpha" fires under the
    null well above the nominal alpha / 2 (``tests/evaluation/test_calibration.py`` simulates it at 5 seeds and six
    candidates); behind the chosen one at alpha / k implies behind some candidate at alpha / k, which under the null
    happens in at most k (alpha / k) / 2 = alpha / 2 where the one-candidate test's lower tail is calibrated
    (``benchmarks/calibration.py --control`` counts both)."""
    return (1 - line.family_confidence) / control.candidates


def control_outcome(compared: pd.DataFrame, control: Control) -> tuple[str, object]:
    """The control's outcome (``OUTCOMES``) and its comparison line (None when ``compared`` lacks it)."""
    line = next((x for x in compared_lines(compared).itertuples() if control.is_line(x)), None)
    if control.vetoes:
        return "fails", line
    if line is None or line.reason:
        return "not tested", line
    if line.significant and line.high < 0 and line.p < fail_level(line, control):
        return "fails", line
    return ("passes" if line.significant and line.low > 0 else "not shown"), line


def control_summary(compared: pd.DataFrame, control: Control, digits: int = 1) -> str:
    """The control in sentences: the comparison with its interval at alpha, its outcome, and what it means for the
    run's comparisons (findings only when it passes)."""
    outcome, line = control_outcome(compared, control)
    names = dict(zip(compared.row, compared.method))
    head = f"Positive control ({control.premise}): {names.get(control.row, control.row)} − " + (
        f"{names.get(control.baseline, control.baseline)}"
        + (f" ({control.chosen})" if control.chosen else "")
        + f" on {control.task}"
    )
    if line is None:
        result = ": not in this report's evidence"
    elif line.reason:
        result = f": {_signed(line.difference, digits)}, not tested ({line.reason})"
    else:
        p = format_p(line.p)
        result = (
            f": {_interval(line.difference, line.low, line.high, digits)}, p {p if p.startswith('<') else '= ' + p}"
        )
    vetoes = "".join(f" {v}" for v in control.vetoes)
    if outcome == "passes":
        return f"{head}{result}: passes. The method comparisons below rest on it."
    resolves = (
        f"; with {_seeds(line)} it resolves {line.family_detectable:.{digits}f} points with 80% power"
        + (", and choosing its baseline as the best of its candidates costs more" if control.chosen else "")
        if line is not None and np.isfinite(line.family_detectable)
        else ""
    )
    tested = line is not None and not line.reason
    allows = f"allows for its baseline being the best of {control.candidates} on these items"
    if outcome == "fails" and tested and control.candidates > 1 and not control.vetoes:
        why = f"fails (p below {fail_level(line, control):.2g}, which {allows})"
    elif outcome == "not shown" and line.significant and line.high < 0:
        why = f"not shown (behind at alpha, but not at {fail_level(line, control):.2g}, which {allows}{resolves})"
    elif outcome == "not shown":
        why = f"not shown (the interval reaches zero{resolves})"
    else:
        why = outcome
    held = "does not hold here" if outcome == "fails" else "is not shown to hold here"
    return (
        f"{head}{result}: {why}.{vetoes} This setting cannot test the paper's claim: the premise {held}, so no "
        "method comparison below is a finding (they are shown, labelled as such)."
    )


# ---- families and verdicts -------------------------------------------------------------------------------------

FAMILY_COLUMNS = ("p_adjusted", "family_low", "family_high", "family_confidence", "family_size", "family_detectable")
"""What ``families`` adds to every comparison line: its result within its family (nan on other lines)."""
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}
ROLES = ("control", "primary", "rung", "secondary", "within", "aside", "rung's pair", "not tested")
"""A comparison line's role: the study's positive control (tested alone), the run file's primary (tested alone), a
rung of the premise ladder (tested alone, reported), a member of its group's family, a comparison on a task within
another task of the family (reported, not a second finding), the control's pair on another task (reported, not
tested), a rung's pair on another task (likewise), or not tested (``reason``)."""


def compared_lines(compared: pd.DataFrame) -> pd.DataFrame:
    """The lines of ``compared`` that compare a row with a baseline."""
    return compared[compared.baseline.map(lambda b: isinstance(b, str))]


def families(
    compared: pd.DataFrame,
    groups: Mapping[str, Sequence[str]],
    primary: Primary | None,
    correction: str,
    confidence: float = 0.95,
    control: Control | None = None,
    rungs: Sequence[Rung] = (),
) -> pd.DataFrame:
    """``compared`` with every comparison line's ``role`` (``ROLES``), its result within its family
    (``FAMILY_COLUMNS``) and its verdict ``significant``: the control, the primary and each of the ``rungs`` alone at
    alpha, each group's secondary comparisons (``groups``: group -> task names) one family corrected by
    ``correction``."""
    compared = compared.copy()
    for column in FAMILY_COLUMNS:
        compared[column] = np.nan
    compared["significant"] = False
    compared["role"] = None
    if "comparison" not in compared:
        return compared
    lines = compared_lines(compared)
    group_of = {task: group for group, names in groups.items() for task in names}
    pairs = set(zip(lines.task, lines.row, lines.baseline))
    role = {}
    for index, line in lines.iterrows():
        if primary is not None and primary.is_line(line):
            role[index] = "primary"  # a primary that is also the control stays the primary, tested alone as both
        elif control is not None and control.is_line(line):
            role[index] = "control"
        elif any(rung.is_line(line) for rung in rungs):
            role[index] = "rung"
        elif control is not None and (line.row, line.baseline) == (control.row, control.baseline):
            role[index] = "aside"
        elif any((line.row, line.baseline) == (rung.row, rung.baseline) for rung in rungs):
            role[index] = "rung's pair"
        elif not line.comparison.tested:
            role[index] = "not tested"
        elif (
            isinstance(line.within, str)
            and group_of.get(line.within) == group_of.get(line.task)
            and (line.within, line.row, line.baseline) in pairs
        ):
            role[index] = "within"
        else:
            role[index] = "secondary"
    compared.loc[list(role), "role"] = pd.Series(role)
    members = [[i for i in role if role[i] == alone] for alone in ("control", "primary")]
    members += [[i] for i in role if role[i] == "rung"]
    members += [
        [i for i in role if role[i] == "secondary" and compared.at[i, "task"] in names] for names in groups.values()
    ]
    for family in members:
        if not family:
            continue
        how = "none" if role[family[0]] in ("control", "primary", "rung") else correction
        for index, a in zip(family, correct(list(compared.loc[family, "comparison"]), how, confidence)):
            compared.loc[index, list(FAMILY_COLUMNS)] = a.p, a.low, a.high, a.confidence, a.size, a.detectable
            compared.at[index, "significant"] = a.significant
    return compared


def mark_findings(compared: pd.DataFrame, withheld: bool) -> pd.DataFrame:
    """``compared`` with ``finding``: a primary or secondary comparison significant at its family's level, when the
    run's positive control passed (``withheld``: it did not, and no comparison is a finding)."""
    role = compared.role if "role" in compared else pd.Series(None, index=compared.index)
    return compared.assign(finding=compared.significant & role.isin(["primary", "secondary"]) & (not withheld))


def _interval(estimate: float, low: float, high: float, digits: int) -> str:
    return format(Difference(estimate, low, high, 0), f".{digits}f")


def _signed(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def _bounds(low: float, high: float, digits: int) -> str:
    return f"[{low:+.{digits}f}, {high:+.{digits}f}]".replace("-", "−")


def _test(line, correction: str) -> str:
    """The table's ``test`` cell: how the comparison was tested."""
    if line.role == "control":
        return "positive control, alone" if not line.reason else "positive control, not tested"
    if line.role == "primary":
        return "primary, alone" if not line.reason else "primary, not tested"
    if line.role == "rung":
        return "premise rung, alone" if not line.reason else "premise rung, not tested"
    if line.role == "within":
        return f"within {line.within}"
    if line.role == "aside":
        return "control's pair, not tested"
    if line.role == "rung's pair":
        return "premise rung's pair, not tested"
    if line.role == "not tested":
        if "same outputs" in line.reason:
            return "identical outputs"
        return "not tested: 1 seed" if "one seed" in line.reason else f"not tested: {line.reason}"
    size = int(line.family_size)
    return f"{CORRECTION_NAMES[correction]}, {size}" if correction != "none" and size > 1 else "alone"


def table(compared: pd.DataFrame, digits: int = 1, correction: str = "holm") -> pd.DataFrame:
    """``compare``'s lines (with ``families``' columns) as the report shows them, indexed by (task, method): the
    metric, the items scored, the seeds, score [interval], the baseline, the difference [interval], its p, how it is
    tested (primary, its family, within another task, not tested), the interval and adjusted p at its family's level
    (``*`` where significant) and the difference its design resolves with 80% power at that level."""
    names = {(t, r): m for t, r, m in zip(compared.task, compared.row, compared.method)}
    rows = []
    for line in compared.itertuples():
        has = isinstance(line.baseline, str)
        tested = has and line.role in ("control", "primary", "rung", "secondary") and not line.reason
        row = {
            "task": line.task,
            "method": line.method,
            "metric": line.metric,
            "items": f"{line.items:,}" + (f" ({line.left_out} left out)" if line.left_out else ""),
            "seeds": line.seeds,
            "score": f"{line.score:.{digits}f} [{line.score_low:.{digits}f}, {line.score_high:.{digits}f}]",
            "vs": names.get((line.task, line.baseline), "") if has else "",
            "difference": "",
            "p": "",
            "test": _test(line, correction) if has else "",
            "family interval": "",
            "p adjusted": "",
            "resolves": "",
        }
        if has and line.reason:
            row["difference"] = _signed(line.difference, digits)
        elif has:
            row["difference"] = _interval(line.difference, line.low, line.high, digits)
            row["p"] = format_p(line.p)
        if tested:
            row["family interval"] = _interval(line.difference, line.family_low, line.family_high, digits)
            star = line.significant if line.role in ("control", "rung") else getattr(line, "finding", line.significant)
            row["p adjusted"] = format_p(line.p_adjusted) + (" *" if star else "")
            row["resolves"] = f"{line.family_detectable:.{digits}f}"
        rows.append(row)
    return pd.DataFrame(rows).set_index(["task", "method"])


def verdict_line(line, names: Mapping[str, str], correction: str, digits: int = 1) -> str:
    """One comparison's verdict sentence, from its role and adjusted result."""
    head = f"{line.method} vs {names[line.baseline]}"
    if line.reason:
        if "same outputs" in line.reason:
            return f"{head}: the same output on every item, not tested"
        return f"{head}: {_signed(line.difference, digits)} ({line.reason}), not tested"
    p = format_p(line.p)
    alone = f"{_interval(line.difference, line.low, line.high, digits)} (p {p if p.startswith('<') else '= ' + p})"
    if line.role == "within":
        return f"{head}: {alone}: its items lie within `{line.within}`, whose comparison is the one tested"
    if line.role == "aside":
        return f"{head}: {alone}: the positive control's pair on another task, reported and not tested"
    if line.role == "rung's pair":
        return f"{head}: {alone}: a premise rung's pair on another task, reported and not tested"
    if line.role == "rung":
        return f"{head}: {alone}: a premise rung, tested alone and reported (not a finding about the methods)"
    family = ""
    if line.role == "secondary" and correction != "none" and line.family_size > 1:
        q = format_p(line.p_adjusted)
        family = (
            f"; {CORRECTION_NAMES[correction]} over the {line.family_size:.0f} comparisons of its family: "
            f"p {q if q.startswith('<') else '= ' + q}, {100 * line.family_confidence:.4g}% interval "
            f"{_bounds(line.family_low, line.family_high, digits)}"
        )
    side = "better" if line.low > 0 else "worse"
    verdict = f"{side}, significant" if line.significant else "not significant"
    if line.significant and line.role != "control" and not getattr(line, "finding", True):
        verdict = f"{side} at its level, not a finding (the positive control did not pass)"
    if line.significant and correction == "holm" and line.family_low <= 0 <= line.family_high:
        verdict += (
            " (Holm's step-down rejects where Bonferroni's family interval, which does not step down, reaches zero)"
        )
    return (
        f"{head}: {alone}{family}: {verdict}; with {_seeds(line)} this comparison resolves "
        f"{line.family_detectable:.{digits}f} points (80% power at its family's level)"
    )


def _seeds(line) -> str:
    seeds = int(line.seeds)
    return f"{seeds} seed{'s' * (seeds != 1)} per trained row" if not line.fixed else "its seeds"


def verdicts(compared: pd.DataFrame, task: str, digits: int = 1, correction: str = "holm") -> list[str]:
    """One sentence per comparison on ``task`` (the primary first), from its role and adjusted result."""
    lines = compared_lines(compared[compared.task == task])
    names = dict(zip(compared.row, compared.method))
    order = sorted(lines.itertuples(), key=lambda line: ROLES.index(line.role) if line.role in ROLES else len(ROLES))
    return [verdict_line(line, names, correction, digits) for line in order]


@dataclass(frozen=True)
class PaperEffect:
    """What a study's paper claims for its main comparison: ``effect`` points (main metric x100) on ``task``
    (``claim`` says which rows, on which data, with the paper's numbers)."""

    task: str
    effect: float
    claim: str


def primary_summary(compared: pd.DataFrame, primary: Primary | None, digits: int = 1, withheld: bool = False) -> str:
    """The primary comparison of ``compared`` in sentences: its result at alpha; for a null, the largest gain its
    interval rules out (the upper end) and, when its design lacks the power for the effect it was declared for, that
    it is inconclusive; then what the design resolves, the seeds (and items) the effect needs
    (``kit.evaluation.design``), and whether the effect would carry the baseline past the scale's maximum. '' when
    ``compared`` does not hold the primary. ``withheld``: the positive control did not pass, so the primary is
    reported, not a finding."""
    lines = compared_lines(compared)
    line = next((x for x in lines.itertuples() if primary is not None and primary.is_line(x)), None)
    if line is None:
        return ""
    names = dict(zip(compared.row, compared.method))
    head = f"Primary comparison ({primary}): {line.method} − {names[line.baseline]}"
    if withheld:
        head = f"Not a finding, as the positive control did not pass. {head}"
    if line.reason:
        return f"{head}: not tested ({line.reason})."
    variance, alpha = Variance.from_record(line.variance), 1 - line.family_confidence
    underpowered = primary.effect is not None and design.power_at(primary.effect, variance, alpha) < design.POWER
    p = format_p(line.p)
    out = f"{head}: {_interval(line.difference, line.low, line.high, digits)}, p {p if p.startswith('<') else '= ' + p}"
    if line.significant:
        out += f": {'better' if line.low > 0 else 'worse'}, significant at alpha {alpha:.2g}."
    else:
        out += (
            f": not significant{', and inconclusive at this design' if underpowered else ''}; its "
            f"{line.family_confidence:.0%} interval rules out gains above {line.high:.{digits}f} points and losses "
            f"beyond {max(-line.low, 0):.{digits}f}."
        )
    if primary.effect is not None:
        seeds = max((s for _, s in variance.runs), default=int(line.seeds))  # the trained side's, not the row's
        out += " " + design.sizing_sentence(primary.effect, variance, seeds, alpha)
        baseline = compared[(compared.task == line.task) & (compared.row == line.baseline)].score
        if ceiling := design.ceiling(primary.effect, float(baseline.iloc[0]) if len(baseline) else None):
            out += " " + ceiling
    return out


@dataclass
class SuiteReport:
    """What a study report shows of the suite: ``compared`` (``compare``'s lines of the ``evidence``), its tasks
    grouped into the headline tasks and the tasks whose data ``study`` trains on (``Task.seen_by``), reported apart;
    items that share a text with the data the checkpoints were selected on (``selection_texts``, described by
    ``selected_on``) were left out of their task, and a task whose every item does is reported apart. The run file's
    ``primary`` comparison is tested alone, the secondary comparisons of each group are a family corrected by
    ``correction`` (``families``); the verdicts follow the adjusted results. ``control``: the study's positive
    control, tested alone before the rest; unless it passes, no comparison is a finding. ``premise``: the sentences
    of a control that did not pass in another report of the same run (which withholds this one's findings too).
    ``paper_effect``: what the study's paper claims. ``title`` heads its tables. ``rungs``: the premise ladder's rungs
    beyond the control (``Rung``), each tested alone and reported."""

    evidence: Evidence
    tasks: Sequence[Task]
    study: str
    selected_on: str
    selection_texts: frozenset[str] = frozenset()
    title: str = "Evaluation suite"
    correction: str = "holm"
    confidence: float = 0.95
    paper_effect: PaperEffect | None = None
    primary: Primary | None = None
    control: Control | None = None
    premise: str | None = None
    rungs: Sequence[Rung] = ()
    compared: pd.DataFrame = field(init=False)

    def __post_init__(self):
        names = {t.name for t in self.evidence.tasks}
        if self.primary is not None and self.primary.task not in names:
            self.primary = None  # the primary is another report's (QFCL's ROUGE, say)
        if self.control is not None and self.control.task not in names:
            self.control = None  # the control is another report's: its outcome comes as ``premise``
        self.rungs = tuple(rung for rung in self.rungs if rung.task in names)
        lines = compare(self.evidence, confidence=self.confidence)
        self.compared = families(
            lines, self.group_names(), self.primary, self.correction, self.confidence, self.control, self.rungs
        )
        self.compared = mark_findings(self.compared, self.withheld() is not None)

    def control_text(self) -> str:
        """The positive control's sentences (``control_summary``); '' when this report holds none."""
        return control_summary(self.compared, self.control) if self.control else ""

    def ladder_text(self) -> str:
        """The premise ladder's sentences (``ladder_summary``); '' without rungs."""
        return ladder_summary(self.compared, self.control, self.rungs)

    def withheld(self) -> str | None:
        """Why no comparison of this report is a finding: the sentences of its positive control, or of another
        report's (``premise``), when that control did not pass; None when it passed or the run has none."""
        if self.control is not None and control_outcome(self.compared, self.control)[0] != "passes":
            return self.control_text()
        return self.premise

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

    def group_names(self) -> dict[str, list[str]]:
        return {group: [t.name for t in tasks] for group, tasks in self.groups().items()}

    def headline_tasks(self) -> list[Task]:
        return self.groups().get("headline tasks", [])

    def tables(self) -> dict[str, pd.DataFrame]:
        """One table per group, titled (``group_tables``)."""
        return group_tables(self.compared, self.group_names(), self.title, self.correction)

    def primary_text(self) -> str:
        """The primary's sentences (``primary_summary``); '' when this report holds no primary."""
        return primary_summary(self.compared, self.primary, withheld=self.withheld() is not None)

    def about(self) -> str:
        """How to read the tables (Markdown): tasks, intervals, the primary, families, selection, what the design
        resolves."""
        described = "; ".join(f"`{t.name}`: {t.description} ({t.items:,} items)" for t in self.tasks)
        left_out = {line.task: line.left_out for line in self.compared.itertuples() if line.left_out}
        shared = (
            " Left out of their task because they share a text with the checkpoint-selection data: "
            + ", ".join(f"{n} item{'s' * (n != 1)} of `{t}`" for t, n in left_out.items())
            + "."
            if left_out
            else ""
        )
        family = (
            f" The secondary comparisons of each group of tasks are one family: each gets its p-value and its interval "
            f"at the family's level after {CORRECTION_NAMES[self.correction]}'s correction ("
            + {
                "holm": "Holm's step-down procedure controls the chance of any false verdict; its intervals are "
                "Bonferroni's simultaneous ones, which can reach zero where Holm's later steps reject",
                "bh": "Benjamini-Hochberg's procedure controls the expected share of false verdicts; its intervals "
                "are Benjamini-Yekutieli's false-coverage-rate intervals",
                "none": "",
            }[self.correction]
            + "); the verdicts and `*` follow the adjusted result."
            if self.correction != "none"
            else " No correction for the number of secondary comparisons: each verdict stands alone."
        )
        primary = (
            f" The run file's primary comparison ({self.primary}) is tested alone at alpha "
            f"{1 - self.confidence:.2g} and is not part of any family."
            if self.primary
            else " The run file declares no primary comparison (`primary`): every comparison is secondary."
        )
        control = (
            f" The positive control ({self.control}: {self.control.premise}) is tested alone at alpha before the rest; "
            "unless its difference is positive and significant, no comparison is a finding (no `*`)."
            if self.control
            else ""
        )
        return (
            f"Tasks: {described}. Scores x100 with 95% intervals over the task's items and the row's seeds; each "
            "comparison (column `vs`): the paired difference with its interval and p-value from one t test whose "
            "variance adds the item part (the same item draws for both rows, the seeds held fixed) and each trained "
            "row's run-to-run part (its seeds' spread), with Satterthwaite's degrees of freedom "
            "(`kit.evaluation.inference`; its error rate is checked by simulation, `benchmarks/calibration.py`). "
            "A comparison of two rows with the same outputs on every item, or of a trained row with one seed, is "
            "reported and not tested; one on a task whose items lie within another's (`test` column: within) is part "
            f"of that task's finding, not a second one.{control}{primary}{family} Checkpoints were selected on "
            f"{self.selected_on}.{shared}{self.power()}"
        )

    def power(self) -> str:
        """What the secondary comparisons of each task resolve (80% power at their family's level, median over the
        tested rows), and the paper's claimed effect beside it."""
        lines = compared_lines(self.compared)
        lines = lines[lines.role == "secondary"]
        if not len(lines):
            return ""
        per_task = lines.groupby("task", sort=False).family_detectable.median()
        out = (
            " What the secondary comparisons resolve (80% power at their family's level; median over the rows): "
            + ", ".join(f"`{task}` {d:.1f}" for task, d in per_task.items())
            + " points."
        )
        claim = self.paper_effect
        if claim:
            out += f" The paper claims {claim.claim}, {claim.effect:+.1f} points with its model and corpus."
        return out

    def verdict(self) -> str:
        """The primary first, then the comparisons on every headline task (on every task, said so, when none is
        headline), as Markdown bullets; a task's comparisons are listed only when it has any."""
        headline = self.headline_tasks()
        caveat = "" if headline else " (no headline task: every task is the training or the selection data)"
        blocks = [f"**{text}**" for text in (self.control_text() or self.premise, self.primary_text()) if text]
        blocks[1:1] = [self.ladder_text()] if self.ladder_text() else []
        for task in headline or self.tasks:
            lines = [
                line.replace("+", "\\+", 1) if line.startswith("+") else line
                for line in verdicts(self.compared, task.name, correction=self.correction)
            ]
            if lines:
                items = self.compared[self.compared.task == task.name]["items"].iloc[0]
                blocks.append(f"On `{task.name}` ({items:,} items){caveat}:\n" + "\n".join(f"- {x}" for x in lines))
        return "\n\n".join(blocks)

    def comparison(self, row: str | None = None, task: str | None = None) -> str | None:
        """The primary's sentences when the report has one; else the verdict sentence of ``row`` on ``task``
        (default: the headline task with the most items) against its baseline (not the control's), or None when the
        row has no baseline there; the reports index shows it."""
        if self.primary_text():
            return self.primary_text()
        if row is None:
            return None
        name = task or max(self.headline_tasks() or self.tasks, key=lambda t: t.items).name
        lines = compared_lines(self.compared[(self.compared.task == name) & (self.compared.row == row)])
        line = next((x for x in lines.itertuples() if x.role not in ("control", "aside", "rung", "rung's pair")), None)
        if line is None:
            return None
        names = dict(zip(self.compared.row, self.compared.method))
        return f"{verdict_line(line, names, self.correction)} (on {name})"

    def record(self) -> dict:
        """Every line of ``compared`` (without the comparison objects), the primary and how the tasks were grouped,
        for ``results.json``."""
        return suite_record(
            self.compared,
            self.group_names(),
            self.primary,
            self.correction,
            self.confidence,
            title=self.title,
            selected_on=self.selected_on,
            paper_effect=asdict(self.paper_effect) if self.paper_effect else None,
            primary_text=self.primary_text() or None,
            **control_record(self.compared, self.control, self.premise),
            **ladder_record(self.compared, self.control, self.rungs),
        )


def control_record(compared: pd.DataFrame, control: Control | None, premise: str | None) -> dict:
    """What a family's record keeps of the positive control: its declaration, outcome and sentences; or the
    ``premise`` it took from another family (each None when absent)."""
    return {
        "control": None
        if control is None
        else {
            **control.record(),
            "outcome": control_outcome(compared, control)[0],
            "text": control_summary(compared, control),
        },
        "premise": premise,
    }


def suite_record(
    compared: pd.DataFrame, groups: Mapping, primary: Primary | None, correction: str, confidence: float, **extra
) -> dict:
    """A family's record (``SuiteReport.record``), from its lines: what ``kit.docs recompute`` writes again."""
    lines = compared.drop(columns=["comparison"], errors="ignore")
    return {
        **extra,
        "correction": correction,
        "confidence": confidence,
        "primary": None if primary is None else {**asdict(primary), "text": str(primary)},
        "groups": dict(groups),
        "lines": lines.astype(object).where(lines.notna(), None).to_dict("records"),
    }


def group_tables(
    compared: pd.DataFrame, groups: Mapping[str, Sequence[str]], title: str, correction: str
) -> dict[str, pd.DataFrame]:
    """One ``table`` per group of tasks, titled ``<title>, <group>: main metric x100 [95% interval]``."""
    return {
        f"{title}, {group}: main metric x100 [95% interval]": table(
            compared[compared.task.isin(list(names))], correction=correction
        )
        for group, names in groups.items()
    }


def recomputed(evidence: Evidence, old: dict, premise: str | None = None) -> tuple[dict, dict[str, pd.DataFrame]]:
    """A family's record (``SuiteReport.record``) computed again from its ``evidence`` under today's inference, with
    what the run declared kept from the ``old`` record (groups, primary, control, correction, confidence, selection,
    paper effect, title); and its tables (``group_tables``). ``premise``: the sentences of another family's control
    that did not pass, recomputed first (``withheld_by``)."""
    declared = old.get("primary")
    primary = (
        None
        if not declared
        else Primary(declared["row"], declared["baseline"], declared["task"], declared.get("effect"))
    )
    control = Control.from_record(old["control"]) if old.get("control") else None
    rungs = [Rung(**{k: r[k] for k in ("row", "baseline", "task", "rung", "premise")}) for r in old.get("rungs", [])]
    confidence, correction, groups = old["confidence"], old["correction"], old["groups"]
    lines = compare(evidence, confidence=confidence)
    compared = families(lines, groups, primary, correction, confidence, control, rungs)
    withheld = premise
    if control is not None and control_outcome(compared, control)[0] != "passes":
        withheld = control_summary(compared, control)
    compared = mark_findings(compared, withheld is not None)
    text = primary_summary(compared, primary, withheld=withheld is not None) or None
    keep = {k: old.get(k) for k in ("title", "selected_on", "paper_effect", "left_out") if k in old}
    record = suite_record(
        compared,
        groups,
        primary,
        correction,
        confidence,
        **keep,
        primary_text=text,
        **control_record(compared, control, premise),
        **ladder_record(compared, control, rungs),
    )
    record = {**{k: record[k] for k in old if k in record}, **record}  # the old record's key order: a run's
    # record and its recomputation read the same where nothing changed (study 2 writes left_out last)
    return record, group_tables(compared, groups, old.get("title", "Evaluation suite"), correction)


def withheld_by(record: dict) -> str | None:
    """A family record's reason to withhold findings: its control's sentences when the control did not pass, or the
    premise it took from another family."""
    control = record.get("control")
    if control and control.get("outcome") != "passes":
        return control.get("text")
    return record.get("premise")
