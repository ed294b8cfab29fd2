"""What every evaluation task declares, MTEB-style: a ``Task`` names its data (a ``kit.data`` declaration,
its split and the loader that reads it), what counts as a positive, and ``seen_by``, the studies that
train on its data (whose headlines must not include it). The evaluation logic lives once per task type:
``kit.evaluation.sts``, ``kit.evaluation.retrieval``, ``kit.evaluation.pair_classification``; each holds
the small declarations of its tasks.

A task is used in two steps, so that embeddings can be computed (and cached) apart from scoring:
``task.texts()`` gives the text lists to embed, and ``task.score(embeddings)`` (one array per list, rows
in list order) gives an ``ItemScores`` per metric, the main metric first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from kit.data import DatasetSpec
from kit.evaluation.bootstrap import ItemScores, Statistic
from kit.registry import Registry


@dataclass(frozen=True)
class Task:
    """A declared task. ``split`` says which part of ``dataset`` the items are, in words the loader
    honours; ``load()`` reads them (through the ``kit.data`` loaders, so the data is found as everywhere
    else). ``seen_by``: the studies (notebook names) that train on this data. ``optional``: a task too large for
    the default suite, left out of every group (``all``, ``en``, its type: ``kit.evaluation.tasks.GROUPS``) and
    scored only when named. ``nests``: False for a task whose items another task holds but whose outputs come from
    other models (study 2's held-out task, ``biosses-cv``): it lies within no task and no task within it
    (``nested``). ``clusters``: the cluster of each item when one model scores a group of them together (the
    held-out task's folds), over which a report shows how a difference spreads
    (``kit.evaluation.inference.cluster_contributions``); empty: independent items."""

    name: str
    description: str
    dataset: DatasetSpec
    split: str
    positive: str
    load: Callable[[], Any] = field(compare=False, repr=False)
    seen_by: tuple[str, ...] = ()
    language: str = "en"
    optional: bool = False
    nests: bool = True
    clusters: tuple[int, ...] = field(default=(), compare=False, repr=False)

    type: ClassVar[str] = ""
    metrics: ClassVar[tuple[str, ...]] = ()  # the main metric first
    metric_labels: ClassVar[dict[str, str]] = {}

    @property
    def main_metric(self) -> str:
        return self.metrics[0]

    def seen(self, study: str) -> bool:
        """True when ``study`` trains on this task's data: report it apart, never in that study's headline."""
        return study in self.seen_by

    @functools.cached_property
    def data(self):
        """The loaded items, read once per declaration."""
        return self.load()

    @property
    def items(self) -> int:
        raise NotImplementedError

    def texts(self) -> tuple[list[str], ...]:
        raise NotImplementedError

    def item_texts(self) -> list[tuple[str, ...]]:
        """Every item's texts, in item order (a pair's two texts, a query and its relevant targets, a probe's test
        example): an item sharing one with the data a study selected its checkpoints on is left out of its
        report (``kit.evaluation.rows.shared_items``)."""
        raise NotImplementedError

    def score(self, embeddings: tuple[np.ndarray, ...]) -> dict[str, ItemScores]:
        raise NotImplementedError

    def statistic(self, metric: str) -> Statistic:
        """What turns the item outputs of ``metric`` into the metric (so saved outputs can be scored again)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """The declaration as plain values (for evaluation.json and the HTML report)."""
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "dataset": self.dataset.name,
            "source": self.dataset.source,
            "licence": self.dataset.licence,
            "citation": self.dataset.citation,
            "split": self.split,
            "items": self.items,
            "metrics": {m: self.metric_labels[m] for m in self.metrics},
            "main_metric": self.main_metric,
            "positive": self.positive,
            "seen_by": list(self.seen_by),
            "language": self.language,
        }


@dataclass(frozen=True)
class PairCosineTask(Task):
    """A task whose items are text pairs, each scored by the cosine of its two texts' embeddings: STS and pair
    classification. A type says what its pairs are (``pairs``) and how the cosines make its metric
    (``statistic``); the outputs are the cosines as ranks within the model's items (``within_ranks``), which
    both metrics read (``kit.evaluation.bootstrap``)."""

    def pairs(self) -> tuple[list[str], list[str]]:
        """The first and the second texts of every pair, in item order."""
        raise NotImplementedError

    @property
    def items(self) -> int:
        return len(self.pairs()[0])

    def texts(self) -> tuple[list[str]]:
        first, second = self.pairs()
        return (unique(list(first) + list(second))[0],)

    def item_texts(self) -> list[tuple[str, ...]]:
        return list(zip(*self.pairs()))

    def score(self, embeddings: tuple[np.ndarray]) -> dict[str, ItemScores]:
        first, second = self.pairs()
        _, rows = unique(list(first) + list(second))
        (emb,) = embeddings
        return self.score_cosines(cosines(emb[rows[: len(first)]], emb[rows[len(first) :]]))

    def score_cosines(self, cos: np.ndarray) -> dict[str, ItemScores]:
        """The item scores of one similarity per pair, in item order (a cosine, or any score that orders pairs)."""
        return {self.main_metric: ItemScores(self.main_metric, within_ranks(cos), self.statistic(self.main_metric))}


def nested(tasks: Sequence[Task], keep: Mapping[str, np.ndarray] | None = None) -> dict[str, str]:
    """Task name -> the first other task of the same main metric whose items (``keep``: task -> indices of the items
    scored; all by default) hold every item of it: BIOSSES test within all pairs. Of two tasks with the same items
    the earlier stands for both. A comparison on a nested task is part of its parent's finding, not a second one. A
    task that does not nest (``Task.nests``) is in no such relation."""
    keep = keep or {}
    items = {}
    for task in tasks:
        texts = task.item_texts()
        idx = keep.get(task.name)
        items[task.name] = set(texts) if idx is None else {texts[i] for i in idx}
    out = {}
    for k, task in enumerate(tasks):
        for j, other in enumerate(tasks):
            same = items[task.name] == items[other.name]
            if j == k or not (task.nests and other.nests) or other.main_metric != task.main_metric or (same and j > k):
                continue
            if items[task.name] <= items[other.name]:
                out[task.name] = other.name
                break
    return out


TYPES = ("sts", "retrieval", "pair_classification", "probe")
"""The task types, in suite order."""
TASKS: Registry[Task] = Registry("task", order=lambda task: TYPES.index(task.type))
"""Every declared suite task by its name (``TASKS.add`` where it is declared, in its type's module), in suite
order: type by type, each type's tasks in its module's order, whatever order the modules were imported in."""


def unit(x: np.ndarray, dtype: type | None = np.float32) -> np.ndarray:
    """Rows scaled to unit L2 norm (a zero row stays zero), as ``dtype`` (None: the input's own)."""
    x = np.asarray(x, dtype=dtype)
    return x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-12)


def cosines(e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two aligned embedding matrices."""
    return (unit(e1) * unit(e2)).sum(1).astype(np.float64)


def within_ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks of ``x`` (ties share one) scaled to (0, 1]: the order of a model's scores on a scale
    shared by every model (see ``kit.evaluation.bootstrap``)."""
    return stats.rankdata(x) / len(x)


def unique(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts in first-seen order, and for every input text its row among them."""
    distinct = list(dict.fromkeys(texts))
    row = {t: i for i, t in enumerate(distinct)}
    return distinct, np.array([row[t] for t in texts], dtype=np.int64)
