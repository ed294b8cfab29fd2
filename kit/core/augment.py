"""Text augmenters for contrastive positives: one class per operation, a registry by name.

Every augmenter maps (text, numpy Generator) -> text and never raises on a string;
``edits()`` returns the same result as a list of ``(token, op)`` with ``op`` in
``keep | delete | insert | move`` so the explorer can highlight what changed.

English tokenization keeps biomedical units whole: hyphenated names ("IL-6"), gene
variants ("Kras G12D"), numbers with units ("5 hmC", "10 mg"), and comparisons
("p < 0.05"). Chinese text has no spaces, so with ``language="zh"`` the units are single
characters, while runs of Latin letters and digits ("HPV", "IL-6", "725") stay whole;
no segmenter is used. Operations act on units, so none is split unless it is removed.

The operations are those compared in the first seed paper (random crop, word deletion,
random swap, stopword insertion, punctuation insertion); punctuation insertion is
AEDA (Karimi, Rossi, Prati 2021, "AEDA: An Easier Data Augmentation Technique for
Text Classification"); swap and deletion follow EDA (Wei and Zou 2019).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kit.registry import Registry

KEEP, DELETE, INSERT, MOVE = "keep", "delete", "insert", "move"

AUGMENTERS: Registry[type[Augmenter]] = Registry("augmenter")
"""Every augmenter class by its ``name`` (``@AUGMENTERS.add`` where it is declared)."""

_STOP = "|".join(sorted(ENGLISH_STOP_WORDS, key=len, reverse=True))
_UNIT_RE = re.compile(
    r"""
      \S++(?:\s+(?:[<>=≤≥±×~/–-]|<=|>=|\+/-)\s+\S++)+          # comparisons and spaced joins: p < 0.05, 10 ± 2
    | \S++\s+[A-Z]\d+[A-Z*](?=\s|$|[-.,;:)])\S*+              # gene and variant: Kras G12D
    | [-+]?\d+(?:[.,]\d+)?\s+(?!(?:"""
    + _STOP
    + r""")\b)(?:[µμ]?[A-Za-z]{1,3}(?:/[A-Za-z]{1,3})?|[a-z]{1,3}[A-Z]\w*|%)(?=\s|$|[.,;:)])\S*+
                                                             # the line above: number and unit, 5 hmC, 10 mg/kg
    | \S++
    """,
    re.X,
)


_ZH_UNIT_RE = re.compile(r"[A-Za-z0-9µμα-ωΑ-Ω][A-Za-z0-9µμα-ωΑ-Ω.,:/%+-]*(?<![.,:])|\S")
LANGUAGES = ("en", "zh")


# Every protected English unit contains a digit, a comparison or joining mark, or a spaced
# hyphen; text without one splits on whitespace exactly as _UNIT_RE would, only faster.
_MAY_PROTECT = re.compile(r"\d|[<>=≤≥±×~/–]|\s-\s")


def tokenize(text: str, language: str = "en") -> list[str]:
    """Units an augmenter operates on: protected biomedical units (``en``) or characters
    with Latin/digit runs kept whole (``zh``)."""
    if language == "zh":
        return _ZH_UNIT_RE.findall(text)
    return _UNIT_RE.findall(text) if _MAY_PROTECT.search(text) else text.split()


def separator(prev: str, tok: str, language: str = "en") -> str:
    """What the augmented text puts between two consecutive units: a space (``en``); for ``zh``
    nothing, except a space between two Latin/digit runs ("HPV DNA" stays two words)."""
    if language != "zh":
        return " "
    ascii_edge = prev[-1:].isascii() and prev[-1:].isalnum() and tok[:1].isascii() and tok[:1].isalnum()
    return " " if ascii_edge else ""


def render(edits: list[tuple[str, str]], language: str = "en") -> str:
    """The augmented text: every token whose op is not ``delete``, joined by ``separator``."""
    kept = [tok for tok, op in edits if op != DELETE]
    return "".join([*kept[:1], *(separator(prev, tok, language) + tok for prev, tok in zip(kept, kept[1:]))])


def n_edits(n: int, ratio: float) -> int:
    """Number of units an operation touches: round(ratio * n), at least 1."""
    return max(1, int(ratio * n + 0.5))


def _distinct(u: list[float], n: int, k: int) -> list[int]:
    """k distinct indices from range(n) by a partial Fisher-Yates shuffle driven by k uniforms."""
    idx = list(range(n))
    for t in range(k):
        j = t + int(u[t] * (n - t))
        idx[t], idx[j] = idx[j], idx[t]
    return idx[:k]


def _two_distinct(u0: float, u1: float, n: int) -> tuple[int, int]:
    """``_distinct([u0, u1], n, 2)`` in constant time: the first two steps of the same shuffle."""
    i = int(u0 * n)
    j = 1 + int(u1 * (n - 1))
    return i, (0 if j == i else j)


@dataclass
class Augmenter:
    """Base class: ``ratio`` is the share of units edited (0.1, 0.2, 0.3 in the paper)."""

    ratio: float = 0.1
    language: str = "en"
    name: ClassVar[str] = ""
    min_units: ClassVar[int] = 1  # a text with fewer units is returned unchanged

    def __post_init__(self):
        if not 0.0 < self.ratio < 1.0:
            raise ValueError(f"{type(self).__name__}: ratio must be in (0, 1), got {self.ratio}")
        if self.language not in LANGUAGES:
            raise ValueError(f"{type(self).__name__}: language must be one of {LANGUAGES}, got {self.language!r}")

    def edits(self, text: str, rng: np.random.Generator) -> list[tuple[str, str]]:
        units = tokenize(text, self.language)
        return self._apply(units, rng) if len(units) >= self.min_units else [(u, KEEP) for u in units]

    def __call__(self, text: str, rng: np.random.Generator) -> str:
        units = tokenize(text, self.language)
        return render(self._apply(units, rng), self.language) if len(units) >= self.min_units else text

    def _apply(self, units: list[str], rng: np.random.Generator) -> list[tuple[str, str]]:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{self.name} {round(self.ratio * 100)}%" + (f" ({self.language})" if self.language != "en" else "")


@AUGMENTERS.add
@dataclass
class WordDeletion(Augmenter):
    """Delete round(ratio * n) distinct units (at least one is always kept)."""

    name: ClassVar[str] = "deletion"
    min_units: ClassVar[int] = 2

    def _apply(self, units, rng):
        n = len(units)
        k = min(n_edits(n, self.ratio), n - 1)
        gone = set(_distinct(rng.random(k).tolist(), n, k))
        return [(u, DELETE if i in gone else KEEP) for i, u in enumerate(units)]


@AUGMENTERS.add
@dataclass
class RandomCrop(Augmenter):
    """Remove one contiguous span of round(ratio * n) units, or replace it by ``placeholder``.

    The first seed paper (Table 2) compares cropping to nothing with cropping to a
    placeholder token; ``placeholder=None`` is the former.
    """

    placeholder: str | None = None
    name: ClassVar[str] = "crop"
    min_units: ClassVar[int] = 2

    def _apply(self, units, rng):
        n = len(units)
        k = min(n_edits(n, self.ratio), n - 1)
        start = int(rng.random() * (n - k + 1))
        out = [(u, KEEP) for u in units[:start]]
        out += [(u, DELETE) for u in units[start : start + k]]
        if self.placeholder is not None:
            out.append((self.placeholder, INSERT))
        out += [(u, KEEP) for u in units[start + k :]]
        return out


@AUGMENTERS.add
@dataclass
class RandomSwap(Augmenter):
    """Swap round(ratio * n) random pairs of units; the multiset of units is unchanged."""

    name: ClassVar[str] = "swap"
    min_units: ClassVar[int] = 2

    def _apply(self, units, rng):
        n = len(units)
        k = n_edits(n, self.ratio)
        order = list(range(n))
        u = rng.random(2 * k).tolist()
        for t in range(k):
            i, j = _two_distinct(u[2 * t], u[2 * t + 1], n)
            order[i], order[j] = order[j], order[i]
        return [(units[o], KEEP if o == i else MOVE) for i, o in enumerate(order)]


@dataclass
class _Insertion(Augmenter):
    """Insert round(ratio * n) tokens drawn from ``vocabulary`` at random positions."""

    @property
    def vocabulary(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _apply(self, units, rng):
        n = len(units)
        k = n_edits(n, self.ratio)
        u = rng.random(2 * k).tolist()
        slots: dict[int, list[str]] = {}
        vocab = self.vocabulary
        for t in range(k):
            slots.setdefault(int(u[2 * t] * (n + 1)), []).append(vocab[int(u[2 * t + 1] * len(vocab))])
        out = []
        for i in range(n + 1):
            out += [(w, INSERT) for w in slots.get(i, ())]
            if i < n:
                out.append((units[i], KEEP))
        return out


# Chinese numeral characters, everyday and financial forms: a stopword holding one (一些, 十分, 几乎) could
# read as a number next to a dose, so none is inserted.
_CHINESE_NUMERALS = frozenset("〇零一二三四五六七八九十百千万亿两几半壹贰叁肆伍陆柒捌玖拾佰仟萬億兩")

# Traditional -> simplified, for the words of spaCy's zh list: what OpenCC's "t2s" conversion (opencc 1.4.2)
# changes there (後 -> 后, 麽 -> 么, and the phrase 藉以 -> 借以; 藉 alone is simplified, as in 慰藉). No
# converter is a dependency of the kit, so the mapping is written out; the tests re-derive it with OpenCC
# wherever that is installed, which catches a spaCy release that adds other traditional forms.
_TRADITIONAL_CHARACTERS = str.maketrans("後麽", "后么")
_TRADITIONAL_WORDS = {"藉以": "借以"}


def _to_simplified(word: str) -> str:
    """``word`` in simplified characters, by the table above (OpenCC's t2s on spaCy's zh stopwords)."""
    return _TRADITIONAL_WORDS.get(word) or word.translate(_TRADITIONAL_CHARACTERS)


@functools.cache
def _chinese_stopwords() -> tuple[str, ...]:
    """spaCy's Chinese stopwords (``spacy.lang.zh.stop_words``) that are inserted into medical text: the
    all-Han words, less every word holding a numeral character (``_CHINESE_NUMERALS``: 一, 七, 十, 千,
    两, 几 ...; next to a dose it changes the meaning) and every word not in simplified form, i.e. one
    that the traditional-to-simplified conversion ``_to_simplified`` changes (然後, 什麽, 藉以)."""
    from spacy.lang.zh.stop_words import STOP_WORDS

    return tuple(
        sorted(
            w
            for w in STOP_WORDS
            if re.fullmatch(r"[\u4e00-\u9fff]+", w) and not _CHINESE_NUMERALS & set(w) and _to_simplified(w) == w
        )
    )


@AUGMENTERS.add
@dataclass
class StopwordInsertion(_Insertion):
    """Insert stopwords: scikit-learn's ENGLISH_STOP_WORDS, or for ``zh`` the all-Han
    entries of spaCy's Chinese list (``spacy.lang.zh.stop_words``) without numerals and
    traditional forms (see ``_chinese_stopwords``)."""

    name: ClassVar[str] = "stopword_insertion"

    @property
    def vocabulary(self) -> tuple[str, ...]:
        return _chinese_stopwords() if self.language == "zh" else _ENGLISH_STOPWORDS


@AUGMENTERS.add
@dataclass
class PunctuationInsertion(_Insertion):
    """AEDA: insert marks from ``. ; ? : ! ,`` (Karimi et al. 2021); for ``zh`` the
    full-width marks ``，。！？；：``."""

    name: ClassVar[str] = "punctuation_insertion"

    @property
    def vocabulary(self) -> tuple[str, ...]:
        return _CHINESE_PUNCTUATION if self.language == "zh" else _ENGLISH_PUNCTUATION


_ENGLISH_STOPWORDS = tuple(sorted(ENGLISH_STOP_WORDS))
_ENGLISH_PUNCTUATION = (".", ";", "?", ":", "!", ",")
_CHINESE_PUNCTUATION = ("，", "。", "！", "？", "；", "：")


def make_augmenter(name: str, ratio: float = 0.1, **kwargs) -> Augmenter:
    """Build an augmenter by registry name; unknown names list the choices."""
    return AUGMENTERS[name](ratio=ratio, **kwargs)
