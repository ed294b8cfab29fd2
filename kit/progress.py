"""Progress bars: tqdm's notebook-aware bars, silenced for batch runs.

``python -m kit.batch`` sets ``KIT_PROGRESS=0`` so that executed reports stay free of
bar residue (the kit's bars and those of transformers / huggingface_hub); interactive
notebooks and scripts get bars.
"""

from __future__ import annotations

import os

from tqdm.auto import tqdm

ENABLED = os.environ.get("KIT_PROGRESS", "1") != "0"

if not ENABLED:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # also disables huggingface_hub's bars


def bar(iterable=None, show: bool = True, **kwargs):
    """``tqdm.auto.tqdm``, shown when ``show`` and not silenced by ``KIT_PROGRESS=0``."""
    return tqdm(iterable, disable=not (ENABLED and show), **kwargs)
