from kit.core.augment import n_edits, tokenize
from kit.studies.explore_augmentations.widgets import explorer, views_html

SENT = "IL-6 rose sharply in Kras G12D mice after treatment"


def test_views_highlight_edits_and_are_seeded():
    page = views_html(SENT, "deletion", 0.3, 0, 3)
    views = page.split("<ol>")[1]  # after the legend
    assert views.count("<del") == 3 * n_edits(len(tokenize(SENT)), 0.3)  # in each of three views
    assert "Kras G12D" in page and page == views_html(SENT, "deletion", 0.3, 0, 3)
    assert "<ins" in views_html("a b c d e f", "punctuation_insertion", 0.2, 1, 1)


def test_explorer_updates_when_a_control_changes():
    box = explorer({"en": ["first sentence here", "second one"], "zh": ["乳腺癌中期有什么症状"]}, seed=0)
    out = box.children[-1]
    before = out.value
    language, augmenter = box.children[0].children
    augmenter.value = "swap"
    assert out.value != before and "swap" in out.value
    text = box.children[2].children[0]
    text.value = "something typed"
    assert "typed" in out.value
    box.children[3].click()  # the sample button draws a pool sentence
    assert text.value in ("first sentence here", "second one") and "units: " in out.value
    language.value = "zh"
    assert text.value == "乳腺癌中期有什么症状" and "(zh)" in out.value and "units: 乳 | 腺 | 癌" in out.value


def test_empty_sentence_renders():
    assert "(empty)" in views_html("", "crop", 0.1, 0, 1)


def test_switching_language_redraws_even_when_the_sentence_is_unchanged():
    box = explorer({"en": ["same text here"], "zh": ["same text here"]}, seed=0)
    language, out = box.children[0].children[0], box.children[-1]
    assert "(zh)" not in out.value
    language.value = "zh"
    assert "(zh)" in out.value
