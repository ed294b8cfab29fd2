"""Linear probes (SentEval, Conneau and Kiela 2018): a logistic regression on frozen sentence embeddings, its
regularisation C chosen on a dev part, scored by F1 on test; pair tasks read the pair representation
[u, v, |u - v|, u * v]. The items are the test examples; a model's outputs are its probe's predicted class
for each, and F1 is recomputed on every draw (``kit.evaluation.bootstrap.F1``). The probe is fitted once per
model and seed: the intervals cover the test items and the seeds, not the probe's own training sample.

Tasks: the four public ChineseBLUE classification tasks of the first seed paper's Chinese table (cMedQQ,
cMedIC, cMedQA, cMedTC), on seeded subsamples (``chineseblue_probes``; cMedQA has no public train split,
so its dev split is divided 80/20 into probe-train and probe-selection parts). cMedQNLI is not available.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from kit.data import CHINESEBLUE, LabeledTexts, load_chineseblue
from kit.evaluation.bootstrap import F1, ItemScores
from kit.evaluation.task import TASKS, Task, unique

F1_AVERAGE = {"f1": "binary", "weighted_f1": "weighted", "macro_f1": "macro"}
F1_LABELS = {"f1": "F1", "weighted_f1": "weighted F1", "macro_f1": "macro F1"}


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's pair representation (Conneau and Kiela 2018): [u, v, |u - v|, u * v]."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def _f1_kwargs(metric: str, labels: np.ndarray) -> dict:
    if metric not in F1_AVERAGE:
        raise ValueError(f"unknown metric '{metric}'; choose one of {sorted(F1_AVERAGE)}")
    kwargs = {"average": F1_AVERAGE[metric]}
    if metric == "f1":
        kwargs["pos_label"] = "1" if labels.dtype.kind in "US" else 1
    return kwargs


def fit_probe(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    metric: str = "weighted_f1",
    seed: int = 0,
    c_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0),
):
    """(the fitted probe, its dev F1, its C): standardised features and an L2 logistic regression (scikit-learn)
    for every C of ``c_grid``, the one with the best dev F1 kept. ``metric``: ``f1`` (binary, positive label
    "1"), ``weighted_f1`` or ``macro_f1``. ``seed`` is the regression's ``random_state``, which its lbfgs
    solver does not use: the probe is deterministic."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    kwargs = _f1_kwargs(metric, train[1])

    def fit(c):
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000, random_state=seed)).fit(*train)

    scored = [(f1_score(dev[1], (m := fit(c)).predict(dev[0]), **kwargs), c, m) for c in c_grid]
    dev_f1, c, model = max(scored, key=lambda s: s[0])
    return model, float(dev_f1), c


def linear_probe(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    metric: str = "weighted_f1",
    seed: int = 0,
    c_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0),
) -> dict[str, float]:
    """``fit_probe``, then the probe's test F1: ``{"dev", "test", "C"}``."""
    from sklearn.metrics import f1_score

    model, dev_f1, c = fit_probe(train, dev, metric, seed, c_grid)
    return {
        "dev": dev_f1,
        "test": float(f1_score(test[1], model.predict(test[0]), **_f1_kwargs(metric, train[1]))),
        "C": c,
    }


@dataclass(frozen=True)
class ProbeParts:
    """A probe's probe-train, probe-selection (dev) and test parts, as ``LabeledTexts``."""

    train: LabeledTexts
    dev: LabeledTexts
    test: LabeledTexts


@dataclass(frozen=True)
class ProbeFit:
    """One model's probe on a task: its dev and test F1 and its predicted class index for every test item."""

    dev: float
    test: float
    predictions: np.ndarray


