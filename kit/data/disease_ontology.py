"""The Human Disease Ontology: disease names, synonyms and definitions (study 4's entities)."""

from __future__ import annotations

import csv
import os

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, open_text, resolve
from kit.data.types import EntityEntry

DISEASE_ONTOLOGY = DATASETS.add(
    DatasetSpec(
        name="disease_ontology",
        relpath="disease_ontology/doid_definitions.tsv.gz",
        description="Human Disease Ontology (release 2026-07-31): 9,962 diseases with a name, a one-sentence "
        "definition and synonyms. Diseases only: no drugs or procedures.",
        source="DiseaseOntology/HumanDiseaseOntology @ 9fbefd6 : src/facets.tsv.gz, DOreports/HumanDO.tsv, "
        "src/ontology/subsets/*.obo",
        licence="CC0 1.0",
        citation="Schriml et al. (2022). The Human Disease Ontology 2022 update. Nucleic Acids Research 50(D1).",
        splits={"all": 9_962},
        load=lambda split: load_disease_ontology(),
    )
)


def load_disease_ontology(path: str | os.PathLike | None = None) -> list[EntityEntry]:
    """Disease Ontology entries; relation words in definitions (``derives_from``) become prose (``derives from``)."""
    file = resolve(DISEASE_ONTOLOGY, path)
    with open_text(file) as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or header[:3] != ["id", "name", "definition"]:
            raise MalformedDataError(
                f"{file}:1: not a Disease Ontology header; expected id, name, definition[, synonyms]"
            )
        out = []
        for line, row in enumerate(reader, 2):
            if len(row) not in (3, 4) or not row[1].strip() or not row[2].strip():
                raise MalformedDataError(
                    f"{file}:{line}: expected id, name, definition[, synonyms] with a name and a definition, got "
                    f"{len(row)} tab-separated column(s)"
                )
            synonyms = tuple(s.strip() for s in (row[3] if len(row) == 4 else "").split("|") if s.strip())
            out.append(EntityEntry(row[0], row[1].strip(), synonyms, row[2].strip().replace("_", " ")))
    return out
