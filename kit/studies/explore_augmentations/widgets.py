"""The augmentation explorer: pick a language, an augmenter, its ratio and a seed; see
several views of a typed or sampled sentence with the edits highlighted."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from kit.core.augment import AUGMENTERS, DELETE, INSERT, MOVE, make_augmenter, separator, tokenize

STYLE = {
    DELETE: "<del style='color:#b00020;background:#fde7ea'>{}</del>",
    INSERT: "<ins style='color:#0a6b2b;background:#e3f6e8;text-decoration:none;font-weight:bold'>{}</ins>",
    MOVE: "<span style='color:#1a4fb0;background:#e6eefc;text-decoration:underline'>{}</span>",
}
LEGEND = " ".join(STYLE[k].format(k) for k in (DELETE, INSERT, MOVE))


def edits_html(edits: list[tuple[str, str]], language: str = "en") -> str:
    """One view as HTML: deleted units struck through, inserted ones green, moved ones blue.

    Units are joined by the augmenter's own ``separator``, so that the view without its ``<del>``
    elements reads exactly as the augmented text (``render``) the model sees. A deleted unit carries
    its separator inside its ``<del>``: the one before it, or after it when no kept unit precedes it.
    """

    def styled(text: str, op: str) -> str:
        return STYLE.get(op, "{}").format(html.escape(text))

    parts: list[str] = []
    leading: list[str] = []  # deleted units before the first kept one
    kept = shown = None  # the last kept unit, the last unit shown
    for tok, op in edits:
        if op != DELETE:
            parts += [styled(d + separator(d, n, language), DELETE) for d, n in zip(leading, [*leading[1:], tok])]
            parts.append((separator(kept, tok, language) if kept is not None else "") + styled(tok, op))
            leading, kept = [], tok
        elif kept is None:
            leading.append(tok)
        else:
            parts.append(styled(separator(shown, tok, language) + tok, DELETE))
        shown = tok
    if leading:  # every unit deleted (no augmenter does that)
        parts += [styled(d + separator(d, n, language), DELETE) for d, n in zip(leading, leading[1:])]
        parts.append(styled(leading[-1], DELETE))
    return "".join(parts)


def views_html(text: str, augmenter: str, ratio: float, seed: int, n_views: int, language: str = "en") -> str:
    """``n_views`` augmented views of ``text`` drawn from one Generator seeded with ``seed``."""
    aug = make_augmenter(augmenter, ratio, language=language)
    rng = np.random.default_rng(seed)
    units = " | ".join(html.escape(u) for u in tokenize(text, language))
    rows = "".join(
        f"<li style='margin:4px 0'>{edits_html(aug.edits(text, rng), language) or '<i>(empty)</i>'}</li>"
        for _ in range(n_views)
    )
    return (
        f"<div style='font-family:sans-serif'><b>{html.escape(str(aug))}</b>, seed {seed} &nbsp; {LEGEND}"
        f"<div style='color:#666;font-size:90%;margin:4px 0'>units: {units or '(none)'}</div><ol>{rows}</ol></div>"
    )


def explorer(pools: dict[str, list[str]], seed: int = 0, ratio: float = 0.2) -> W.VBox:
    """The interactive explorer; ``pools`` maps a language (``en``, ``zh``) to the sentences
    the sample button draws from; ``seed`` and ``ratio`` are the controls' first values."""
    pick = np.random.default_rng(seed)
    language = W.Dropdown(options=list(pools), value=next(iter(pools)), description="language")
    augmenter = W.Dropdown(options=sorted(AUGMENTERS), value="crop", description="augmenter")
    ratio_slider = W.FloatSlider(
        value=ratio, min=min(0.05, ratio), max=max(0.5, ratio), step=0.05, description="ratio", readout_format=".2f"
    )
    seed_box = W.BoundedIntText(value=seed, min=0, max=2**32 - 1, description="seed")  # numpy seeds are non-negative
    n_views = W.IntSlider(value=4, min=1, max=10, description="views")
    first = pools[language.value]
    text = W.Textarea(
        value=first[0] if first else "", description="sentence", layout=W.Layout(width="95%", height="70px")
    )
    sample = W.Button(description="sample a sentence", icon="random", layout=W.Layout(width="auto"))
    out = W.HTML()

    def update(*_):
        out.value = views_html(
            text.value, augmenter.value, ratio_slider.value, seed_box.value, n_views.value, language.value
        )

    def resample(*_):
        pool = pools[language.value]
        if pool:
            text.value = pool[int(pick.integers(len(pool)))]

    for w in (augmenter, ratio_slider, seed_box, n_views, text):
        w.observe(update, names="value")
    language.observe(resample, names="value")  # a new language brings a sentence in it ...
    language.observe(update, names="value")  # ... and its views, even if that sentence was already shown
    sample.on_click(resample)
    update()
    return W.VBox(
        [W.HBox([language, augmenter]), W.HBox([ratio_slider, seed_box, n_views]), W.HBox([text]), sample, out]
    )
