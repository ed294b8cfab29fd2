"""The suite end to end: MiniLM's BIOSSES number against MTEB's, the embedding cache, the suite's results."""

from types import SimpleNamespace

import numpy as np
import pytest

from kit.core.models import resolve_model
from kit.evaluation.embeddings import Embedder, EmbeddingCache, model_pooler, token_batches
from kit.evaluation.sts import STSEmbeddings
from kit.evaluation.suite import evaluate
from kit.evaluation.tasks import TASKS


@pytest.fixture(scope="module")
def minilm_biosses(tmp_path_factory):
    cache = EmbeddingCache(tmp_path_factory.mktemp("cache"))
    embedder = Embedder.from_name("minilm", cache=cache)
    return cache, embedder, evaluate({"minilm": embedder}, [TASKS["biosses-all"]], resamples=500)


def test_minilm_on_all_biosses_pairs_is_within_0_01_of_mtebs_0_8164(minilm_biosses, biosses):
    _, embedder, result = minilm_biosses
    estimate = result.tasks[0].estimates["minilm"]["spearman"]
    assert abs(estimate.value - 0.8164) < 0.01
    assert estimate.items == 100 and estimate.low < estimate.value < estimate.high
    # the same number as the studies' STS evaluator (kit.evaluation.sts.STSEmbeddings) computes from the same vectors
    cached = SimpleNamespace(encode=lambda texts, **_: embedder(texts))
    reference = STSEmbeddings.compute(cached, biosses).spearman("all")
    assert estimate.value == pytest.approx(reference, abs=1e-6)
    assert embedder.about["pooler"] == "mean" and model_pooler(resolve_model("minilm")) == "mean"


def test_a_second_scoring_reads_the_cache_and_never_loads_the_model(minilm_biosses):
    cache, first, result = minilm_biosses
    again = Embedder.from_name("minilm", cache=cache)
    rerun = evaluate({"minilm": again}, [TASKS["biosses-all"]], resamples=500)
    assert again.encoded == 0 and again.cached == first.encoded > 0 and again.model is None
    assert rerun.tasks[0].estimates == result.tasks[0].estimates


def test_the_cache_is_keyed_by_model_and_texts_and_a_damaged_file_is_recomputed(tmp_path, capsys):
    cache = EmbeddingCache(tmp_path)
    tiny = Embedder.from_name("tiny-random-bert", cache=cache)
    texts = ["IL-6 rose.", "Kras G12D-induced lung cancer"]
    emb = tiny(texts)
    assert tiny.encoded == 2 and cache.path(tiny.key, texts).is_file()
    assert cache.path(tiny.key, texts) != cache.path(tiny.key, texts[::-1])
    other = Embedder.from_name("tiny-random-bert", pooler="cls_before_pooler", cache=cache)
    assert other.key != tiny.key
    cache.path(tiny.key, texts).write_bytes(b"not an array")
    again = Embedder.from_name("tiny-random-bert", cache=cache)
    np.testing.assert_allclose(again(texts), emb, atol=1e-6)
    assert again.encoded == 2 and "unreadable" in capsys.readouterr().err
    assert len(list(cache.path(tiny.key, texts).parent.glob("*.damaged-*"))) == 1


def embedder(texts_of, seed: int):
    """A fixed model: a random 8-d vector per text."""
    rng = np.random.default_rng(seed)
    vectors = {t: rng.normal(size=8) for t in texts_of}
    return lambda texts: np.stack([vectors[t] for t in texts])


def test_the_suite_compares_every_model_with_the_first(tmp_path):
    task = TASKS["rqe-test"]
    texts = task.texts()[0]
    a, other = embedder(texts, 0), embedder(texts, 1)
    lines = []
    result = evaluate({"a": a, "b": a, "c": [a, other]}, [task], resamples=200, progress=lines.append)
    r = result.tasks[0]
    assert set(r.estimates) == {"a", "b", "c"} and set(r.comparisons) == {("b", "a"), ("c", "a")}
    assert r.comparisons[("b", "a")]["ap"].identical and r.estimates["c"]["ap"].seeds == 2
    assert r.comparisons[("c", "a")]["ap"].variance.runs  # a model given as two seeds carries their spread
    assert ("b", "a") not in r.adjusted and r.adjusted[("c", "a")].size == 1  # identical outputs are not tested
    assert [line.split(":")[0] for line in lines] == [
        "a · rqe-test",
        "b · rqe-test",
        "c · rqe-test",
        "intervals · rqe-test",
    ]
    rows = result.rows()
    assert [row["model"] for row in rows] == ["a", "b", "c"] and rows[1]["vs"] == "a" and rows[0]["vs"] == ""
    assert "not tested" in rows[1]["difference"]
    [b] = [c for c in result.to_dict()["tasks"]["rqe-test"]["comparisons"] if c["model"] == "b"]
    assert b["ap"]["difference"] == 0.0 and b["family"] is None and b["ap"]["resamples"] == 200


