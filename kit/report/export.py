"""An executed notebook as a self-contained HTML report that renders offline.

The page is JupyterLab's (nbconvert's ``lab`` template) without the inputs and without any script from the
network (``templates/offline``). Its formulas are converted when the report is written: every ``$$...$$``
and ``$...$`` of a Markdown cell becomes MathML (latex2mathml), which browsers render natively, so a report
opened without a network shows the losses as formulas, not as LaTeX source.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

TEMPLATES = Path(__file__).parent / "templates"
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)(?<![\\$])\$(?!\$)")


def to_mathml(markdown: str) -> str:
    """``markdown`` with each display (``$$...$$``) and inline (``$...$``) formula replaced by MathML."""
    from latex2mathml.converter import convert

    markdown = _DISPLAY.sub(lambda m: "\n" + convert(m.group(1).strip(), display="block") + "\n", markdown)
    return _INLINE.sub(lambda m: convert(m.group(1).strip()), markdown)


def report_html(notebook: nbformat.NotebookNode, title: str, record: dict | None = None) -> str:
    """The HTML report of an executed ``notebook``, titled ``title``: outputs and Markdown, no code, math as
    MathML, no script loaded from the network; under its title the verdict read from its ``record`` (the
    ``results.json`` it wrote; none for a failed run) and a table of contents (``kit.report.opening``)."""
    from nbconvert import HTMLExporter

    from kit.report.opening import with_opening

    notebook = nbformat.from_dict(notebook)  # a copy: the executed notebook keeps its LaTeX
    notebook.metadata["title"] = title
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = to_mathml(cell.source)
    exporter = HTMLExporter(
        template_name="offline",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(notebook)
    return with_opening(body, record)
