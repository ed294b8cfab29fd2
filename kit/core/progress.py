"""Progress bars: tqdm's notebook-aware bars, silenced in batch runs.

``python -m kit.batch`` sets ``KIT_PROGRESS=0`` for the processes it starts, so that executed
reports stay free of bar residue. ``bar`` reads the variable at each call; ``quiet_libraries``
(called by ``kit.report.notebook.start`` and the batch workers) also silences the bars of
transformers and huggingface_hub. Inside ``heartbeat(sink)`` (``kit.batch``'s trainings) a silenced
bar with a total tells ``sink`` a plain line every few minutes instead, so that a long training is
not silent. Importing this module changes nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm.auto import tqdm

HEARTBEAT_SECONDS = 300.0
"""How often a silenced bar inside ``heartbeat`` says where it is."""

_heartbeat: tuple[Callable[[str], None], float] | None = None


def enabled() -> bool:
    """False when ``KIT_PROGRESS=0`` (batch runs)."""
    return os.environ.get("KIT_PROGRESS", "1") != "0"


def quiet_libraries() -> None:
    """Without progress bars (``KIT_PROGRESS=0``), turn off those of transformers and huggingface_hub too."""
    if not enabled():
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # also disables huggingface_hub's bars


def duration(seconds: float) -> str:
    """``45s``, ``12m05s``, ``2h03m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Heartbeat:
    """A silenced bar's count, told to ``sink`` at most every ``every`` seconds as one plain line:
    ``simcse seed 0: 750/3,000 (25%) in 9m05s; about 27m15s more`` (the rate so far, times what is left)."""

    def __init__(self, iterable, sink: Callable[[str], None], every: float, total=None, initial=0, desc="", **_):
        self.iterable, self.sink, self.every, self.desc = iterable, sink, every, desc or "progress"
        self.total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
        self.n = self.first = initial
        self.started = self.told = time.monotonic()

    def __iter__(self) -> Iterator:
        for item in self.iterable:
            yield item
            self.update(1)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if self.total and now - self.told >= self.every:
            self.told, took = now, now - self.started
            left = took / max(self.n - self.first, 1) * max(self.total - self.n, 0)
            done = f"{self.n:,}/{self.total:,} ({100 * self.n / self.total:.0f}%)"
            self.sink(f"{self.desc}: {done} in {duration(took)}; about {duration(left)} more")

    def set_postfix(self, *args, **kwargs) -> None:
        """Nothing: a heartbeat line has no postfix."""

    def close(self) -> None:
        """Nothing to close."""


@contextmanager
def heartbeat(sink: Callable[[str], None], every: float | None = None):
    """While inside, ``bar`` calls silenced by ``KIT_PROGRESS=0`` that know their total return a ``Heartbeat``
    (a line every ``every`` seconds; None: ``HEARTBEAT_SECONDS``)."""
    global _heartbeat
    previous, _heartbeat = _heartbeat, (sink, HEARTBEAT_SECONDS if every is None else every)
    try:
        yield
    finally:
        _heartbeat = previous


def bar(iterable=None, show: bool = True, **kwargs):
    """``tqdm.auto.tqdm``, shown when ``show`` and not silenced by ``KIT_PROGRESS=0``; silenced inside
    ``heartbeat``, a ``Heartbeat`` when its total is known (``total`` or ``len(iterable)``)."""
    if show and not enabled() and _heartbeat is not None:
        beat = Heartbeat(iterable, *_heartbeat, **kwargs)
        if beat.total is not None:
            return beat
    return tqdm(iterable, disable=not (enabled() and show), **kwargs)
