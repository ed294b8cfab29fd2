"""Two reports compared: ``python -m kit.compare REPORT_A REPORT_B [--html OUT.html] [--correction holm|bh|none]
[--confidence 0.95] [--seed N]``.

A REPORT is a report folder (``reports/<notebook>/<run>``: its ``results.json`` and the evidence its verdicts rest
on, ``evidence/<family>.npz``) or a committed snapshot (``docs/results/<notebook>/<run>.json``, with its evidence
beside it as ``<run>.<family>.npz``): two run files of one study, or one run file at two commits (a snapshot read
with ``git show``, or a copy of the report folder kept before the rerun replaced it). A row of A and the row of B
with the same name are two models: on every task both reports scored in the same evidence family, on the items both
kept (the same task, the same number of items, the same gold scores on the items they share; a task whose items
differ is left out, and said so), each shared row gets A's score, B's score and the difference A - B (x100) with
its interval and p from the kit's t test (``kit.evaluation.inference.paired_comparison``: A's seeds and B's are
independent training runs; a deterministic row, ``fixed``, has no run-to-run part), each task drawing its items
from its own seeded stream as the reports do (with the seed their evidence drew with, unless ``--seed`` gives
another; two reports whose evidence drew with two seeds need ``--seed``). All the comparisons are one family,
corrected by ``--correction`` (``kit.evaluation.families``; Holm by default); one on a task whose items lie within
another compared task's (BIOSSES test within all pairs) is reported, not a second member, and two rows with the
same outputs on every item (the same model in both reports) are reported as identical, not tested.

The family is exploratory. The kit tests a comparison that was declared before the runs (a run file's ``primary``,
or its ``compare``); no run file declared a difference between two reports, so it describes them and is not a
finding, whatever its p. The terminal gets the table (task, row, seeds, A's score, B's, A - B [interval], p,
adjusted p) and what was left out; ``--html`` writes the same as one self-contained page (no script, nothing
loaded from the network), with each comparison's interval at the family's level. Nothing shared (no row on a task
with the same items) is refused in one line, as every bad argument is (``kit.core.cli``): exit code 2, nothing
written.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.cli import Parser, integer, output_folder
from kit.core.files import write_text_atomic
from kit.evaluation.bootstrap import ItemScores, statistic_record
from kit.evaluation.families import add_family_options
from kit.evaluation.inference import format_p, paired_comparison, score_interval
from kit.evaluation.rows import CORRECTION_NAMES, Evidence, TaskEvidence, families
from kit.paths import shown
from kit.report.evaluation_page import html_table, text_table
from kit.report.index import EVIDENCE, LAST_GOOD, trained_seeds
from kit.report.tables import signed_interval

FAMILY = "exploratory"
WHAT = "a report folder (reports/<notebook>/<run>) or a committed snapshot (docs/results/<notebook>/<run>.json)"
KIT_EVALUATE = (
    "a kit.evaluate output, which keeps no item outputs to pair; compare encoders with python -m kit.evaluate MODEL_A "
    "MODEL_B (each later model is compared with the first on the same items)"
)
EXPLORATORY = (
    "Exploratory: the kit tests a comparison declared before the runs (a run file's primary, or its compare); no run "
    "file declared these, so each difference describes the two reports and is not a finding, whatever its p."
)


# ---- the two reports -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """One side: the ``path`` given, its ``name`` (notebook/run), its record (``results.json`` or the snapshot) and its
    ``evidence`` by family."""

    path: Path
    name: str
    record: dict
    evidence: dict[str, Evidence]

    def about(self) -> str:
        """The report in one line: its name, file, model, seeds, commit and when it finished."""
        p = self.record.get("parameters") if isinstance(self.record.get("parameters"), dict) else {}
        parts = [shown(self.path)]
        if p.get("model"):
            parts.append(str(p["model"]))
        if seeds := trained_seeds(self.record):
            parts.append("seeds " + ", ".join(map(str, seeds)))
        if self.record.get("git_commit"):
            parts.append(f"commit {str(self.record['git_commit'])[:12]}")
        if self.record.get("finished"):
            parts.append(f"finished {self.record['finished']}")
        return f"{self.name} ({'; '.join(parts)})"


def _record(path: Path) -> dict:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a report's record ({type(err).__name__}); give {WHAT}") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path}: not a report's record (not a JSON object); give {WHAT}")
    return record


def read_report(text: str) -> Report:
    """The report ``text`` names (a report folder, its ``results.json``, or a snapshot ``.json``) with its evidence;
    ValueError saying what is wrong and what is allowed."""
    path = Path(text)
    if not path.exists():
        raise ValueError(f"{text}: no such file or folder; give {WHAT}")
    if path.is_file() and path.name == "results.json":
        path = path.parent
    if path.is_dir():
        if not (path / "results.json").is_file():
            if (path / "evaluation.json").is_file():
                raise ValueError(f"{text}: {KIT_EVALUATE}")
            if (path / LAST_GOOD / "results.json").is_file():
                raise ValueError(
                    f"{text}: its latest execution did not finish; its last finished report is {path / LAST_GOOD}"
                )
            raise ValueError(f"{text}: a folder without results.json; give {WHAT}")
        record = _record(path / "results.json")
        files = {p.stem: p for p in sorted((path / EVIDENCE).glob("*.npz"))}
        run = path.resolve().parent.name if path.resolve().name == LAST_GOOD else path.resolve().name
        where = f"{shown(path / EVIDENCE)}/<family>.npz"
    elif path.suffix == ".json":
        record = _record(path)
        files = {p.name[len(path.stem) + 1 : -len(".npz")]: p for p in sorted(path.parent.glob(f"{path.stem}.*.npz"))}
        run = path.stem
        where = f"{path.stem}.<family>.npz beside it"
    else:
        raise ValueError(f"{text}: neither a folder nor a .json file; give {WHAT}")
    if "notebook" not in record and str(record.get("command", "")).startswith("python -m kit.evaluate"):
        raise ValueError(f"{text}: {KIT_EVALUATE}")
    if not files:
        raise ValueError(
            f"{text}: no evidence ({where}), so no item outputs to pair: the report keeps its numbers alone (snapshot "
            "a report that has evidence: python -m kit.docs snapshot REPORT_FOLDER)"
        )
    evidence = {family: Evidence.load(file) for family, file in files.items()}  # ValueError naming the file
    notebook = record.get("notebook")
    return Report(Path(text), f"{notebook}/{run}" if notebook else run, record, evidence)


def report_argument(text: str) -> Report:
    """A ``type=`` for REPORT_A and REPORT_B (``read_report``)."""
    try:
        return read_report(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def html_file(text: str) -> str:
    """A ``type=`` for ``--html``: a file in a folder this process can write in (``output_folder``), not a folder."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give the page's file name (OUT.html)")
    try:
        output_folder(str(path.parent))
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(f"{text}: {err}") from None
    return text


