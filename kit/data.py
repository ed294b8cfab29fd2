"""Dataset declarations and loaders.

Each dataset is declared once (source, file, hub name, split, metric, citation), as
MTEB declares its tasks. Files are resolved in a fixed order, and a dataset that
cannot be found fails at once with every place that was tried.

Resolution order: explicit path -> ``$KIT_DATA`` -> ``../shared/data`` beside the
project -> the local cache (``$KIT_CACHE`` or ``~/.cache/medcse-kit``) -> the
Hugging Face hub (only when ``hf_name`` is set and the network answers).
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: where its file lives relative to a data root, and what it is."""

    name: str
    relpath: str
    description: str
    source: str
    citation: str
    metric: str = ""
    hf_name: str | None = None


BIOSSES = DatasetSpec(
    name="biosses",
    relpath="biosses/biosses.tsv",
    description="BIOSSES: 100 biomedical sentence pairs, five annotator scores 0-4 and their mean; "
    "BLURB split train 64 / dev 16 / test 20.",
    source="gizemsogancioglu/biosses @ 381b240",
    citation="Sogancioglu, Ozturk, Ozgur (2017). BIOSSES: a semantic sentence similarity estimation "
    "system for the biomedical domain. Bioinformatics 33(14).",
    metric="cosine Spearman (x100)",
    hf_name="mteb/biosses-sts",
)

PUBMED_SENTENCES = DatasetSpec(
    name="pubmed_sentences",
    relpath="pubmed_sentences/pubmed_sentences.txt.gz",
    description="55,714 unique unlabeled PubMed abstract sentences (a ~2% substitute for the "
    "papers' 1M PubMed sentences).",
    source="allenai/scibert @ 06793f7 (data/*), pubmedqa/pubmedqa @ 1cbae8e",
    citation="Beltagy et al. (2019) SciBERT; Jin et al. (2019) PubMedQA.",
)


class DataNotFoundError(FileNotFoundError):
    """A dataset was found in none of the places the kit looks."""


def cache_dir() -> Path:
    return Path(os.environ.get("KIT_CACHE", Path.home() / ".cache" / "medcse-kit"))


def candidate_roots() -> list[tuple[str, Path]]:
    """The data roots searched, in order, each with a label for error messages."""
    roots = []
    if os.environ.get("KIT_DATA"):
        roots.append(("$KIT_DATA", Path(os.environ["KIT_DATA"])))
    roots.append(("../shared/data beside the project", PROJECT_ROOT.parent / "shared" / "data"))
    roots.append(("local cache", cache_dir() / "data"))
    return roots


def resolve(spec: DatasetSpec, path: str | os.PathLike | None = None) -> Path:
    """Return the file for ``spec``; raise DataNotFoundError naming every place tried."""
    if path is not None:  # an explicit path is never silently replaced by another copy
        if Path(path).is_file():
            return Path(path)
        raise DataNotFoundError(f"Dataset '{spec.name}': the explicit path {path} is not a file.")
    tried = []
    for label, root in candidate_roots():
        p = root / spec.relpath
        if p.is_file():
            return p
        tried.append(f"{label}: {p}")
    if spec.hf_name:
        try:
            return _fetch_from_hub(spec)
        except Exception as err:  # the hub is optional; report why it failed
            tried.append(f"Hugging Face hub {spec.hf_name}: {type(err).__name__}: {err}")
    raise DataNotFoundError(
        f"Dataset '{spec.name}' not found. Looked in:\n  - "
        + "\n  - ".join(tried)
        + f"\nProvide it by passing an explicit path, setting $KIT_DATA to a folder holding "
        f"{spec.relpath}, or placing the shared data folder beside the project."
    )


