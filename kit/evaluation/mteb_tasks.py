"""The kit's suite tasks and MTEB's tasks, each usable by the other (``mteb`` is the optional extra
``pip install -e ".[mteb]"``).

- ``as_mteb(task)``: a kit task (STS, retrieval, pair classification) as an MTEB task object whose data comes from
  the kit's loaders, so that ``mteb.evaluate(model, tasks=[as_mteb(t), ...])`` scores it with MTEB's own
  evaluators. Its main score is the kit's main metric: ``cosine_spearman``, ``ndcg_at_10``, and ``cosine_ap``
  (MTEB's own pair tasks report ``max_ap``, the best AP over five similarity functions). A probe task has no
  MTEB type.
- ``from_mteb("mteb:NAME")`` (``mteb:NAME/SUBSET`` for a task in several languages): an MTEB task as a kit task,
  its first evaluation split read by MTEB (from the hub, or offline from the Hugging Face datasets cache), scored
  by the kit's task types, so with intervals and paired comparisons. Retrieval counts every judged document with
  a relevance above 0 as relevant (binary nDCG; MTEB's is graded, the same where judgements are binary, as on
  SciFact), and ranks the whole corpus. STS, retrieval and pair classification tasks only.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from kit.data import DataNotFoundError, DatasetSpec, STSPairs
from kit.evaluation.pair_classification import PairClassificationTask
from kit.evaluation.retrieval import RetrievalTask
from kit.evaluation.sts import STSTask
from kit.evaluation.task import Task

PREFIX = "mteb:"
INSTALL = 'pip install -e ".[mteb]"'
LANGUAGES = {"en": "eng-Latn", "zh": "cmn-Hans"}
"""A kit task's language as MTEB's ISO 639-3 and script code."""
MTEB_TYPES = {"sts": "STS", "retrieval": "Retrieval", "pair_classification": "PairClassification"}
"""Kit task types and the MTEB types that score the same way."""
METRIC_NAMES = {"spearman": "cosine_spearman", "ap": "cosine_ap"}
"""Kit metrics whose MTEB name differs (the retrieval metrics share theirs)."""


def import_mteb():
    """``mteb``, or ImportError saying how to install it."""
    try:
        import mteb
    except ImportError:
        raise ImportError(f"MTEB tasks and result files need the optional extra mteb: {INSTALL}") from None
    return mteb


def revision(task: Task) -> str:
    """A task's data revision: an MTEB task's hub revision; a kit task's dataset source and commit
    (``DatasetSpec.source`` before its paths)."""
    source = task.dataset.source.split(" : ")[0]
    return source.split(" @ ")[1].split()[0] if is_mteb(task.name) else source


# ---- kit tasks as MTEB tasks ------------------------------------------------------------------------------


def as_mteb(task: Task):
    """``task`` as an instance of an MTEB task class of its type, its data loaded through the kit's loader; ValueError
    for a type MTEB has not (the probes)."""
    import_mteb()
    from mteb.abstasks import AbsTaskPairClassification, AbsTaskRetrieval, AbsTaskSTS
    from mteb.abstasks.task_metadata import TaskMetadata

    if task.type not in MTEB_TYPES:
        raise ValueError(
            f"task '{task.name}' is a {task.type} task: MTEB has no such task type ({', '.join(MTEB_TYPES)})"
        )
    metadata = TaskMetadata(
        name=task.name,
        description=task.description,
        type=MTEB_TYPES[task.type],
        category="t2t",
        dataset={"path": f"kit/{task.dataset.name}", "revision": revision(task)},
        eval_splits=["test"],
        eval_langs=[LANGUAGES[task.language]],
        main_score=METRIC_NAMES.get(task.main_metric, task.main_metric),
        domains=["Medical"],
        bibtex_citation=task.dataset.citation,
    )

    def load_data(self, num_proc=None, **kwargs) -> None:
        self.dataset, self.data_loaded = mteb_data(task), True

    base = {"sts": AbsTaskSTS, "retrieval": AbsTaskRetrieval, "pair_classification": AbsTaskPairClassification}
    attributes = {"metadata": metadata, "load_data": load_data}
    if task.type == "sts":
        attributes |= {"min_score": float(np.min(task.data.scores)), "max_score": float(np.max(task.data.scores))}
    name = "Kit" + "".join(part.title() for part in re.split(r"[^A-Za-z0-9]+", task.name))
    return type(name, (base[task.type],), attributes)()


def mteb_data(task: Task):
    """The task's items in the layout of its MTEB type (a ``test`` split; retrieval: corpus, queries, judgements)."""
    from datasets import Dataset, DatasetDict

    if task.type == "retrieval":
        queries, candidates, relevant = task.pool
        split = {
            "corpus": Dataset.from_dict(
                {"id": [f"d{i}" for i in range(len(candidates))], "title": [""] * len(candidates), "text": candidates}
            ),
            "queries": Dataset.from_dict({"id": [f"q{i}" for i in range(len(queries))], "text": queries}),
            "relevant_docs": {f"q{q}": {f"d{int(c)}": 1 for c in docs} for q, docs in enumerate(relevant)},
            "top_ranked": None,
        }
        return {"default": {"test": split}}
    first, second = task.pairs()
    if task.type == "sts":
        columns = {"score": [float(s) for s in task.data.scores]}
    else:
        columns = {"labels": [int(bool(label)) for label in task.data[2]]}
    return DatasetDict({"test": Dataset.from_dict({"sentence1": list(first), "sentence2": list(second), **columns})})


