"""Study 2 (``notebooks/augmented_sbert.ipynb``): Augmented SBERT (Thakur et al. 2021). A cross-encoder
trained on gold pairs labels silver pairs drawn by random and semantic-search sampling; bi-encoders are
trained on gold and on gold + silver.

``method`` holds the samplers and the cross-/bi-encoder training, ``params`` the benchmarks and
parameters, ``study`` the splits, cached comparisons and tables, ``report`` the report's prose (what the
run uses, the verdict) and its record."""

from kit.report.index import StudyAbout
from kit.studies.augmented_sbert.params import AugSBERTParams as Params
from kit.studies.augmented_sbert.study import Study
from kit.study import STUDIES, StudyEntry

ABOUT = StudyAbout(
    "Study 2: Augmented SBERT",
    "Do cross-encoder-labelled silver pairs, drawn at random or by semantic search, improve a "
    "bi-encoder trained on the gold pairs alone?",
    "scores",
)
STUDIES.add(StudyEntry("augmented_sbert", Params, Study, ABOUT))

__all__ = ["ABOUT", "Params", "Study"]
