"""QFCL's question focus and focus-driven hard negatives."""

import numpy as np
import pytest

from kit.studies.qfcl_summarization.focus import (
    Chunk,
    focus_accuracy,
    hard_negatives,
    noun_chunks,
    np_dictionary,
    question_focus,
    spacy_pipeline,
)


@pytest.fixture(scope="module")
def nlp():
    return spacy_pipeline()


def test_focus_is_the_noun_phrases_shared_by_question_and_summary(nlp):
    chq = "My mother has diabetes and her doctor changed the insulin dose. What are the Side Effects of metformin?"
    faq = "What are the side effects of metformin for her age?"
    chq_chunks, faq_chunks = noun_chunks([chq, faq], nlp)
    focus = [c.text.lower() for c in question_focus(chq_chunks, faq_chunks)]
    assert focus == ["side effects", "metformin"]  # case-insensitive; "age" is not in the question
    assert "mother" in [c.text for c in chq_chunks]  # the possessive pronoun is dropped from the chunk
    for c in faq_chunks:
        assert faq[c.start : c.end] == c.text  # character spans point into the sentence


def test_hard_negative_differs_from_its_faq_only_in_focus_phrases():
    faq = "What are the side effects of metformin for diabetes?"
    focus = [Chunk("metformin", 29, 38, "NN"), Chunk("diabetes", 43, 51, "NN")]
    dictionary = np_dictionary(
        [
            [
                Chunk("aspirin", 0, 7, "NN"),
                Chunk("asthma", 0, 6, "NN"),
                Chunk("metformin", 0, 9, "NN"),
                Chunk("the kidneys", 0, 11, "NNS"),
            ]
        ]
    )
    negs = hard_negatives(faq, focus, dictionary, 8, np.random.default_rng(0))
    assert len(negs) == 8
    pattern = faq.replace("metformin", "{}").replace("diabetes", "{}")
    for neg in negs:
        prefix, rest = neg.split(" of ", 1)
        a, b = rest.removesuffix("?").split(" for ")
        assert neg == pattern.format(a, b) and prefix == "What are the side effects"
        assert a in ("aspirin", "asthma", "diabetes") and b in (
            "aspirin",
            "asthma",
            "metformin",
        )  # same label, never itself
        assert "the kidneys" not in neg  # another label is never used
    assert hard_negatives(faq, [], dictionary, 4, np.random.default_rng(0)) == []  # no focus, no hard negatives


def test_focus_accuracy_counts_gold_focus_phrases_found_in_summaries():
    assert focus_accuracy(
        ["Does Metformin cause pain?", "no focus here"], [["metformin"], ["cetirizine", "pharmacy"]]
    ) == pytest.approx(100 / 3)
