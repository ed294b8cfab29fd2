"""``reports/index.html``: the latest execution of every run found under the reports folder, grouped by study.

The index is rebuilt from the report folders themselves, so a batch adds to it and never drops
earlier runs. Each run folder ``<notebook>/<run>/`` holds what its latest execution left:
``results.json`` when it finished; ``error.log``, and the ``LAST_GOOD`` report when there was one, when
it failed; ``LAST_GOOD`` alone while it runs or after it was killed (``kit.batch`` sets the last finished
report aside there before it executes the run again).
Each study section opens with the study's title and one-line question (its ``StudyAbout``); each run
shows its headline metric, its headline comparison (with its confidence interval, as the study's record
states it), what it finds significant after its families' corrections (``findings``) and a thumbnail of
the study's main figure, linked to the report. Every link is relative, so the folder can be moved or
published.
"""

from __future__ import annotations

import html
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from kit.core.files import write_text_atomic
from kit.evaluation.inference import format_p
from kit.evaluation.rows import CORRECTION_NAMES, withheld_by
from kit.report.tables import signed_interval

PREVIOUS = ".previous"
"""Where kit versions before 2026-11-28 set a run folder's last finished report aside while executing (hidden: a
kill then left the index linking a report that was gone); ``kit.batch`` moves one it finds into ``LAST_GOOD``."""
RUN_FILE_MARK = ".run_file"
"""In a report folder: the run file whose report it holds (relative to the project when inside it)."""


def run_file_of(report_dir: Path) -> str | None:
    """The run file a report folder's ``RUN_FILE_MARK`` names, or None without one; bytes that are not UTF-8 are
    shown as U+FFFD (a damaged mark names no run file of this project)."""
    mark = Path(report_dir) / RUN_FILE_MARK
    return mark.read_text(encoding="utf-8", errors="replace").strip() if mark.is_file() else None


LAST_GOOD = "last_good"
"""In a run folder whose latest execution did not finish (it failed, was killed, or still runs): the last finished
execution's report, kept (its ``report.html`` is linked from the index)."""
EVIDENCE = "evidence"
"""In a report folder: the evidence its verdicts rest on (``kit.evaluation.rows.Evidence``), one ``<family>.npz``
each (``kit.study`` writes it; ``kit.compare``, ``kit.docs`` and ``kit.report.pilot`` read it)."""


def finished_report(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a finished execution's report: its record and its HTML written, no error logged (a
    notebook that failed after writing ``results.json``, or an execution killed before its export, is not one)."""
    return (
        all((out_dir / name).is_file() for name in ("results.json", "report.html"))
        and not (out_dir / "error.log").exists()
    )


@dataclass(frozen=True)
class StudyAbout:
    """What the index says of a study: ``title``, the one-line ``question`` it answers, and the figure
    (``figures/<main_figure>.png`` in each run folder) shown as each run's thumbnail."""

    title: str
    question: str
    main_figure: str | None = None


def headline(run_folder: Path) -> str:
    """A finished run's headline metric and what it finds (``findings``) as one line, from its ``results.json``."""
    try:
        record = json.loads((Path(run_folder) / "results.json").read_text(encoding="utf-8"))
        head = record.get("headline", {})
        value = head.get("value")
        metric = f"{head.get('name', 'no headline')}" + ("" if value is None else f" {value:.2f}")
    except (OSError, ValueError, AttributeError, TypeError) as err:
        return f"no headline (results.json: {err})"
    try:
        found = findings(record)
    except (KeyError, TypeError, AttributeError) as err:
        return f"{metric}; its comparisons are unreadable ({err!r})"
    return f"{metric}; {found}" if found else metric


TESTED_ROLES = ("control", "primary", "secondary")


