import re

import numpy as np
import pytest

from kit.core.augment import AUGMENTERS, make_augmenter, n_edits, tokenize
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


def model_text(view_html: str) -> str:
    """What a view says the model sees: the view with its struck-through (deleted) units removed, tags stripped."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<del\b[^>]*>.*?</del>", "", view_html, flags=re.S)))


ZH_SENT = "HPV DNA阳性的患者IL-6水平升高3.5倍（p < 0.05），需要复查吗？"
EN_SENT = "IL-6 levels rose (p < 0.05) in Kras G12D mice treated with 10 mg/kg ABT-737, while 5 hmC fell."


@pytest.mark.parametrize("name", sorted(AUGMENTERS))
@pytest.mark.parametrize("language, text", [("en", EN_SENT), ("zh", ZH_SENT), ("zh", "HPV DNA"), ("en", "a b")])
@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.5])
def test_each_view_shows_exactly_what_the_augmenter_returns(name, language, text, ratio):
    """The explorer shows what the model sees: each view, without its deleted units, is the augmenter's output
    string for the same Generator state (Chinese views keep the space in "HPV DNA" as the augmenter does)."""
    page = views_html(text, name, ratio, 5, 6, language)
    shown = [model_text(v) for v in re.findall(r"<li[^>]*>(.*?)</li>", page.split("<ol>")[1], flags=re.S)]
    aug, rng = make_augmenter(name, ratio, language=language), np.random.default_rng(5)
    assert shown == [aug(text, rng) for _ in range(6)]


def test_chinese_views_keep_the_space_between_latin_runs():
    view = views_html("HPV DNA阳性的患者", "deletion", 0.1, 0, 1, "zh").split("<ol>")[1]  # deletes 的
    assert model_text(view) == "HPV DNA阳性患者"


def test_deleted_units_are_still_shown_struck_through():
    page = views_html("a b c d e f g h i j", "deletion", 0.3, 0, 1)
    view = page.split("<ol>")[1]
    assert view.count("<del") == 3 and re.sub(r"<[^>]+>", "", view).split() == list("abcdefghij")


def test_the_ratio_parameter_sets_the_slider_and_the_views():
    box = explorer({"en": [SENT]}, seed=0, ratio=0.3)
    slider, out = box.children[1].children[0], box.children[-1]
    assert slider.description == "ratio" and slider.value == 0.3 and "30%" in out.value
    high = explorer({"en": [SENT]}, ratio=0.7).children[1].children[0]
    assert high.value == 0.7  # not clamped to the slider's usual range


def test_the_sample_button_is_wide_enough_for_its_label():
    sample = explorer({"en": [SENT]}).children[3]
    assert sample.description == "sample a sentence" and sample.layout.width == "auto"


def test_the_seed_box_refuses_a_negative_seed_instead_of_failing_silently():
    """numpy refuses a negative seed; a plain number box let one through and the views stopped updating."""
    seed_box = explorer({"en": [SENT]}).children[1].children[1]
    seed_box.value = -1
    assert seed_box.value == 0