# ---- pairing ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """A row of both reports on one task of one evidence family, on the items both kept: ``a`` and ``b`` its outputs
    (``kit.evaluation.bootstrap.ItemScores``, the same items in the same order); ``key``: the task as the table names
    it (with its family when more than one is compared); ``within``: the key of the compared task whose items hold
    this one's, or None; ``label``, ``label_b``: what the row is in A's report and in B's."""

    family: str
    key: str
    task: TaskEvidence
    row: str
    label: str
    label_b: str
    a: ItemScores
    b: ItemScores
    within: str | None


def _positions(task: TaskEvidence) -> np.ndarray:
    """The task's items the evidence kept, as indices into all its items."""
    return np.arange(task.items) if task.kept is None else np.asarray(task.kept)


def shared_items(a: TaskEvidence, b: TaskEvidence) -> tuple[np.ndarray, np.ndarray]:
    """The items both reports' evidence of a task kept, as positions among A's kept items and among B's: the same
    items in the same order (ascending)."""
    _, ia, ib = np.intersect1d(_positions(a), _positions(b), return_indices=True)
    return ia, ib


def shared_runs(a: ItemScores, b: ItemScores) -> int:
    """How many of A's training runs have B's outputs of one of its runs, item for item: the same trainings (one run
    file at two commits that left training unchanged), which the test takes as independent. 0 for a fixed row, or
    when every output is the same (``paired_comparison`` reports those as identical)."""
    if a.fixed or b.fixed or (a.outputs.shape == b.outputs.shape and np.array_equal(a.outputs, b.outputs)):
        return 0
    return sum(any(np.array_equal(x, y) for y in b.outputs) for x in a.outputs)