def tested_lines(family: dict) -> list[dict]:
    """A family record's tested comparisons (a difference and its interval, no reason for not testing), the control
    first, then the primary, then the secondary ones in the record's order; none in a record from before roles,
    whose verdicts came from the uncalibrated test (``kit.docs`` withdraws them)."""
    lines = family.get("lines", [])
    tested = [x for x in lines if x.get("role") in TESTED_ROLES and not x.get("reason") and x.get("low") is not None]
    return sorted(tested, key=lambda x: TESTED_ROLES.index(x["role"]))


def headline_comparisons(family: dict) -> list[tuple[str, dict]]:
    """A corrected family's tested secondary comparisons on its headline tasks (a ``SuiteReport.record()``: ``groups``,
    ``lines``), each as (``A − B``, its line)."""
    headline_tasks = family.get("groups", {}).get("headline tasks", [])
    return [
        (comparison_name(family, line), line)
        for line in family["lines"]
        if line.get("baseline") and line["task"] in headline_tasks and line.get("role", "secondary") == "secondary"
    ]


def comparison_name(family: dict, line: dict) -> str:
    """``A − B``: a comparison line's row and baseline as the report names them."""
    names = {(other["task"], other["row"]): other["method"] for other in family["lines"]}
    return f"{line['method']} − {names[(line['task'], line['baseline'])]}"


def primary_line(family: dict) -> dict | None:
    """A family record's primary comparison line (None: none)."""
    return next((line for line in family.get("lines", []) if line.get("role") == "primary"), None)


def primary_finding(record: dict) -> str:
    """The run's primary comparison in one clause, from the first family that holds it: ``primary A − B on task:
    +2.1 [−0.4, +4.6], p = 0.09, not significant (rules out gains above 4.6)``; '' when the run declares none."""
    for family in corrected_families(record):
        line = primary_line(family)
        if line is None:
            continue
        head = f"primary {comparison_name(family, line)} on {line['task']}: "
        if line.get("reason"):
            return f"{head}not tested ({line['reason']})"
        interval = signed_interval(line["difference"], line["low"], line["high"])
        p = format_p(line["p"])
        verdict = (
            "significant" if line.get("significant") else f"not significant (rules out gains above {line['high']:.1f})"
        )
        return f"{head}{interval}, p {p if p.startswith('<') else '= ' + p}, {verdict}"
    return ""


def control_finding(record: dict) -> str:
    """The run's positive control in one clause, from the family that holds it: ``positive control A − B on task:
    -13.2 [-20.1, -6.3], fails``; '' when the run has none."""
    for family in corrected_families(record):
        control = family.get("control")
        line = next((x for x in family.get("lines", []) if x.get("role") == "control"), None)
        if not control:
            continue
        head = f"positive control {comparison_name(family, line) if line else control['row']} on {control['task']}"
        if line is None or line.get("reason"):
            return f"{head}: {control['outcome']}"
        return f"{head}: {signed_interval(line['difference'], line['low'], line['high'])}, {control['outcome']}"
    return ""


def ladder_finding(record: dict) -> str:
    """The run's premise ladder in one clause, from the family that holds its rungs: ``(a) A − B: +2.1 [+0.4, +3.8],
    passes; (c) A − C: −4.0 [−6.1, −1.9], below; (d) A − TF-IDF: ...``; '' when the run has no rungs."""
    for family in corrected_families(record):
        if not family.get("rungs"):
            continue
        parts = []
        lines = {(x["row"], x["baseline"], x["task"]): x for x in family["lines"] if x.get("baseline")}
        control = family.get("control")
        for rung in ([{**control, "rung": "a"}] if control else []) + family["rungs"]:
            line = lines.get((rung["row"], rung["baseline"], rung["task"]))
            if line is None or line.get("reason"):
                parts.append(f"({rung['rung']}) {rung['row']} − {rung['baseline']}: not tested")
                continue
            interval = signed_interval(line["difference"], line["low"], line["high"])
            parts.append(f"({rung['rung']}) {comparison_name(family, line)}: {interval}, {rung['outcome']}")
        return f"on {family['rungs'][0]['task']}, " + "; ".join(parts)
    return ""


