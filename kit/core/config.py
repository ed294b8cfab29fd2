"""The settings of the contrastive training loop (``kit.core.train``), declared once.

``TrainSettings`` holds what a study may set for every run it trains (its budget, optimizer, device and
speed options); the studies' parameters extend it (``kit.params.ContrastiveTrainingParams``) instead of
declaring the fields again, so help text, defaults (a demo-sized budget) and allowed values live here.
``TrainConfig`` adds what differs from run to run (the seed, a row's MixCSE and instance-weighting
options) and checks itself when it is built.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from kit.core.devices import PRECISIONS, check_device
from kit.core.models import MIN_MAX_LENGTH
from kit.core.settings import ParameterError, check_settings, setting

KEYED_WHEN_SET = ("warmup", "dropout")
"""Settings added after runs were cached: in a run key only when set (``TrainSettings.keyed``)."""


@dataclass
class TrainSettings:
    """A study's settings of the contrastive loop, the same for every run it trains."""

    steps: int = setting(20, "optimizer steps per training run", min=1)
    eval_every: int = setting(5, "steps between evaluations; each is a checkpoint and a selection candidate", min=1)
    batch_size: int = setting(32, "sentences per batch; each sentence's negatives are the others", min=2)
    lr: float = setting(3e-5, "AdamW learning rate, decayed linearly to 0", gt=0)
    warmup: float = setting(
        0.0, "share of the steps with a linear warm-up of the learning rate before its decay (0: none)", min=0, lt=1
    )
    dropout: float | None = setting(
        None,
        "dropout rate of the backbone in training, SimCSE's p (Gao et al. 2021 Table 1: 0.1 best, 0.15-0.2 close); "
        "None: the model's own",
        min=0,
        lt=1,
    )
    max_length: int = setting(32, "tokens per training sentence (longer ones are truncated)", min=MIN_MAX_LENGTH)
    temperature: float = setting(0.05, "temperature tau of the sentence-level InfoNCE", gt=0)
    max_grad_norm: float | None = setting(
        1.0,
        "clip the gradients' global L2 norm to this before each step, as SimCSE's Hugging Face Trainer and "
        "sentence-transformers do (None: no clipping)",
        gt=0,
    )
    device: str = setting("auto", "auto (CUDA when present), cpu, cuda, cuda:N or mps", available=check_device)
    precision: str = setting(
        "bf16",
        "bf16: bf16 autocast on CUDA, fp32 on the CPU; fp32: none (the eager reference); bf16-cpu: bf16 autocast on "
        "the CPU too (about 1.6x faster steps on a CPU with native bf16; results differ from fp32 runs)",
        choices=PRECISIONS,
    )
    compile: bool = setting(False, "torch.compile the backbone (CUDA speed; dropout masks then differ from eager runs)")
    cuda_graphs: bool = setting(
        False, "CUDA only: batches padded to max_length, replayed as CUDA graphs (the fastest step; not with compile)"
    )
    length_grouped: bool = setting(
        False, "batches of sentences of similar length (less padding; changes which negatives a sentence meets)"
    )

    def keyed(self) -> dict:
        """The settings as a run key holds them: every field, but ``KEYED_WHEN_SET`` only when it differs from its
        default, so that runs from before those settings existed keep their keys."""
        out = asdict(self)
        for name in KEYED_WHEN_SET:
            if out[name] == next(f.default for f in fields(TrainSettings) if f.name == name):
                del out[name]
        return out

    def check_speed_options(self) -> None:
        """``compile`` (dynamic shapes) and ``cuda_graphs`` (static shapes) exclude each other."""
        if self.compile and self.cuda_graphs:
            raise ParameterError("parameters 'compile' and 'cuda_graphs': choose one (dynamic or static shapes)")


@dataclass
class TrainConfig(TrainSettings):
    """One training run: the study's settings, its seed, and the row's loss options (None: off)."""

    seed: int = setting(0, "seed of the batches, views, dropout and initialisation", min=0)
    mix_lambda: float | None = setting(
        None, "MixCSE: weight lambda of the positive in the mixed negative (None: no mixed negatives)", min=0, max=1
    )
    iw_phi: float | None = setting(
        None,
        "instance weighting: negatives whose complementary-model cosine reaches phi are dropped (None: none is)",
        min=-1,
        max=1,
    )

    def __post_init__(self):
        check_settings(self)
        self.check_speed_options()