def items_differ(a: TaskEvidence, b: TaskEvidence) -> str:
    """Why two reports' evidence of one task cannot be paired ('' when it can): another metric, another number of
    items, fewer than two items kept by both, or other gold scores on the items both kept (what the evidence keeps of
    an item: a metric that is a mean of per-item scores keeps no gold, so its items are checked by count alone)."""
    if a.metric != b.metric:
        return f"A scores it by {a.label}, B by {b.label}"
    if a.items != b.items:
        return f"A holds {a.items:,} items, B {b.items:,}: not the same items"
    ia, ib = shared_items(a, b)
    if len(ia) < 2:
        kept = f"{len(ia)} item{'s' * (len(ia) != 1)}"
        return f"the two keep {kept} in common (the others left out for sharing a text with a run's selection data)"
    if json.dumps(statistic_record(a.statistic.subset(ia))) != json.dumps(statistic_record(b.statistic.subset(ib))):
        return "the gold scores of its items differ between A and B: not the same items"
    return ""


def only_in_one(what: str, a: Iterable[str], b: Iterable[str]) -> list[str]:
    """A note for each side holding ``what`` the other does not: ``<what> only in A: x, y`` (in the side's order)."""
    a, b = dict.fromkeys(a), dict.fromkeys(b)
    return [
        f"{what} only in {name}: {', '.join(alone)}"
        for name, side, other in (("A", a, b), ("B", b, a))
        if (alone := [x for x in side if x not in other])
    ]


def pairs(a: Report, b: Report) -> tuple[list[Pair], list[str]]:
    """Every row both reports scored on a task both hold with the same items (``items_differ``), in A's order; and
    what was left out, one sentence each."""
    notes = only_in_one("evidence families", a.evidence, b.evidence)
    families_ = [f for f in a.evidence if f in b.evidence]
    found: list[Pair] = []
    for family in families_:
        ea, eb = a.evidence[family], b.evidence[family]
        where = f" ({family})" if len(families_) > 1 else ""
        notes += only_in_one(f"tasks{where}", (t.name for t in ea.tasks), (t.name for t in eb.tasks))
        tasks_b = {t.name: t for t in eb.tasks}
        both: dict[str, tuple[TaskEvidence, TaskEvidence]] = {}
        for ta in ea.tasks:
            if (tb := tasks_b.get(ta.name)) is None:
                continue
            if why := items_differ(ta, tb):
                notes.append(f"{ta.name}{where} left out: {why}")
            else:
                both[ta.name] = (ta, tb)
        notes += only_in_one(f"rows{where}", *([r for t in both for r in e.outputs[t]] for e in (ea, eb)))
        for name, (ta, tb) in both.items():
            ia, ib = shared_items(ta, tb)
            if len(ia) < max(ta.scored, tb.scored):
                notes.append(
                    f"{name}{where}: compared on the {len(ia):,} items both kept (A kept {ta.scored:,}, B "
                    f"{tb.scored:,} of {ta.items:,})"
                )
            key = f"{name}{where}"
            within = f"{ta.within}{where}" if ta.within == tb.within and ta.within in both else None
            for row in ea.outputs[name]:
                if row not in eb.outputs[name]:
                    continue
                sa, sb = ea.scores(ta, row).subset(ia), eb.scores(tb, row).subset(ib)
                labels = ea.labels.get(row, row), eb.labels.get(row, row)
                found.append(Pair(family, key, ta, row, *labels, sa, sb, within))
                if same := shared_runs(sa, sb):
                    notes.append(
                        f"{row} on {key}: {same} of A's {sa.seeds} runs give one of B's runs' outputs item for item "
                        "(the same trainings), which the test takes as independent: its interval is wider than it "
                        "need be"
                    )
    return found, notes


def nothing_shared(a: Report, b: Report, notes: list[str]) -> str:
    """The refusal when no row is shared on a task with the same items: what each side holds, and why tasks of the
    same name were left out."""

    def holds(report: Report) -> str:
        tasks = dict.fromkeys(t.name for e in report.evidence.values() for t in e.tasks)
        rows = dict.fromkeys(r for e in report.evidence.values() for o in e.outputs.values() for r in o)
        return f"tasks {', '.join(tasks) or 'none'}; rows {', '.join(rows) or 'none'}"

    left = [n for n in notes if " left out: " in n]
    return (
        f"REPORT_A and REPORT_B share no row on a task with the same items, so there is nothing to compare (A: "
        f"{holds(a)}. B: {holds(b)}{'. ' + '; '.join(left) if left else ''})"
    )


