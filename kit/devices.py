"""Device choice and mixed precision: CUDA with bf16 autocast when present, else CPU in fp32."""

from __future__ import annotations

import contextlib

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> cuda if available else cpu; 'cuda' without a GPU is an error, not a silent fallback."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device '{name}' requested but torch sees no CUDA device (torch {torch.__version__})")
    return torch.device(name)


PRECISIONS = ("bf16", "fp32")


def autocast(device: torch.device, precision: str = "bf16"):
    """bf16 autocast on CUDA unless ``precision`` is "fp32"; a no-op context on CPU (fp32 keeps
    CPU runs reproducible)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if device.type == "cuda" and precision == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def describe(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    return f"cpu ({torch.get_num_threads()} threads)"
