"""Progress bars: tqdm's notebook-aware bars, silenced in batch runs.

``python -m kit.batch`` sets ``KIT_PROGRESS=0`` for the processes it starts, so that executed
reports stay free of bar residue. ``bar`` reads the variable at each call; ``quiet_libraries``
(called by ``kit.report.notebook.start`` and the batch workers) also silences the bars of
transformers and huggingface_hub. Importing this module changes nothing.
"""

from __future__ import annotations

import os

from tqdm.auto import tqdm


def enabled() -> bool:
    """False when ``KIT_PROGRESS=0`` (batch runs)."""
    return os.environ.get("KIT_PROGRESS", "1") != "0"


def quiet_libraries() -> None:
    """Without progress bars (``KIT_PROGRESS=0``), turn off those of transformers and huggingface_hub too."""
    if not enabled():
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # also disables huggingface_hub's bars


def bar(iterable=None, show: bool = True, **kwargs):
    """``tqdm.auto.tqdm``, shown when ``show`` and not silenced by ``KIT_PROGRESS=0``."""
    return tqdm(iterable, disable=not (enabled() and show), **kwargs)
