"""``SharedPoolings``: one forward pass for every training-free pooling, the same vectors as separate encoders."""

import numpy as np
import pytest

from kit.core.models import POOLERS, Encoder
from kit.core.shared_poolings import SharedPoolings
from kit.core.whitening import Whitened, fit_whitening

TEXTS = [
    "the cell line was treated with cisplatin",
    "mutations in brca1 raise the risk of breast cancer",
    "no",
    "patients received two doses of the vaccine, three weeks apart, and were followed for a year",
    "ki-67 staining",
] * 7


@pytest.mark.parametrize("model", ["tiny-random-bert", "pubmed-bert-mini"])
def test_every_view_equals_its_own_encoder_bit_for_bit(model):
    shared = SharedPoolings(Encoder.from_pretrained(model, "cls_before_pooler", seed=2), POOLERS)
    for pooler in POOLERS:
        alone = Encoder.from_pretrained(model, pooler, seed=2)
        for kwargs in ({}, {"batch_size": 4, "max_length": 8}, {"normalize": True}):
            np.testing.assert_array_equal(shared.view(pooler).encode(TEXTS, **kwargs), alone.encode(TEXTS, **kwargs))


def test_a_whitened_view_equals_a_whitened_encoder():
    shared = SharedPoolings(Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler"), ["mean"])
    alone = Encoder.from_pretrained("tiny-random-bert", "mean")
    corpus = [f"{t} {i}" for i, t in enumerate(TEXTS * 4)]
    views = [Whitened(e, fit_whitening(e, corpus, 100, 1)) for e in (shared.view("mean"), alone)]
    np.testing.assert_array_equal(views[0].encode(TEXTS), views[1].encode(TEXTS))


def test_each_call_is_computed_once_for_all_poolers_and_the_weights_are_frozen():
    encoder = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler")
    shared = SharedPoolings(encoder, ["mean", "first_last_avg"])
    calls = []
    forward = encoder.backbone.forward
    encoder.backbone.forward = lambda *a, **k: calls.append(1) or forward(*a, **k)
    first = shared.view("mean").encode(TEXTS, batch_size=8)
    batches = len(calls)
    shared.view("first_last_avg").encode(TEXTS, batch_size=8)
    assert len(calls) == batches == 5  # 35 texts in batches of 8: the second pooling cost no forward pass
    shared.view("mean").encode(TEXTS, batch_size=16)  # another batching is another call
    assert len(calls) == batches + 3
    first[:] = 0  # a caller's array is its own
    assert shared.view("mean").encode(TEXTS, batch_size=8).any()
    assert not any(p.requires_grad for p in encoder.parameters())
    assert shared.view("mean").tokenizer is encoder.tokenizer and shared.view("mean").dim == encoder.dim


def test_a_pooling_not_shared_is_refused_by_name():
    shared = SharedPoolings(Encoder.from_pretrained("tiny-random-bert", "mean"), ["mean"])
    with pytest.raises(ValueError, match="pooler must be one of"):
        shared.view("first_last_avg")
    with pytest.raises(ValueError, match="poolers must be among"):
        shared.encoder.encode_poolers(TEXTS, ["cls"])  # a mean encoder has no MLP


def test_a_call_of_many_texts_runs_every_pooling_on_one_onnx_export():
    pytest.importorskip("onnxruntime")
    from kit.core.onnx_encoder import FAST_PATH_TEXTS, OnnxEncoder

    texts = [f"{t} {i}" for i, t in enumerate(TEXTS * (FAST_PATH_TEXTS // len(TEXTS) + 1))][:FAST_PATH_TEXTS]
    shared = SharedPoolings(Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=2), POOLERS)
    shared.view("mean").encode(texts[:10], max_length=16)
    assert shared.fast is None  # a short call stays on PyTorch
    for pooler in POOLERS:
        alone = Encoder.from_pretrained("tiny-random-bert", pooler, seed=2)
        got = shared.view(pooler).encode(texts, max_length=16)
        np.testing.assert_allclose(got, alone.encode(texts, max_length=16), atol=1e-4, rtol=0)
    assert isinstance(shared.fast, OnnxEncoder) and shared.fast.outputs == list(POOLERS)


def test_a_suite_in_token_batches_runs_on_the_export_its_count_prepared():
    """A suite's Embedder calls a view once per token batch (under FAST_PATH_TEXTS texts each): frozen_fast_path
    announces the suite's count so that those calls run on the export too."""
    pytest.importorskip("onnxruntime")
    from kit.core.onnx_encoder import FAST_PATH_TEXTS, OnnxEncoder
    from kit.core.shared_poolings import frozen_fast_path
    from kit.evaluation.embeddings import Embedder

    shared = SharedPoolings(Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=2), POOLERS)
    view = shared.view("first_last_avg")
    assert frozen_fast_path(view, FAST_PATH_TEXTS - 1) is view and shared.fast is None
    assert frozen_fast_path(view, FAST_PATH_TEXTS) is view and isinstance(shared.fast, OnnxEncoder)
    embed = Embedder.from_encoder(view, "view", max_length=16, batch_tokens=40)
    alone = Encoder.from_pretrained("tiny-random-bert", "first_last_avg", seed=2)
    np.testing.assert_allclose(embed(TEXTS), alone.encode(TEXTS, max_length=16), atol=1e-4, rtol=0)
    calls, run = [], shared.fast.encode_poolers
    shared.fast.encode_poolers = lambda *a, **k: calls.append(len(a[0])) or run(*a, **k)
    embed([f"{t}!" for t in TEXTS])
    assert len(calls) > 1 and max(calls) < len(TEXTS)  # each token batch, on the export
