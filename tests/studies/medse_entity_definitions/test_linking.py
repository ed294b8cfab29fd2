"""MED-SE's entity linking: longest match, synonyms, abbreviations, token spans, corpus statistics."""

import pytest

from kit.core.models import Encoder
from kit.studies.medse_entity_definitions.linking import DictionaryLinker, Mention, corpus_statistics, token_span


@pytest.fixture(scope="module")
def linker(entries):
    return DictionaryLinker(entries)


@pytest.fixture(scope="module")
def minilm():
    return Encoder.from_pretrained("minilm")


def test_linker_prefers_the_longest_name_and_finds_synonyms(linker):
    text = "Mammary carcinoma and Breast Cancer differ from ALL, but all cancer is treatable."
    found = [(m.text, m.entity) for m in linker.link(text)]
    # longest match: "Breast Cancer" is D:1, not D:2; "ALL" matches only in capitals; the stop word "is" is skipped
    assert found == [("Mammary carcinoma", "D:1"), ("Breast Cancer", "D:1"), ("ALL", "D:3"), ("cancer", "D:2")]
    assert all(text[m.start : m.end] == m.text for m in linker.link(text))
    assert linker.link("no disease named here") == []


def test_linker_spans_cross_hyphens_and_map_to_subword_tokens(linker, minilm):
    text = "Cutaneous hemangiosarcoma - a breast - cancer mimic."
    ms = linker.link(text)
    assert [(m.text, m.entity) for m in ms] == [("hemangiosarcoma", "D:4"), ("breast - cancer", "D:1")]
    enc = minilm.tokenizer(text, return_offsets_mapping=True)
    pieces = minilm.tokenizer.convert_ids_to_tokens(enc["input_ids"])
    first, last = token_span(enc["offset_mapping"], ms[0].start, ms[0].end)
    assert last - first > 1  # a word the vocabulary splits into subwords
    assert "".join(p.removeprefix("##") for p in pieces[first:last]) == "hemangiosarcoma"
    first, last = token_span(enc["offset_mapping"], ms[1].start, ms[1].end)
    assert pieces[first:last] == ["breast", "-", "cancer"]
    truncated = minilm.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=3)
    assert token_span(truncated["offset_mapping"], ms[1].start, ms[1].end) is None


def test_corpus_statistics_count_like_tables_1_and_2():
    m = [[Mention(0, 1, "a", "x"), Mention(2, 3, "b", "y")], [], [Mention(0, 1, "a", "x")], []]
    stats = corpus_statistics(m)
    assert stats["with entities"] == 2 and stats["without entities"] == 2 and stats["unique entities"] == 2
    assert stats["entities per sentence (with any)"] == 1.5
    assert stats["top-10% entities' share of mentions"] == pytest.approx(2 / 3)  # ceil(10% of 2) = 1 entity: "a"


def test_the_prefix_search_finds_what_trying_every_length_longest_first_finds_on_real_sentences(pubmed):
    """The linker extends a match only while the words begin some name; the definition it must equal tries every
    length from the longest name down, at every word (about 10x slower on the corpus)."""
    import re

    from kit.data import load_disease_ontology

    linker = DictionaryLinker(load_disease_ontology())
    longest = max(len(key) for key in linker.names)

    def by_definition(text):
        tokens = list(re.finditer(r"\w+", text))
        words = [t.group() for t in tokens]
        out, i = [], 0
        while i < len(tokens):
            for n in range(min(longest, len(tokens) - i), 0, -1):
                entity = linker.names.get(tuple(w.lower() for w in words[i : i + n])) or linker.names.get(
                    tuple(words[i : i + n])
                )
                if entity:
                    out.append(
                        Mention(
                            tokens[i].start(),
                            tokens[i + n - 1].end(),
                            entity,
                            text[tokens[i].start() : tokens[i + n - 1].end()],
                        )
                    )
                    i += n
                    break
            else:
                i += 1
        return out

    sentences = pubmed[:3000]
    found = [linker.link(s) for s in sentences]
    assert sum(map(len, found)) > 300  # enough mentions, several of more than one word, to compare
    assert sum(m.text.count(" ") > 0 for ms in found for m in ms) > 20
    assert found == [by_definition(s) for s in sentences]
