"""Frozen encoders on ONNX Runtime: ``kit.evaluate --backend auto`` (the default), ``onnx`` and ``onnx-int8``, CPU.

``OnnxEncoder.from_encoder(encoder, poolers=...)`` exports the encoder's inference graph (one backbone pass, an
output per pooler, as ``Encoder.pooled`` computes it) with ``torch.onnx.export`` once per set of weights and
poolers, caches it under ``$KIT_CACHE/onnx/<weights digest>/`` and encodes with ONNX Runtime's CPU provider, with
the kit's own length-sorted batching. ``fp32`` gives the PyTorch embeddings to about 1e-6; ``int8`` (ONNX Runtime's
dynamic quantisation of the weights) is faster and moves embeddings, so it is an option, never a default. The fp32
path is the default wherever weights are frozen on the CPU (``kit.evaluate --backend auto``, a study's suite scoring
through ``fastest_exact``). Its speed against PyTorch's depends on the CPU: well ahead on an AMD EPYC's 2 cores,
about even on an Intel Xeon's (the tables of ``benchmarks/evaluate.py`` and ``benchmarks/encode.py`` name the CPU).

An export is used only when its folder's manifest names the same weights (and graph: configuration, versions)
and its file still has the digest recorded when it was written: a damaged file or manifest is set aside, a
manifest written for other weights is replaced, and the model is exported again.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from kit.core.files import set_aside, write_atomic, write_text_atomic
from kit.core.fingerprint import digest, file_digest
from kit.core.models import Encoder, length_sorted, token_limit
from kit.data.resolver import cache_dir

EXPORT_VERSION = 3  # bump when the exported graph changes, so older exports are not reused


def onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def weights_digest(encoder, poolers: Sequence[str] | None = None) -> str:
    """``digest`` of what decides the exported graph: its poolers (the encoder's own by default), the backbone's
    class and configuration
    (heads, activation, attention implementation), the torch and transformers versions, and every parameter and
    buffer (name, dtype, shape, bytes)."""
    import transformers

    backbone = encoder.backbone
    graph = [type(backbone).__name__, backbone.config.to_json_string(), backbone.config._attn_implementation]
    versions = [torch.__version__, transformers.__version__]
    state = encoder.state_dict()
    tensors = [(k, v.detach().cpu().contiguous().numpy()) for k, v in sorted(state.items())]
    outputs = list(poolers or (encoder.pooler,))
    return digest("kit onnx export", EXPORT_VERSION, outputs, graph, versions, tensors)


class _Graph(torch.nn.Module):
    """``Encoder.pooled`` on positional tensor inputs, as ``torch.onnx.export`` traces it: one backbone pass, an
    output per pooler."""

    def __init__(self, encoder, names: list[str], poolers: Sequence[str]):
        super().__init__()
        self.encoder, self.names, self.poolers = encoder, names, list(poolers)

    def forward(self, *tensors):
        return self.encoder.pooled(dict(zip(self.names, tensors, strict=True)), self.poolers)


def export(encoder, folder: Path, quantize: bool = False, poolers: Sequence[str] | None = None) -> Path:
    """Write ``model.onnx`` (and with ``quantize`` ``model.int8.onnx``) and ``manifest.json`` under ``folder``: one
    output per pooler of ``poolers`` (the encoder's own by default), named by it."""
    names = list(encoder.tokenizer.model_input_names)
    outputs = list(poolers or (encoder.pooler,))
    encoder.check_poolers(outputs)
    sample = encoder.tokenize(["an example sentence", "a second, longer example sentence"], 16)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in names}
    was_training = encoder.training
    encoder.eval()
    folder.mkdir(parents=True, exist_ok=True)
    fp32 = folder / "model.onnx"
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        # the TorchScript exporter: one trace, no onnxscript; its deprecation and tracer notes say nothing here
        warnings.simplefilter("ignore")
        write_atomic(
            fp32,
            lambda tmp: torch.onnx.export(
                _Graph(encoder, names, outputs),
                tuple(sample[n].cpu() for n in names),
                str(tmp),
                input_names=names,
                output_names=outputs,
                dynamic_axes={**dynamic, **{output: {0: "batch"} for output in outputs}},
                opset_version=17,
                dynamo=False,
            ),
        )
    encoder.train(was_training)
    files = {"model.onnx": file_digest(fp32)}
    if quantize:
        import logging

        from onnxruntime.quantization import QuantType, quantize_dynamic

        int8 = folder / "model.int8.onnx"
        root, level = logging.getLogger(), logging.getLogger().level
        root.setLevel(logging.ERROR)  # its advice to pre-process first goes to the root logger, on every export
        try:
            write_atomic(int8, lambda tmp: quantize_dynamic(fp32, tmp, weight_type=QuantType.QInt8))
        finally:
            root.setLevel(level)
        files["model.int8.onnx"] = file_digest(int8)
    manifest = {"weights": folder.name, "inputs": names, "outputs": outputs, "dim": encoder.dim, "files": files}
    write_text_atomic(folder / "manifest.json", json.dumps(manifest, indent=1))
    return folder


def _valid(folder: Path, file: str) -> dict | None:
    """The folder's manifest if it names this folder's weights and ``file`` has its recorded digest, else None
    (after setting aside whatever is damaged)."""
    manifest_path, path = folder / "manifest.json", folder / file
    if not manifest_path.is_file():
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        recorded = manifest["files"].get(file)
        if not {"inputs", "outputs", "dim", "weights"} <= manifest.keys():
            raise KeyError("it lacks inputs, outputs, dim or weights")
    except (ValueError, KeyError, AttributeError, TypeError) as err:
        set_aside(manifest_path, f"{type(err).__name__}: {err}")
        return None
    if recorded is None or manifest.get("weights") != folder.name:
        return None  # another export's manifest, or one without this file: exported again, over it
    if not path.is_file() or file_digest(path) != recorded:
        if path.is_file():
            set_aside(path, f"its digest is not the {recorded} its export recorded")
        return None
    return manifest


class OnnxEncoder:
    """An exported ``Encoder`` behind ``Encoder.encode``'s signature (``tokenizer``, ``dim``, ``encode``, and
    ``encode_poolers`` for the poolers it was exported with, ``outputs``; ``encode`` gives the first)."""

    def __init__(self, path: Path, tokenizer, names: list[str], dim: int, threads: int, outputs: Sequence[str]):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        graph_inputs = {i.name for i in self.session.get_inputs()}  # the tracer drops an input the graph never reads
        self.path, self.tokenizer, self.dim = path, tokenizer, dim
        self.names = [n for n in names if n in graph_inputs]
        self.outputs = list(outputs)

    @classmethod
    def from_encoder(
        cls, encoder, int8: bool = False, cache: Path | None = None, poolers: Sequence[str] | None = None
    ) -> OnnxEncoder:
        """The cached export of ``encoder``'s current weights (under ``poolers``, its own by default), exported first
        when absent, stale or damaged."""
        if not onnx_available():
            raise ImportError("backend 'onnx' needs ONNX Runtime: pip install onnxruntime (or use backend 'torch')")
        folder = (cache or cache_dir() / "onnx") / weights_digest(encoder, poolers)
        file = "model.int8.onnx" if int8 else "model.onnx"
        manifest = _valid(folder, file)
        if manifest is None:
            export(encoder, folder, quantize=int8, poolers=poolers)
            manifest = _valid(folder, file)
        if manifest is None:  # another process rewrote the folder meanwhile
            raise RuntimeError(f"the ONNX export under {folder} changed while it was written; run the command again")
        threads = torch.get_num_threads()
        return cls(folder / file, encoder.tokenizer, manifest["inputs"], manifest["dim"], threads, manifest["outputs"])

    def encode(
        self,
        texts: list[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        """As ``Encoder.encode``: float32 [len(texts), dim] in input order, batches sorted by length."""
        first = self.outputs[0]
        return self.encode_poolers(texts, (first,), batch_size, max_length, normalize, show_progress)[first]

    def encode_poolers(
        self,
        texts: list[str],
        poolers: Sequence[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> dict[str, np.ndarray]:
        """As ``Encoder.encode_poolers``, for poolers among ``outputs``: one session run per batch."""
        unknown = [p for p in poolers if p not in self.outputs]
        if unknown:
            raise ValueError(f"poolers must be among the exported {self.outputs}, got {unknown}")
        out = {p: np.empty((len(texts), self.dim), dtype=np.float32) for p in poolers}
        for idx in length_sorted(texts, batch_size, show_progress, "encode (onnx)"):
            features = self.tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=token_limit(self.tokenizer, max_length),
                return_tensors="np",
            )
            runs = self.session.run(list(poolers), {n: features[n].astype(np.int64) for n in self.names})
            for pooler, emb in zip(poolers, runs, strict=True):
                out[pooler][idx] = emb
        if normalize:
            for emb in out.values():
                emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        return out


FAST_PATH_TEXTS = 2000
"""Texts from which a frozen encoder's scoring pays for its export (a few seconds) on ONNX Runtime."""


def fastest_exact(encoder, texts: int, poolers: Sequence[str] | None = None):
    """The fastest exact encoder of ``texts`` texts with ``encoder``'s frozen weights: ONNX Runtime fp32 (under
    ``poolers``, its own by default) when ``encoder`` is a kit ``Encoder`` on the CPU in fp32, ONNX Runtime is
    installed and ``texts >= FAST_PATH_TEXTS``; else ``encoder`` itself. The same embeddings to about 1e-6; the export
    is written to a temporary folder, removed once ONNX Runtime has read it."""
    cpu_fp32 = isinstance(encoder, Encoder) and all(
        p.device.type == "cpu" and p.dtype == torch.float32 for p in encoder.parameters()
    )
    if not (cpu_fp32 and onnx_available() and texts >= FAST_PATH_TEXTS):
        return encoder
    with tempfile.TemporaryDirectory(prefix="kit-onnx-") as folder:
        return OnnxEncoder.from_encoder(encoder, cache=Path(folder), poolers=poolers)