def withheld(record: dict) -> bool:
    """Whether a positive control of the run did not pass (no comparison of it is a finding): any family's
    ``withheld_by``."""
    return any(withheld_by(family) for family in corrected_families(record))


WITHDRAWALS = {
    "test": (
        "computed before the calibrated test",
        "Its comparisons were computed by the multi-bootstrap the kit used before its calibrated test, which says "
        '"significant" far more often than 5% with 2-3 seeds (`benchmarks/calibration.py`); its snapshot holds no '
        "evidence to compute them again, so its verdicts are withdrawn until the run is redone; its scores stand.",
    ),
    "positions": (
        "its start read beyond its trained positions",
        "Its start, one of the kit's own pretrained models, was read beyond 48 tokens (up to 256 in the suite) "
        "although its pretraining had trained only positions 0-47 (rows 48-511 of its position table were at their "
        "random initialisation): "
        "every text longer than 48 tokens (21% of BIOSSES sentences, 32% of Disease Ontology definitions) had random "
        "position vectors added. The kit now cuts every text at the trained positions; this run's verdicts are "
        "withdrawn until it is redone; its scores stand as a record of that setup.",
    ),
    "rate": (
        "one learning rate for every weight",
        "It trained every weight of the summarizer at 3e-4, ten times the paper's rate for its BART baseline, which "
        "took the warm-started MiniLM encoder from 80.9 to 16.9 on biosses-test, so its ROUGE gains measure less "
        "damage to the start, not the method. The kit now trains warm-started weights at `lr` (3e-5) and new ones at "
        "`new_lr`; this run's verdicts are withdrawn until it is redone; its scores stand.",
    ),
}
"""Why a snapshot's verdicts are withdrawn: reason -> (a phrase, the sentences the results page prints)."""


def withdrawn(record: dict) -> str | None:
    """Why a snapshot's verdicts are withdrawn (a key of ``WITHDRAWALS``), or None. ``test``: its families were
    computed before the calibrated test (no ``role`` on their lines); ``positions``: a model it reads (``model``, study
    2's ``cross_model``) is one of the kit's pretrained ones and the record is from before the kit cut every text at
    the trained positions (it has no ``model_positions``); ``rate``: a study 3 run from before its learning
    rate per parameter group (no ``new_lr`` parameter)."""
    from kit.core.models import PRETRAINED

    parameters = record.get("parameters") or {}
    if any(
        line.get("baseline") and "role" not in line
        for family in corrected_families(record)
        for line in family.get("lines", [])
    ):
        return "test"
    if any(parameters.get(k) in PRETRAINED for k in ("model", "cross_model")) and "model_positions" not in record:
        return "positions"
    if record.get("notebook") == "qfcl_summarization" and "new_lr" not in parameters:
        return "rate"
    return None


def named_families(record: dict) -> dict[str, dict]:
    """Every corrected family among a record's metrics (a ``SuiteReport.record()``: the suite's, QFCL's ROUGE), by
    its key there."""
    return {k: m for k, m in record.get("metrics", {}).items() if isinstance(m, dict) and "correction" in m}


def trained_seeds(record: dict) -> list:
    """The seeds a run's trained rows used: the record's ``seeds`` when its study wrote them (study 2's k-fold rows
    train with ``kfold_seeds``), else its ``seeds`` parameter (a list, or one seed as a list); [] without either."""
    seeds = record.get("seeds") or (record.get("parameters") or {}).get("seeds") or []
    return seeds if isinstance(seeds, list) else [seeds]


def corrected_families(record: dict) -> list[dict]:
    """Every corrected family among a record's metrics (``named_families``)."""
    return list(named_families(record).values())


