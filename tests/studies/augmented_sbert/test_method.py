import itertools

import numpy as np
import pytest

from kit.studies.augmented_sbert.method import (
    FitConfig,
    bi_encoder,
    compare,
    cosine_scores,
    cross_encoder,
    cross_scores,
    fit_bi_encoder,
    fit_cross_encoder,
    random_pairs,
    semantic_pairs,
    silver_labels,
    softmax_predictions,
    unordered,
    warm_up,
)


def _check_new_pairs(pairs, gold):
    keys = [unordered(a, b) for a, b in pairs]
    assert all(a != b for a, b in pairs), "self-pair"
    assert len(set(keys)) == len(keys), "duplicate pair (in some order)"
    assert not set(keys) & {unordered(a, b) for a, b in gold}, "gold pair"


@pytest.fixture
def pool():
    sentences = [f"s{i}" for i in range(12)] + ["s3", "s5"]  # repeated sentences must not yield self-pairs
    gold = [("s0", "s1"), ("s2", "s1"), ("s4", "s3")]
    return sentences, gold


def test_random_pairs_are_new_distinct_and_seeded(pool):
    sentences, gold = pool
    pairs = random_pairs(sentences, 40, gold, np.random.default_rng(0))
    assert len(pairs) == 40
    _check_new_pairs(pairs, gold)
    assert pairs == random_pairs(sentences, 40, gold, np.random.default_rng(0))
    assert pairs != random_pairs(sentences, 40, gold, np.random.default_rng(1))


def test_random_pairs_can_exhaust_the_pool_and_refuse_more(pool):
    sentences, gold = pool
    total = 12 * 11 // 2 - len(gold)
    assert len(random_pairs(sentences, total, gold, np.random.default_rng(0))) == total
    with pytest.raises(ValueError, match=f"only {total} new pairs"):
        random_pairs(sentences, total + 1, gold, np.random.default_rng(0))


def test_semantic_pairs_take_exactly_k_new_nearest_neighbours(pool):
    sentences, gold = pool
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(sentences), 8))
    emb[12], emb[13] = emb[3], emb[5]  # the repeats embed as their first occurrence
    k = 3
    pairs = semantic_pairs(sentences, emb, k, gold)
    _check_new_pairs(pairs, gold)
    by_anchor = {s: [b for a, b in pairs if a == s] for s in dict.fromkeys(sentences)}
    assert all(len(v) == k for v in by_anchor.values())
    # the first sentence's partners are its k nearest neighbours, gold partner s1 skipped
    unit = emb[:12] / np.linalg.norm(emb[:12], axis=1, keepdims=True)
    ranked = [f"s{i}" for i in np.argsort(-(unit @ unit[0])) if i != 0 and f"s{i}" != "s1"]
    assert by_anchor["s0"] == ranked[:k]


def test_semantic_pairs_search_deeper_when_near_neighbours_are_taken():
    sentences = [f"s{i}" for i in range(8)]
    emb = np.eye(8) + 0.01
    gold = [(a, b) for a, b in itertools.combinations(sentences[:6], 2)]  # s0..s5 are all gold with each other
    pairs = semantic_pairs(sentences, emb, 2, gold)
    _check_new_pairs(pairs, gold)
    assert [b for a, b in pairs if a == "s0"] and all(b in ("s6", "s7") for a, b in pairs if a == "s0")


PAIRS = [
    ("fever and cough", "cough with fever"),
    ("broken arm", "fractured arm"),
    ("insulin dose", "the weather today"),
    ("chest pain", "pain in the chest"),
    ("hair loss", "kidney stones"),
    ("low blood sugar", "hypoglycaemia"),
]
LABELS = [0.9, 1.0, 0.0, 1.0, 0.0, 0.8]
FIT = FitConfig(epochs=2, batch_size=4, lr=1e-3, seed=0, device="cpu")


