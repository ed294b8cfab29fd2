"""The ONNX Runtime backend: the same embeddings as ``Encoder.encode``, an export reused only while it is whole and of
the same weights."""

import json

import numpy as np
import pytest
import torch

from kit.core.models import POOLERS, Encoder
from kit.core.onnx_encoder import FAST_PATH_TEXTS, OnnxEncoder, fastest_exact, weights_digest
from kit.evaluation.embeddings import Embedder

pytest.importorskip("onnxruntime")

TEXTS = ["a", "the patient was given aspirin daily", "", "fever " * 40, "short text", "x y z"] * 3


@pytest.mark.parametrize("pooler", POOLERS)
def test_equal_to_torch_for_every_pooler(tmp_path, pooler):
    enc = Encoder.from_pretrained("tiny-random-bert", pooler, seed=1)
    fast = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    for normalize in (False, True):
        want = enc.encode(TEXTS, batch_size=4, max_length=32, normalize=normalize)
        got = fast.encode(TEXTS, batch_size=4, max_length=32, normalize=normalize)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


def test_export_is_reused_and_keyed_by_weights(tmp_path):
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    first = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    written = first.path.stat().st_mtime_ns
    assert OnnxEncoder.from_encoder(enc, cache=tmp_path).path.stat().st_mtime_ns == written  # not exported again
    with torch.no_grad():
        enc.backbone.embeddings.word_embeddings.weight.add_(0.5)  # changed weights: a new export, new embeddings
    changed = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    assert changed.path != first.path and changed.path.parent.name == weights_digest(enc)
    np.testing.assert_allclose(changed.encode(TEXTS, max_length=32), enc.encode(TEXTS, max_length=32), atol=1e-4)


@pytest.mark.parametrize("damage", ["truncated", "replaced", "manifest", "stale manifest"])
def test_damaged_or_stale_export_is_set_aside_and_exported_again(tmp_path, damage, capsys):
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    folder = OnnxEncoder.from_encoder(enc, cache=tmp_path).path.parent
    model, manifest = folder / "model.onnx", folder / "manifest.json"
    if damage == "truncated":
        model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])
    elif damage == "replaced":  # another model's export, whole, under this folder's name
        other = Encoder.from_pretrained("tiny-random-bert", "mean", seed=2)
        model.write_bytes(OnnxEncoder.from_encoder(other, cache=tmp_path / "other").path.read_bytes())
    elif damage == "manifest":
        manifest.write_text("{not json")
    else:  # a manifest written for other weights
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "weights": "0" * 16}))
    written = model.stat().st_mtime_ns
    fast = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    np.testing.assert_allclose(fast.encode(TEXTS, max_length=32), enc.encode(TEXTS, max_length=32), atol=1e-4)
    assert model.stat().st_mtime_ns != written  # exported again, whatever the damage
    assert json.loads(manifest.read_text())["weights"] == folder.name
    if damage != "stale manifest":
        assert "set aside" in capsys.readouterr().err
        assert any(".damaged-" in p.name for p in folder.iterdir())


def test_int8_is_an_option_close_to_fp32(tmp_path):
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    exact = OnnxEncoder.from_encoder(enc, cache=tmp_path).encode(TEXTS, max_length=32, normalize=True)
    int8 = OnnxEncoder.from_encoder(enc, int8=True, cache=tmp_path)
    assert int8.path.name == "model.int8.onnx"
    cosine = (int8.encode(TEXTS, max_length=32, normalize=True) * exact).sum(1)
    assert cosine.min() > 0.8 and not np.allclose(cosine, 1, atol=1e-6)  # close, and not the exact path


