"""Progress bars: tqdm's notebook-aware bars, silenced for batch runs.

``python -m kit.batch`` sets ``KIT_PROGRESS=0`` so that executed reports stay free of
bar residue; interactive notebooks and scripts get bars.
"""

from __future__ import annotations

import os

from tqdm.auto import tqdm


def bar(iterable=None, **kwargs):
    """``tqdm.auto.tqdm`` unless ``KIT_PROGRESS=0``."""
    kwargs.setdefault("disable", os.environ.get("KIT_PROGRESS", "1") == "0")
    return tqdm(iterable, **kwargs)
