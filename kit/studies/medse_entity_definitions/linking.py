"""Entity linking for MED-SE: longest match over an ontology's names and synonyms, mention spans mapped
to subword tokens, and the statistics of a linked corpus (the paper's Tables 1-2).

Any object with ``link(text) -> list[Mention]`` (a ``Linker``: a MedCAT or scispaCy wrapper, say) can
stand in for ``DictionaryLinker``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from kit.core.progress import bar
from kit.data import EntityEntry

WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Mention:
    """An entity mention: character span [start, end) of the sentence, the entity id and the text."""

    start: int
    end: int
    entity: str
    text: str


class Linker(Protocol):
    def link(self, text: str) -> list[Mention]: ...


def _is_abbreviation(name: str) -> bool:
    return len(name) <= 6 and sum(c.isupper() for c in name) >= 2


class DictionaryLinker:
    """Longest match over the names and synonyms of ``entries`` on the sentence's word tokens
    (``\\w+``, so hyphens and apostrophes are boundaries and "ataxia-telangiectasia" matches
    "ataxia - telangiectasia"). Case-insensitive, except abbreviations (at most 6 characters with
    two or more capitals, e.g. "ALL", "DES"), which must match in case; other names that are
    English stop words are skipped. Non-overlapping mentions, left to right."""

    def __init__(self, entries: list[EntityEntry]):
        from spacy.lang.en.stop_words import STOP_WORDS

        self.names: dict[tuple[str, ...], str] = {}
        for e in entries:
            for name in (e.name, *e.synonyms):
                words, abbreviation = tuple(m.group() for m in WORD.finditer(name)), _is_abbreviation(name)
                if not words or (not abbreviation and len(words) == 1 and words[0].lower() in STOP_WORDS):
                    continue
                key = words if abbreviation else tuple(w.lower() for w in words)
                self.names.setdefault(key, e.id)
        # every leading part of every key: a match is extended only while the words read so far begin a name
        self.prefixes = {key[:n] for key in self.names for n in range(1, len(key) + 1)}

    def link(self, text: str) -> list[Mention]:
        tokens = list(WORD.finditer(text))
        words = [t.group() for t in tokens]
        lower = [w.lower() for w in words]
        out, i = [], 0
        while i < len(tokens):
            longest, entity = 0, None
            for n in range(1, len(tokens) - i + 1):
                folded, exact = tuple(lower[i : i + n]), tuple(words[i : i + n])
                if folded not in self.prefixes and exact not in self.prefixes:
                    break
                found = self.names.get(folded) or self.names.get(exact)
                if found:
                    longest, entity = n, found
            if entity:
                start, end = tokens[i].start(), tokens[i + longest - 1].end()
                out.append(Mention(start, end, entity, text[start:end]))
            i += longest or 1
        return out


def link_corpus(sentences: list[str], linker: Linker) -> list[list[Mention]]:
    return [linker.link(s) for s in bar(sentences, desc="link entities", show=len(sentences) > 2000)]


def corpus_statistics(mentions: list[list[Mention]]) -> dict[str, float]:
    """The paper's Tables 1-2 for a linked corpus: sentences with and without entities, mentions,
    unique entities, the share of mentions taken by the top 10% most frequent entities, and
    entities per sentence (over sentences with at least one)."""
    counts = Counter(m.entity for ms in mentions for m in ms)
    total = sum(counts.values())
    top = sorted(counts.values(), reverse=True)[: max(1, math.ceil(len(counts) / 10))] if counts else []
    with_entity = sum(bool(ms) for ms in mentions)
    return {
        "sentences": len(mentions),
        "with entities": with_entity,
        "without entities": len(mentions) - with_entity,
        "mentions": total,
        "unique entities": len(counts),
        "top-10% entities' share of mentions": sum(top) / total if total else float("nan"),
        "entities per sentence (with any)": total / with_entity if with_entity else float("nan"),
    }


def token_span(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """[first, last + 1) of the (sub)word tokens whose characters lie in [start, end), from a fast
    tokenizer's ``offset_mapping``; None when truncation removed the span. Special tokens (0, 0) never count."""
    inside = [i for i, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
    return (inside[0], inside[-1] + 1) if inside else None
