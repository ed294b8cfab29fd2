"""Every figure the notebooks draw; each returns a matplotlib Figure, ``save`` writes PNG, SVG and PDF.
``use_style`` sets the reports' seaborn theme (``kit.report.notebook.start`` calls it)."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns


def use_style() -> None:
    """The reports' look: seaborn's whitegrid theme at notebook scale (matplotlib's global style)."""
    sns.set_theme(style="whitegrid", context="notebook")


def save(fig: plt.Figure, name: str, report_dir: str | Path) -> None:
    """Write ``<report_dir>/figures/<name>.png``, ``.svg`` and ``.pdf`` (the notebook displays the figure itself)."""
    out = Path(report_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.svg", bbox_inches="tight")
    fig.savefig(out / f"{name}.pdf", bbox_inches="tight")
    fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")


def row_styles(shown, order=None) -> dict[str, dict]:
    """The look of each row in ``shown``, by its place in ``order`` (every row of the report, in table order;
    rows not in it come after): tab10's colours in turn, and after each ten rows the next dash pattern and
    marker, so that 15 rows stay apart (tab20's light/dark pairs do not). Figures given the same ``order``
    draw each row alike, whichever rows each of them shows."""
    colors = sns.color_palette("tab10")
    dashes, markers = ["", (4, 2), (1, 1.5), (6, 2, 1, 2)], ["o", "s", "^", "D"]
    place = {name: i for i, name in enumerate(dict.fromkeys([*(order or []), *shown]))}
    return {
        name: {"color": colors[i % 10], "dashes": dashes[i // 10 % 4], "marker": markers[i // 10 % 4]}
        for name, i in place.items()
        if name in set(shown)
    }


def _named(frame: pd.DataFrame) -> pd.Series:
    """A row's display name: its ``label`` where the frame has one, else its ``method`` key."""
    return frame["label"] if "label" in frame else frame["method"]


ALL_PAIRS = ("spearman_all", "all-pairs Spearman")
"""The default ``score`` of the figures: (its column, its words), as ``Study.headline_spearman`` gives them."""


def training_curves(
    histories: pd.DataFrame,
    eval_name: str = "BIOSSES",
    order: list[str] | None = None,
    selection: str | None = None,
    score: tuple[str, str] = ALL_PAIRS,
) -> plt.Figure:
    """Per row over steps (mean line, band = ±1 std over seeds): the checkpoint-selection score (``selection``
    says what it is; without it, the ``eval_name`` dev Spearman), the ``score`` (the headline's Spearman column;
    the test pairs when the dev pairs select), the training loss, and the positive and negative cosines in two
    panels, so that each row keeps its line style in every panel; a grid of three columns (legible at 1024 px), its
    sixth cell the one legend for all panels, so no curve is hidden."""
    h = histories.assign(row=_named(histories))
    first = (
        ("selection", f"selection score x100 ({selection})")
        if selection
        else ("spearman_dev", f"{eval_name} dev Spearman")
    )
    panels = [
        first,
        (score[0], f"{eval_name} {score[1]}"),
        ("loss", "training loss (since last eval)"),
        ("pos_cos", "positive pairs: mean cosine in batch"),
        ("neg_cos", "negative pairs: mean cosine in batch"),
    ]
    for col in (first[0], score[0]):
        h[col] = h[col] * 100
    styles = row_styles(h.row, order)
    fig, grid = plt.subplots(2, 3, figsize=(13, 7.5))
    axes = grid.flat
    for ax, (col, title) in zip(axes, panels):
        drawn = h.dropna(subset=[col])  # none where a run diverged and logged NaN only: the panel stays empty
        if len(drawn):
            sns.lineplot(
                drawn,
                x="step",
                y=col,
                hue="row",
                palette={name: style["color"] for name, style in styles.items()},
                style="row",
                dashes={name: style["dashes"] for name, style in styles.items()},
                errorbar="sd",
                ax=ax,
                legend=False,
            )
        ax.set_title(textwrap.fill(title, 40, break_on_hyphens=False), fontsize=12)
        ax.set_ylabel("")
    handles = [
        plt.Line2D([], [], color=style["color"], dashes=style["dashes"] or (None, None), label=name)
        for name, style in styles.items()
    ]
    fig.delaxes(grid.flat[-1])  # the sixth cell holds the legend
    fig.tight_layout()
    fig.legend(handles=handles, loc="center", bbox_to_anchor=(5 / 6, 0.25), fontsize=11, ncol=1 + len(handles) // 9)
    return fig


def alignment_uniformity(
    results: pd.DataFrame,
    histories: pd.DataFrame | None = None,
    eval_name: str = "BIOSSES",
    order: list[str] | None = None,
    score: tuple[str, str] = ALL_PAIRS,
) -> plt.Figure:
    """Wang and Isola's plane: one point per row (mean over seeds, its ``score`` in the label), with the first
    seed's trajectory over training as a thin line. Lower is better on both axes. A row whose point is another's
    (an ablation that changed nothing) says so in the legend instead of hiding under it."""
    fig, ax = plt.subplots(figsize=(12, 6.5))
    means = results.assign(row=_named(results)).groupby("row", sort=False)[["alignment", "uniformity", score[0]]].mean()
    styles = row_styles(means.index, order)
    if histories is not None and len(histories):
        first = histories[histories.seed == histories.seed.min()]
        for name, grp in first.assign(row=_named(first)).groupby("row", sort=False):
            ax.plot(grp.uniformity, grp.alignment, "-", color=styles.get(name, {}).get("color"), alpha=0.4, lw=1)
    placed: dict[tuple[float, float], str] = {}
    for name, row in means.iterrows():
        point = (row.uniformity, row.alignment)  # exactly: a no-op ablation repeats its twin to the last digit
        twin = placed.setdefault(point, name)
        ax.scatter(
            row.uniformity,
            row.alignment,
            s=60 if twin == name else 160,
            marker=styles[name]["marker"],
            color=styles[name]["color"] if twin == name else "none",
            label=f"{name} ({row[score[0]] * 100:.1f})" + (f", same point as {twin}" if twin != name else ""),
            edgecolor=styles[name]["color"] if twin != name else "black",
            linewidths=2 if twin != name else 1,
            zorder=3 if twin == name else 2,
        )
    ax.set_xlabel("uniformity  (log E exp(-2||x-y||²), lower is better)")
    ax.set_ylabel("alignment  (E ||x-x⁺||², lower is better)")
    ax.set_title(
        f"alignment vs uniformity on {eval_name} (label: {score[1]}; thin lines: the first seed's path over training)",
        fontsize=10,
    )
    ax.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    fig.tight_layout()
    return fig


def fewshot_curve(
    fewshot: pd.DataFrame,
    metric: str = "spearman_all",
    reference: float | None = None,
    eval_name: str = "BIOSSES",
    order: list[str] | None = None,
) -> plt.Figure:
    """Spearman vs share of the unlabeled corpus (log x), one line per row; ``reference``
    (the starting model's score) is drawn as a dashed line."""
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(7, 4.2))
    d = fewshot.assign(score=fewshot[metric] * 100, row=_named(fewshot))
    styles = row_styles(d.row, order)
    sns.lineplot(
        d,
        x="percent",
        y="score",
        hue="row",
        palette={name: style["color"] for name, style in styles.items()},
        style="row",
        dashes={name: style["dashes"] for name, style in styles.items()},
        markers={name: style["marker"] for name, style in styles.items()},
        errorbar="sd",
        ax=ax,
    )
    if reference is not None:
        ax.axhline(reference * 100, ls="--", color="grey", label="starting model")
        ax.legend()
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_xlabel("share of the unlabeled corpus (%), same number of steps")
    ax.set_ylabel(f"{eval_name} {metric.replace('spearman_', '')} Spearman x100")
    ax.set_title("few-shot: how much unlabeled text is needed")
    fig.tight_layout()
    return fig


def embedding_map(embeddings: dict[str, np.ndarray], source: list[str], seed: int = 0) -> plt.Figure:
    """UMAP of the same sentences under each model, one panel per model, coloured by source. The 15 exact cosine
    neighbours come from scikit-learn: UMAP's own search (pynndescent) spends about 12 s compiling with numba in
    every new process, for a few hundred points."""
    import umap
    from sklearn.neighbors import NearestNeighbors

    fig, axes = plt.subplots(1, len(embeddings), figsize=(5 * len(embeddings), 4.5), squeeze=False)
    for ax, (name, emb) in zip(axes[0], embeddings.items()):
        k = min(15, len(emb) - 1)
        dist, index = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(emb).kneighbors(emb)
        with warnings.catch_warnings():  # "n_jobs overridden by random_state": seeded on purpose
            warnings.filterwarnings("ignore", category=UserWarning, module="umap")
            xy = umap.UMAP(
                n_neighbors=k, min_dist=0.1, metric="cosine", random_state=seed, precomputed_knn=(index, dist, None)
            ).fit_transform(emb)
        sns.scatterplot(x=xy[:, 0], y=xy[:, 1], hue=source, s=12, ax=ax, legend=ax is axes[0][0])
        ax.set_title(name)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("UMAP of sentence embeddings (cosine), coloured by source")
    fig.tight_layout()
    return fig


def silver_label_distributions(labels: pd.DataFrame, titles: dict[str, str]) -> plt.Figure:
    """One panel per benchmark: the label distribution of the gold training pairs and of each silver
    set (STS: density of scores in [0, 1]; NLI: share of each class). ``labels`` is
    ``Study.silver_labels()``; ``titles`` maps benchmark names to panel titles."""
    benchmarks = list(dict.fromkeys(labels.benchmark))
    fig, axes = plt.subplots(1, len(benchmarks), figsize=(5.5 * len(benchmarks), 4), squeeze=False)
    for ax, benchmark in zip(axes[0], benchmarks):
        d = labels[labels.benchmark == benchmark]
        scores = pd.to_numeric(d.label, errors="coerce")  # STS and NLI benchmarks share one (object) column
        if scores.notna().all():
            d = d.assign(label=scores)
            sns.histplot(
                d,
                x="label",
                hue="set",
                stat="density",
                common_norm=False,
                bins=20,
                binrange=(0, 1),
                element="step",
                ax=ax,
            )
            ax.set_xlabel("label (score / max)")
        else:
            share = d.groupby("set", sort=False).label.value_counts(normalize=True).rename("share").reset_index()
            sns.barplot(share, x="label", y="share", hue="set", ax=ax)
            ax.set_xlabel("class")
        ax.set_title(titles.get(benchmark, benchmark))
    fig.suptitle("labels of the gold training pairs and of the cross-encoder-labelled silver sets")
    fig.tight_layout()
    return fig


def condition_scores(results: pd.DataFrame, titles: dict[str, str], reference: str | None = None) -> plt.Figure:
    """One panel per benchmark: each run's score per training condition (points) with the mean (bar);
    ``reference`` names a condition drawn as a dashed line instead (the untrained starting model)."""
    benchmarks = list(dict.fromkeys(results.benchmark))
    fig, axes = plt.subplots(1, len(benchmarks), figsize=(5.5 * len(benchmarks), 4.2), squeeze=False)
    for ax, benchmark in zip(axes[0], benchmarks):
        d = results[results.benchmark == benchmark]
        # whole seeds in the legend (the reference's seed is None, which made the column float)
        runs = d[d.condition != reference].astype({"seed": "Int64"})
        sns.barplot(runs, x="condition", y="score", errorbar=None, alpha=0.35, ax=ax)
        sns.stripplot(runs, x="condition", y="score", hue="seed", dodge=False, size=6, ax=ax, legend=ax is axes[0][0])
        if reference is not None and (d.condition == reference).any():
            ax.axhline(d[d.condition == reference].score.mean(), ls="--", color="grey", label=reference)
        ax.set_title(titles.get(benchmark, benchmark))
        ax.set_xlabel("")
        ax.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    return fig


def similarity_curves(histories: pd.DataFrame, rows: list[str] | None = None) -> plt.Figure:
    """QFCL's Figure 4: mean dev cosine per epoch between an anchor (left: the CHQ's encoder
    representation; right: the generated summary's decoder representation) and the gold FAQ,
    simple negatives and hard negatives, one colour per row (band: ±1 std over seeds)."""
    h = histories if rows is None else histories[histories.row.isin(rows)]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2), sharey=True)
    for ax, anchor in zip(axes, ("chq", "summary")):
        long = h.melt(
            ["label", "seed", "epoch"], [f"{anchor}_faq", f"{anchor}_simple", f"{anchor}_hard"], "pair", "cosine"
        )
        long["pair"] = long.pair.str.removeprefix(f"{anchor}_").map(
            {"faq": "gold FAQ", "simple": "simple negative", "hard": "hard negative"}
        )
        sns.lineplot(
            long,
            x="epoch",
            y="cosine",
            hue="label",
            style="pair",
            marker="o",
            errorbar="sd",
            ax=ax,
            legend=anchor == "summary",
        )
        ax.set_title(f"anchor: {'CHQ (encoder)' if anchor == 'chq' else 'generated summary (decoder)'}")
    axes[1].legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    fig.suptitle("dev cosine similarity by epoch")
    fig.tight_layout()
    return fig


def sweep_curves(
    sweep: pd.DataFrame, key: str, title: str, metrics: tuple[str, ...] = ("spearman_all", "spearman_entity")
) -> plt.Figure:
    """One panel per metric: Spearman x100 against the swept setting (categorical x), one line
    per method, points at the mean over seeds with their spread (MED-SE's Tables 4, 6 and 7 as curves)."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.5 * len(metrics), 4), squeeze=False)
    d = sweep.assign(**{m: sweep[m] * 100 for m in metrics}, setting=sweep[key].astype(str))
    for ax, metric in zip(axes[0], metrics):
        sns.pointplot(
            d,
            x="setting",
            y=metric,
            hue="label",
            errorbar="sd",
            dodge=0.2 if d.label.nunique() > 1 else False,
            ax=ax,
            legend=ax is axes[0][0],
        )
        ax.set_xlabel(key)
        ax.set_ylabel(f"{metric} x100")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


ROLE_COLORS = {"control": "#2f2f2f", "primary": "#1f5fa8", "secondary": "#8a8a8a"}


def comparisons(family: dict) -> plt.Figure | None:
    """A forest plot of a family record's tested comparisons (``SuiteReport.record()``): the control, the primary,
    then the secondary ones task by task, each difference (filled where significant) with its own 95% interval
    (thick) and, for a secondary one, its family interval after the correction (thin); the task on the right. None
    when none was tested."""
    from matplotlib.lines import Line2D

    from kit.report.index import tested_lines

    names = {(x["task"], x["row"]): x["method"] for x in family.get("lines", [])}
    lines = tested_lines(family)
    if not lines:
        return None
    height = 1.9 + 0.42 * len(lines)  # inches: the rows (two lines of label each), the axis and the legend below
    fig, ax = plt.subplots(figsize=(8, height))
    for y, x in enumerate(lines):
        color = ROLE_COLORS[x["role"]]
        if x["role"] == "secondary" and x.get("family_low") is not None:
            ax.plot([x["family_low"], x["family_high"]], [y, y], color=color, lw=1)
        ax.plot([x["low"], x["high"]], [y, y], color=color, lw=4, solid_capstyle="butt")
        face = color if x.get("significant") else "white"
        ax.plot(x["difference"], y, "o", color=color, markerfacecolor=face, markersize=7, zorder=3)
        ax.annotate(x["task"], (1.01, y), xycoords=("axes fraction", "data"), va="center", fontsize=10)
    labels = [f"{x['method']} − {names.get((x['task'], x['baseline']))}" for x in lines]
    ax.set_yticks(range(len(lines)), [textwrap.fill(label, 36, break_on_hyphens=False) for label in labels])
    ax.tick_params(labelsize=10)
    ax.set_ylim(len(lines) - 0.5, -0.5)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("difference x100 (thick: 95% interval; thin: family interval after correction)", fontsize=10)
    ax.set_title(f"{family.get('title', 'Comparisons')}: every tested comparison", fontsize=11)
    roles = [Line2D([], [], color=c, lw=4, label=r) for r, c in ROLE_COLORS.items()]
    marks = [
        Line2D([], [], ls="", marker="o", color="#555", label="significant"),
        Line2D([], [], ls="", marker="o", color="#555", markerfacecolor="white", label="not significant"),
    ]
    fig.legend(handles=roles + marks, loc="lower center", ncol=5, fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0.45 / height, 1, 1))  # the legend's band kept free
    return fig
