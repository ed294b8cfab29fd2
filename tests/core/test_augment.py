from collections import Counter

import numpy as np
import pytest

from kit.core.augment import (
    AUGMENTERS,
    DELETE,
    INSERT,
    KEEP,
    MOVE,
    PunctuationInsertion,
    RandomCrop,
    RandomSwap,
    StopwordInsertion,
    WordDeletion,
    make_augmenter,
    render,
    tokenize,
)

SENT = "IL-6 and TNF-α rose (p < 0.05) in Kras G12D mice given 10 mg/kg ABT-737 while 5 hmC fell by 30 %."
ZH = "HPV DNA阳性，IL-6水平升高3.5倍。"
ODD = ["", " ", "\t\n", "word", "two words", "其他中文文本没有空格", "Ω ≥ 3", "a" * 500, "  spaced   out  "]


@pytest.mark.parametrize("unit", ["IL-6", "TNF-α", "(p < 0.05)", "Kras G12D", "10 mg/kg", "ABT-737", "5 hmC"])
def test_biomedical_units_stay_whole(unit):
    assert unit in tokenize(SENT)


def test_whitespace_fast_path_agrees_with_the_full_tokenizer(pubmed):
    from kit.core.augment import _UNIT_RE

    for text in pubmed[::7] + ODD + [SENT, "a - b", "x\t-\ty", "α ≥ β", "10 ± 2 mg"]:
        assert tokenize(text) == _UNIT_RE.findall(text), text


def test_tokenize_does_not_glue_ordinary_words():
    assert tokenize("5 of the 10 patients") == ["5", "of", "the", "10", "patients"]


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
@pytest.mark.parametrize("text", ODD + [SENT, ZH])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_any_string_returns_a_string(name, text, language):
    out = make_augmenter(name, 0.3, language=language)(text, np.random.default_rng(0))
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


def test_swap_draws_the_pairs_it_drew_before_it_became_linear():
    """Each pair is the first two steps of the partial shuffle ``_distinct`` (so cached runs stay valid)."""
    from kit.core.augment import _distinct, _two_distinct

    rng = np.random.default_rng(0)
    for n in (2, 3, 7, 100):
        for u0, u1 in rng.random((2000, 2)).tolist():
            assert _two_distinct(u0, u1, n) == tuple(_distinct([u0, u1], n, 2))


@pytest.mark.parametrize("language, text", [("en", " ".join(f"w{i}" for i in range(100_000))), ("zh", "，。" * 50_000)])
def test_swap_is_linear_in_the_length_like_deletion(language, text):
    """100k units: swap within a few times deletion's time on the same input (it was quadratic: ~100x)."""
    import time

    def best_of_3(augmenter) -> float:
        times = []
        for seed in range(3):
            t0 = time.perf_counter()
            augmenter(text, np.random.default_rng(seed))
            times.append(time.perf_counter() - t0)
        return min(times)

    ratio = best_of_3(RandomSwap(0.1, language)) / best_of_3(WordDeletion(0.1, language))
    assert ratio < 5, f"swap takes {ratio:.1f}x deletion's time on 100k units"


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
@pytest.mark.parametrize("language, text", [("en", SENT), ("zh", ZH)])
def test_insertion_only_adds_vocabulary(cls, language, text):
    aug = cls(0.3, language=language)
    out = aug.edits(text, np.random.default_rng(2))
    assert [t for t, op in out if op == KEEP] == tokenize(text, language)
    inserted = [t for t, op in out if op == INSERT]
    assert len(inserted) == round(0.3 * len(tokenize(text, language))) and set(inserted) <= set(aug.vocabulary)
    assert all(not w.isascii() for w in inserted) == (language == "zh")


def test_chinese_units_are_characters_with_latin_and_digit_runs_whole():
    assert tokenize(ZH, "zh")[:6] == ["HPV", "DNA", "阳", "性", "，", "IL-6"]
    assert "3.5" in tokenize(ZH, "zh") and "725" in tokenize("725号乙肝疫苗", "zh")


def test_chinese_render_joins_without_spaces_except_between_latin_runs():
    assert render([(u, KEEP) for u in tokenize(ZH, "zh")], "zh") == ZH


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
def test_chinese_corpus_never_raises_and_keeps_units(name):
    from kit.data import load_chineseblue

    queries = load_chineseblue("cMedQQ", "test").texts[0]
    aug, rng = make_augmenter(name, 0.2, language="zh"), np.random.default_rng(0)
    for text in queries:
        out = aug.edits(text, rng)
        assert {t for t, op in out if op in (KEEP, MOVE)} <= set(tokenize(text, "zh"))
        assert isinstance(aug(text, rng), str)


def test_unknown_language_is_an_error():
    with pytest.raises(ValueError, match="language must be one of"):
        WordDeletion(0.1, language="fr")


def test_bad_ratio_and_name_are_clear():
    with pytest.raises(ValueError, match="ratio must be in"):
        WordDeletion(1.5)
    with pytest.raises(KeyError, match="unknown augmenter .*; augmenters: "):
        make_augmenter("synonym")


# Chinese numeral characters (everyday, financial and traditional forms), written out here independently of
# kit.core.augment, and the simplified forms of the traditional stopwords in spaCy's zh list.
NUMERALS = set("〇零一二三四五六七八九十百千万亿两几半壹贰叁肆伍陆柒捌玖拾佰仟萬億兩")


def spacy_han_stopwords() -> set[str]:
    import re

    from spacy.lang.zh.stop_words import STOP_WORDS

    return {w for w in STOP_WORDS if re.fullmatch(r"[\u4e00-\u9fff]+", w)}


def test_chinese_stopwords_hold_no_numeral_and_no_traditional_form():
    vocab = StopwordInsertion(0.3, language="zh").vocabulary
    assert not [w for w in vocab if NUMERALS & set(w)]
    assert not {"然後", "之後", "以後", "最後", "什麽", "怎麽", "那麽", "藉以"} & set(vocab)
    assert len(vocab) > 100 and {"的", "了", "然后", "什么", "因为"} <= set(vocab)
    # nothing else is dropped: every word of spaCy's list that holds no numeral and is simplified stays
    dropped = spacy_han_stopwords() - set(vocab)
    assert {w for w in dropped if not NUMERALS & set(w)} == {
        "为什麽", "之後", "什麽", "今後", "以後", "先後", "後来", "後面", "怎麽", "最後", "然後", "藉以", "这麽", "那麽"
    }  # fmt: skip


def test_no_inserted_chinese_stopword_is_a_numeral():
    aug, rng = StopwordInsertion(0.5, language="zh"), np.random.default_rng(0)
    inserted = [t for _ in range(300) for t, op in aug.edits("每次服用3.5毫克，每日两次", rng) if op == INSERT]
    assert len(inserted) > 1000 and not [w for w in inserted if NUMERALS & set(w)]


def test_chinese_stopwords_are_simplified_as_opencc_converts_them():
    """OpenCC (a dev dependency, not one of the kit's), its traditional-to-simplified conversion
    leaves every inserted word unchanged and changes exactly the words the kit's table does."""
    import opencc  # a dev dependency: the cross-check always runs

    from kit.core.augment import _to_simplified

    t2s = opencc.OpenCC("t2s").convert
    assert [w for w in StopwordInsertion(0.1, language="zh").vocabulary if t2s(w) != w] == []
    assert {w: t2s(w) for w in spacy_han_stopwords() if t2s(w) != w} == {
        w: _to_simplified(w) for w in spacy_han_stopwords() if _to_simplified(w) != w
    }
