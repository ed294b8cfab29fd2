"""Dataset declarations and where their files are found.

Each dataset is declared once, as MTEB declares its tasks: a ``DatasetSpec`` with its file under a
data root, its source (repository @ commit : path), licence, citation, splits and their sizes as
published here, and the metric the studies report on it. Files are resolved in a fixed order, and a
dataset that cannot be found fails at once with every place that was tried.

Resolution order: explicit path -> ``$KIT_DATA`` -> ``../shared/data`` beside the project -> the
local cache (``$KIT_CACHE`` or ``~/.cache/medcse-kit``) -> the Hugging Face hub (only for a spec
with ``fetch`` and when the network answers).
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Sized
from dataclasses import dataclass, field
from pathlib import Path

from kit.paths import PROJECT_ROOT
from kit.registry import Registry


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset's declaration. ``relpath`` is relative to a data root; ``{split}`` in it stands for
    the split of datasets kept in one file per split. ``splits`` maps each split to its number of rows
    as the kit loads them (None: unknown here, for credentialed data). ``load(split)`` loads one split
    from the default places (the test of every declaration calls it); ``fetch(spec)`` downloads a hub
    copy into the cache, converted to the kit's file format."""

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


def candidate_roots() -> list[tuple[str, Path]]:
    """The data roots searched, in order, each with a label for error messages."""
    roots = []
    if os.environ.get("KIT_DATA"):
        roots.append(("$KIT_DATA", Path(os.environ["KIT_DATA"])))
    roots.append(("../shared/data beside the project", PROJECT_ROOT.parent / "shared" / "data"))
    roots.append(("local cache", cache_dir() / "data"))
    return roots


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
        try:
            return spec.fetch(spec)
        except Exception as err:  # the hub is optional; report why it failed
            tried.append(f"Hugging Face hub {spec.hf_name}: {type(err).__name__}: {err}")
    credential = f"\n'{spec.name}' is credentialed ({spec.licence}) and not redistributed." if spec.credentialed else ""
    raise DataNotFoundError(
        f"Dataset '{spec.name}' not found. Looked in:\n  - "
        + "\n  - ".join(tried)
        + f"\nProvide it by passing an explicit path, setting $KIT_DATA to a folder holding "
        f"{relpath}, or placing the shared data folder beside the project.{credential}"
    )


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
