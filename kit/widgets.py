"""The augmentation explorer: pick an augmenter, its ratio and a seed; see several views
of a typed or sampled sentence with the edits highlighted."""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from kit.augment import AUGMENTERS, DELETE, INSERT, MOVE, make_augmenter, tokenize
from kit.params import Params

STYLE = {
    DELETE: "<del style='color:#b00020;background:#fde7ea'>{}</del>",
    INSERT: "<ins style='color:#0a6b2b;background:#e3f6e8;text-decoration:none;font-weight:bold'>{}</ins>",
    MOVE: "<span style='color:#1a4fb0;background:#e6eefc;text-decoration:underline'>{}</span>",
}
LEGEND = " ".join(STYLE[k].format(k) for k in (DELETE, INSERT, MOVE))


def edits_html(edits: list[tuple[str, str]]) -> str:
    """One view as HTML: deleted units struck through, inserted ones green, moved ones blue."""
    return " ".join(STYLE.get(op, "{}").format(html.escape(tok)) for tok, op in edits)


def views_html(text: str, augmenter: str, ratio: float, seed: int, n_views: int) -> str:
    """``n_views`` augmented views of ``text`` drawn from one Generator seeded with ``seed``."""
    aug = make_augmenter(augmenter, ratio)
    rng = np.random.default_rng(seed)
    units = " | ".join(html.escape(u) for u in tokenize(text))
    rows = "".join(f"<li style='margin:4px 0'>{edits_html(aug.edits(text, rng)) or '<i>(empty)</i>'}</li>" for _ in range(n_views))
    return (
        f"<div style='font-family:sans-serif'><b>{html.escape(str(aug))}</b>, seed {seed} &nbsp; {LEGEND}"
        f"<div style='color:#666;font-size:90%;margin:4px 0'>units: {units or '(none)'}</div><ol>{rows}</ol></div>"
    )


def explorer(sentences: list[str], seed: int = 0) -> W.VBox:
    """The interactive explorer; ``sentences`` are the pool the sample button draws from."""
    pick = np.random.default_rng(seed)
    augmenter = W.Dropdown(options=sorted(AUGMENTERS), value="crop", description="augmenter")
    ratio = W.FloatSlider(value=0.1, min=0.05, max=0.5, step=0.05, description="ratio", readout_format=".2f")
    seed_box = W.IntText(value=seed, description="seed")
    n_views = W.IntSlider(value=4, min=1, max=10, description="views")
    text = W.Textarea(value=sentences[0] if sentences else "", description="sentence", layout=W.Layout(width="95%", height="70px"))
    sample = W.Button(description="sample a PubMed sentence", icon="random")
    out = W.HTML()

    def update(*_):
        out.value = views_html(text.value, augmenter.value, ratio.value, seed_box.value, n_views.value)

    def resample(*_):
        text.value = sentences[int(pick.integers(len(sentences)))]

    for w in (augmenter, ratio, seed_box, n_views, text):
        w.observe(update, names="value")
    sample.on_click(resample)
    update()
    return W.VBox([W.HBox([augmenter, ratio]), W.HBox([seed_box, n_views]), W.HBox([text]), sample, out])


@dataclass
class ExploreParams(Params):
    """Parameters of ``notebooks/explore_augmentations.ipynb``."""

    sample_size: int = 2000
    seed: int = 0
    ratio: float = 0.2
