"""Training objectives for sentence encoders: the ``Objective`` protocol that ``train_contrastive``
calls, and the general objectives built on it.

- ``SimCSEObjective``: unsup-SimCSE (Gao, Yao, Chen 2021) with dropout or augmented views, and
  optionally MixCSE negatives and DCLR instance weights (``kit.core.losses``);
- ``SimCSEWithMLMObjective``: the same with SimCSE's auxiliary masked-language-model loss;
- ``ContrastiveTensionObjective``: contrastive tension (Carlsson et al. 2021);
- ``ConSERTObjective``: ConSERT's token cutoff and token shuffle views (Yan et al. 2021).

A study's own objective (MED-SE's, say) derives from one of these in the study's folder.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from kit.core.batches import Batches
from kit.core.devices import to_device
from kit.core.losses import ContrastiveLoss
from kit.core.models import Encoder, token_limit

if TYPE_CHECKING:
    from kit.core.augment import Augmenter
    from kit.core.config import TrainConfig


class Objective(Protocol):
    """What ``train_contrastive`` needs from an objective. It is an ``nn.Module``: its trainable
    parameters join the optimizer, its state the checkpoint.

    - ``batches(corpus)``: the sampler of corpus rows;
    - ``rng``: the objective's numpy Generator (augmentations, view noise), saved with the checkpoint;
    - ``stat_names``: the statistics ``__call__`` returns besides the loss (detached tensors, averaged
      between evaluations);
    - ``distributed``: True for objectives that shard a global batch over processes (``kit.core.distributed``);
    - ``__call__(encoder, texts, rows) -> (loss, stats)`` on one batch: its texts and their corpus rows.
    """

    rng: np.random.Generator
    stat_names: tuple[str, ...]
    distributed: bool

    def batches(self, corpus: list[str]) -> Batches: ...

    def __call__(
        self, encoder: nn.Module, texts: list[str], rows: np.ndarray
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]: ...

    def parameters(self) -> Iterator[nn.Parameter]: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> object: ...

    def to(self, device: torch.device) -> Objective: ...


class SimCSEObjective(nn.Module):
    """unsup-SimCSE (Gao, Yao, Chen 2021) on a batch of texts: views (t, t) with dropout noise, or
    (t, augmenter(t)); ``ContrastiveLoss`` with optional MixCSE negatives and instance weights, the
    complementary model being a frozen copy of the starting encoder.

    The base of the kit's objectives (see ``Objective``): batches are drawn by a Generator seeded
    from ``config.seed``, and ``rng``, seeded from the same seed, drives the augmenter.
    """

    stat_names: tuple[str, ...] = ("pos_cos", "neg_cos")
    distributed = False

    def __init__(self, encoder: Encoder, config: TrainConfig, augmenter: Augmenter | None = None):
        super().__init__()
        self.config, self.augmenter = config, augmenter
        self.loss_fn = ContrastiveLoss(config.temperature, config.mix_lambda, config.iw_phi)
        # frozen and rebuilt from the starting model on resume: kept out of the module tree (not trained, not saved)
        self._complementary = (
            (copy.deepcopy(encoder).eval().requires_grad_(False),) if self.loss_fn.needs_complementary else ()
        )
        self.rng = np.random.default_rng(np.random.SeedSequence(config.seed).spawn(2)[1])

    def _apply(self, fn, recurse=True):
        """``.to(device)`` and friends also reach the frozen complementary model."""
        for frozen in self._complementary:
            frozen._apply(fn, recurse)
        return super()._apply(fn, recurse)

    def batches(self, corpus: list[str]) -> Batches:
        lengths = np.fromiter(map(len, corpus), int, len(corpus)) if self.config.length_grouped else None
        return Batches(
            len(corpus),
            self.config.batch_size,
            np.random.default_rng(np.random.SeedSequence(self.config.seed).spawn(2)[0]),
            lengths,
        )

    def second_views(self, texts: list[str]) -> list[str] | None:
        """Each text's positive view: its augmented copy, or None for dropout views (the text itself)."""
        return [self.augmenter(t, self.rng) for t in texts] if self.augmenter else None

    def view_features(self, encoder: Encoder, texts: list[str], view2: list[str] | None) -> dict[str, torch.Tensor]:
        """Both views tokenized, 2B rows [texts; view2] on the encoder's device. Dropout views
        (``view2`` None) are the same tokens: tokenized once and repeated."""
        static = self.config.cuda_graphs
        if view2 is None:
            feats = {k: torch.cat([v, v]) for k, v in encoder.tokenize(texts, self.config.max_length, static).items()}
        else:
            feats = encoder.tokenize(texts + view2, self.config.max_length, static)
        return to_device(feats, encoder.device)

    @torch.no_grad()
    def complementary_embeddings(self, features: dict[str, torch.Tensor]) -> torch.Tensor | None:
        """The frozen complementary model's embeddings of tokenized texts, for instance weighting;
        None when the loss has no instance weights."""
        return self._complementary[0](features) if self._complementary else None

    def forward(
        self, encoder: Encoder, texts: list[str], rows: np.ndarray
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        feats = self.view_features(encoder, texts, self.second_views(texts))
        comp = self.complementary_embeddings({k: v[: len(texts)] for k, v in feats.items()})
        emb = encoder(feats, training_head=True)
        return self.loss_fn(emb[: len(texts)], emb[len(texts) :], comp)


class MaskedLMHead(nn.Module):
    """BERT's masked-language-model head (Devlin et al. 2019) with its decoder tied to the encoder's word
    embeddings E: logits = LayerNorm(act(W h + b)) E^T + c. Built fresh from the backbone's configuration
    (the kit's checkpoints keep the backbone only), so W, b and c start untrained: PyTorch's default initialisation,
    c = 0 (SimCSE's code starts from the pretrained checkpoint's head instead)."""

    def __init__(self, backbone_config):
        from transformers.models.bert.modeling_bert import BertPredictionHeadTransform

        super().__init__()
        self.transform = BertPredictionHeadTransform(backbone_config)
        self.bias = nn.Parameter(torch.zeros(backbone_config.vocab_size))

    def forward(self, states: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        return F.linear(self.transform(states), word_embeddings, self.bias)


class SimCSEWithMLMObjective(SimCSEObjective):
    """unsup-SimCSE with its auxiliary MLM objective (Gao, Yao, Chen 2021, Appendix, "w/ MLM"; their code's
    ``--do_mlm --mlm_weight``): L = L_SimCSE + lambda L_MLM, L_MLM the masked-token cross-entropy of
    ``MaskedLMHead`` on a copy of the batch with ``mlm_probability`` of its non-special tokens chosen (80%
    [MASK], 10% a random token, 10% kept: transformers' ``DataCollatorForLanguageModeling``). The masks come
    from torch's global generator, which ``train_contrastive`` checkpoints, so a resumed run draws the same."""

    def __init__(
        self,
        encoder: Encoder,
        config: TrainConfig,
        mlm_weight: float,
        augmenter: Augmenter | None = None,
        mlm_probability: float = 0.15,
    ):
        from transformers import DataCollatorForLanguageModeling

        super().__init__(encoder, config, augmenter)
        if not mlm_weight > 0:
            raise ValueError(f"mlm_weight must be > 0, got {mlm_weight}")
        self.mlm_weight = mlm_weight
        self.head = MaskedLMHead(encoder.backbone.config)
        self.masker = DataCollatorForLanguageModeling(encoder.tokenizer, mlm_probability=mlm_probability)
        self.special_ids = torch.tensor(encoder.tokenizer.all_special_ids)
        self.stat_names = (*SimCSEObjective.stat_names, "mlm_loss")

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        loss, stats = super().forward(encoder, texts, rows)
        feats = encoder.tokenize(texts, self.config.max_length, self.config.cuda_graphs)
        ids = feats["input_ids"]
        masked, labels = self.masker.torch_mask_tokens(ids.clone(), torch.isin(ids, self.special_ids))
        feats = to_device({**feats, "input_ids": masked}, encoder.device)
        states = encoder.embed_with_states(feats)[1]
        logits = self.head(states, encoder.backbone.get_input_embeddings().weight)
        labels = labels.to(encoder.device).flatten()
        total = F.cross_entropy(logits.flatten(0, 1).float(), labels, ignore_index=-100, reduction="sum")
        mlm = total / labels.ne(-100).sum().clamp(min=1)  # the mean over chosen tokens; 0 when none was chosen
        return loss + self.mlm_weight * mlm, {**stats, "mlm_loss": mlm.detach()}


class ContrastiveTensionObjective(SimCSEObjective):
    """Contrastive tension with in-batch negatives (Carlsson et al. 2021, "Semantic Re-tuning with
    Contrastive Tension", ICLR; as sentence-transformers' ContrastiveTensionLossInBatchNegatives):
    two independently trained copies f1 (the encoder kept) and f2 of the starting model embed the
    same sentences; L = InfoNCE(f1(x), f2(x)) with in-batch negatives."""

    def __init__(self, encoder: Encoder, config: TrainConfig):
        super().__init__(encoder, config)
        self.partner = copy.deepcopy(encoder)

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        feats = to_device(encoder.tokenize(texts, self.config.max_length, self.config.cuda_graphs), encoder.device)
        self.partner.train(encoder.training)
        return self.loss_fn(encoder(feats, training_head=True), self.partner(feats, training_head=True))


# ---- ConSERT: views made below the vocabulary ----------------------------------------------


def embedding_inputs(encoder: Encoder, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Tokenizer features -> the backbone's embedding inputs (``inputs_embeds`` from the word
    embeddings, explicit ``position_ids``), which ConSERT's view generators edit."""
    ids = features["input_ids"]
    out = {k: v for k, v in features.items() if k != "input_ids"}
    out["inputs_embeds"] = encoder.backbone.get_input_embeddings()(ids)
    out["position_ids"] = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    return out


def token_cutoff(
    inputs: dict[str, torch.Tensor], content: torch.Tensor, rate: float, generator: torch.Generator
) -> dict:
    """ConSERT token cutoff (Yan et al. 2021, "ConSERT", ACL): zero the embedding rows of
    ceil(rate x n) randomly chosen content tokens of each sentence (n content tokens; special and
    padding tokens never). Returns new inputs; the given ones are unchanged."""
    scores = torch.rand(content.shape, generator=generator).to(content.device).masked_fill(~content, 2.0)
    k = torch.ceil(content.sum(1) * rate).long()
    ranks = scores.argsort(1).argsort(1)
    cut = (ranks < k.unsqueeze(1)) & content
    return {**inputs, "inputs_embeds": inputs["inputs_embeds"].masked_fill(cut.unsqueeze(-1), 0.0)}


def token_shuffle(inputs: dict[str, torch.Tensor], content: torch.Tensor, generator: torch.Generator) -> dict:
    """ConSERT token shuffle: permute the position ids of each sentence's content tokens (special
    and padding positions stay), so the same tokens are read in a shuffled order. Returns new inputs."""
    positions = inputs["position_ids"].clone()
    for i in range(len(positions)):
        where = content[i].nonzero().squeeze(1)
        perm = torch.randperm(len(where), generator=generator).to(where.device)
        positions[i, where] = positions[i, where[perm]]
    return {**inputs, "position_ids": positions}


@contextlib.contextmanager
def dropout_off(module: nn.Module):
    """Eval mode for the duration (no dropout), then the previous mode."""
    was = module.training
    module.eval()
    try:
        yield
    finally:
        module.train(was)


class ConSERTObjective(SimCSEObjective):
    """ConSERT's unsupervised objective with one view generator in place of dropout: both views of
    each sentence come from ``token_cutoff`` (``view='cutoff'``) or ``token_shuffle`` applied
    independently to its embedding inputs, encoded with dropout off; InfoNCE as in SimCSE."""

    def __init__(
        self, encoder: Encoder, config: TrainConfig, view: Literal["cutoff", "shuffle"], cutoff_rate: float = 0.15
    ):
        super().__init__(encoder, config)
        if view not in ("cutoff", "shuffle"):
            raise ValueError(f"unknown ConSERT view '{view}'; choose cutoff or shuffle")
        self.view, self.cutoff_rate = view, cutoff_rate

    def forward(self, encoder: Encoder, texts: list[str], rows: np.ndarray):
        feats = encoder.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=token_limit(encoder.tokenizer, self.config.max_length),
            return_tensors="pt",
            return_special_tokens_mask=True,
        )
        content = feats.pop("special_tokens_mask").eq(0) & feats["attention_mask"].bool()
        feats = to_device(dict(feats), encoder.device)
        content = content.to(encoder.device)
        generator = torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        inputs = embedding_inputs(encoder, feats)
        if self.view == "cutoff":
            views = [token_cutoff(inputs, content, self.cutoff_rate, generator) for _ in range(2)]
        else:
            views = [token_shuffle(inputs, content, generator) for _ in range(2)]
        both = {k: torch.cat([views[0][k], views[1][k]]) for k in inputs}
        with dropout_off(encoder):
            emb = encoder(both, training_head=True)
        return self.loss_fn(emb[: len(texts)], emb[len(texts) :])