def findings(record: dict, shown: int = 3) -> str:
    """What a run's ``record`` finds: its positive control (``control_finding``; when it did not pass, that no
    comparison is a finding, and the primary's result, bracketed), its primary comparison (``primary_finding``), then
    its secondary comparisons (``secondary_finding``); empty when there is none of them."""
    control, primary = control_finding(record), primary_finding(record)
    if withheld(record):
        control = control or "no positive control (the run lacks its rows)"
        return f"{control}: so no comparison is a finding" + (f" ({primary})" if primary else "")
    primary = f"{control}; {primary}" if control and primary else control or primary
    secondary = secondary_finding(record, shown)
    return f"{primary}; {secondary}" if primary and secondary else primary or secondary


def secondary_finding(record: dict, shown: int = 3) -> str:
    """Of every corrected family among a run's metrics (the suite's, and any other of its shape, such as QFCL's ROUGE
    family), the secondary comparisons on its headline tasks that survive the family's correction, as ``A − B on
    task: difference [family interval]`` (the first ``shown``, then how many more), or how many were made and that
    none survives; empty when none was made."""
    found, made, corrections, counted = [], 0, set(), 0
    for family in corrected_families(record):
        compared = headline_comparisons(family)
        if not compared:
            continue
        counted += 1
        made += len(compared)
        corrections.add(family["correction"])
        for name, line in compared:
            if line.get("significant"):
                low, high = line["family_low"], line["family_high"]
                steps_down = family["correction"] == "holm" and low <= 0 <= high  # as the verdicts say (rows.py)
                found.append(
                    f"{name} on {line['task']}: {signed_interval(line['difference'], low, high)}"
                    + (" (Holm's step-down rejects where this interval reaches zero)" if steps_down else "")
                )
    if not made:
        return ""
    if corrections == {"none"}:
        after = "without correction"
    elif len(corrections) == 1:
        after = f"after {CORRECTION_NAMES[corrections.pop()]}"
    else:
        after = "after each family's correction"
    comparisons = f"{made} secondary comparison{'s' * (made != 1)}" + (
        f" in {counted} families, each corrected apart," if counted > 1 else ""
    )
    if not found:
        return f"none of {comparisons} is significant {after}"
    more = f"; and {len(found) - shown} more" if len(found) > shown else ""
    verb = "is" if len(found) == 1 else "are"
    return (
        f"{len(found)} of {comparisons} {verb} significant {after} (family interval): "
        + "; ".join(found[:shown])
        + more
    )


def _run_row(folder: Path, reports: Path, about: StudyAbout | None) -> tuple[bool, str] | None:
    """(failed, table row) for a run folder, or None when it holds no record of an execution."""
    rel = folder.relative_to(reports).as_posix()
    run = f"<a href='{rel}/report.html'>{html.escape(folder.name)}</a>"
    if (folder / "error.log").exists():
        reason = (folder / "error.log").read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        failure = f"<b>failed</b>: {html.escape(reason)} (<a href='{rel}/error.log'>log</a>)"
        if (folder / LAST_GOOD / "report.html").is_file():
            failure += f"<br><a href='{rel}/{LAST_GOOD}/report.html'>the last finished report</a>"
        return True, _tr([run, failure, "", "", ""], "failed")
    if not finished_report(folder):
        kept = next((k for k in (LAST_GOOD, PREVIOUS) if (folder / k / "report.html").is_file()), None)
        if kept is None:
            return None
        unfinished = (
            "<b>did not finish</b>: still running, or killed; rerun it"
            f"<br><a href='{rel}/{kept}/report.html'>the last finished report</a>"
        )
        return True, _tr([html.escape(folder.name), unfinished, "", "", ""], "failed")
    try:
        r = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        head = r.get("headline", {})
        value = head.get("value")
        result = html.escape(str(head.get("name", ""))) + ("" if value is None else f": <b>{value:.2f}</b>")
        if found := findings(r):
            result += f"<div class='cmp'><b>Finds:</b> {html.escape(found)}</div>"
        full = "".join(f"<p>{html.escape(head[key])}</p>" for key in ("control", "comparison") if head.get(key))
        if full:  # the report's own sentences, folded: the line above says it in short
            result += f"<details class='cmp'><summary>the control and the primary in full</summary>{full}</details>"
        thumb = ""
        if about and about.main_figure and (folder / "figures" / f"{about.main_figure}.png").exists():
            alt = html.escape(f"{about.main_figure.replace('_', ' ')} of run {folder.name}")
            image = f"<img src='{rel}/figures/{about.main_figure}.png' alt='{alt}' loading='lazy'>"
            thumb = f"<a href='{rel}/report.html'>{image}</a>"
        trainings = f" + {r['compute_seconds']} s of trainings" if r.get("compute_seconds") else ""
        provenance = (
            f"{html.escape(r.get('finished', ''))}<br>{r.get('wall_seconds', '')} s notebook{trainings}<br>"
            f"<code>{html.escape(r.get('git_commit', '')[:12])}</code>"
        )
        return False, _tr([run, result, thumb, provenance, _model(r)])
    except (ValueError, AttributeError, TypeError, KeyError) as err:  # a damaged record must not hide the others
        print(f"[kit.batch] {folder / 'results.json'} is unreadable ({err}); the index lists it so", file=sys.stderr)
        return True, _tr([run, f"<b>unreadable</b>: {html.escape(f'results.json: {err}')}", "", "", ""], "failed")


