"""Parameters of the augmentation explorer."""

from __future__ import annotations

from dataclasses import dataclass

from kit.core.augment import LANGUAGES
from kit.data import load_chineseblue, load_pubmed_sentences
from kit.params import Params, param


@dataclass
class ExploreParams(Params):
    """The augmentation explorer: live widgets in JupyterLab, a static view of every augmenter in the report."""

    sample_size: int = param(2000, "sentences per language the sample button draws from", min=1)
    seed: int = param(0, "seed of the views and of the sample button", min=0)
    ratio: float = param(
        0.2, "share of units each augmenter edits: the slider's first value and the static view", gt=0, lt=1
    )
    languages: list[str] = param(
        ["en", "zh"],
        "languages offered (en: PubMed sentences, zh: cMedQQ questions)",
        choices=LANGUAGES,
        nonempty=True,
        unique=True,
    )

    def pools(self) -> dict[str, list[str]]:
        """Sample sentences: PubMed for ``en``, cMedQQ training queries for ``zh``."""
        loaders = {
            "en": lambda: load_pubmed_sentences(limit=self.sample_size),
            "zh": lambda: load_chineseblue("cMedQQ", "train").texts[0][: self.sample_size],
        }
        return {lang: loaders[lang]() for lang in self.languages}