@dataclass(frozen=True)
class ProbeTask(Task):
    """``load()`` returns ``ProbeParts``; the items are the test examples. ``f1`` names the F1 (``f1`` binary
    with positive label "1", ``weighted_f1``, ``macro_f1``)."""

    f1: str = "weighted_f1"

    type = "probe"

    @property
    def metrics(self) -> tuple[str, ...]:
        return (self.f1,)

    @property
    def metric_labels(self) -> dict[str, str]:
        return {self.f1: F1_LABELS[self.f1]}

    @property
    def parts(self) -> ProbeParts:
        return self.data

    @property
    def items(self) -> int:
        return len(self.parts.test)

    @functools.cached_property
    def classes(self) -> list[str]:
        """Every label of the three parts, sorted: the predictions' indices."""
        return sorted({str(x) for part in (self.parts.train, self.parts.dev, self.parts.test) for x in part.labels})

    def texts(self) -> tuple[list[str]]:
        """Every text of every part and column, once (the probe trains on the train part's embeddings)."""
        parts = (self.parts.train, self.parts.dev, self.parts.test)
        return (unique([t for part in parts for column in part.texts for t in column])[0],)

    def item_texts(self) -> list[tuple[str, ...]]:
        """The test examples' texts: what the items are (a probe's training texts are not its items)."""
        return list(zip(*self.parts.test.texts))

    def fit(self, embeddings: tuple[np.ndarray]) -> ProbeFit:
        """The probe on the embeddings of ``texts()``: fitted on train, C chosen on dev, scored on test."""
        (emb,) = embeddings
        row = {t: i for i, t in enumerate(self.texts()[0])}

        def features(part: LabeledTexts) -> tuple[np.ndarray, np.ndarray]:
            columns = [emb[[row[t] for t in column]] for column in part.texts]
            return (pair_features(*columns) if len(columns) == 2 else columns[0]), part.labels

        train, dev, test = (features(p) for p in (self.parts.train, self.parts.dev, self.parts.test))
        from sklearn.metrics import f1_score

        model, dev_f1, _ = fit_probe(train, dev, self.f1)
        predicted = model.predict(test[0])
        test_f1 = float(f1_score(test[1], predicted, **_f1_kwargs(self.f1, train[1])))
        index = {c: i for i, c in enumerate(self.classes)}
        return ProbeFit(dev_f1, test_f1, np.array([index[str(x)] for x in predicted]))

    def score(self, embeddings: tuple[np.ndarray]) -> dict[str, ItemScores]:
        return {self.f1: ItemScores(self.f1, self.fit(embeddings).predictions, self.statistic(self.f1))}

    def statistic(self, metric: str) -> F1:
        index = {c: i for i, c in enumerate(self.classes)}
        gold = np.array([index[str(x)] for x in self.parts.test.labels])
        return F1(gold, len(self.classes), F1_AVERAGE[self.f1], index.get("1", 1))


@functools.cache
def _chineseblue_parts(train_size: int | None, eval_size: int | None, seed: int) -> dict[str, ProbeParts]:
    """Every available ChineseBLUE task's parts, subsampled by one generator in task order (so that a study's
    subsamples are those it always had)."""
    rng = np.random.default_rng(seed)
    out = {}
    for task in CHINESEBLUE.values():
        if not task.splits:
            continue
        test = load_chineseblue(task.name, "test")
        if "train" in task.splits:
            train, dev = load_chineseblue(task.name, "train"), load_chineseblue(task.name, "dev")
        else:  # cMedQA: the public dev split is the only labelled data besides test
            full = load_chineseblue(task.name, "dev")
            order = rng.permutation(len(full))
            cut = int(0.8 * len(full))
            train, dev = full.take(order[:cut], "dev[:80%]"), full.take(order[cut:], "dev[80%:]")
        out[task.name] = ProbeParts(
            train.capped(train_size, rng), dev.capped(eval_size, rng), test.capped(eval_size, rng)
        )
    return out


def chineseblue_probes(train_size: int | None = None, eval_size: int | None = None, seed: int = 0) -> list[ProbeTask]:
    """A probe task per available ChineseBLUE task (``<task>-probe``, lower case), each part capped to a seeded
    subsample (``train_size`` probe-train examples, ``eval_size`` dev and test examples; None: all)."""
    sizes = f"probe-train {train_size or 'all'}, dev and test {eval_size or 'all'} per task (subsample seed {seed})"
    return [
        ProbeTask(
            name=f"{task.name.lower()}-probe",
            description=f"ChineseBLUE {task.name}: a linear probe's {F1_LABELS[task.metric]} on test",
            dataset=task.spec,
            split=f"test; {sizes}",
            positive="the gold label of each test example",
            load=functools.partial(lambda name: _chineseblue_parts(train_size, eval_size, seed)[name], task.name),
            language="zh",
            f1=task.metric,
        )
        for task in CHINESEBLUE.values()
        if task.splits
    ]


for _probe in chineseblue_probes(800, 400, seed=1234):  # the declared probes: 800 probe-train, 400 dev and test
    TASKS.add(_probe)