def evidence_seed(a: Report, b: Report, found: list[Pair]) -> int:
    """The seed the compared families' evidence drew its items with in both reports (``Evidence.seed``); ValueError
    naming each seed when they differ."""
    seeds = {
        f"{side}'s {family}": report.evidence[family].seed
        for family in dict.fromkeys(p.family for p in found)
        for side, report in (("A", a), ("B", b))
    }
    if len(set(seeds.values())) > 1:
        drawn = ", ".join(f"{which} with seed {seed}" for which, seed in seeds.items())
        raise ValueError(f"the two reports' evidence drew its items with different seeds ({drawn}): give --seed")
    return next(iter(seeds.values()))


# ---- the comparisons -------------------------------------------------------------------------------------------


@dataclass
class Compared:
    """The comparisons of two reports: one line per ``Pair`` (``lines``, with ``kit.evaluation.rows.families``'
    columns, its family ``FAMILY``), what was left out (``notes``) and the settings."""

    a: Report
    b: Report
    lines: pd.DataFrame
    notes: list[str]
    correction: str
    confidence: float
    seed: int
    resamples: int

    @property
    def members(self) -> int:
        tested = self.lines[self.lines.role == "secondary"]
        return int(tested.family_size.iloc[0]) if len(tested) else 0

    @property
    def family_level(self) -> float:
        tested = self.lines[self.lines.role == "secondary"]
        return float(tested.family_confidence.iloc[0]) if len(tested) else self.confidence


def compare(
    a: Report, b: Report, found: list[Pair], notes: list[str], correction: str, confidence: float, seed: int
) -> Compared:
    """Each pair's scores and paired difference A - B (x100), then the family corrected by ``correction``."""
    resamples = max(e.resamples for report in (a, b) for e in report.evidence.values())
    out = []
    for pair in found:
        stream = (seed, zlib.crc32(pair.task.name.encode()))  # the task's own draws, as the reports make them
        c = paired_comparison(pair.a, pair.b, stream, resamples, confidence).scaled(100)
        sa, sb = (score_interval(s, stream, resamples, confidence).scaled(100) for s in (pair.a, pair.b))
        out.append(
            {
                "family": pair.family,
                "task": pair.key,
                "metric": pair.task.label,
                "items": pair.a.items,
                "within": pair.within,
                "row": pair.row,
                "method": pair.label,
                "method_b": pair.label_b,
                "baseline": pair.row,  # B's row of the same name: ``families`` reads a comparison's two sides so
                "seeds_a": pair.a.seeds,
                "seeds_b": pair.b.seeds,
                "fixed_a": pair.a.fixed,
                "fixed_b": pair.b.fixed,
                "score_a": sa.value,
                "low_a": sa.low,
                "high_a": sa.high,
                "score_b": sb.value,
                "low_b": sb.low,
                "high_b": sb.high,
                "difference": c.estimate,
                "low": c.low,
                "high": c.high,
                "p": c.p_value,
                "reason": c.reason,
                "comparison": c,
            }
        )
    lines = pd.DataFrame(out)
    lines = families(lines, {FAMILY: list(dict.fromkeys(lines.task))}, None, correction, confidence)
    return Compared(a, b, lines, notes, correction, confidence, seed, resamples)


TEXT_COLUMNS = ("task", "row", "metric", "in A", "in B")
"""The tables' columns of words (left-aligned); the others hold numbers (right-aligned)."""
NUMBER = re.compile(r"[\d\s.,+\-−\[\]<*/]*")
"""A cell of numbers: a score, an interval, a p (``< 0.001 *``), seeds (``2 / 5``)."""


def numeric_column(column: str) -> bool:
    """Whether a column is one of numbers, right-aligned in the terminal (``TEXT_COLUMNS``)."""
    return column not in TEXT_COLUMNS


def numeric_cell(column: str, text: str) -> bool:
    """Whether a cell of the page holds numbers, right-aligned on one line: in a column of numbers, and numbers alone
    (``NUMBER``; not ``fixed`` or ``within biosses-all``)."""
    return numeric_column(column) and NUMBER.fullmatch(text) is not None