def test_embedder_backends(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_CACHE", str(tmp_path))
    fast = Embedder.from_name("tiny-random-bert", "mean", max_length=32, use_cache=False, backend="onnx")  # auto: CPU
    plain = Embedder.from_name("tiny-random-bert", "mean", max_length=32, use_cache=False, backend="torch")
    assert fast.about["backend"] == "onnx" and plain.about["backend"] == "torch"
    np.testing.assert_allclose(fast(TEXTS), plain(TEXTS), atol=1e-4)
    assert (tmp_path / "onnx").is_dir()
    exact = Embedder.from_name("tiny-random-bert", "mean", cache=tmp_path / "e", backend="onnx", device="cpu")
    int8 = Embedder.from_name("tiny-random-bert", "mean", cache=tmp_path / "e", backend="onnx-int8", device="cpu")
    torch_key = Embedder.from_name("tiny-random-bert", "mean", cache=tmp_path / "e", backend="torch", device="cpu").key
    assert exact.key == torch_key
    assert int8.key != exact.key  # quantised vectors never share the exact ones' cache files


@pytest.mark.parametrize(
    ("settings", "backend"),
    [
        ({"device": "cpu"}, "onnx"),
        ({"device": "cpu", "precision": "bf16"}, "torch"),
        ({"device": "cpu", "backend": "torch"}, "torch"),
    ],
)
def test_auto_is_onnx_where_it_can_run(settings, backend):
    assert Embedder.from_name("tiny-random-bert", "mean", use_cache=False, **settings).about["backend"] == backend


@pytest.mark.parametrize(
    ("chosen", "device", "precision", "backend"),
    [
        ("mean", "cpu", "fp32", "onnx"),
        (None, "cpu", "fp32", "torch"),  # a sentence-transformers folder read with its own modules
        ("mean", "cuda", "fp32", "torch"),
        ("mean", "cpu", "bf16", "torch"),
    ],
)
def test_auto_resolves_to_torch_wherever_onnx_would_be_refused(chosen, device, precision, backend, monkeypatch):
    from kit.evaluation.embeddings import chosen_backend

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # device auto: CUDA where present
    assert chosen_backend("auto", "mean", "auto", "fp32") == "torch"
    assert chosen_backend("auto", chosen, device, precision) == backend
    assert chosen_backend("onnx-int8", chosen, device, precision) == "onnx-int8"  # a backend asked for stays


def test_the_fastest_exact_encoder_is_onnx_from_enough_texts_and_its_export_is_removed():
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    assert fastest_exact(enc, FAST_PATH_TEXTS - 1) is enc
    fast = fastest_exact(enc, FAST_PATH_TEXTS)
    assert isinstance(fast, OnnxEncoder) and not fast.path.exists()  # read by ONNX Runtime, then removed
    np.testing.assert_allclose(fast.encode(TEXTS, max_length=32), enc.encode(TEXTS, max_length=32), atol=1e-4)
    assert fastest_exact(enc.to(torch.bfloat16), FAST_PATH_TEXTS) is enc  # not fp32: PyTorch encodes it


def test_one_export_gives_every_pooler_of_one_forward_pass(tmp_path):
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=1)
    fast = OnnxEncoder.from_encoder(enc, cache=tmp_path, poolers=POOLERS)
    for normalize in (False, True):
        want = enc.encode_poolers(TEXTS, POOLERS, batch_size=4, max_length=32, normalize=normalize)
        got = fast.encode_poolers(TEXTS, POOLERS, batch_size=4, max_length=32, normalize=normalize)
        for pooler in POOLERS:
            np.testing.assert_allclose(got[pooler], want[pooler], atol=1e-4, rtol=0)
    assert len(list(tmp_path.iterdir())) == 1 and OnnxEncoder.from_encoder(enc, cache=tmp_path).path != fast.path
    with pytest.raises(ValueError, match="poolers must be among the exported"):
        OnnxEncoder.from_encoder(enc, cache=tmp_path).encode_poolers(TEXTS, ("mean",))
    mean = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    with pytest.raises(ValueError, match="cls: an encoder read with a cls pooler"):  # no MLP: refused before tracing
        OnnxEncoder.from_encoder(mean, cache=tmp_path / "mean", poolers=("mean", "cls"))
    assert not (tmp_path / "mean").exists()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"backend": "tensorrt"}, "backend must be one of"),
        ({"backend": "onnx", "precision": "bf16"}, "runs kit encoders on the CPU in fp32"),
    ],
)
def test_embedder_refuses_a_backend_it_cannot_run(settings, message):
    with pytest.raises(ValueError, match=message):
        Embedder.from_name("tiny-random-bert", "mean", use_cache=False, device="cpu", **settings)


def test_another_configuration_with_the_same_weights_gets_its_own_export(tmp_path):
    """The export is keyed by what decides the graph, not the weights alone: the same tensors under another
    activation compute other vectors."""
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=1)
    first = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    enc.backbone.config.hidden_act = "relu"
    for layer in enc.backbone.encoder.layer:
        layer.intermediate.intermediate_act_fn = torch.nn.ReLU()
    other = OnnxEncoder.from_encoder(enc, cache=tmp_path)
    assert other.path != first.path
    np.testing.assert_allclose(other.encode(TEXTS, max_length=32), enc.encode(TEXTS, max_length=32), atol=1e-4)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--precision", "bf16"], "argument --backend: onnx runs in fp32 on the CPU"),
        (["--device", "cpu", "--precision", "bf16"], "argument --backend: onnx runs in fp32 on the CPU"),
    ],
)
def test_kit_evaluate_refuses_an_onnx_backend_it_cannot_run_before_any_work(tmp_path, capsys, extra, message):
    from kit.evaluate import main

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as stop:
        main(["tiny-random-bert", "--tasks", "biosses-test", "--backend", "onnx", "--out", str(out), *extra])
    assert stop.value.code == 2 and message in capsys.readouterr().err and not out.exists()


def test_kit_evaluate_scores_on_onnx_as_on_torch(tmp_path, monkeypatch):
    from kit.evaluate import main

    monkeypatch.setenv("KIT_CACHE", str(tmp_path / "cache"))
    scores = {}
    for backend in ("torch", "onnx"):
        out = tmp_path / backend
        args = ["tiny-random-bert", "--tasks", "biosses-test", "--no-cache", "--resamples", "200"]
        assert main([*args, "--backend", backend, "--out", str(out)]) == 0
        record = json.loads((out / "evaluation.json").read_text())
        scores[backend] = json.dumps(untimed(record["tasks"]), sort_keys=True)
        assert f"backend {backend}" in (out / "evaluation.html").read_text()
    assert scores["onnx"] == scores["torch"]


def untimed(value):
    """``value`` without its timings (keys holding ``seconds``)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "seconds" not in k}
    return [untimed(v) for v in value] if isinstance(value, list) else value
