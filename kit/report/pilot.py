"""Sizing a run file's primary comparison before it trains, from a pilot: the evidence of an earlier report of the same
study (``<reports>/<notebook>/<run>/evidence/``) or of a committed snapshot (``docs/results/<notebook>/``).

``pilots`` lists the candidates, the run's own earlier report first, then its committed snapshot, then the study's
other snapshots on the same model, then the rest. ``size`` computes the primary's variance parts on the first
pilot that scores its task (``kit.evaluation.inference``; a row the pilot lacks is stood in for by the pilot's trained
row with the largest run-to-run variance on that task, and said so), rescales them to the run's seeds
(``kit.evaluation.design``) and says what the design resolves, whether it reaches the declared effect, the seeds
(or items) it would need and whether the effect fits under the scale's maximum. ``kit.batch`` prints it before
training (``sizing_line``) and for ``--design``.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from kit.evaluation import design
from kit.evaluation.bootstrap import ItemScores
from kit.evaluation.inference import Variance, paired_comparison, power_at
from kit.evaluation.rows import Control, Evidence, Primary, TaskEvidence
from kit.paths import PROJECT_ROOT, shown
from kit.report.index import EVIDENCE

SNAPSHOTS = PROJECT_ROOT / "docs" / "results"


def pilots(notebook: str, run: str, model: str | None, reports: Path) -> list[Path]:
    """Evidence files that can size a run of ``notebook`` named ``run``, best first (the module's order)."""
    own = sorted((Path(reports) / notebook / run / EVIDENCE).glob("*.npz"))
    snapshots = sorted((SNAPSHOTS / notebook).glob("*.npz"))
    mine = [p for p in snapshots if p.name.split(".")[0] == run]

    def same_model(path: Path) -> bool:
        return pilot_model(path) == model

    others = [p for p in snapshots if p not in mine]
    return [*own, *mine, *[p for p in others if same_model(p)], *[p for p in others if not same_model(p)]]


def pilot_record(path: Path) -> dict:
    """The record (``results.json`` or a snapshot) of the report an evidence file (``<run>.<family>.npz`` or
    ``evidence/<family>.npz``) belongs to; {} when it cannot be read."""
    path = Path(path)
    record = (
        path.parent.parent / "results.json"
        if path.parent.name == EVIDENCE
        else path.parent / f"{path.name.split('.')[0]}.json"
    )
    try:
        found = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def pilot_model(path: Path) -> str | None:
    """The model of the report an evidence file belongs to (``pilot_record``)."""
    parameters = pilot_record(path).get("parameters")
    return parameters.get("model") if isinstance(parameters, dict) else None


def pilot_control(path: Path) -> Control | None:
    """The positive control an evidence file's family recorded (row, baseline, task, and its vetoes), or None."""
    family = Path(path).stem if Path(path).parent.name == EVIDENCE else Path(path).name.split(".")[1]
    metrics = pilot_record(path).get("metrics")
    control = (metrics or {}).get(family, {}).get("control") if isinstance(metrics, dict) else None
    try:
        return Control.from_record({"premise": "", "chosen": "", **control})
    except (TypeError, KeyError):
        return None


def snapshot_score(notebook: str, run: str, model: str | None, task: str, row: str) -> tuple[float, Path] | None:
    """``row``'s score x100 on ``task`` in a committed snapshot of ``notebook`` on the same ``model`` (the run's own
    first), evidence or not: the baseline the ceiling check reads when no pilot has evidence."""
    records = sorted((SNAPSHOTS / notebook).glob("*.json"), key=lambda p: p.stem != run)
    for path in records:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if record.get("parameters", {}).get("model") != model:
            continue
        families = [f for f in record.get("metrics", {}).values() if isinstance(f, dict) and "lines" in f]
        for line in (line for family in families for line in family["lines"]):
            if line.get("task") == task and line.get("row") == row and np.isfinite(line.get("score", np.nan)):
                return float(line["score"]), path
    return None


@dataclass(frozen=True)
class Sizing:
    """A primary sized on a pilot: its variance parts at the run's ``seeds`` (x100), the pilot's file, seeds and
    items, the baseline's pilot score x100, and the rows the pilot lacked (``stand_ins``: row -> the pilot row used)."""

    primary: Primary | Control  # a control has no effect: only what it resolves is asked of it
    variance: Variance
    seeds: int
    pilot: Path
    pilot_seeds: tuple[int, int]
    baseline_score: float
    stand_ins: dict[str, str]
    model: str | None = None
    own: bool = False  # the pilot is the run's own result (its earlier report, or its committed snapshot)

    @property
    def other_model(self) -> str:
        """'' when the pilot ran the run's model; else a caveat naming the pilot's model."""
        theirs = pilot_model(self.pilot)
        if theirs == self.model:
            return ""
        if theirs is None:
            return f"the pilot's model is not recorded: its variances may not carry over to {self.model}"
        return f"the pilot ran {theirs}, not {self.model}: its variances may not carry over"

    @property
    def one_seed(self) -> bool:
        """A trained row of the run has one seed: the report cannot test the primary (its run part is unmeasured)."""
        return self.seeds < 2 and bool(self.variance.runs)

    @property
    def power(self) -> float | None:
        return None if self.primary.effect is None else power_at(self.primary.effect, self.variance)

    def uncertainty(self) -> str:
        """What the pilot's few seeds leave open (``design.run_bounds``): the range of what the design resolves and of
        its power over the run variance's 80% bounds, and when the pilot is the run's own result, that its power is
        power after the fact; '' without a trained row."""
        if not self.variance.runs:
            return ""
        pilot_seeds = min(s for s in self.pilot_seeds if s > 1) if any(s > 1 for s in self.pilot_seeds) else 2
        low, high, (f_low, f_high) = design.run_bounds(self.variance, pilot_seeds)
        q_low, q_high = design.PILOT_QUANTILES
        out = (
            f"the pilot's {pilot_seeds} seeds leave the run-to-run variance between {f_low:.2f} and {f_high:.1f} times "
            f"its estimate ({q_high - q_low:.0%} bounds): the design resolves {design.detectable(low):.1f}-"
            f"{design.detectable(high):.1f} points"
        )
        if self.primary.effect is not None:
            effect = self.primary.effect
            out += f" and has {power_at(effect, high):.0%}-{power_at(effect, low):.0%} power for {effect:.1f} points"
        if self.own:
            out += "; this pilot is the run's own result, so its power is power after the fact, not a plan"
        return out

    def sentence(self) -> str:
        """What the design resolves and, for a declared effect, its power, the seeds it needs, and the ceiling."""
        pilot = f"pilot {shown(self.pilot)}, {self.pilot_seeds[0]} and {self.pilot_seeds[1]} seeds"
        stand = "".join(f"; {row} stood in for by the pilot's {used}" for row, used in self.stand_ins.items())
        stand += f"; {self.other_model}" if self.other_model else ""
        if self.primary.effect is None:
            resolves = design.detectable(self.variance)
            return f"with {_seeds(self.seeds)} it resolves {resolves:.1f} points (80% power; no effect declared; " + (
                f"{pilot}{stand})"
            )
        out = design.sizing_sentence(self.primary.effect, self.variance, self.seeds)
        ceiling = design.ceiling(self.primary.effect, self.baseline_score)
        return f"{out}{' ' + ceiling if ceiling else ''} ({pilot}{stand})"


ONE_SEED = "a trained row with one seed is not tested (its run-to-run variance is unmeasured): declare 2 seeds or more"


def _seeds(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def _scores(evidence: Evidence, task: TaskEvidence, row: str, other: str, stand_ins: dict[str, str]) -> ItemScores:
    """The pilot's outputs of ``row`` on ``task``, or of the trained row (not ``other``, the comparison's other side)
    with the largest run-to-run variance, noted in ``stand_ins``."""
    present = evidence.outputs[task.name]
    if row in present:
        return evidence.scores(task, row)
    trained = [r for r in present if r not in evidence.fixed and r != other and present[r].shape[0] > 1]
    if not trained:
        raise ValueError(f"the pilot has no row {row!r} and no trained row with two seeds to stand in for it")
    spread = {r: evidence.scores(task, r).per_seed.var(ddof=1) for r in trained}
    stand_ins[row] = max(spread, key=spread.get)
    return evidence.scores(task, stand_ins[row])


def size(
    primary: Primary | Control, seeds: int, fixed: set[str], candidates: list[Path], model: str | None = None
) -> Sizing | None:
    """The primary sized on the first candidate pilot whose evidence scores its task (None: none does). ``seeds``:
    the run's seeds per trained row; ``fixed``: the run's deterministic rows; ``model``: the run's."""
    for path in candidates:
        try:
            evidence = Evidence.load(path)
        except ValueError:
            continue
        task = next((t for t in evidence.tasks if t.name == primary.task), None)
        if task is None or not {primary.row, primary.baseline} & set(evidence.outputs[task.name]):
            continue  # another family's evidence (MED-SE's share family, say): neither of the primary's rows
        stand_ins: dict[str, str] = {}
        try:
            a = _scores(evidence, task, primary.row, primary.baseline, stand_ins)
            b = _scores(evidence, task, primary.baseline, primary.row, stand_ins)
        except ValueError:
            continue
        stream = (evidence.seed, zlib.crc32(task.name.encode()))  # the report's own draws (kit.evaluation.rows)
        c = paired_comparison(a, b, stream, evidence.resamples).scaled(100)
        if c.reason:  # the pilot's rows are identical, or one was trained at one seed: nothing to size with
            continue
        sides = [row for row, x in ((primary.row, a), (primary.baseline, b)) if not x.fixed and x.seeds > 1]
        variance = c.variance.without([row not in fixed for row in sides]).at(seeds=seeds)
        return Sizing(primary, variance, seeds, path, (a.seeds, b.seeds), 100 * b.value, stand_ins, model)
    return None


def size_study(study, run_name: str, reports: Path) -> tuple[Primary | None, Sizing | None]:
    """A built study's primary (``StudyBase.primary``) sized on its best pilot at the run's seeds (the most runs any of
    its trained rows stacks); (None, None) without a primary, (primary, None) without a pilot."""
    primary = study.primary()
    if primary is None:
        return None, None
    rows = (primary.row, primary.baseline)
    fixed = {row for row in rows if study.row_fixed(row)}
    seeds = max([study.row_run_count(row, primary.task) for row in rows if row not in fixed] or [1])
    model = getattr(study.p, "model", None)
    sizing = size(primary, seeds, fixed, pilots(study.notebook, run_name, model, reports), model)
    if sizing is not None:
        sizing = replace(sizing, own=own_pilot(sizing.pilot, run_name))
    if sizing is not None and sizing.other_model:  # the ceiling reads the run's own model where a snapshot has it
        found = snapshot_score(study.notebook, run_name, model, primary.task, primary.baseline)
        sizing = replace(sizing, baseline_score=found[0]) if found else sizing
    return primary, sizing


def own_pilot(path: Path, run_name: str) -> bool:
    """Whether the evidence file ``path`` is the run's own: its report's (``<run>/evidence/``) or its snapshot's."""
    path = Path(path)
    return (path.parent.name == EVIDENCE and path.parent.parent.name == run_name) or path.name.split(".")[0] == run_name


def no_pilot_ceiling(study, run_name: str, primary: Primary) -> str:
    """Without a pilot: the ceiling check on the baseline's score in a snapshot on the same model ('' when none holds
    it); a sentence when the effect would pass the scale's maximum, else one saying it fits."""
    found = snapshot_score(study.notebook, run_name, getattr(study.p, "model", None), primary.task, primary.baseline)
    if found is None or primary.effect is None:
        return ""
    score, path = found
    return design.ceiling(primary.effect, score) or (
        f"ceiling: the baseline's {score:.1f} ({shown(path)}) + {primary.effect:.1f} fits under the scale's maximum"
    )


def sizing_line(study, run_name: str, reports: Path) -> str | None:
    """One line for ``kit.batch`` before training when a declared effect lacks 80% power at the run's seeds, passes the
    scale's maximum, or has no pilot to be sized on; None when the design resolves it or nothing is declared."""
    primary, sizing = size_study(study, run_name, reports)
    if primary is None or primary.effect is None:
        return None
    if sizing is not None and sizing.one_seed:
        return f"primary {primary}: {ONE_SEED}"
    if sizing is None:
        ceiling = no_pilot_ceiling(study, run_name, primary)
        return (
            f"primary {primary}: no pilot scores {primary.task} (no earlier report or committed snapshot with "
            "evidence), so its power for the declared effect is unknown"
            + (f"; {ceiling}" if ceiling.startswith("An effect") else "")
        )
    if (
        sizing.power is not None
        and sizing.power >= design.POWER
        and not design.ceiling(primary.effect, sizing.baseline_score)
    ):
        return None
    return f"primary {primary}: {sizing.sentence()}"


def size_control(study, run_name: str, reports: Path) -> Sizing | None:
    """The positive control sized at the run's seeds of the base method on the first pilot that holds it: the run's
    own control where the study knows it before the run (a training-free control: SimCSE against its start read out
    the same way) and the pilot holds both rows on its task, else the control the pilot recorded on the run's
    control task (``pilot_control``: for a pilot from before 2026-12-07, the training-free row it chose there). None
    when the run trains no such row or no pilot holds such a control."""
    model = getattr(study.p, "model", None)
    task = study.control_task()
    declared = study.control() if study.TRAINING_FREE_CONTROL else None  # known before the run: no run is needed
    found = pilots(study.notebook, run_name, model, reports)
    for control, path in [*((declared, path) for path in found), *((pilot_control(path), path) for path in found)]:
        if control is None or not study.trains(control.row):
            continue
        if task is not None and control.task != task:
            continue
        fixed = {row for row in (control.row, control.baseline) if study.row_fixed(row)}
        sizing = size(control, study.row_run_count(control.row, control.task), fixed, [path], model)
        if sizing is not None:
            return sizing
    return None


def control_lines(study, run_name: str, reports: Path) -> list[str]:
    """``--design``'s lines on the positive control: what it resolves at the run's seeds, or why that is unknown."""
    sizing = size_control(study, run_name, reports)
    if sizing is None:
        task = study.control_task()
        return [f"positive control: no pilot recorded one{f' on {task}' if task else ''} to size it on"]
    c, v = sizing.primary, sizing.variance
    chosen = c.candidates > 1  # a pilot's control from before 2026-12-07: the best of the start's read-outs there
    how = f"as {shown(sizing.pilot)} chose its baseline" if chosen else f"pilot {shown(sizing.pilot)}"
    head = f"positive control {c.row} - {c.baseline} on {c.task} ({how})"
    if sizing.one_seed:
        return [f"{head}: {ONE_SEED}"]
    caveat = f"; {sizing.other_model}" if sizing.other_model else ""
    cost = (
        f"; the best-of-{c.candidates} choice of its baseline costs more (benchmarks/calibration.py --control)"
        if chosen
        else ""
    )
    veto = "; the pilot's control was vetoed, which no number of seeds lifts" if c.vetoes else ""
    return [
        f"{head}: with {_seeds(sizing.seeds)} it resolves {design.detectable(v):.1f} points (80% power)"
        f"{caveat}{cost}{veto}"
    ]


def design_report(study, run_name: str, reports: Path) -> list[str]:
    """``kit.batch --design``: the positive control's line (``control_lines``), then the primary's
    (``primary_lines``)."""
    return [*control_lines(study, run_name, reports), *primary_lines(study, run_name, reports)]


def primary_lines(study, run_name: str, reports: Path) -> list[str]:
    """The primary, its pilot, its variance parts, its power at the run's seeds, the seeds and items that reach 80%
    power, and the ceiling check; one line each."""
    primary, sizing = size_study(study, run_name, reports)
    if primary is None:
        return ["no primary comparison declared (parameter 'primary'): nothing to size"]
    effect = primary.effect
    out = [f"primary {primary}, sized for " + (f"{effect:.1f} points" if effect else "no declared effect")]
    if sizing is None:
        ceiling = no_pilot_ceiling(study, run_name, primary)
        return [
            *out,
            f"no pilot scores {primary.task}: run the study once (a smaller run file of it will do), then size",
            *([ceiling] if ceiling else []),
        ]
    v = sizing.variance
    out.append(
        f"pilot {shown(sizing.pilot)}: {sizing.pilot_seeds[0]} and {sizing.pilot_seeds[1]} seeds, {v.items} items"
    )
    out += [f"{row} stood in for by the pilot's {used}" for row, used in sizing.stand_ins.items()]
    out += [sizing.other_model] if sizing.other_model else []
    runs = ", ".join(f"{np.sqrt(part * seeds):.1f}" for part, seeds in v.runs) or "none (no trained row)"
    out.append(f"standard deviations x100: items {np.sqrt(v.item):.1f}; run to run, per seed: {runs}")
    if sizing.one_seed:
        return [*out, ONE_SEED]
    what = f"{_seeds(sizing.seeds)} per trained row" if v.runs else "no trained row"
    out.append(f"with {what} it resolves {design.detectable(v):.1f} points (80% power)")
    if effect is None:
        return [*out, *([sizing.uncertainty()] if v.runs else [])]
    out.append(f"power for {effect:.1f} points: {sizing.power:.0%}")
    out += [sizing.uncertainty()] if v.runs else []
    seeds, items, both = design.seeds_needed(effect, v), design.items_needed(effect, v), design.design_needed(effect, v)
    if not v.runs:  # deterministic rows: only more items help
        out.append(f"80% power needs {items:,} items" if items else "not within 100 times the items")
    else:
        none = f"no number of seeds up to {design.MOST_SEEDS} does"
        out.append(f"80% power needs {seeds} seeds per trained row" if seeds else none)
        at = f"at {_seeds(sizing.seeds)}"
        out.append(f"or, {at}, {items:,} items" if items else f"more items alone do not reach it {at}")
        if not seeds and not items:
            out.append(
                f"together: {both[0]} seeds and {both[1]:,} items"
                if both
                else "no design within 100 seeds and 100x the items"
            )
    fits = f"ceiling: the baseline's {sizing.baseline_score:.1f} + {effect:.1f} fits under the scale's maximum"
    out.append(design.ceiling(effect, sizing.baseline_score) or fits)
    return out