def test_silver_labels_are_deterministic_scores_in_unit_interval():
    ce = cross_encoder("tiny-random-bert", seed=0, device="cpu")
    first = cross_scores(ce, PAIRS)
    assert first.shape == (6,) and ((first >= 0) & (first <= 1)).all()
    np.testing.assert_array_equal(first, cross_scores(ce, PAIRS))
    np.testing.assert_array_equal(first, cross_scores(cross_encoder("tiny-random-bert", seed=0, device="cpu"), PAIRS))
    fit_cross_encoder(ce, PAIRS, LABELS, FIT)
    assert not np.allclose(first, cross_scores(ce, PAIRS))


def test_trained_bi_encoder_reloads_in_sentence_transformers_format_to_the_same_scores(tmp_path):
    from sentence_transformers import SentenceTransformer

    st = bi_encoder("tiny-random-bert", seed=0, device="cpu")
    fit_bi_encoder(st, PAIRS, LABELS, FIT)
    st.save(str(tmp_path / "bi"))
    reloaded = SentenceTransformer(str(tmp_path / "bi"), device="cpu")
    np.testing.assert_allclose(cosine_scores(reloaded, PAIRS), cosine_scores(st, PAIRS), atol=1e-6)


def test_classification_cross_encoder_gives_class_probabilities_and_argmax_silver_labels():
    ce = cross_encoder("tiny-random-bert", seed=0, device="cpu", num_labels=3)
    fit_cross_encoder(ce, PAIRS, np.array([0, 1, 2, 0, 2, 1]), FIT)
    probs = cross_scores(ce, PAIRS)
    assert probs.shape == (6, 3)
    np.testing.assert_allclose(probs.sum(1), 1, atol=1e-5)
    np.testing.assert_array_equal(silver_labels(probs), probs.argmax(1))
    np.testing.assert_array_equal(silver_labels(probs[:, 0]), probs[:, 0])  # one output: the score is the label


def test_nli_bi_encoder_learns_its_softmax_classifier_from_independent_embeddings():
    labels = np.array([1, 1, 0, 1, 0, 1])
    st = bi_encoder("tiny-random-bert", seed=0, device="cpu")
    loss = fit_bi_encoder(st, PAIRS, labels, FitConfig(epochs=30, batch_size=6, lr=3e-3, device="cpu"), num_labels=2)
    assert loss.classifier.out_features == 2
    assert (softmax_predictions(st, loss, PAIRS) == labels).mean() == 1.0  # it can fit six training pairs


def _compare(num_labels=None, labels=LABELS, save_to=None, held_out=()):
    pool = list(dict.fromkeys(s for p in PAIRS for s in p))
    calls = []

    def evaluate(predict):
        calls.append(predict(PAIRS[:2]))
        return float(len(calls))

    result = compare(
        "tiny-random-bert",
        PAIRS,
        np.asarray(labels),
        pool,
        2,
        evaluate,
        FIT,
        num_labels=num_labels,
        save_to=save_to,
        held_out=list(held_out),
    )
    return result, pool, calls


def test_compare_trains_three_bi_encoders_on_equal_silver_budgets(tmp_path):
    result, pool, calls = _compare(save_to=tmp_path)
    assert list(result.scores) == ["gold", "gold + random silver", "gold + semantic silver", "cross-encoder"]
    assert result.scores["gold"] == 1 and result.scores["cross-encoder"] == 2  # each model scored once, in order
    (random_set, random_labels), (semantic_set, semantic_labels) = result.silver["random"], result.silver["semantic"]
    assert len(semantic_set) == 2 * len(pool) == len(random_set) == len(random_labels) == len(semantic_labels)
    _check_new_pairs(random_set, PAIRS)
    _check_new_pairs(semantic_set, PAIRS)
    assert sorted(d.name for d in tmp_path.iterdir()) == ["gold", "gold+random_silver", "gold+semantic_silver"]


def test_no_silver_set_holds_a_pair_the_split_holds_out():
    """A test pair whose two sentences are both in training pairs can be drawn from the pool: it must not be."""
    drawn, _, _ = _compare()
    held_out = [(b, a) for a, b in drawn.silver["semantic"][0][:10]] + list(drawn.silver["random"][0][:5])
    result, pool, _ = _compare(held_out=held_out)
    for pairs, _labels in result.silver.values():
        assert len(pairs) == 2 * len(pool)
        _check_new_pairs(pairs, PAIRS + held_out)


