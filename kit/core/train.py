"""The contrastive training loop for sentence encoders (unsup-SimCSE and its variants).

One loop serves every row of every unsupervised study: an *objective* (``kit.core.objectives``)
maps a batch of corpus rows to a loss. The default, ``SimCSEObjective``, builds the positive
view as a dropout copy of the sentence (SimCSE) or its augmented copy, and may add MixCSE
negatives and instance weights; contrastive tension, ConSERT views and a study's own objective
(MED-SE's entity loss) plug in the same way. Evaluation runs every ``eval_every`` steps; each
evaluation writes a checkpoint that a restarted run resumes from, and the best evaluation by the
*selection metric* (BIOSSES dev Spearman, never test) is the model that is kept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from kit.core.augment import Augmenter
from kit.core.config import TrainConfig
from kit.core.devices import autocast, resolve_device
from kit.core.files import set_aside, write_atomic, write_text_atomic
from kit.core.models import Encoder
from kit.core.objectives import Objective, SimCSEObjective
from kit.core.progress import bar


@dataclass
class History:
    """One row per evaluation: step, mean training loss and cosines since the last one, the mean gradient norm
    before clipping (``grad_norm``) and the share of steps it was clipped (``clipped``), and metrics."""

    rows: list[dict] = field(default_factory=list)
    best_step: int | None = None
    selection_metric: str = "spearman_dev"
    train_seconds: float = 0.0

    def best(self) -> dict | None:
        return next((r for r in self.rows if r["step"] == self.best_step), None)


Evaluator = Callable[[Encoder], dict[str, float]]


def clip_gradients(params: list[torch.nn.Parameter], max_norm: float | None, accelerator=None) -> torch.Tensor:
    """Scale the gradients so that their global L2 norm is at most ``max_norm`` (None: leave them) and return
    the norm before clipping (a detached float tensor: no host synchronisation). With an ``accelerator``, its
    ``clip_grad_norm_`` (which sees the gradients after their reduction across processes)."""
    clip = accelerator.clip_grad_norm_ if accelerator is not None else torch.nn.utils.clip_grad_norm_
    return clip(params, float("inf") if max_norm is None else max_norm).detach().float()


def schedule(steps: int, warmup: float) -> Callable[[int], float]:
    """The learning rate's factor at step s: a linear warm-up over w = int(warmup x steps) steps, (s + 1) / w, then a
    linear decay to 0 at ``steps``, (steps - s) / (steps - w); without warm-up 1 - s / steps, as before it existed."""
    warm = int(warmup * steps)
    if warm == 0:
        return lambda s: max(0.0, 1.0 - s / steps)
    return lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / max(1, steps - warm))


def set_dropout(module: torch.nn.Module, p: float) -> None:
    """Every dropout inside ``module`` (a backbone's hidden and attention dropout; an objective's own towers, as
    contrastive tension's second copy) at rate ``p``, and the configs of the models inside saying so: SimCSE's noise,
    whose rate its authors tuned (Gao et al. 2021, Table 1)."""
    names = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout")
    for inner in module.modules():
        if isinstance(inner, torch.nn.Dropout):
            inner.p = p
        config = getattr(inner, "config", None)
        for name in names if hasattr(config, "to_dict") else ():
            if hasattr(config, name):
                setattr(config, name, p)


CHECKPOINT_KEYS = frozenset(
    "model optimizer scheduler objective batches aug_rng torch_rng cuda_rng history best step".split()
)


def read_checkpoint(ckpt: Path, keys: frozenset[str] = CHECKPOINT_KEYS) -> dict | None:
    """The state saved at a run's last checkpoint (a dict holding ``keys``), or None: when there is none,
    or when it cannot be read (a truncated or foreign file), in which case it is set aside and the run
    starts over."""
    if not ckpt.exists():
        return None
    try:
        state = torch.load(ckpt, weights_only=False)
        missing = keys - set(state) if isinstance(state, dict) else keys
        if missing:
            raise ValueError(f"not a kit checkpoint: missing {sorted(missing)}")
    except Exception as err:  # torch.load raises RuntimeError, EOFError, UnpicklingError, ... on a damaged file
        set_aside(ckpt, f"{type(err).__name__}: {str(err)[:200]}")
        return None
    return state


def train_contrastive(
    encoder: Encoder,
    corpus: list[str],
    config: TrainConfig,
    evaluator: Evaluator,
    augmenter: Augmenter | None = None,
    run_dir: str | Path | None = None,
    desc: str = "train",
    objective: Objective | None = None,
    accelerator=None,
    selection_metric: str = "spearman_dev",
) -> History:
    """Train ``encoder`` in place and leave it at its best evaluation; return the history.

    ``objective`` (default: ``SimCSEObjective(encoder, config, augmenter)``; see ``Objective``) is
    called as ``objective(encoder, texts, rows) -> (loss, stats)`` on each batch of corpus rows; build
    it on the device-free starting encoder before training. ``run_dir`` enables checkpoint/resume.

    ``selection_metric``: the evaluator's column that chooses the kept evaluation (highest wins).

    ``accelerator`` (``kit.core.distributed.make_accelerator()`` in a process that ``accelerate launch``
    started): data-parallel training; the encoder is wrapped for gradient averaging, every process draws
    the same global batches and ``kit.core.distributed.DistributedSimCSEObjective`` embeds its shard of
    each; only the main process writes checkpoints.
    """
    device = resolve_device(config.device)
    if objective is None:
        objective = SimCSEObjective(encoder, config, augmenter)
    encoder.to(device)
    objective.to(device)
    batches = objective.batches(corpus)
    torch.manual_seed(config.seed)
    if config.cuda_graphs and device.type != "cuda":
        raise ValueError(f"cuda_graphs needs a CUDA device, not {device}")
    if config.compile or config.cuda_graphs:  # in place: parameter names and checkpoints unchanged
        encoder.backbone.compile(**({"mode": "reduce-overhead"} if config.cuda_graphs else {"dynamic": True}))

    params = [p for p in [*encoder.parameters(), *objective.parameters()] if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=config.lr, fused=device.type == "cuda")  # one kernel per step on CUDA
    model = encoder
    if accelerator is not None:
        if not objective.distributed:
            raise ValueError("with an accelerator, pass objective=kit.core.distributed.DistributedSimCSEObjective(...)")
        model, opt = accelerator.prepare(encoder, opt)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule(config.steps, config.warmup))
    if config.dropout is not None:  # both the encoder and any tower of the objective's (contrastive tension's copy)
        set_dropout(encoder, config.dropout)
        set_dropout(objective, config.dropout)
    history, best_state, step = History(selection_metric=selection_metric), None, 0

    ckpt = Path(run_dir) / "checkpoint.pt" if run_dir else None
    state = read_checkpoint(ckpt) if ckpt else None
    if state is not None:
        encoder.load_state_dict(state["model"])
        objective.load_state_dict(state["objective"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        batches.load(state["batches"])
        objective.rng.bit_generator.state = state["aug_rng"]
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        history = History(**state["history"])
        best_state, step = state["best"], state["step"]

    def evaluate(step: int, sums: dict[str, torch.Tensor], count: int) -> None:
        nonlocal best_state
        row = {"step": step, **{k: (v / count).item() if count else None for k, v in sums.items()}}
        with torch.compiler.set_stance("force_eager"):  # compiled for training shapes only
            row.update(evaluator(encoder))
        history.rows.append(row)
        best = history.best()
        if step > 0 and (best is None or row[history.selection_metric] > best[history.selection_metric]):
            history.best_step = step
            best_state = {k: v.detach().cpu().clone() for k, v in encoder.state_dict().items()}

    stat_names = ("loss", *objective.stat_names, "grad_norm", "clipped")
    if step == 0:
        evaluate(0, {k: torch.zeros(()) for k in stat_names}, 0)

    sums = {k: torch.zeros((), device=device) for k in stat_names}
    count = 0
    encoder.train()
    progress = bar(total=config.steps, initial=step, desc=desc, leave=False)
    t0 = time.perf_counter()
    while step < config.steps:
        idx = batches.next()
        if config.cuda_graphs:
            torch.compiler.cudagraph_mark_step_begin()
        with autocast(device, config.precision):
            loss, stats = objective(model, [corpus[i] for i in idx], idx)
        if accelerator is None:
            loss.backward()
        else:
            accelerator.backward(loss)
        norm = clip_gradients(params, config.max_grad_norm, accelerator)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        count += 1
        sums["loss"] += loss.detach().float()
        sums["grad_norm"] += norm
        sums["clipped"] += (norm > (config.max_grad_norm or float("inf"))).float()
        for k, v in stats.items():
            sums[k] += v
        progress.update(1)
        if step % config.eval_every == 0 or step == config.steps:
            history.train_seconds += time.perf_counter() - t0
            evaluate(step, sums, count)
            sums = {k: torch.zeros_like(v) for k, v in sums.items()}
            count = 0
            if ckpt and (accelerator is None or accelerator.is_main_process):
                saved = {
                    "model": encoder.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "objective": objective.state_dict(),
                    "batches": batches.state(),
                    "aug_rng": objective.rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(),
                    "cuda_rng": torch.cuda.get_rng_state_all() if device.type == "cuda" else None,
                    "history": asdict(history),
                    "best": best_state,
                    "step": step,
                }
                write_atomic(ckpt, lambda tmp: torch.save(saved, tmp))
            t0 = time.perf_counter()
    progress.close()
    if best_state is not None:
        encoder.load_state_dict(best_state)
    encoder.eval()
    if run_dir:
        write_text_atomic(Path(run_dir) / "history.json", json.dumps(asdict(history), indent=1))
    return history
