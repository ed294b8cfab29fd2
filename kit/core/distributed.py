"""Data-parallel SimCSE across processes (``accelerate launch``), with in-batch negatives that
span all devices.

Every process draws the same global batch (same seed), embeds its contiguous shard, and gathers
all shards' embeddings *with* gradient (``gather_with_grad``), so each
process computes the InfoNCE of the whole global batch. The gather's backward sums the gradient
that every process sends to a shard (world x dL/dz) and DDP averages parameter gradients over the
world, so an update equals one process training on the global batch.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.distributed as dist

from kit.core.augment import Augmenter
from kit.core.config import TrainConfig
from kit.core.models import Encoder
from kit.core.objectives import SimCSEObjective


def make_accelerator(**kwargs):
    """An ``accelerate.Accelerator`` for the kit's encoders: DDP told that some parameters get no
    gradient (the backbone's own pooler layer, which no kit pooler uses). ``kwargs`` go to Accelerator."""
    from accelerate import Accelerator, DistributedDataParallelKwargs

    return Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)], **kwargs)


class _GatherWithGrad(torch.autograd.Function):
    """all_gather forward; backward sums the incoming gradient over processes and returns this
    process's slice (equal shard sizes)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        dist.all_reduce(grad)
        n = grad.shape[0] // dist.get_world_size()
        return grad[dist.get_rank() * n : (dist.get_rank() + 1) * n]


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """Concatenate ``x`` from every process in rank order, differentiably; ``x`` itself outside a process group."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return x
    return _GatherWithGrad.apply(x)


class DistributedSimCSEObjective(SimCSEObjective):
    """unsup-SimCSE on a global batch sharded over ``accelerator``'s processes (see the module
    docstring); the global batch size must divide evenly. Augmented views, MixCSE and instance
    weighting work as in one process: every process augments the whole global batch with the
    same RNG draws and keeps its shard; the complementary model's embeddings are gathered (no
    gradient), and the loss, mixed negatives and weights are computed on the gathered batch."""

    distributed = True

    def __init__(self, encoder: Encoder, config: TrainConfig, accelerator, augmenter: Augmenter | None = None):
        super().__init__(encoder, config, augmenter)
        if config.batch_size % accelerator.num_processes:
            raise ValueError(
                f"batch size {config.batch_size} does not split over {accelerator.num_processes} processes"
            )
        self.rank, self.world = accelerator.process_index, accelerator.num_processes

    def forward(self, model: torch.nn.Module, texts: list[str], rows: np.ndarray):
        encoder = getattr(model, "module", model)  # the DDP wrapper forwards and syncs; the Encoder tokenizes
        n = len(texts) // self.world
        mine = slice(self.rank * n, (self.rank + 1) * n)
        view2 = self.second_views(texts)
        feats = self.view_features(encoder, texts[mine], view2[mine] if view2 else None)
        comp = self.complementary_embeddings({k: v[:n] for k, v in feats.items()})
        if comp is not None:
            comp = gather_with_grad(comp)
        emb = model(feats, training_head=True)
        return self.loss_fn(gather_with_grad(emb[:n]), gather_with_grad(emb[n:]), comp)
