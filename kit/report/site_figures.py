"""The results page's figures, drawn from the committed snapshots when the site is built (``kit.docs.on_files``, a
MkDocs hook), never committed: a forest plot of each snapshot's corrected families (``kit.report.plots.comparisons``)
as ``results/figures/<notebook>-<run>-<family>.svg``, the names ``figure_path`` gives and the page links."""

from __future__ import annotations

import io

FIGURES = "results/figures"


def figure_path(notebook: str, run: str, family: str) -> str:
    """Where a snapshot's family's forest plot lies in the site, relative to its root."""
    return f"{FIGURES}/{notebook}-{run}-{family}.svg"


def forest_families(notebook: str, run: str, record: dict) -> dict[str, dict]:
    """A snapshot's families that get a forest plot (those with a tested comparison: ``tested_lines``; none for a
    snapshot whose verdicts are withdrawn), by ``figure_path``."""
    from kit.report.index import named_families, tested_lines, withdrawn

    if withdrawn(record):
        return {}
    return {figure_path(notebook, run, name): f for name, f in named_families(record).items() if tested_lines(f)}


def forest_svgs(snapshots: dict[tuple[str, str], dict]) -> dict[str, bytes]:
    """Every snapshot's forest plots (``forest_families``) as SVG, by ``figure_path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kit.report import plots

    plots.use_style()
    out = {}
    for (notebook, run), record in snapshots.items():
        for path, family in forest_families(notebook, run, record).items():
            fig = plots.comparisons(family)
            svg = io.BytesIO()
            fig.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
            plt.close(fig)
            out[path] = svg.getvalue()
    return out
