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
