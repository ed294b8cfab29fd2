"""Study 4 (``notebooks/medse_entity_definitions.ipynb``): MED-SE (Hwang et al. 2022), SimCSE plus an
entity-definition contrastive loss, against contrastive tension, ConSERT, whitening and pooling baselines.

``linking`` links Disease Ontology entities in sentences, ``method`` holds the mixtures, the
duplicate-entity sampler, the entity and definition encoders and the MED-SE objective, ``params`` the
rows and parameters, ``study`` the cached runs, sweeps and tables."""

from kit.studies.medse_entity_definitions.params import MedSEParams as Params
from kit.studies.medse_entity_definitions.study import Study

__all__ = ["Params", "Study"]
