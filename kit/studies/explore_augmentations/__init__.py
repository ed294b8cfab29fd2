"""The augmentation explorer (``notebooks/explore_augmentations.ipynb``): pick a language, an augmenter,
its ratio and a seed, and see views of a typed or sampled sentence with the edits highlighted. It
trains nothing, so it has ``Params`` and no ``Study``."""

from kit.report.index import StudyAbout
from kit.studies.explore_augmentations.params import ExploreParams as Params
from kit.study import STUDIES, StudyEntry

ABOUT = StudyAbout(
    "The augmentation explorer",
    "What does each augmentation do to a sentence, at a given ratio and seed?",
    None,
)
STUDIES.add(StudyEntry("explore_augmentations", Params, None, ABOUT))

__all__ = ["ABOUT", "Params"]
