"""Unlabeled PubMed abstract sentences: the corpus of the unsupervised English trainings."""

from __future__ import annotations

import os

from kit.data.resolver import DATASETS, DatasetSpec, MalformedDataError, open_text, resolve

PUBMED_SENTENCES = DATASETS.add(
    DatasetSpec(
        name="pubmed_sentences",
        relpath="pubmed_sentences/pubmed_sentences.txt.gz",
        description="55,714 unique unlabeled PubMed abstract sentences (a ~2% substitute for the papers' 1M PubMed "
        "sentences); sentences from tokenised corpora were rejoined, so some hyphens are spaced.",
        source="allenai/scibert @ 06793f7 : data/{pico/ebmnlp, ner/NCBI-disease, ner/bc5cdr, ner/JNLPBA, "
        "parsing/genia, text_classification/chemprot}; pubmedqa/pubmedqa @ 1cbae8e : data/ori_pqal.json",
        licence="Apache-2.0 (allenai/scibert) and MIT (pubmedqa); the bundled corpora keep their own terms",
        citation="Beltagy, Lo, Cohan (2019). SciBERT: a pretrained language model for scientific text. EMNLP; "
        "Jin et al. (2019). PubMedQA: a dataset for biomedical research question answering. EMNLP.",
        splits={"all": 55_714},
        load=lambda split: load_pubmed_sentences(),
    )
)


def load_pubmed_sentences(path: str | os.PathLike | None = None, limit: int | None = None) -> list[str]:
    """Unlabeled PubMed sentences, one per line (gzip or plain text); empty lines are errors."""
    file = resolve(PUBMED_SENTENCES, path)
    out = []
    with open_text(file) as f:
        for line, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                raise MalformedDataError(f"{file}:{line}: empty sentence")
            out.append(text)
            if limit is not None and len(out) >= limit:
                break
    if not out:
        raise MalformedDataError(f"{file}: no sentences (one sentence per line is expected)")
    return out