def test_every_comparison_draws_the_resamples_and_a_task_within_another_stays_out_of_the_family():
    """BIOSSES test lies within all pairs: its comparison is reported, not a member; the family is the main-metric
    comparisons on biosses-all and rqe-test."""
    tasks = [TASKS["biosses-all"], TASKS["biosses-test"], TASKS["rqe-test"]]
    texts = [t for task in tasks for side in task.texts() for t in side]
    result = evaluate({"a": embedder(texts, 2), "b": embedder(texts, 3)}, tasks, resamples=100)
    within = {r.task.name: r.within for r in result.tasks}
    assert within == {"biosses-all": None, "biosses-test": "biosses-all", "rqe-test": None}
    for r in result.tasks:
        assert {c.resamples for c in r.comparisons[("b", "a")].values()} == {100}
        assert {a.size for a in r.adjusted.values()} == (set() if r.within else {2})
    assert [row["family interval"] for row in result.rows() if row["task"] == "biosses-test" and row["vs"]] == [
        "within biosses-all"
    ]


def test_pairs_asked_for_are_compared_besides_the_first_model_and_bad_pairs_are_refused():
    task = TASKS["biosses-test"]
    texts = task.texts()[0]
    models = {name: embedder(texts, k) for k, name in enumerate("abc")}
    result = evaluate(models, [task], resamples=100, pairs=[("c", "b")])
    assert list(result.tasks[0].comparisons) == [("b", "a"), ("c", "a"), ("c", "b")]
    assert {a.size for a in result.tasks[0].adjusted.values()} == {3}
    with pytest.raises(ValueError, match="d is not one of the models"):
        evaluate(models, [task], resamples=100, pairs=[("d", "a")])
    with pytest.raises(ValueError, match="the same model"):
        evaluate(models, [task], resamples=100, pairs=[("b", "b")])


def test_token_batches_keep_the_budget_and_every_text_once():
    lengths = np.array([5, 40, 12, 12, 3, 100, 7, 300])
    batches = token_batches(lengths, budget=64)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    assert all(len(b) == 1 or len(b) * lengths[b].max() <= 64 for b in batches)
    assert [lengths[b].max() for b in batches] == sorted((lengths[b].max() for b in batches), reverse=True)
    assert [len(b) for b in batches] == [1, 1, 1, 5]  # 300 and 100 alone (over budget), 40 alone, 12 12 7 5 3


def test_batches_by_tokens_give_the_vectors_of_fixed_batches():
    texts = ["IL-6", "a much longer sentence about Kras G12D-induced lung cancer in mice", "p < 0.05", "short"] * 5
    by_tokens = Embedder.from_name("tiny-random-bert", use_cache=False, batch_tokens=40)
    fixed = Embedder.from_name("tiny-random-bert", use_cache=False, batch_tokens=0)
    np.testing.assert_allclose(by_tokens(texts), fixed(texts), atol=1e-5)


@pytest.mark.parametrize(
    "pooler, declared", [("mean", "mean"), ("cls_before_pooler", "cls_before_pooler"), ("cls", None)]
)
def test_a_sentence_transformers_folder_is_scored_with_its_own_vectors(tmp_path, pooler, declared):
    """A folder the kit saved (Encoder.save: Transformer, Pooling and, for ``cls``, a Dense head) gives the
    vectors of the encoder that wrote it: its pooling is read from the folder, and a head that Encoder cannot
    load sends it to sentence-transformers itself."""
    from kit.core.models import Encoder

    texts = ["IL-6 rose.", "Kras G12D-induced lung cancer", "p < 0.05"]
    encoder = Encoder.from_pretrained("tiny-random-bert", pooler, seed=3)
    folder = str(encoder.save(tmp_path / "model"))
    assert model_pooler(resolve_model(str(folder))) == declared
    embedder = Embedder.from_name(folder, cache=EmbeddingCache(tmp_path / "cache"))
    np.testing.assert_allclose(embedder(texts), encoder.encode(texts), atol=1e-5)


def test_a_sentence_transformers_folder_stored_in_fp16_is_scored_in_fp32(fp16_bert):
    """The suite's scores name fp32 precision; a folder loaded as stored would be scored in fp16."""
    import torch

    from kit.evaluation.embeddings import _SentenceTransformer

    assert {p.dtype for p in _SentenceTransformer(str(fp16_bert), "cpu").model.parameters()} == {torch.float32}
