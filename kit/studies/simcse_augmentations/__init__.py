"""Study 1 (``notebooks/simcse_augmentations.ipynb``): unsupervised SimCSE with five text augmentations
for the positive view and MixCSE with instance weighting, on BIOSSES (English) and ChineseBLUE (Chinese).

``params`` declares the rows and parameters, ``study`` trains and caches the runs and builds the
report's tables, ``report`` writes its prose (what the run uses, the verdicts) and its record,
``chineseblue`` the cMedQQ cosine view and the Chinese table (the probes are suite tasks)."""

from kit.report.index import StudyAbout
from kit.studies.simcse_augmentations.params import SimCSEParams as Params
from kit.studies.simcse_augmentations.study import Study
from kit.study import STUDIES, StudyEntry

ABOUT = StudyAbout(
    "Study 1: SimCSE with text augmentations and MixCSE",
    "Does a text augmentation as the positive view, or MixCSE with instance weighting, give better "
    "sentence embeddings than SimCSE's dropout views?",
    "training_curves",
)
STUDIES.add(StudyEntry("simcse_augmentations", Params, Study, ABOUT))

__all__ = ["ABOUT", "Params", "Study"]
