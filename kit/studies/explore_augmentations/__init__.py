"""The augmentation explorer (``notebooks/explore_augmentations.ipynb``): pick a language, an augmenter,
its ratio and a seed, and see views of a typed or sampled sentence with the edits highlighted. It
trains nothing, so it has ``Params`` and no ``Study``."""

from kit.studies.explore_augmentations.params import ExploreParams as Params

__all__ = ["Params"]