def _score(value: float, low: float, high: float, digits: int = 1) -> str:
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]".replace("-", "−")


def _seeds(line) -> str:
    if line.fixed_a and line.fixed_b:
        return "fixed"
    return " / ".join(
        "fixed" if fixed else str(n) for n, fixed in ((line.seeds_a, line.fixed_a), (line.seeds_b, line.fixed_b))
    )


def _test(line) -> str:
    """How a comparison was tested, for the adjusted p's cell when it has none."""
    if line.role == "within":
        return f"within {line.within}"
    if "same outputs" in line.reason:
        return "identical outputs"
    return "not tested: 1 seed" if "one seed" in line.reason else f"not tested: {line.reason}"


def adjusted_title(compared: Compared) -> str:
    """The adjusted p's column: ``p (holm)``, ``p (bh)``; ``p (no correction)`` for ``none`` or a family of one."""
    return (
        f"p ({compared.correction})" if compared.correction != "none" and compared.members > 1 else "p (no correction)"
    )


def table(compared: Compared, digits: int = 1, full: bool = False) -> list[dict]:
    """One row per comparison: task, row, seeds (A / B), A's score, B's, A − B [interval], p and the adjusted p
    (``*``: below 1 − confidence), or why it is not in the family; ``full`` adds the interval at the family's level
    and what the design resolves there."""
    conf = f"{compared.confidence:.0%}"
    adjusted = adjusted_title(compared)
    rows = []
    for line in compared.lines.itertuples():
        member = line.role == "secondary"
        row = {
            "task": line.task,
            "row": line.row,
            "seeds A / B": _seeds(line),
            f"A score [{conf}]": _score(line.score_a, line.low_a, line.high_a, digits),
            f"B score [{conf}]": _score(line.score_b, line.low_b, line.high_b, digits),
            f"A − B [{conf}]": (
                signed_interval(line.difference, line.low, line.high, digits)
                if not line.reason
                else f"{line.difference:+.{digits}f}".replace("-", "−")
            ),
            "p": format_p(line.p),
            adjusted: (format_p(line.p_adjusted) + (" *" if line.significant else "")) if member else _test(line),
        }
        if full:
            row["family interval"] = (
                signed_interval(line.difference, line.family_low, line.family_high, digits) if member else ""
            )
            row["resolves"] = f"{line.family_detectable:.{digits}f}" if member else ""
        rows.append(row)
    return rows


def legend(compared: Compared) -> str:
    """How to read the table: the two sides, the test, the family and its correction."""
    conf, alpha = f"{compared.confidence:.0%}", f"{1 - compared.confidence:.2g}"
    m = compared.members
    family = (
        f"p ({compared.correction}): {CORRECTION_NAMES[compared.correction]}'s correction over the {m} comparisons "
        f"of the {FAMILY} family (the HTML page's family intervals are at its level, "
        f"{100 * compared.family_level:.4g}%); * where it is below {alpha}"
        if compared.correction != "none" and m > 1
        else f"{adjusted_title(compared)}: each comparison alone; * where it is below {alpha}"
    )
    if m == 0:
        family = "No comparison is tested (each is identical, within another task, or of a row with one seed)"
    return (
        f"A − B: A's row minus B's row of the same name (two models) on the items both scored; scores x100 with "
        f"{conf} intervals over the items and each trained row's seeds. The difference's interval and p come from one "
        f"t test whose variance adds the item part (both rows on the same {compared.resamples:,} item draws, seed "
        f"{compared.seed}) and each trained row's run-to-run part, A's seeds and B's being independent runs (a fixed "
        f"row has none; kit.evaluation.inference). {family}. A comparison on a task whose items lie within another "
        "compared task's is reported, not counted twice; rows with the same outputs on every item are the same model, "
        "not tested."
    )


def text_report(compared: Compared) -> str:
    """What the terminal shows: the two reports, the exploratory label, the table, its legend and what was left out."""
    out = [
        f"A: {compared.a.about()}",
        f"B: {compared.b.about()}",
        "",
        EXPLORATORY,
        "",
        text_table(table(compared), numeric_column),
        "",
        legend(compared),
    ]
    if compared.notes:
        out += ["", "Not compared: " + "; ".join(compared.notes) + "."]
    return "\n".join(out)


