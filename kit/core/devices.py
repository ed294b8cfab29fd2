"""Device choice and mixed precision: CUDA with bf16 autocast when present, else CPU in fp32 (or, when asked, bf16
autocast on the CPU too)."""

from __future__ import annotations

import contextlib
import re

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> cuda if available else cpu; 'cuda' without a GPU is an error, not a silent fallback."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device '{name}' requested but torch sees no CUDA device (torch {torch.__version__})")
    return torch.device(name)


def check_device(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is 'auto', 'cpu', 'mps', 'cuda' or 'cuda:N' and torch sees that device."""
    match = re.fullmatch(r"cuda(?::(\d+))?", name)
    if name not in ("auto", "cpu", "mps") and not match:
        raise ValueError(f"device {name!r} is not one of 'auto', 'cpu', 'mps', 'cuda', 'cuda:N'")
    resolve_device(name)
    if match and match.group(1) and int(match.group(1)) >= torch.cuda.device_count():
        raise ValueError(f"device {name!r}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ValueError("device 'mps' requested but torch sees no Apple GPU")


def to_device(features: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Host tensors to ``device``. On CUDA they go through pinned memory with non-blocking copies:
    a copy from pageable memory would wait for the GPU to finish the previous step, and the host
    could not prepare the next batch meanwhile."""
    if device.type != "cuda":
        return {k: v.to(device) for k, v in features.items()}
    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in features.items()}


PRECISIONS = ("bf16", "fp32", "bf16-cpu")
"""``bf16``: bf16 autocast on CUDA, fp32 on the CPU (CPU runs stay comparable with the fp32 reference); ``fp32``:
no autocast; ``bf16-cpu``: bf16 autocast on CUDA and on the CPU too, faster on CPUs with native bf16 arithmetic
(AVX512-BF16, AMX; a SimCSE step on the 2-core machine's EPYC: 1.4x for pubmed-bert-mini, 1.6x for MiniLM,
``benchmarks/train_step.py``), slower on others."""


def autocast(device: torch.device, precision: str = "bf16"):
    """bf16 autocast on CUDA unless ``precision`` is "fp32", and on the CPU only for "bf16-cpu"; else a no-op."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if device.type == "cuda" and precision != "fp32":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "cpu" and precision == "bf16-cpu":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def describe(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    return f"cpu ({torch.get_num_threads()} threads)"
