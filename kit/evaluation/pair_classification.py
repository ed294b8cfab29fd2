"""Pair classification: the cosine of the two texts' embeddings as the score of "positive pair", average
precision over the pairs (MTEB's PairClassification main score, cosine AP; scikit-learn's
``average_precision_score``). AP is not a mean over pairs, so the bootstrap draws pairs and recomputes it.

Tasks: RQE (does a consumer question entail an FAQ?) on its MEDIQA 2019 test (230 pairs), its AMIA 2016
test used as validation (302) and, optional (scored only when named), its train split (8,587); cMedQQ (same
intent?) dev (1,793), test (1,935) and the test pairs that share no question with dev (1,280).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.data import CHINESEBLUE, RQE, load_chineseblue, load_rqe
from kit.evaluation.bootstrap import AveragePrecision
from kit.evaluation.task import TASKS, PairCosineTask


@dataclass(frozen=True)
class PairClassificationTask(PairCosineTask):
    """``load()`` returns (texts1, texts2, labels) with boolean labels (True: a positive pair)."""

    type = "pair_classification"
    metrics = ("ap",)
    metric_labels = {"ap": "cosine average precision"}

    def pairs(self) -> tuple[list[str], list[str]]:
        return self.data[0], self.data[1]

    def statistic(self, metric: str) -> AveragePrecision:
        return AveragePrecision(np.asarray(self.data[2], dtype=bool))


def _rqe(split: str):
    pairs = load_rqe(split)
    return pairs.texts[0], pairs.texts[1], pairs.labels == "true"


def _cmedqq(split: str):
    pairs = load_chineseblue("cMedQQ", split)
    return pairs.texts[0], pairs.texts[1], pairs.labels == "1"


def _cmedqq_test_without_dev_questions():
    """cMedQQ test pairs neither of whose questions occurs in the dev split (412 questions occur in both,
    in 655 of the 1,935 test pairs), so that a model selected on dev is tested on questions it never saw."""
    dev = load_chineseblue("cMedQQ", "dev")
    seen = set(dev.texts[0]) | set(dev.texts[1])
    first, second, labels = _cmedqq("test")
    keep = [i for i, (a, b) in enumerate(zip(first, second)) if a not in seen and b not in seen]
    return [first[i] for i in keep], [second[i] for i in keep], labels[keep]


# Study 2 trains on the RQE train split only (a seeded sample of its pairs; their texts are its silver pool); study 1
# (zh) pretrains on cMedQQ train sentences (dev and test sentences removed) and selects its checkpoints on cMedQQ dev
# pairs.
RQE_TEST = TASKS.add(
    PairClassificationTask(
        name="rqe-test",
        description="RQE, MEDIQA 2019 test: does the consumer health question entail the FAQ?",
        dataset=RQE,
        split="test_mediqa2019 (230 pairs)",
        positive="label 'true': the FAQ's answer answers the consumer question",
        load=lambda: _rqe("test_mediqa2019"),
    )
)
RQE_VALIDATION = TASKS.add(
    PairClassificationTask(
        name="rqe-validation",
        description="RQE, the AMIA 2016 test set (the kit's validation split)",
        dataset=RQE,
        split="validation_amia2016_test (302 pairs)",
        positive="label 'true': the FAQ's answer answers the consumer question",
        load=lambda: _rqe("validation_amia2016_test"),
    )
)
RQE_TRAIN = TASKS.add(
    PairClassificationTask(
        name="rqe-train",
        description="RQE training pairs: each consumer health question against its own FAQ-style summary (true) "
        "or another question's (false); large (8,587 pairs), so in no group: scored only when named",
        dataset=RQE,
        split="train (8,587 pairs: the file's 8,588 less pid 5860, whose FAQ is empty)",
        positive="label 'true': the FAQ's answer answers the consumer question",
        load=lambda: _rqe("train"),
        seen_by=("augmented_sbert",),
        optional=True,
    )
)


def _cmedqq_task(name: str, description: str, split: str, load) -> PairClassificationTask:
    return PairClassificationTask(
        name=name,
        description=f"ChineseBLUE cMedQQ {description}",
        dataset=CHINESEBLUE["cMedQQ"].spec,
        split=split,
        positive="label 1: same intent",
        load=load,
        language="zh",
    )


SAME_INTENT = "do the two medical questions have the same intent?"
CMEDQQ_DEV = TASKS.add(_cmedqq_task("cmedqq-dev", f"dev: {SAME_INTENT}", "dev (1,793 pairs)", lambda: _cmedqq("dev")))
CMEDQQ_TEST = TASKS.add(
    _cmedqq_task("cmedqq-test", f"test: {SAME_INTENT}", "test (1,935 pairs)", lambda: _cmedqq("test"))
)
CMEDQQ_TEST_UNSEEN = TASKS.add(
    _cmedqq_task(
        "cmedqq-test-unseen",
        "test pairs whose questions do not occur in dev: same intent?",
        "test without the 655 pairs that share a question with dev (1,280 pairs)",
        _cmedqq_test_without_dev_questions,
    )
)
