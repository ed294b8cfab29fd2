"""Files written whole or not at all, JSON that every parser reads, and damaged files set aside.

Every record the kit keeps (run results, checkpoints, reports' tables and records) is written to a
temporary file beside its target and renamed over it: a reader sees the old file or the new one,
never half of one, even when the writer is killed. A file that is unreadable all the same (a disk
fault, a copy cut short, a hand edit) is renamed, not deleted, so that its run is recomputed and the
user can still look at what was there.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def write_atomic(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, flush it to disk, and rename it over
    ``path`` (``os.replace`` is atomic on one filesystem). ``tmp`` ends in ``path``'s own suffix so
    that writers which append one (``np.save``) keep the name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """``path.write_text(text)`` (UTF-8), whole or not at all."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def json_text(value, **options) -> str:
    """``json.dumps(value, **options)`` in the JSON every parser reads: a NaN or infinite float (pandas' missing
    cell, a score of nothing) is written ``null``, not Python's bare ``NaN``, which JavaScript's ``JSON.parse``,
    ``jq`` and strict parsers reject."""
    return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value):
    if isinstance(value, np.floating):  # float32 and float16 are no Python floats
        value = float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def normal_permissions(*paths: str | Path) -> None:
    """Give each file of ``paths`` (every file under a folder among them) the mode a plain ``open()`` would,
    0666 less the umask: transformers writes weights through a private temporary file, which leaves them 0600."""
    mask = os.umask(0)
    os.umask(mask)
    for path in map(Path, paths):
        for file in [path] if path.is_file() else path.rglob("*"):
            if file.is_file() and not file.is_symlink():
                file.chmod(0o666 & ~mask)


def set_aside(path: str | Path, why: str) -> Path:
    """Rename a damaged file to ``<name>.damaged-<time>`` beside it and say so on stderr; returns the new path."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.replace(path, aside)
    print(f"[kit] {path} is unreadable ({why}); set aside as {aside.name}, recomputing", file=sys.stderr, flush=True)
    return aside