def _model(record: dict) -> str:
    """The run's model as the index shows it: its name, then what it is."""
    name = html.escape(str(record.get("parameters", {}).get("model") or ""))
    return (
        f"<code>{name}</code>: {html.escape(record.get('model', ''))}" if name else html.escape(record.get("model", ""))
    )


def _tr(cells: list[str], css: str = "") -> str:
    return f"<tr class='{css}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _section(notebook: Path, reports: Path, about: StudyAbout | None) -> str:
    rows = [_run_row(folder, reports, about) for folder in sorted(p for p in notebook.iterdir() if p.is_dir())]
    rows = [html_row for _, html_row in sorted((r for r in rows if r), key=lambda r: not r[0])]  # failed first
    if not rows:
        return ""
    title = html.escape(about.title if about else notebook.name)
    question = f"<p class='q'>{html.escape(about.question)}</p>" if about else ""
    return (
        f"<section><h2>{title} <small><code>{html.escape(notebook.name)}</code></small></h2>{question}"
        "<table><tr><th>run</th><th>headline</th><th>main figure</th><th>finished, time, commit</th>"
        f"<th>model</th></tr>{''.join(rows)}</table></section>"
    )


STYLE = (
    "body{font-family:sans-serif;margin:1em;max-width:1400px}h2 small{font-weight:normal;color:#666}"
    "p.q{margin-top:-.4em;color:#333;font-style:italic}table{border-collapse:collapse}"
    "td,th{padding:6px 10px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    "td img{max-width:250px;max-height:180px;border:1px solid #eee}td:nth-child(2){min-width:18em}"
    "td:nth-child(5){max-width:14em;font-size:85%}"
    ".cmp{color:#333;font-size:90%;margin-top:4px;max-width:520px}"
    "tr.failed{background:#fde8e8}"
)


def write_index(reports: Path, studies: dict[str, StudyAbout] | None = None) -> Path:
    """``reports/index.html``: a section per notebook folder, in the order of ``studies`` (which says what
    each study asks; a notebook missing there comes last, under its folder name), a row per run, failed
    runs first."""
    studies = studies or {}
    order = {name: i for i, name in enumerate(studies)}
    folders = sorted(
        (p for p in Path(reports).iterdir() if p.is_dir()), key=lambda p: (order.get(p.name, len(order)), p.name)
    )
    sections = "".join(_section(folder, Path(reports), studies.get(folder.name)) for folder in folders)
    page = (
        f"<!doctype html><html lang='en'><meta charset='utf-8'><title>medcse study kit: reports</title>"
        f"<style>{STYLE}</style><h1>medcse study kit: reports</h1>{sections or '<p>No runs yet.</p>'}</html>"
    )
    return write_text_atomic(Path(reports) / "index.html", page)
