"""A report's first screen, put under its title when the report is exported: the verdict in at most four lines
(the positive control, the primary comparison, the secondary comparisons that survive their correction, and what
the run rests on: model, seeds, steps, commit), then a table of contents of its sections.

The lines are read from the run's ``results.json`` (the record its notebook wrote), with the same sentences as the
reports index (``kit.report.index``), so the report, the index and ``kit.batch``'s finish line say the same thing.
"""

from __future__ import annotations

import html
import re

from kit.report.index import (
    WITHDRAWALS,
    control_finding,
    ladder_finding,
    primary_finding,
    secondary_finding,
    trained_seeds,
    withdrawn,
    withheld,
)

_H2 = re.compile(r'<h2 id="([^"]+)">(.*?)</h2>', re.S)
_TAG = re.compile(r"<[^>]+>")
STYLE = (
    "<style>.kit-opening{border-left:4px solid #4a6fa5;background:#f4f7fb;padding:.6em 1em;margin:1em 0}"
    ".kit-opening p{margin:.25em 0}.kit-toc ol{columns:2 18em;margin:.3em 0}</style>"
)


def rests_on(record: dict) -> str:
    """What a run rests on, in one clause: its model, seeds (``trained_seeds``), steps, batch and learning rate (those
    it has), device and commit."""
    p = record.get("parameters", {})
    model = p.get("model") or record.get("model", "")
    parts = [f"model <code>{html.escape(str(model))}</code>" if model else ""]
    if seeds := trained_seeds(record):
        parts.append(f"{len(seeds)} seed{'s' * (len(seeds) != 1)} ({', '.join(map(str, seeds))})")
    for key, name in (("steps", "steps"), ("batch_size", "batch"), ("lr", "lr")):
        if p.get(key) is not None:
            parts.append(f"{name} {p[key]}")
    if record.get("device"):
        parts.append(html.escape(str(record["device"])))
    if record.get("git_commit"):
        parts.append(f"commit <code>{html.escape(record['git_commit'][:12])}</code>")
    return ", ".join(x for x in parts if x)


def verdict_lines(record: dict) -> list[str]:
    """The verdict's lines (HTML), as the index reads the record (``findings``): the control (or, when a control of
    another family withholds the findings, that none is a finding), the primary and the secondary comparisons where
    the run has them, then what it rests on. A record from before the calibrated test says its verdicts are
    withdrawn instead."""
    if why := withdrawn(record):
        lines = [f"<b>Verdicts withdrawn</b>: {WITHDRAWALS[why][0]}."]
        return [*lines, f"<b>Rests on</b>: {rests_on(record)}."]
    lines = []
    control, primary = control_finding(record), primary_finding(record)
    if withheld(record):
        control = (control or "no positive control (the run lacks its rows)").removeprefix("positive control ")
        lines.append(
            f"<b>Positive control</b>: {html.escape(control)}. So no comparison below is a finding (they are shown, "
            "labelled as such)."
        )
    elif control:
        lines.append(f"<b>Positive control</b>: {html.escape(control.removeprefix('positive control '))}.")
    if ladder := ladder_finding(record):
        lines.append(
            f"<b>Premise ladder</b> (each rung alone at alpha; (a) is the control, the papers' comparison of the "
            f"trained model with its start read out the same way; (b) both whitened, like for like; (c) the start's "
            f"best training-free read-out chosen on the selection data; (d) bag of words): {html.escape(ladder)}."
        )
    if primary:
        lines.append(f"<b>Primary comparison</b>: {html.escape(primary.removeprefix('primary '))}.")
    if (secondary := secondary_finding(record)) and not withheld(record):
        lines.append(f"<b>Secondary comparisons</b>: {html.escape(secondary)}.")
    lines.append(f"<b>Rests on</b>: {rests_on(record)}.")
    return lines


def contents(body: str) -> list[tuple[str, str]]:
    """The (anchor, title) of every section (``<h2>``) of an exported report's ``body``: the anchor as it stands in
    the ``id`` attribute (escaped), the title as text."""
    return [(anchor, html.unescape(_TAG.sub("", title)).rstrip("¶").strip()) for anchor, title in _H2.findall(body)]


def with_opening(body: str, record: dict | None) -> str:
    """``body`` (nbconvert's HTML) with the verdict (when ``record`` is given) and the table of contents put after its
    first ``</h1>``; unchanged when it has no title or no section."""
    sections = contents(body)
    if "</h1>" not in body or not (sections or record):
        return body
    try:
        verdict = "".join(f"<p>{line}</p>" for line in verdict_lines(record)) if record else ""
    except (KeyError, TypeError, AttributeError) as err:  # a damaged record: the report is still written
        verdict = f"<p>The verdict could not be read from results.json ({html.escape(repr(err))}).</p>"
    toc = "".join(f'<li><a href="#{a}">{html.escape(t)}</a></li>' for a, t in sections)  # ids as nbconvert escaped them
    toc = f"<nav class='kit-toc' aria-label='Contents'><b>Contents</b><ol>{toc}</ol></nav>" if toc else ""
    opening = f"{STYLE}<div class='kit-opening' role='note'>{verdict}{toc}</div>"
    head, rest = body.split("</h1>", 1)
    return f"{head}</h1>{opening}{rest}"