def _fetch_from_hub(spec: DatasetSpec) -> Path:
    """Download a hub copy into the cache, converted to the kit's file format."""
    if spec is not BIOSSES:
        raise NotImplementedError(f"no hub converter for {spec.name}")
    from datasets import load_dataset

    ds = load_dataset(spec.hf_name, split="test")
    out = cache_dir() / "data" / spec.relpath
    out.parent.mkdir(parents=True, exist_ok=True)
    header = ["id", "split", "sentence1", "sentence2", *ANNOTATORS, "score"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(header)
        # mteb/biosses-sts carries only the mean score (0-4) and no BLURB split labels.
        for i, row in enumerate(ds, 1):
            w.writerow([i, "all", row["sentence1"], row["sentence2"], *[""] * 5, row["score"]])
    return out


ANNOTATORS = [f"annotator_{c}" for c in "abcde"]


@dataclass
class STSPairs:
    """Sentence pairs with gold similarity scores."""

    sentence1: list[str]
    sentence2: list[str]
    scores: np.ndarray
    split: np.ndarray
    source: str

    def subset(self, split: str) -> "STSPairs":
        """Pairs of one split ('train', 'dev', 'test'), or every pair for 'all'."""
        if split == "all":
            return self
        idx = np.flatnonzero(self.split == split)
        if idx.size == 0:
            raise ValueError(f"split '{split}' has no pairs in {self.source}; splits: {sorted(set(self.split))}")
        return STSPairs(
            [self.sentence1[i] for i in idx], [self.sentence2[i] for i in idx], self.scores[idx], self.split[idx], self.source
        )

    def __len__(self) -> int:
        return len(self.scores)


class MalformedDataError(ValueError):
    """A row of a data file breaks its format; the message names file and line."""


def load_biosses(path: str | os.PathLike | None = None) -> STSPairs:
    """Load BIOSSES (columns id, split, sentence1, sentence2, annotator_a..e, score)."""
    file = resolve(BIOSSES, path)
    s1, s2, scores, splits = [], [], [], []
    with open(file, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        expected = ["id", "split", "sentence1", "sentence2", *ANNOTATORS, "score"]
        if header != expected:
            raise MalformedDataError(f"{file}:1: header {header} != expected {expected}")
        for line, row in enumerate(reader, 2):
            if len(row) != len(expected):
                raise MalformedDataError(f"{file}:{line}: expected {len(expected)} tab-separated columns, got {len(row)}")
            for col in (2, 3):
                if not row[col].strip():
                    raise MalformedDataError(f"{file}:{line}: empty {expected[col]}")
            try:
                score = float(row[-1])
            except ValueError:
                raise MalformedDataError(f"{file}:{line}: score {row[-1]!r} is not a number") from None
            s1.append(row[2].strip())
            s2.append(row[3].strip())
            scores.append(score)
            splits.append(row[1])
    if not scores:
        raise MalformedDataError(f"{file}: no rows")
    return STSPairs(s1, s2, np.asarray(scores, dtype=np.float64), np.asarray(splits), str(file))


def load_pubmed_sentences(path: str | os.PathLike | None = None, limit: int | None = None) -> list[str]:
    """Unlabeled PubMed sentences, one per line (gzip or plain text); empty lines are errors."""
    file = resolve(PUBMED_SENTENCES, path)
    opener = gzip.open if file.suffix == ".gz" else open
    out = []
    with opener(file, "rt", encoding="utf-8") as f:
        for line, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                raise MalformedDataError(f"{file}:{line}: empty sentence")
            out.append(text)
            if limit is not None and len(out) >= limit:
                break
    return out


@dataclass(frozen=True)
class ChineseBlueTask:
    """A ChineseBLUE task (Zhang et al. 2020, "Conceptualized Representation Learning for
    Chinese Biomedical Text Mining"; alibaba-research/ChineseBLUE @ 52eefc9): its columns,
    available splits and the metric the first seed paper reports for it."""

    name: str
    text_columns: tuple[str, ...]
    splits: tuple[str, ...]
    metric: str
    description: str
    missing_note: str = ""

    def spec(self, split: str) -> DatasetSpec:
        return DatasetSpec(
            name=f"chineseblue/{self.name}/{split}",
            relpath=f"chineseblue/{self.name}/{split}.txt",
            description=self.description,
            source="alibaba-research/ChineseBLUE @ 52eefc9 : data/",
            citation="Zhang et al. (2020). Conceptualized Representation Learning for Chinese Biomedical Text Mining.",
            metric=self.metric,
        )


CHINESEBLUE = {
    t.name: t
    for t in [
        ChineseBlueTask("cMedQQ", ("query1", "query2"), ("train", "dev", "test"), "f1",
                        "medical question pairs, 1 = same intent"),
        ChineseBlueTask("cMedIC", ("text",), ("train", "dev", "test"), "weighted_f1",
                        "medical intent classification, 3 classes"),
        ChineseBlueTask("cMedQA", ("question", "answer"), ("dev", "test"), "weighted_f1",
                        "question-answer matching, 1 = the answer fits",
                        "cMedQA has no training split in the public release: train on dev, test on test."),
        ChineseBlueTask("cMedTC", ("text",), ("train", "dev", "test"), "macro_f1",
                        "clinical trial criterion classification, 44 classes"),
        ChineseBlueTask("cMedQNLI", ("question", "answer"), (), "f1", "question-answer entailment",
                        "cMedQNLI could not be obtained for the public data folder; it is not available."),
    ]
}


@dataclass
class LabeledTexts:
    """One split of a classification or pair task: ``texts`` holds one list per text column."""

    task: str
    split: str
    texts: tuple[list[str], ...]
    labels: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.labels)


class SplitNotAvailableError(DataNotFoundError):
    """The split or task is known but not publicly available."""


def load_chineseblue(task: str, split: str, path: str | os.PathLike | None = None) -> LabeledTexts:
    """Load ``label \\t text [\\t text2]`` lines (no quoting, as in ChineseBLUE's own readers)."""
    if task not in CHINESEBLUE:
        raise KeyError(f"unknown ChineseBLUE task '{task}'; tasks: {sorted(CHINESEBLUE)}")
    t = CHINESEBLUE[task]
    if split not in t.splits:
        raise SplitNotAvailableError(
            f"{task} has no '{split}' split here (available: {list(t.splits) or 'none'}). {t.missing_note}".strip()
        )
    file = resolve(t.spec(split), path)
    n = 1 + len(t.text_columns)
    labels, columns = [], tuple([] for _ in t.text_columns)
    with open(file, encoding="utf-8") as f:
        for line, raw in enumerate(f, 1):
            row = raw.rstrip("\r\n").split("\t")
            if len(row) != n:
                raise MalformedDataError(f"{file}:{line}: expected {n} tab-separated columns, got {len(row)}")
            for col, name, text in zip(columns, t.text_columns, row[1:]):
                if not text.strip():
                    raise MalformedDataError(f"{file}:{line}: empty {name}")
                col.append(text.strip())
            labels.append(row[0].strip())
    return LabeledTexts(task, split, columns, np.asarray(labels), str(file))


def chineseblue_corpus(tasks: tuple[str, ...] = ("cMedQQ", "cMedIC", "cMedTC")) -> list[str]:
    """Unlabeled Chinese sentences: every text of the tasks' *train* files (labels dropped),
    de-duplicated in first-seen order, with any text that occurs in a dev or test split of any
    available ChineseBLUE task removed, so the probes never see a training sentence.
    (cMedQA has no train split; its dev split trains its probe, so it is excluded too.)"""
    held_out = {
        text
        for task in CHINESEBLUE.values()
        for split in task.splits
        if split != "train"
        for column in load_chineseblue(task.name, split).texts
        for text in column
    }
    pooled = (text for task in tasks for column in load_chineseblue(task, "train").texts for text in column)
    return [text for text in dict.fromkeys(pooled) if text not in held_out]


# ---- sentence-pair inference (NLI-style) tasks ----

RQE = DatasetSpec(
    name="rqe",
    relpath="rqe/rqe.jsonl",
    description="Recognizing Question Entailment: does a consumer health question entail an FAQ (true/false)? "
    "Splits train 8,588 (AMIA 2016), validation_amia2016_test 302, test_mediqa2019 230.",
    source="abachaa/RQE_Data_AMIA2016 @ 9302fb9; abachaa/MEDIQA2019 @ ae5d382 : MEDIQA_Task2_RQE/",
    citation="Ben Abacha, Demner-Fushman (2016). Recognizing Question Entailment for Medical Question Answering. "
    "AMIA; Ben Abacha, Shivade, Demner-Fushman (2019). Overview of the MEDIQA 2019 Shared Task.",
    metric="accuracy",
)
RQE_SPLITS = ("train", "validation_amia2016_test", "test_mediqa2019")

MEDNLI_SPLITS = {"train": "mli_train_v1.jsonl", "dev": "mli_dev_v1.jsonl", "test": "mli_test_v1.jsonl"}


def mednli_spec(split: str) -> DatasetSpec:
    return DatasetSpec(
        name=f"mednli/{split}",
        relpath=f"mednli/{MEDNLI_SPLITS[split]}",
        description="MedNLI: clinical premise-hypothesis pairs from MIMIC-III, entailment/neutral/contradiction. "
        "Credentialed (PhysioNet): not redistributed; pass the folder holding the official files.",
        source="https://physionet.org/content/mednli/",
        citation="Romanov, Shivade (2018). Lessons from Natural Language Inference in the Clinical Domain. EMNLP.",
        metric="accuracy",
    )


def _read_jsonl(file: Path, fields: tuple[str, ...]) -> list[dict]:
    rows = []
    with open(file, encoding="utf-8") as f:
        for line, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as err:
                raise MalformedDataError(f"{file}:{line}: not JSON ({err.msg})") from None
            missing = [k for k in fields if row.get(k) is None]
            if missing:
                raise MalformedDataError(f"{file}:{line}: missing field(s) {missing}")
            rows.append(row)
    return rows


def load_rqe(split: str, path: str | os.PathLike | None = None) -> LabeledTexts:
    """RQE pairs of one split: texts (consumer question, FAQ), labels 'true' / 'false'."""
    if split not in RQE_SPLITS:
        raise ValueError(f"RQE has no split '{split}'; splits: {list(RQE_SPLITS)}")
    file = resolve(RQE, path)
    rows = [r for r in _read_jsonl(file, ("split", "label", "chq", "faq")) if r["split"] == split]
    empty = [r.get("pid", "?") for r in rows if not (r["chq"].strip() and r["faq"].strip())]
    if empty:  # the public train split has one (pid 5860, empty FAQ)
        warnings.warn(f"{file}: dropped {len(empty)} {split} pair(s) with an empty question (pid {', '.join(empty)})", stacklevel=2)
        rows = [r for r in rows if r.get("pid", "?") not in empty]
    bad = sorted({r["label"] for r in rows} - {"true", "false"})
    if bad:
        raise MalformedDataError(f"{file}: labels {bad} are not 'true'/'false'")
    return LabeledTexts("rqe", split, ([r["chq"].strip() for r in rows], [r["faq"].strip() for r in rows]),
                        np.asarray([r["label"] for r in rows]), str(file))


def load_mednli(split: str, folder: str | os.PathLike | None = None) -> LabeledTexts:
    """MedNLI pairs of one split from the official ``mli_{train,dev,test}_v1.jsonl`` files (fields
    sentence1, sentence2, gold_label) in ``folder``, or in a ``mednli/`` folder of a data root."""
    if split not in MEDNLI_SPLITS:
        raise ValueError(f"MedNLI has no split '{split}'; splits: {list(MEDNLI_SPLITS)}")
    spec = mednli_spec(split)
    file = resolve(spec, None if folder is None else Path(folder) / MEDNLI_SPLITS[split])
    rows = _read_jsonl(file, ("sentence1", "sentence2", "gold_label"))
    return LabeledTexts("mednli", split, ([r["sentence1"].strip() for r in rows], [r["sentence2"].strip() for r in rows]),
                        np.asarray([r["gold_label"] for r in rows]), str(file))


# ---- question summarization (consumer health question -> FAQ) ----

MEQSUM = DatasetSpec(
    name="meqsum",
    relpath="meqsum/meqsum.tsv",
    description="MeQSum: 1,000 consumer health questions (CHQ) with expert-written short questions (FAQ). "
    "No official split.",
    source="abachaa/MeQSum",
    citation="Ben Abacha, Demner-Fushman (2019). On the Summarization of Consumer Health Questions. ACL.",
    metric="ROUGE-1/2/L F1",
)
HEALTHCAREMAGIC = DatasetSpec(
    name="healthcaremagic",
    relpath="healthcaremagic/hcm_sum.jsonl",
    description="A public subset of HealthCareMagic question-summary pairs (train 1,314, valid 329); not the full "
    "~226k set of Mrini et al. (2021), which is not available here.",
    source="see ../shared/data/README.md",
    citation="Mrini et al. (2021). A Gradually Soft Multi-Task and Data-Augmented Approach to Medical Question "
    "Understanding. ACL.",
    metric="ROUGE-1/2/L F1",
)


@dataclass
class SummaryPairs:
    """Consumer health questions and their reference summaries."""

    chq: list[str]
    summary: list[str]
    source: str

    def __len__(self) -> int:
        return len(self.chq)

    def take(self, idx) -> "SummaryPairs":
        return SummaryPairs([self.chq[i] for i in idx], [self.summary[i] for i in idx], self.source)


def load_meqsum(path: str | os.PathLike | None = None) -> SummaryPairs:
    """MeQSum (columns file, chq, summary; CHQ cells are quoted and may hold newlines), in file order."""
    file = resolve(MEQSUM, path)
    with open(file, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        if reader.fieldnames != ["file", "chq", "summary"]:
            raise MalformedDataError(f"{file}:1: header {reader.fieldnames} != ['file', 'chq', 'summary']")
        rows = list(reader)
    for i, r in enumerate(rows, 2):
        if not (r["chq"] or "").strip() or not (r["summary"] or "").strip():
            raise MalformedDataError(f"{file}: record {i - 1}: empty chq or summary")
    return SummaryPairs([r["chq"].strip() for r in rows], [r["summary"].strip() for r in rows], str(file))


def load_healthcaremagic(split: str, path: str | os.PathLike | None = None) -> SummaryPairs:
    """The public HealthCareMagic subset, split 'train' or 'valid'."""
    if split not in ("train", "valid"):
        raise ValueError(f"HealthCareMagic subset has splits 'train' and 'valid', not '{split}'")
    file = resolve(HEALTHCAREMAGIC, path)
    rows = [r for r in _read_jsonl(file, ("split", "chq", "summary")) if r["split"] == split]
    return SummaryPairs([r["chq"].strip() for r in rows], [r["summary"].strip() for r in rows], str(file))


# ---- entity definitions (study 4) ----

DISEASE_ONTOLOGY = DatasetSpec(
    name="disease_ontology",
    relpath="disease_ontology/doid_definitions.tsv.gz",
    description="Human Disease Ontology (release 2026-07-31): 9,962 diseases with a name, a one-sentence definition "
    "and synonyms. Diseases only: no drugs or procedures.",
    source="DiseaseOntology/HumanDiseaseOntology @ 9fbefd6",
    citation="Schriml et al. (2022). The Human Disease Ontology 2022 update. Nucleic Acids Research 50(D1).",
)


@dataclass(frozen=True)
class EntityEntry:
    """One ontology entity: id, preferred name, synonyms and its definition as prose."""

    id: str
    name: str
    synonyms: tuple[str, ...]
    definition: str


def load_disease_ontology(path: str | os.PathLike | None = None) -> list[EntityEntry]:
    """Disease Ontology entries; relation words in definitions (``derives_from``) become prose (``derives from``)."""
    file = resolve(DISEASE_ONTOLOGY, path)
    opener = gzip.open if file.suffix == ".gz" else open
    with opener(file, "rt", encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or header[:3] != ["id", "name", "definition"]:
            raise MalformedDataError(f"{file}:1: header {header} does not start with ['id', 'name', 'definition']")
        out = []
        for line, row in enumerate(reader, 2):
            if len(row) not in (3, 4) or not row[1].strip() or not row[2].strip():
                raise MalformedDataError(f"{file}:{line}: expected id, name, definition[, synonyms], got {row!r}")
            synonyms = tuple(s.strip() for s in (row[3] if len(row) == 4 else "").split("|") if s.strip())
            out.append(EntityEntry(row[0], row[1].strip(), synonyms, row[2].strip().replace("_", " ")))
    return out


def load_sts_tsv(path: str | os.PathLike, name: str = "MedSTS") -> STSPairs:
    """A credentialed clinical STS file held locally (MedSTS / n2c2 2019 ClinicalSTS format:
    ``sentence1 \\t sentence2 \\t score`` per line, no header); every pair is in split 'test'."""
    file = Path(path)
    if not file.is_file():
        raise DataNotFoundError(
            f"{name} is credentialed (n2c2 / Mayo Clinic) and not redistributed; the explicit path {path} is not a file. "
            "Leave the path unset to evaluate on BIOSSES instead."
        )
    s1, s2, scores = [], [], []
    with open(file, encoding="utf-8", newline="") as f:
        for line, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            try:
                a, b, score = row[0].strip(), row[1].strip(), float(row[2])
            except (IndexError, ValueError):
                raise MalformedDataError(f"{file}:{line}: expected 'sentence1<TAB>sentence2<TAB>score', got {row!r}") from None
            s1.append(a)
            s2.append(b)
            scores.append(score)
    if not scores:
        raise MalformedDataError(f"{file}: no rows")
    return STSPairs(s1, s2, np.asarray(scores), np.asarray(["test"] * len(scores)), str(file))