SCORE_COLUMNS = 5
"""The page's first table: task, row, seeds and the two scores; the second repeats task and row beside the rest, so
that neither is wider than a 1024 px window."""


def render_html(compared: Compared) -> str:
    """The page: the two reports, the exploratory label, the scores, the comparisons (with each one's interval at the
    family's level), their legend, the tasks and rows compared, and what was left out; plain HTML with its style
    inline, no script and nothing loaded from the network."""
    rows = table(compared, full=True)
    columns = list(rows[0])
    scores = [{c: r[c] for c in columns[:SCORE_COLUMNS]} for r in rows]
    differences = [{c: r[c] for c in columns[:2] + columns[SCORE_COLUMNS:]} for r in rows]
    lines = compared.lines
    tasks = [
        {"task": t, "metric": m, "items": f"{n:,}"}
        for t, m, n in dict.fromkeys(zip(lines.task, lines.metric, lines["items"]))
    ]
    labels = [
        {"row": r, "in A": a, "in B": b} for r, a, b in dict.fromkeys(zip(lines.row, lines.method, lines.method_b))
    ]
    title = f"kit.compare: {compared.a.name} (A) vs {compared.b.name} (B)"
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in compared.notes)
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:75em}"
        "table{border-collapse:collapse;margin:1em 0}th,td{padding:3px 8px;border-bottom:1px solid #ddd;"
        "vertical-align:top}th{text-align:left}td.text{text-align:left}td.num{text-align:right;"
        "white-space:nowrap;font-variant-numeric:tabular-nums}"
        "p.exploratory{border-left:4px solid #c60;padding:.4em .8em;background:#fff6ec}"
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
        f"<ul><li><b>A</b>: {html.escape(compared.a.about())}</li>"
        f"<li><b>B</b>: {html.escape(compared.b.about())}</li></ul>\n"
        f'<p class="exploratory">{html.escape(EXPLORATORY)}</p>\n'
        f"<h2>Scores</h2>\n{html_table(scores, numeric_cell)}\n"
        f"<h2>A − B</h2>\n{html_table(differences, numeric_cell)}\n"
        f"<p>{html.escape(legend(compared))} resolves: the smallest difference found with 80% power at the family's "
        f"level.</p>\n<h2>Tasks and rows</h2>\n{html_table(tasks, numeric_cell)}\n{html_table(labels, numeric_cell)}\n"
        + (f"<h2>Not compared</h2>\n<ul>{notes}</ul>\n" if notes else "")
        + "</body></html>\n"
    )


# ---- the command -----------------------------------------------------------------------------------------------


def parser() -> Parser:
    """The arguments, each checked where argparse reads it (``kit.core.cli``): the two reports and their evidence
    are read then, so that a bad one is refused before any work."""
    ap = Parser(prog="python -m kit.compare", description=__doc__.split("\n\n")[0])
    for name, side in (("REPORT_A", "A"), ("REPORT_B", "B")):
        ap.add_argument(
            name.lower(),
            metavar=name,
            type=report_argument,
            help=f"{WHAT}: side {side}" + (" (the difference is A - B)" if side == "B" else ""),
        )
    ap.add_argument("--html", type=html_file, help="also write the comparison as this self-contained HTML page")
    add_family_options(ap)
    ap.add_argument(
        "--seed",
        type=integer(0),
        help="seed of the item draws, 0 or more (default: the one both reports' evidence drew with)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the table printed (and the page written); 2 (``SystemExit``) when an argument is refused, when
    the two reports share nothing to compare, or when their evidence drew its items with two seeds and ``--seed`` is
    not given, before any work and with nothing written."""
    ap = parser()
    args = ap.parse_args(sys.argv[1:] if argv is None else list(argv))
    found, notes = pairs(args.report_a, args.report_b)
    if not found:
        ap.error(nothing_shared(args.report_a, args.report_b, notes))
    seed = args.seed
    if seed is None:
        try:
            seed = evidence_seed(args.report_a, args.report_b, found)
        except ValueError as err:
            ap.error(str(err))
    compared = compare(args.report_a, args.report_b, found, notes, args.correction, args.confidence, seed)
    print(text_report(compared))
    if args.html:
        print(f"\npage {shown(write_text_atomic(args.html, render_html(compared)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
