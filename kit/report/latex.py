"""A run's tables as LaTeX to paste into a paper: ``tables.tex`` beside every report (``RunRecord.write``), or
``python -m kit.docs latex REPORT`` for a report folder or a snapshot.

From the run's record (``results.json``): each of the study's tables as a booktabs ``tabular``; each corrected family
of comparisons (the suite's, QFCL's ROUGE) as one table of differences with their 95% intervals, p-values, family
intervals and adjusted p-values, a dagger marking the significant ones; and a methods paragraph (model, data, seeds,
steps, batch, learning rate, versions, commit). It needs ``\\usepackage{booktabs}`` and nothing else.
"""

from __future__ import annotations

import re

import pandas as pd

from kit.evaluation.inference import format_p
from kit.evaluation.rows import CORRECTION_NAMES, withheld_by
from kit.report.index import comparison_name, corrected_families, tested_lines, trained_seeds
from kit.report.tables import NUMBER_CELL, family_table, signed_interval, split_family_table

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "$-$",
    "±": r"$\pm$",
    "†": r"\textsuperscript{\dag}",
    "×": r"$\times$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "λ": r"$\lambda$",
    "τ": r"$\tau$",
}
_SPECIALS = re.compile("|".join(map(re.escape, _SPECIAL)))
ROLES = {"control": "positive control", "primary": "primary", "secondary": "secondary"}


def escape(text) -> str:
    """``text`` as LaTeX text: its special characters escaped, its minus (U+2212), ± and other symbols in math mode;
    any other character outside ASCII (a Chinese example, say) as ``?``, which pdfLaTeX cannot typeset unaided; its
    whitespace (a blank line ends a table row) collapsed, and a leading ``[`` braced."""
    out = _SPECIALS.sub(lambda m: _SPECIAL[m.group()], " ".join(str(text).split()))
    out = "".join(c if ord(c) < 128 else "?" for c in out)
    return "{}" + out if out.startswith("[") else out  # after \\ or \midrule, a [ would open an optional argument


def tabular(rows: list[dict], caption: str, note: str = "") -> str:
    """A ``table`` of ``rows`` (dicts with the same keys, the table's columns): booktabs rules, numbers right-aligned,
    text left-aligned, ``caption`` escaped, ``note`` (LaTeX) under it."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    numeric = [all(NUMBER_CELL.fullmatch(str(row.get(c, ""))) for row in rows) for c in columns]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering\small",
        rf"\caption{{{escape(caption)}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(escape(c) for c in columns) + r" \\",
        r"\midrule",
        *(" & ".join(escape(row.get(c, "")) for c in columns) + r" \\" for row in rows),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if note:
        lines.append(rf"\par\smallskip\footnotesize {note}")
    return "\n".join([*lines, r"\end{table}"])


def starred(line: dict) -> bool:
    """Whether a tested comparison gets its dagger, as the report stars it: the control when significant, any other
    when it is a finding (significant, and the control passed)."""
    return bool(line.get("significant") if line["role"] == "control" else line.get("finding"))


def comparisons_table(family: dict) -> str:
    """One corrected family's tested comparisons (the control, the primary, then the secondary ones): difference
    [95%], p, family interval and adjusted p; a dagger on each significant one. '' when none was tested."""
    tested = tested_lines(family)
    if not tested:
        return ""
    rows = []
    for x in tested:
        member = x.get("family_low") is not None and x["role"] == "secondary"
        rows.append(
            {
                "comparison": comparison_name(family, x) + (" †" if starred(x) else ""),
                "role": ROLES[x["role"]],
                "task": x["task"],
                "difference [95%]": signed_interval(x["difference"], x["low"], x["high"]),
                "p": format_p(x["p"]),
                "family interval": signed_interval(x["difference"], x["family_low"], x["family_high"])
                if member
                else "",
                "p adjusted": format_p(x["p_adjusted"]) if member and x.get("p_adjusted") is not None else "",
            }
        )
    alpha = 1 - family.get("confidence", 0.95)
    note = (
        f"Scores x100. † significant at {alpha:g} (a comparison other than the control: and a finding): the positive "
        f"control and the primary comparison tested alone, the secondary comparisons after "
        f"{CORRECTION_NAMES[family['correction']]} over their family."
    )
    if withheld_by(family):
        note += " The positive control did not pass: no comparison is a finding, and none is marked."
    return tabular(rows, f"{family.get('title', 'Comparisons')}: differences", escape(note))


def methods(record: dict) -> str:
    """The methods paragraph: model, data, seeds, steps, batch, learning rate, software versions, device, commit."""
    p, v = record.get("parameters", {}), record.get("versions", {})
    seeds = trained_seeds(record)
    training = [f"{p[k]} {name}" for k, name in (("steps", "steps"), ("epochs", "epochs")) if p.get(k)]
    training += [f"batch {p['batch_size']}"] if p.get("batch_size") else []
    training += [f"learning rate {p['lr']:g}"] if isinstance(p.get("lr"), int | float) else []
    tasks = sorted({t for fam in corrected_families(record) for group in fam["groups"].values() for t in group})
    parts = [
        f"Model: {p.get('model', '')} ({record.get('model', '')})"
        + (f", standing in for {record['substitute_for']}" if record.get("substitute_for") else "")
        + ".",
        f"Seeds: {', '.join(map(str, seeds))} ({len(seeds)})." if seeds else "",
        f"Training: {', '.join(training)}." if training else "",
        f"Headline tasks: {', '.join(tasks)}." if tasks else "",
        "Software: " + ", ".join(f"{k} {v[k]}" for k in v) + "." if v else "",
        f"Device: {record.get('device', '')}; commit {str(record.get('git_commit', ''))[:12]}; "
        f"notebook {record.get('notebook', '')}.",
    ]
    return r"\paragraph{Methods.} " + escape(" ".join(x for x in parts if x))


def tables_tex(record: dict) -> str:
    """Every table of a run's ``record`` as LaTeX: the study's own tables (of a family's table, its scores), one table
    of tested comparisons per corrected family, and the methods paragraph."""
    head = [f"% {record.get('notebook', '')}: tables from its results.json (kit.report.latex); needs booktabs"]
    own = []
    for title, rows in (record.get("tables") or {}).items():
        if rows and family_table(title):  # a family's: its scores here, its tests below
            scores, _ = split_family_table(pd.DataFrame(rows))
            own.append(tabular(scores.to_dict("records"), f"{title}: scores"))
        elif rows:
            own.append(tabular(rows, title))
    families = [comparisons_table(f) for f in corrected_families(record) if f.get("lines")]
    return "\n\n".join([*head, *own, *filter(None, families), methods(record)]) + "\n"