def test_the_teacher_starts_from_cross_model_and_the_students_from_model(fp16_bert):
    starts = {}
    pool = list(dict.fromkeys(s for p in PAIRS for s in p))
    compare(
        "tiny-random-bert",
        PAIRS,
        np.asarray(LABELS),
        pool,
        1,
        lambda predict: 0.0,
        FIT,
        each_bi_encoder=lambda condition, st: starts.setdefault(condition, st[0].auto_model.config._name_or_path),
        each_cross_encoder=lambda ce: starts.setdefault("teacher", ce.model.config._name_or_path),
        cross_model=str(fp16_bert),
    )
    assert starts.pop("teacher") == str(fp16_bert)
    assert len(starts) == 3 and str(fp16_bert) not in starts.values()


def test_compare_for_nli_labels_silver_pairs_with_classes():
    result, _, calls = _compare(num_labels=3, labels=[0, 1, 2, 0, 2, 1])
    assert all(c.dtype.kind in "iu" and set(c) <= {0, 1, 2} for c in calls)  # predictions are classes
    assert result.silver["random"][1].shape[1] == 3  # silver sets keep the class probabilities


def test_cross_and_bi_encoders_fine_tune_an_fp16_checkpoint_in_fp32(fp16_bert):
    """The kit's pretrained mini-BERTs are stored in fp16; trained in their stored dtype on the CPU the
    cross-encoder's scores went to NaN (params/augmented_sbert/control_small.yaml, every seed)."""
    import torch

    ce = cross_encoder(str(fp16_bert), seed=0, device="cpu")
    st = bi_encoder(str(fp16_bert), seed=0, device="cpu")
    assert {p.dtype for p in ce.model.parameters()} == {torch.float32}
    assert {p.dtype for p in st.parameters()} == {torch.float32}
    fit_cross_encoder(ce, PAIRS, LABELS, FIT)
    assert np.isfinite(cross_scores(ce, PAIRS)).all()


def test_a_labeller_that_scores_nan_fails_the_comparison(monkeypatch):
    """A diverged cross-encoder must stop its training, not hand NaN silver labels to two bi-encoders."""
    import kit.studies.augmented_sbert.method as method

    monkeypatch.setattr(method, "cross_scores", lambda ce, pairs: np.full(len(pairs), np.nan))
    with pytest.raises(FloatingPointError, match="diverged"):
        _compare()


def test_a_warmed_up_teacher_starts_from_its_warm_up_and_learns_its_gold_pairs_after(tmp_path, monkeypatch):
    import kit.studies.augmented_sbert.method as method

    warm = [("a cough that will not go away", "how long does a cough last"), ("rash on arms", "is a rash contagious")]
    warm_up("tiny-random-bert", warm, np.array([1.0, 0.0]), FIT, tmp_path)
    fitted, real_fit = [], method.fit_cross_encoder

    def recording_fit(ce, pairs, labels, cfg):
        fitted.append(cross_scores(ce, warm))  # the teacher's scores as its gold training begins
        return real_fit(ce, pairs, labels, cfg)

    monkeypatch.setattr(method, "fit_cross_encoder", recording_fit)
    plain, _, _ = _compare()
    pool = list(dict.fromkeys(s for p in PAIRS for s in p))
    warmed = compare(
        "tiny-random-bert", PAIRS, np.asarray(LABELS), pool, 2, lambda predict: 0.0, FIT, cross_start=str(tmp_path)
    )
    saved = cross_encoder(str(tmp_path), seed=0, device="cpu")
    assert np.allclose(fitted[1], cross_scores(saved, warm))  # the second teacher began as the warmed-up one
    assert not np.allclose(fitted[0], fitted[1])  # and not as the model itself
    assert not np.allclose(plain.silver["random"][1], warmed.silver["random"][1])
    with pytest.raises(ValueError, match="STS benchmarks"):
        compare(
            "tiny-random-bert",
            PAIRS,
            np.array([0, 1, 2, 0, 2, 1]),
            [],
            1,
            None,
            FIT,
            num_labels=3,
            cross_start=str(tmp_path),
        )
