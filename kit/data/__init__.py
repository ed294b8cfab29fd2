"""The datasets the studies read, one module per dataset: its declaration (``DatasetSpec``: source
and commit, licence, citation, splits, metric) and its loader. ``resolver`` finds the files
(explicit path, ``$KIT_DATA``, ``../shared/data``, the cache, the hub) and ``types`` holds what the
loaders return. ``DATASETS`` is the registry of every declaration (``kit.registry``)."""

from kit.data.biosses import BIOSSES, load_biosses
from kit.data.chineseblue import CHINESEBLUE, ChineseBlueDataset, chineseblue_corpus, load_chineseblue
from kit.data.disease_ontology import DISEASE_ONTOLOGY, load_disease_ontology
from kit.data.healthcaremagic import HEALTHCAREMAGIC, load_healthcaremagic
from kit.data.mednli import MEDNLI, load_mednli
from kit.data.medsts import MEDSTS, load_sts_tsv
from kit.data.meqsum import MEQSUM, load_meqsum
from kit.data.pubmed import PUBMED_SENTENCES, load_pubmed_sentences
from kit.data.resolver import (
    DATASETS,
    DataNotFoundError,
    DatasetSpec,
    MalformedDataError,
    SplitNotAvailableError,
    resolve,
)
from kit.data.rqe import RQE, RQE_SPLITS, load_rqe
from kit.data.types import EntityEntry, LabeledTexts, STSPairs, SummaryPairs

__all__ = [
    "BIOSSES",
    "CHINESEBLUE",
    "DATASETS",
    "DISEASE_ONTOLOGY",
    "HEALTHCAREMAGIC",
    "MEDNLI",
    "MEDSTS",
    "MEQSUM",
    "PUBMED_SENTENCES",
    "RQE",
    "RQE_SPLITS",
    "ChineseBlueDataset",
    "DataNotFoundError",
    "DatasetSpec",
    "EntityEntry",
    "LabeledTexts",
    "MalformedDataError",
    "STSPairs",
    "SplitNotAvailableError",
    "SummaryPairs",
    "chineseblue_corpus",
    "load_biosses",
    "load_chineseblue",
    "load_disease_ontology",
    "load_healthcaremagic",
    "load_mednli",
    "load_meqsum",
    "load_pubmed_sentences",
    "load_rqe",
    "load_sts_tsv",
    "resolve",
]