# ---- MTEB tasks as kit tasks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusRetrievalTask(RetrievalTask):
    """Retrieval over a corpus with distractors (MTEB's retrieval tasks): ``load()`` returns (queries,
    candidates, the candidate ids relevant to each query) instead of aligned query-target pairs."""

    @functools.cached_property
    def pool(self) -> tuple[list[str], list[str], list[np.ndarray]]:
        return self.data


def is_mteb(name: str) -> bool:
    return name.startswith(PREFIX)


def from_mteb(spec: str) -> Task:
    """``mteb:NAME`` or ``mteb:NAME/SUBSET`` as a kit task, its data read when first used (``Task.data``);
    ValueError naming the task when MTEB has no such task, or one of a type the kit does not score, or a subset
    to choose."""
    mteb = import_mteb()
    name, _, subset = spec.removeprefix(PREFIX).partition("/")
    try:
        task = mteb.get_task(name)
    except KeyError:
        raise ValueError(f"{spec}: MTEB has no task '{name}' (mteb.get_tasks() lists them)") from None
    meta = task.metadata
    kind = {mteb_type: kit_type for kit_type, mteb_type in MTEB_TYPES.items()}.get(meta.type)
    if kind is None:
        raise ValueError(f"{spec}: a {meta.type} task; the kit scores {', '.join(MTEB_TYPES.values())} tasks")
    subsets = list(task.hf_subsets)
    if subset and subset not in subsets:
        raise ValueError(f"{spec}: no subset '{subset}'; its subsets: {', '.join(subsets)}")
    if not subset and len(subsets) > 1:
        raise ValueError(f"{spec}: name one of its subsets, {PREFIX}{name}/SUBSET: {', '.join(subsets)}")
    subset = subset or subsets[0]
    split = meta.eval_splits[0]
    dataset = DatasetSpec(
        name=f"mteb/{meta.name}",
        relpath="",
        description=meta.description,
        source=f"{meta.dataset['path']} @ {meta.dataset['revision']} (MTEB task {meta.name})",
        licence=meta.license or "not specified",
        citation=meta.bibtex_citation or "",
        splits={split: (meta.n_samples or {}).get(split)},
        hf_name=meta.dataset["path"],
    )
    languages = meta.hf_subsets_to_langscripts.get(subset, [])
    language = next((k for k, v in LANGUAGES.items() if v in languages), languages[0] if languages else "en")
    cls = {"sts": STSTask, "pair_classification": PairClassificationTask, "retrieval": CorpusRetrievalTask}[kind]
    return cls(
        name=PREFIX + name + (f"/{subset}" if len(subsets) > 1 else ""),  # one spelling of each task
        description=f"MTEB {meta.name}: {' '.join(meta.description.split())}",
        dataset=dataset,
        split=f"{split}" + ("" if subset == "default" else f", subset {subset}"),
        positive="as the MTEB task judges it (retrieval: relevance above 0)",
        load=functools.partial(_load, name, subset, split, kind),
        language=language,
    )


def _load(name: str, subset: str, split: str, kind: str):
    """An MTEB task's items in the shape of the kit's loaders for ``kind``; DataNotFoundError saying how to get the
    data when MTEB cannot read it here."""
    mteb = import_mteb()
    task = mteb.get_task(name)
    try:
        task.load_data()
    except (ConnectionError, OSError) as err:
        from datasets import config

        cache = config.HF_DATASETS_CACHE
        path, rev = task.metadata.dataset["path"], task.metadata.dataset["revision"]
        raise DataNotFoundError(
            f"MTEB task {name}: its data ({path} @ {rev}) is neither on the hub from here nor in the Hugging Face "
            f'datasets cache ({cache}): where there is network, run python -c "import mteb; '
            f"mteb.get_task('{name}').load_data()\" with the same HF_HOME, then copy that cache here "
            f"({type(err).__name__})"
        ) from None
    data = task.dataset
    part = data[subset][split] if subset in data and split in data[subset] else data[split]
    if kind == "retrieval":
        return _retrieval(part)
    if len(part) == 1 and isinstance(part[0]["sentence1"], list):  # an old layout: one row of lists
        part = {key: part[0][key] for key in part.column_names}
    first, second = list(part["sentence1"]), list(part["sentence2"])
    if kind == "sts":
        scores = np.asarray(part["score"], dtype=float)
        return STSPairs(first, second, scores, np.array(["test"] * len(scores)), f"MTEB {name}")
    return first, second, np.asarray(part["labels"]).astype(int) > 0


def _retrieval(part: dict) -> tuple[list[str], list[str], list[np.ndarray]]:
    """(queries with a relevant document, the corpus's texts (title and text, as MTEB joins them), each query's
    relevant document rows)."""
    corpus = part["corpus"]
    titles = corpus["title"] if "title" in corpus.column_names else [""] * len(corpus)
    texts = [f"{title or ''} {text}".strip() for title, text in zip(titles, corpus["text"])]
    row = {doc: i for i, doc in enumerate(corpus["id"])}
    judged = part["relevant_docs"]
    queries, relevant = [], []
    for qid, text in zip(part["queries"]["id"], part["queries"]["text"]):
        docs = sorted(row[d] for d, grade in judged.get(qid, {}).items() if grade > 0 and d in row)
        if docs:
            queries.append(text)
            relevant.append(np.array(docs, dtype=np.int64))
    return queries, texts, relevant
