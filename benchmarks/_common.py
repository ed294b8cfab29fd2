"""Shared by the benchmarks: timing and the results file ``benchmarks/results/<machine>.md``."""

from __future__ import annotations

import platform
import shlex
import sys
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    gpu = torch.cuda.get_device_name(0).replace(" ", "-") if torch.cuda.is_available() else "cpu"
    import os

    return f"{platform.machine()}-{os.cpu_count()}cores-{gpu}"


def cpu_model() -> str:
    """The CPU's model name (from ``/proc/cpuinfo`` on Linux): machines of one label can hold other CPUs, whose
    kernels rank the backends differently (ONNX Runtime against PyTorch, for one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU model unknown"


def best_of(fn, repeats: int) -> float:
    """Minimum wall time of ``repeats`` calls (seconds)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def onnxruntime_version() -> str | None:
    """ONNX Runtime's version (its CPU kernels decide the ONNX rows' speed), None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("onnxruntime")
    except metadata.PackageNotFoundError:
        return None


def record(title: str, table: str, quick: bool) -> None:
    """Print the table; in full mode also append it, dated, to the machine's results file."""
    command = "python " + shlex.join([Path(sys.argv[0]).as_posix().split("/medcse/")[-1], *sys.argv[1:]])
    versions = f"torch {torch.__version__}" + (f", onnxruntime {ort}" if (ort := onnxruntime_version()) else "")
    where = f"{machine()} ({cpu_model()})"
    text = f"## {title}\n\n{time.strftime('%Y-%m-%d')}, {where}, {versions}, `{command}`\n\n{table}\n"
    print(text)
    if not quick:
        RESULTS.mkdir(exist_ok=True)
        with open(RESULTS / f"{machine()}.md", "a") as f:
            f.write(text + "\n")
