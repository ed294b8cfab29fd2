"""Embeddings of a task's texts by one model, cached on disk so that scoring a model again costs no encoding.

The cache holds one ``.npy`` per (model, text list): ``<cache>/embeddings/<model key>/<texts digest>.npy``.
The model key is a digest of what decides the vectors: the checkpoint's fingerprint
(``kit.core.models.model_fingerprint``: its files' digest, or a hub snapshot's commit), the pooler, the
maximum length, the precision and the device type (and ``int8`` for the quantised backend; the exact backends,
``torch`` and ``onnx``, share their files); the texts digest is ``kit.core.fingerprint.digest`` of the
list. A new checkpoint or another text list is a new file; a damaged file is set aside and recomputed.
Files are written whole or not at all (``kit.core.files.write_atomic``).

Texts are encoded in batches of similar length holding about ``batch_tokens`` padded tokens each (longest
first): a fixed number of texts per batch makes the short texts' forward passes (disease names, ten tokens)
small matrix products that a CPU runs at half speed.

A model name is what ``Encoder.from_pretrained`` takes: an alias (``minilm``, ``tiny-random-bert``, ...), a
Hugging Face name or a local folder. A sentence-transformers folder is read with its own pooling (mean, or
[CLS] without a head); one whose modules go beyond Transformer, Pooling and Normalize (a Dense head, layer
weights, max pooling) is encoded by ``SentenceTransformer`` itself, so that its vectors are its own.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kit.core.files import set_aside, write_atomic, write_text_atomic
from kit.core.fingerprint import digest
from kit.data.resolver import cache_dir

if TYPE_CHECKING:
    from kit.core.models import ModelSource

CACHE_VERSION = 1  # bump when the way vectors are computed changes, to leave old files unread
PRECISIONS = ("fp32", "bf16")
BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
"""``auto`` (the default): ``onnx`` wherever it can run (``onnx_refusal``), else ``torch``; ``onnx``: ONNX Runtime on
an export of the encoder (``kit.core.onnx_encoder``), the same vectors to about 1e-6 and faster than PyTorch on the
CPU with the suite's token batches (``benchmarks/evaluate.py``); ``onnx-int8``: dynamically quantised weights, faster
still, scores move (never the default)."""
PLAIN_MODULES = {"Transformer", "Pooling", "Normalize"}


def backend_device(backend: str, device: str) -> str:
    """The device a backend encodes on: ``auto`` is the CPU for the ONNX backends, else ``device`` as given."""
    return "cpu" if backend.startswith("onnx") and device == "auto" else device


def chosen_backend(backend: str, chosen: str | None, device: str, precision: str) -> str:
    """``backend`` with ``auto`` resolved: ``onnx`` when it can encode a model read with pooler ``chosen`` on
    ``device`` (``auto``: CUDA when present) in ``precision``, else ``torch``."""
    from kit.core.devices import resolve_device

    if backend != "auto":
        return backend
    return "torch" if onnx_refusal(chosen, resolve_device(device).type, precision) else "onnx"


def onnx_refusal(chosen: str | None, device_type: str, precision: str) -> str | None:
    """Why the ONNX backends cannot encode a model read with pooler ``chosen`` (None: sentence-transformers' own
    modules) on ``device_type`` in ``precision``; None when they can."""
    from kit.core.onnx_encoder import onnx_available

    if not onnx_available():
        return "ONNX Runtime is not installed (pip install onnxruntime)"
    if chosen is None:
        return "sentence-transformers encodes it with its own modules (name a pooler)"
    if device_type != "cpu" or precision != "fp32":
        return f"it was asked for {device_type} in {precision}"
    return None


def default_cache() -> Path:
    """``$KIT_CACHE/embeddings`` (``~/.cache/medcse-kit/embeddings`` by default)."""
    return cache_dir() / "embeddings"


class EmbeddingCache:
    """``.npy`` files of embeddings under ``folder``, one per (model key, text list)."""

    def __init__(self, folder: str | os.PathLike | None = None):
        self.folder = Path(folder) if folder is not None else default_cache()

    def path(self, model_key: str, texts: list[str]) -> Path:
        return self.folder / model_key / f"{digest(list(texts))}.npy"

    def load(self, model_key: str, texts: list[str]) -> np.ndarray | None:
        """The cached embeddings of ``texts``, or None (absent; or unreadable, which is then set aside)."""
        path = self.path(model_key, texts)
        if not path.is_file():
            return None
        try:
            emb = np.load(path, allow_pickle=False)
        except Exception as err:  # any error reading a file written whole is damage (as in the run cache)
            set_aside(path, f"{type(err).__name__}: {err}")
            return None
        if emb.ndim != 2 or len(emb) != len(texts) or not np.isfinite(emb).all():
            set_aside(path, f"shape {emb.shape} for {len(texts)} texts, or values that are not finite")
            return None
        return emb

    def save(self, model_key: str, texts: list[str], emb: np.ndarray, about: dict | None = None) -> Path:
        path = self.path(model_key, texts)
        if about is not None and not (path.parent / "model.json").is_file():
            write_text_atomic(path.parent / "model.json", json.dumps(about, indent=1))
        return write_atomic(path, lambda tmp: np.save(tmp, np.asarray(emb, dtype=np.float32)))


def _sentence_transformers_modules(path: str) -> list[dict] | None:
    """The module list of a sentence-transformers folder (local, or a hub snapshot in the cache), or None."""
    file = Path(path).expanduser() / "modules.json"
    if not file.is_file():
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(path, "modules.json")
        except Exception:  # not a hub name
            return None
        if not isinstance(cached, str):
            return None
        file = Path(cached)
    return json.loads(file.read_text(encoding="utf-8"))


def model_pooler(source: ModelSource) -> str | None:
    """The pooler a model (``kit.core.models.resolve_model``'s source) declares: a sentence-transformers folder's
    pooling (``mean``, or ``cls_before_pooler`` for [CLS] without a head); ``mean`` for a plain transformers model;
    None when only sentence-transformers can reproduce its vectors (modules beyond Transformer, Pooling and
    Normalize, or another pooling)."""
    from kit.core.models import RANDOM_MODELS

    if source.name in RANDOM_MODELS:
        return "mean"
    path = source.path
    modules = _sentence_transformers_modules(path)
    if modules is None:
        return "mean"
    if {m["type"].rsplit(".", 1)[-1] for m in modules} - PLAIN_MODULES:
        return None
    pooling = next((m for m in modules if m["type"].endswith("Pooling")), None)
    if pooling is None:
        return None
    config_file = Path(path).expanduser() / pooling["path"] / "config.json"
    if not config_file.is_file():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(path, f"{pooling['path']}/config.json")
        if not isinstance(cached, str):
            return None
        config_file = Path(cached)
    config = json.loads(config_file.read_text(encoding="utf-8"))
    modes = {k for k, v in config.items() if k.startswith("pooling_mode") and v is True}
    if isinstance(config.get("pooling_mode"), str):
        modes = {f"pooling_mode_{config['pooling_mode']}"}
    return {
        frozenset({"pooling_mode_mean_tokens"}): "mean",
        frozenset({"pooling_mode_mean"}): "mean",
        frozenset({"pooling_mode_cls_token"}): "cls_before_pooler",
        frozenset({"pooling_mode_cls"}): "cls_before_pooler",
    }.get(frozenset(modes))


def token_batches(lengths: np.ndarray, budget: int, cap: int = 1024) -> list[np.ndarray]:
    """Text indices in batches of similar length, longest first: each batch takes as many texts as keep
    len(batch) x longest(batch) <= ``budget`` padded tokens (at least one text, at most ``cap``)."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    batches, start = [], 0
    while start < len(order):
        size = max(1, min(cap, budget // max(1, int(lengths[order[start]]))))
        batches.append(order[start : start + size])
        start += size
    return batches


class _SentenceTransformer:
    """A sentence-transformers model behind ``Encoder.encode``'s signature."""

    def __init__(self, path: str, device):
        from sentence_transformers import SentenceTransformer

        from kit.core.models import FP32_WEIGHTS, trained_positions

        self.model = SentenceTransformer(path, device=str(device), model_kwargs=FP32_WEIGHTS)
        self.tokenizer = self.model.tokenizer
        # the backbone's positions, read once: max_seq_length below also sets the tokenizer's model_max_length
        self.positions = trained_positions(self.model[0].auto_model.config)

    def encode(self, texts, batch_size=64, max_length=256, show_progress=False) -> np.ndarray:
        self.model.max_seq_length = min(max_length, self.positions)
        return self.model.encode(
            list(texts), batch_size=batch_size, convert_to_numpy=True, show_progress_bar=bool(show_progress)
        ).astype(np.float32)


@dataclass
class Embedder:
    """One model as a function texts -> embeddings [len(texts), dim] (float32, rows in text order), cached
    per text list when it has a ``key``. The model is loaded at the first text list not in the cache, so a
    model whose task texts are all cached is never loaded. ``encoded`` and ``cached`` count texts, ``cut`` those of
    them longer than the model's trained positions or ``max_length`` (``kit.core.models.token_limit``), which lose
    their tail (counted with the model's tokenizer, or ``load_tokenizer``'s while the model is not loaded).
    ``batch_tokens``: padded tokens per forward pass (see ``token_batches``); 0 for batches of ``batch_size``
    texts."""

    name: str
    load: Callable[[], object] = field(repr=False)
    key: str | None = None
    cache: EmbeddingCache | None = None
    batch_size: int = 64
    max_length: int = 256
    batch_tokens: int = 1024
    precision: str = "fp32"
    device: str = "cpu"
    backend: str = "torch"
    about: dict = field(default_factory=dict)
    encoded: int = 0
    cached: int = 0
    cut: int = 0
    model: object | None = field(default=None, repr=False)
    load_tokenizer: Callable[[], object] | None = field(default=None, repr=False)

    @classmethod
    def from_name(
        cls,
        name: str,
        pooler: str = "auto",
        max_length: int = 256,
        batch_size: int = 64,
        precision: str = "fp32",
        device: str = "auto",
        cache: EmbeddingCache | str | os.PathLike | None = None,
        use_cache: bool = True,
        batch_tokens: int = 1024,
        backend: str = "auto",
    ) -> Embedder:
        """``pooler``: a ``kit.core.models`` pooler, or ``auto`` (what the model declares, see
        ``model_pooler``). ``precision`` ``bf16`` encodes under bf16 autocast (CPUs with native bf16 and CUDA
        run it about twice as fast; vectors differ from fp32 in the fourth decimal). ``backend``: one of
        ``BACKENDS``; the ONNX ones run kit encoders in fp32 on the CPU (``device`` ``auto`` is the CPU for them),
        ``auto`` picks ONNX where it can (``chosen_backend``)."""
        from kit.core.devices import resolve_device
        from kit.core.models import Encoder, load_tokenizer, model_fingerprint, resolve_model
        from kit.core.onnx_encoder import OnnxEncoder

        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        source = resolve_model(name)  # the name resolved once: its folder (or hub name) and what it is
        chosen = model_pooler(source) if pooler == "auto" else pooler
        backend = chosen_backend(backend, chosen, device, precision)
        torch_device = resolve_device(backend_device(backend, device))
        if backend != "torch" and (why := onnx_refusal(chosen, torch_device.type, precision)):
            raise ValueError(
                f"backend {backend!r} runs kit encoders on the CPU in fp32 with ONNX Runtime; {name!r}: {why}"
            )

        def load():
            if chosen is None:
                return _SentenceTransformer(source.path, torch_device)
            encoder = Encoder.from_pretrained(name, chosen).to(torch_device)
            if backend == "torch":
                return encoder
            return OnnxEncoder.from_encoder(encoder, int8=backend == "onnx-int8")

        about = {
            "name": name,
            "description": source.description,
            "pooler": chosen or "sentence-transformers modules",
            "max_length": max_length,
            "precision": precision,
            "device": torch_device.type,
            "backend": backend,
        }
        key = None
        if use_cache:
            about["fingerprint"] = model_fingerprint(name)
            key = digest(
                "kit.evaluation embeddings",
                CACHE_VERSION,
                about["fingerprint"],
                chosen,
                max_length,
                precision,
                torch_device.type,
                *(["int8"] if backend == "onnx-int8" else []),
            )
            cache = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
        return cls(
            name,
            load,
            key,
            cache if use_cache else None,
            batch_size,
            max_length,
            batch_tokens,
            precision,
            str(torch_device),
            backend,
            about,
            load_tokenizer=lambda: load_tokenizer(name),
        )

    @classmethod
    def from_encoder(
        cls, encoder, name: str, key: str | None = None, cache: EmbeddingCache | None = None, **settings
    ) -> Embedder:
        """An encoder already in memory (a study's trained row); cached only under a ``key`` the caller
        vouches for (a run's key), since a model in memory has no fingerprint of its own."""
        return cls(name, lambda: encoder, key, cache if key else None, about={"name": name}, model=encoder, **settings)

    def __call__(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if self.cache is not None and self.key is not None:
            emb = self.cache.load(self.key, texts)
            if emb is not None:
                self.cached += len(texts)
                self._count_cut(texts)
                return emb
        if self.model is None:
            self.model = self.load()
        with self._precision():
            emb = self._encode(texts)
        self.encoded += len(texts)
        self._count_cut(texts)
        if self.cache is not None and self.key is not None:
            self.cache.save(self.key, texts, emb, self.about)
        return emb

    def _count_cut(self, texts: list[str]) -> None:
        from kit.core.models import cut_texts

        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None and self.load_tokenizer is not None:
            try:
                tokenizer = self.load_tokenizer()
            except (OSError, ValueError):  # a folder whose tokenizer only sentence-transformers finds: not counted
                tokenizer = None
            self.load_tokenizer = lambda: tokenizer  # tried once
        if tokenizer is not None:
            limit = min(self.max_length, getattr(self.model, "positions", self.max_length))
            self.cut += cut_texts(tokenizer, texts, limit)

    def _encode(self, texts: list[str]) -> np.ndarray:
        from kit.core.models import token_limit

        tokenizer = getattr(self.model, "tokenizer", None)
        if not self.batch_tokens or tokenizer is None or not texts:
            return np.asarray(
                self.model.encode(texts, batch_size=self.batch_size, max_length=self.max_length, show_progress=False),
                dtype=np.float32,
            )
        ids = tokenizer(texts, truncation=True, max_length=token_limit(tokenizer, self.max_length))["input_ids"]
        out = None
        for batch in token_batches(np.array([len(i) for i in ids]), self.batch_tokens):
            part = self.model.encode(
                [texts[i] for i in batch], batch_size=len(batch), max_length=self.max_length, show_progress=False
            )
            if out is None:
                out = np.empty((len(texts), part.shape[1]), dtype=np.float32)
            out[batch] = part
        return out

    def _precision(self):
        if self.precision == "fp32":
            return contextlib.nullcontext()
        import torch

        return torch.autocast(torch.device(self.device).type, dtype=torch.bfloat16)

    def release(self) -> None:
        """Drop the loaded model (its memory), keeping the cache."""
        self.model = None
