from collections import Counter

import numpy as np
import pytest

from kit.augment import (
    AUGMENTERS, DELETE, INSERT, KEEP, MOVE, PunctuationInsertion, RandomCrop, RandomSwap, StopwordInsertion,
    WordDeletion, make_augmenter, render, tokenize,
)

SENT = "IL-6 and TNF-α rose (p < 0.05) in Kras G12D mice given 10 mg/kg ABT-737 while 5 hmC fell by 30 %."
ODD = ["", " ", "\t\n", "word", "two words", "其他中文文本没有空格", "Ω ≥ 3", "a" * 500, "  spaced   out  "]


@pytest.mark.parametrize(
    "unit", ["IL-6", "TNF-α", "(p < 0.05)", "Kras G12D", "10 mg/kg", "ABT-737", "5 hmC"]
)
def test_biomedical_units_stay_whole(unit):
    assert unit in tokenize(SENT)


def test_tokenize_does_not_glue_ordinary_words():
    assert tokenize("5 of the 10 patients") == ["5", "of", "the", "10", "patients"]


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
@pytest.mark.parametrize("text", ODD + [SENT])
def test_any_string_returns_a_string(name, text):
    out = make_augmenter(name, 0.3)(text, np.random.default_rng(0))
    assert isinstance(out, str)


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
def test_no_exception_on_the_whole_corpus_and_units_survive(name, pubmed):
    aug, rng = make_augmenter(name, 0.2), np.random.default_rng(1)
    for text in pubmed:
        out = aug.edits(text, rng)
        kept = [t for t, op in out if op in (KEEP, MOVE)]
        assert set(kept) <= set(tokenize(text))  # only whole units survive; none is split


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
def test_same_seed_same_views_and_edits_render_to_the_output(name, pubmed):
    aug = make_augmenter(name, 0.2)
    a = [aug(t, np.random.default_rng(7)) for t in pubmed[:200]]
    b = [aug(t, np.random.default_rng(7)) for t in pubmed[:200]]
    c = [render(aug.edits(t, np.random.default_rng(7))) for t in pubmed[:200]]
    d = [aug(t, np.random.default_rng(8)) for t in pubmed[:200]]
    assert a == b == c
    assert a != d


def test_augmenters_leave_the_global_rng_alone(pubmed):
    np.random.seed(3)
    expected = np.random.random()
    np.random.seed(3)
    for name in AUGMENTERS:
        make_augmenter(name)(pubmed[0], np.random.default_rng(0))
    assert np.random.random() == expected


def test_swap_keeps_the_multiset():
    rng = np.random.default_rng(0)
    for _ in range(50):
        out = RandomSwap(0.3).edits(SENT, rng)
        assert Counter(t for t, _ in out) == Counter(tokenize(SENT))
        assert any(op == MOVE for _, op in out)


def test_deletion_removes_round_ratio_n_and_keeps_order():
    units = tokenize(SENT)
    out = WordDeletion(0.2).edits(SENT, np.random.default_rng(0))
    assert [t for t, _ in out] == units
    assert sum(op == DELETE for _, op in out) == round(0.2 * len(units))


def test_crop_removes_one_contiguous_span_or_puts_a_placeholder():
    units = tokenize(SENT)
    for ph in (None, "[MASK]"):
        out = RandomCrop(0.3, placeholder=ph).edits(SENT, np.random.default_rng(1))
        ops = "".join("d" if op == DELETE else "i" if op == INSERT else "k" for _, op in out)
        assert ops.count("d") == round(0.3 * len(units))
        assert "d" * ops.count("d") in ops  # contiguous
        assert ops.count("i") == (ph is not None)


@pytest.mark.parametrize("cls", [StopwordInsertion, PunctuationInsertion])
def test_insertion_only_adds_vocabulary(cls):
    out = cls(0.3).edits(SENT, np.random.default_rng(2))
    assert [t for t, op in out if op == KEEP] == tokenize(SENT)
    inserted = [t for t, op in out if op == INSERT]
    assert len(inserted) == round(0.3 * len(tokenize(SENT))) and set(inserted) <= set(cls.vocabulary)


def test_bad_ratio_and_name_are_clear():
    with pytest.raises(ValueError, match="ratio must be in"):
        WordDeletion(1.5)
    with pytest.raises(KeyError, match="choose one of"):
        make_augmenter("synonym")
