"""Study 1 (``notebooks/simcse_augmentations.ipynb``): unsupervised SimCSE with five text augmentations
for the positive view and MixCSE with instance weighting, on BIOSSES (English) and ChineseBLUE (Chinese).

``params`` declares the rows and parameters, ``study`` trains and caches the runs and builds the
report's tables, ``chineseblue`` holds the Chinese probe evaluation."""

from kit.studies.simcse_augmentations.params import SimCSEParams as Params
from kit.studies.simcse_augmentations.study import Study

__all__ = ["Params", "Study"]
