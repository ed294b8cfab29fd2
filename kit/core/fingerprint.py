"""Content fingerprints: what a run's cache key holds instead of file names.

A run's result depends on the content of what it reads, not on where that content lives: two copies
of one file give one result, and one file path holding new content gives another. ``digest`` hashes
loaded values (a corpus as sampled, a dataset as parsed); ``folder_digest`` hashes a folder's files
(a model's weights, tokenizer and configuration).
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import time
from pathlib import Path

import numpy as np

_file_digests: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256: each file hashed once


def digest(*values) -> str:
    """16 hex digits of a SHA-256 over ``values`` in a canonical form: None, bools, ints, floats,
    strings and bytes; lists, tuples, sets and dicts (keys sorted) of them; dataclasses (field by
    field, except fields marked ``field(metadata={"digest": False})``, such as where a dataset was
    read from) and numpy arrays (dtype, shape and items). Equal values give equal digests in every
    process; any change to an item, its type or the structure gives another."""
    h = hashlib.sha256()
    _feed(h, values)
    return h.hexdigest()[:16]


def _feed(h, value) -> None:
    if value is None or isinstance(value, (bool, int, float, str, bytes, np.generic)):
        if isinstance(value, np.generic):
            value = value.item()
        data = value if isinstance(value, bytes) else repr(value).encode()
        h.update(type(value).__name__.encode() + struct.pack("<Q", len(data)) + data)
    elif isinstance(value, np.ndarray):
        h.update(f"ndarray{value.dtype.str}{value.shape}".encode())
        if value.dtype == object or value.dtype.kind == "U":
            _feed(h, value.tolist())
        else:
            h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}{len(value)}[".encode())
        for item in value:
            _feed(h, item)
    elif isinstance(value, (set, frozenset)):
        _feed(h, sorted(value, key=repr))
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}{{".encode())
        for key in sorted(value, key=repr):
            _feed(h, key)
            _feed(h, value[key])
    elif dataclasses.is_dataclass(value):
        h.update(type(value).__name__.encode())
        for field in dataclasses.fields(value):
            if field.metadata.get("digest") is False:
                continue
            _feed(h, field.name)
            _feed(h, getattr(value, field.name))
    else:
        raise TypeError(f"digest: no canonical form for {type(value).__name__}")


def file_digest(path: str | Path) -> str:
    """SHA-256 (16 hex digits) of a file's bytes; a file unchanged in size and modification time since
    it was last hashed in this process (and untouched for two seconds before that) is not read again."""
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _file_digests:
        return _file_digests[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    # A file modified in the last seconds may change again within one tick of the file system's clock,
    # keeping its size and time: remember only digests of files that have been still for a while.
    if time.time_ns() - stat.st_mtime_ns > 2_000_000_000:
        _file_digests[key] = h.hexdigest()[:16]
    return h.hexdigest()[:16]


def folder_digest(folder: str | Path, ignore: tuple[str, ...] = ()) -> str:
    """``digest`` of (relative path, file digest) for every file under ``folder``; hidden files and
    folders (``.git``, ``.cache``) are left out, and so are the files named in ``ignore`` (relative paths)."""
    folder = Path(folder)
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    visible = [f for f in files if not any(part.startswith(".") for part in f.parts) and f.as_posix() not in ignore]
    return digest([(f.as_posix(), file_digest(folder / f)) for f in visible])
