"""Dataset declarations and where their files are found.

Each dataset is declared once, as MTEB declares its tasks: a ``DatasetSpec`` with its file under a
data root, its source (repository @ commit : path), licence, citation, splits and their sizes as
published here, and the metric the studies report on it. Files are resolved in a fixed order, and a
dataset that cannot be found fails at once with every place that was tried.

Resolution order: explicit path -> ``$KIT_DATA`` -> ``../shared/data`` beside the project -> the
local cache (``$KIT_CACHE`` or ``~/.cache/medcse-kit``) -> the Hugging Face hub (only for a spec
with ``fetch``, and only when the hub answers a connection within ``HUB_TIMEOUT`` seconds or
``HF_HUB_OFFLINE`` is set: its client would otherwise retry for about 30 s). A dataset found nowhere
fails in one line that ends by naming ``DATA_PAGE``, which says where each dataset comes from.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import socket
import threading
import urllib.request
import zlib
from collections.abc import Callable, Sized
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from kit.paths import PROJECT_ROOT
from kit.registry import Registry


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset's declaration. ``relpath`` is relative to a data root; ``{split}`` in it stands for
    the split of datasets kept in one file per split (empty: a dataset read only from an explicit path).
    ``splits`` maps each split to its number of rows as the kit loads them (None: unknown here, for
    credentialed data). ``load(split)`` loads one split from the default places (the test of every
    declaration calls it); ``fetch(spec)`` downloads a hub copy into the cache, converted to the kit's
    file format."""

    name: str
    relpath: str
    description: str
    source: str
    licence: str
    citation: str
    splits: dict[str, int | None]
    metric: str = ""
    hf_name: str | None = None
    credentialed: bool = False
    load: Callable[[str], Sized] | None = field(default=None, compare=False, repr=False)
    fetch: Callable[[DatasetSpec], Path] | None = field(default=None, compare=False, repr=False)

    def file(self, split: str | None = None) -> str:
        """The file's path under a data root (for per-split files, of ``split``)."""
        return self.relpath.format(split=split) if "{split}" in self.relpath else self.relpath


DATASETS: Registry[DatasetSpec] = Registry("dataset")
"""Every dataset declaration by its name (``DATASETS.add`` where it is declared)."""


DATA_PAGE = "docs/data.md"
"""The documentation page of every dataset (its source, licence, files and how to get it), relative to the project;
the last words of every "not found" error."""
HUB_TIMEOUT = 3.0
"""Seconds the Hugging Face hub has to accept a connection before the kit stops asking it for a dataset."""
OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
"""The variables that put the Hugging Face clients offline (each read as ``huggingface_hub`` reads it)."""


class DataNotFoundError(FileNotFoundError):
    """A dataset was found in none of the places the kit looks."""


class SplitNotAvailableError(DataNotFoundError):
    """The split or task is known but not publicly available."""


class MalformedDataError(ValueError):
    """A row of a data file breaks its format; the message names file and line. It quotes at most a short
    ``excerpt`` of a value parsed as data, and nothing of a file whose first line is not the format's: the
    file may not be the one the user meant to share (``biosses_path: /etc/shadow``)."""


def excerpt(value: object, limit: int = 30) -> str:
    """``repr`` of at most ``limit`` characters of ``value`` (as text), for an error message about one cell."""
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def cache_dir() -> Path:
    return Path(os.environ.get("KIT_CACHE", Path.home() / ".cache" / "medcse-kit"))


def shared_data() -> Path:
    """``../shared/data``: the public datasets gathered beside the project for offline use."""
    return PROJECT_ROOT.parent / "shared" / "data"


def candidate_roots() -> list[tuple[str, Path]]:
    """The data roots searched, in order, each with a label for error messages."""
    roots = []
    if os.environ.get("KIT_DATA"):
        roots.append(("$KIT_DATA", Path(os.environ["KIT_DATA"])))
    roots.append(("../shared/data beside the project", shared_data()))
    roots.append(("local cache", cache_dir() / "data"))
    return roots


