"""Study 4 (``notebooks/medse_entity_definitions.ipynb``): MED-SE (Hwang et al. 2022), SimCSE plus an
entity-definition contrastive loss, against contrastive tension, ConSERT, whitening and pooling baselines.

``linking`` links Disease Ontology entities in sentences, ``method`` holds the mixtures, the
duplicate-entity sampler, the entity and definition encoders and the MED-SE objective, ``params`` the
rows and parameters, ``study`` the cached runs, sweeps and tables, ``report`` the report's prose (what the
run uses, the verdict) and its record."""

from kit.report.index import StudyAbout
from kit.studies.medse_entity_definitions.params import MedSEParams as Params
from kit.studies.medse_entity_definitions.study import Study
from kit.study import STUDIES, StudyEntry

ABOUT = StudyAbout(
    "Study 4: MED-SE entity-definition contrastive learning",
    "Does an entity-definition contrastive loss added to SimCSE improve biomedical sentence "
    "embeddings over SimCSE and the unsupervised baselines?",
    "alignment_uniformity",
)
STUDIES.add(StudyEntry("medse_entity_definitions", Params, Study, ABOUT))

__all__ = ["ABOUT", "Params", "Study"]