def hub_unreachable(timeout: float = HUB_TIMEOUT) -> str | None:
    """Why the kit does not ask the Hugging Face hub for a dataset from here, or None when it may: with
    ``HF_HUB_OFFLINE`` (or ``HF_DATASETS_OFFLINE``) set, None (``datasets`` then reads its own cache and fails at
    once without it); else a connection to the hub's endpoint (``$HF_ENDPOINT``, or the proxy the environment names
    for it) must open within ``timeout`` seconds. Without this probe the hub's client retries for about 30 s."""
    if any(os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE") for name in OFFLINE):
        return None
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = urlsplit(endpoint)
    proxy = None if urllib.request.proxy_bypass(url.hostname or "") else urllib.request.getproxies().get(url.scheme)
    target = urlsplit(proxy if "://" in proxy else f"http://{proxy}") if proxy else url
    port = target.port or (443 if target.scheme == "https" else 80)
    problem = _connection_problem(target.hostname or "", port, timeout)
    through = f" through the proxy {proxy}" if proxy else ""
    return None if problem is None else f"no connection to {endpoint}{through} within {timeout:g} s ({problem})"


def _connection_problem(host: str, port: int, timeout: float) -> str | None:
    """Why a TCP connection to ``host:port`` did not open within ``timeout`` seconds (name lookup included, in a
    thread so that a resolver that never answers is not waited for), or None."""
    outcome = ["no answer"]

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome[0] = None
        except OSError as err:
            outcome[0] = err.strerror or str(err) or type(err).__name__

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout)
    return outcome[0]


def resolve(spec: DatasetSpec, path: str | os.PathLike | None = None, split: str | None = None) -> Path:
    """Return the file for ``spec`` (and ``split``); raise DataNotFoundError naming every place tried."""
    if path is not None:  # an explicit path is never silently replaced by another copy
        if Path(path).is_file():
            return Path(path)
        raise DataNotFoundError(f"Dataset '{spec.name}': the explicit path {path} is not a file.")
    relpath, tried = spec.file(split), []
    for label, root in candidate_roots():
        p = root / relpath
        if p.is_file():
            return p
        tried.append(f"{label}: {p}")
    if spec.fetch is not None:
        why = hub_unreachable()
        if why is None:
            try:
                return spec.fetch(spec)
            except Exception as err:  # the hub is optional; report why it failed
                why = f"{type(err).__name__}: {err}"
        tried.append(f"Hugging Face hub {spec.hf_name}: {why}")
    credential = f" '{spec.name}' is credentialed ({spec.licence}) and not redistributed." if spec.credentialed else ""
    message = (
        f"Dataset '{spec.name}' not found. Looked in: {'; '.join(tried)}.{credential} Provide it by passing an "
        f"explicit path, setting $KIT_DATA to a folder holding {relpath}, or placing the shared data folder beside "
        f"the project; where to get each dataset: {DATA_PAGE}"
    )
    raise DataNotFoundError(" ".join(message.split()))  # one line, whatever the hub's client said


def open_text(file: Path) -> io.StringIO:
    """A data file as text: UTF-8 (a leading byte-order mark, as spreadsheet programs write, dropped), gunzipped
    when its name ends in ``.gz``, lines kept as written (``newline=""``, as ``csv`` wants). Raises
    MalformedDataError naming the file, and the line of the first bad byte, when it is neither."""
    data = file.read_bytes()
    if file.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
            raise MalformedDataError(
                f"{file}: not a readable gzip file ({err}); if it is plain text, name it without .gz"
            ) from None
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return io.StringIO(data.decode("utf-8"), newline="")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise MalformedDataError(
            f"{file}:{line}: not UTF-8 text (byte {data[err.start]:#04x}); save the file as UTF-8"
        ) from None


def read_jsonl(file: Path, fields: tuple[str, ...]) -> list[dict]:
    """The records of a JSON-lines file (blank lines skipped); each must have every field in ``fields``."""
    rows = []
    with open_text(file) as f:
        for line, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as err:
                raise MalformedDataError(f"{file}:{line}: not JSON ({err.msg})") from None
            missing = [k for k in fields if row.get(k) is None]
            if missing:
                raise MalformedDataError(f"{file}:{line}: missing field(s) {missing}")
            rows.append(row)
    return rows
