"""Every task declaration of the suite, and each task type on fixed embeddings: what the type computes, and
that a copy of a model whose embeddings are shuffled across items is significantly worse."""

import json
import warnings
from collections import Counter

import numpy as np
import pytest

from kit.data import BIOSSES, DATASETS, RQE, STSPairs, resolve
from kit.evaluation.inference import paired_comparison
from kit.evaluation.pair_classification import PairClassificationTask
from kit.evaluation.retrieval import RetrievalTask
from kit.evaluation.sts import STSTask, cosine_spearman
from kit.evaluation.suite import score_task
from kit.evaluation.tasks import GROUPS, NAMED_ONLY, TASKS, TYPES, select, split_seen
from kit.paths import PROJECT_ROOT

# The item counts the issue names (retrieval: queries; their candidate pools, distinct targets, in brackets).
ITEMS = {
    "biosses-all": 100,
    "biosses-test": 20,
    "meqsum-chq-summary": 1_000,  # (994 distinct summaries)
    "healthcaremagic-chq-summary": 1_643,  # (1,600)
    "doid-definition-name": 9_962,
    "doid-definition-name-dev": 1_000,  # doid-definition-name's selection split (1,000 candidates); optional
    "doid-name-definition": 9_962,
    "rqe-test": 230,
    "rqe-validation": 302,
    "rqe-train": 8_587,  # the file's 8,588 train pairs less pid 5860 (empty FAQ); optional: in no group
    "cmedqq-dev": 1_793,
    "cmedqq-test": 1_935,
    "cmedqq-test-unseen": 1_280,
    "cmedqq-probe": 400,  # seeded subsamples of the test splits
    "cmedic-probe": 84,  # its whole test split
    "cmedqa-probe": 400,
    "cmedtc-probe": 400,
}
STUDIES = {p.name for p in (PROJECT_ROOT / "kit" / "studies").iterdir() if (p / "__init__.py").is_file()}


def test_the_suite_declares_the_tasks_of_the_issue():
    assert set(TASKS) == set(ITEMS)


@pytest.mark.filterwarnings("ignore:.*dropped 1 train pair:UserWarning")  # rqe-train: pid 5860, tested below
@pytest.mark.parametrize("name", list(TASKS))
def test_each_declaration_is_complete_and_loads_its_items(name):
    task = TASKS[name]
    assert task.type in TYPES and task.main_metric == task.metrics[0]
    assert set(task.metric_labels) == set(task.metrics)
    assert task.dataset in DATASETS.values() and task.split and task.positive and task.description
    assert set(task.seen_by) <= STUDIES, f"seen_by names a study that does not exist: {task.seen_by}"
    assert task.items == ITEMS[name]
    texts = task.texts()
    assert texts and all(t and all(s.strip() for s in t) for t in texts)
    json.dumps(task.describe())
    rng = np.random.default_rng(0)
    scored = task.score(tuple(rng.normal(size=(len(t), 8)).astype(np.float32) for t in texts))
    assert list(scored) == list(task.metrics)
    assert all(s.items == task.items and s.seeds == 1 and -1 <= s.value <= 1 for s in scored.values())


def test_seen_marks_the_studies_that_train_on_the_data():
    assert TASKS["meqsum-chq-summary"].seen("qfcl_summarization")
    assert TASKS["doid-definition-name"].seen("medse_entity_definitions")
    headline, seen = split_seen(select(["retrieval"]), "medse_entity_definitions")
    assert {t.name for t in seen} == {"doid-definition-name", "doid-name-definition"}
    assert {t.name for t in headline} == {"meqsum-chq-summary", "healthcaremagic-chq-summary"}


def test_the_unseen_cmedqq_test_pairs_share_no_question_with_dev():
    dev = TASKS["cmedqq-dev"].texts()[0]
    unseen = TASKS["cmedqq-test-unseen"].texts()[0]
    assert not set(dev) & set(unseen) and set(TASKS["cmedqq-test"].texts()[0]) & set(dev)


def test_select_takes_names_and_groups_in_suite_order():
    assert [t.name for t in select(["rqe-test", "biosses-all", "rqe-test"])] == ["biosses-all", "rqe-test"]
    assert {t.language for t in select(["en"])} == {"en"} and len(select()) == len(TASKS) - len(NAMED_ONLY)
    probes = {"cmedqq-probe", "cmedic-probe", "cmedqa-probe", "cmedtc-probe"}
    assert set(GROUPS["zh"]) == {"cmedqq-dev", "cmedqq-test", "cmedqq-test-unseen", *probes}
    assert set(GROUPS["probe"]) == probes
    with pytest.raises(KeyError, match="unknown task 'nope'"):
        select(["nope"])


def _rqe_file_rows(split: str) -> list[dict]:
    """The RQE file's rows of ``split``, read here with json, not with the kit's loader."""
    with open(resolve(RQE), encoding="utf-8") as f:
        return [row for row in map(json.loads, f) if row["split"] == split]


@pytest.fixture(scope="module")
def rqe_train():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the loader's dropped empty pair (pid 5860), tested below
        task = TASKS["rqe-train"]
        task.pairs()
    return task


def test_rqe_train_holds_the_files_train_pairs_with_their_labels(rqe_train):
    rows = _rqe_file_rows("train")
    assert len(rows) == 8_588
    kept = [r for r in rows if r["chq"].strip() and r["faq"].strip()]
    assert [r["pid"] for r in rows if r not in kept] == ["5860"]
    first, second, labels = rqe_train.data
    assert rqe_train.items == len(kept) == 8_587 and f"{rqe_train.items:,} pairs" in rqe_train.split
    assert list(zip(first, second)) == [(r["chq"].strip(), r["faq"].strip()) for r in kept]
    assert Counter(np.where(labels, "true", "false")) == Counter(r["label"] for r in kept)
    assert [bool(x) for x in labels] == [r["label"] == "true" for r in kept]


def test_rqe_train_shares_no_pair_with_rqe_test_or_validation(rqe_train):
    train = {frozenset(pair) for pair in rqe_train.item_texts()}
    for name in ("rqe-test", "rqe-validation"):
        other = {frozenset(pair) for pair in TASKS[name].item_texts()}
        assert other and not train & other, name


def test_rqe_train_is_listed_and_scored_only_when_named(rqe_train):
    from kit.docs import tasks_block
    from kit.evaluate import parser, tasks_named

    assert "rqe-train" in NAMED_ONLY and rqe_train.optional
    assert all("rqe-train" not in members for members in GROUPS.values())
    assert "rqe-train" not in [t.name for t in tasks_named(["all"]) + tasks_named(["en"])]
    assert [t.name for t in tasks_named(["en,rqe-train"])][-1] == "rqe-train"
    help_text = "".join(parser().format_help().split())  # argparse wraps lines at hyphens
    assert "scoredonlywhennamed:doid-definition-name-dev,rqe-train)" in help_text
    (row,) = [line for line in tasks_block().splitlines() if line.startswith("| `rqe-train` |")]
    assert "| 8,587 |" in row and rqe_train.description in row and "large" in rqe_train.description
    assert row.endswith("| augmented_sbert |")


def test_rqe_train_is_seen_by_study_2_which_trains_on_its_pairs(rqe_train, tmp_path):
    from kit.studies.augmented_sbert.params import AugSBERTParams
    from kit.studies.augmented_sbert.study import Study

    assert rqe_train.seen_by == ("augmented_sbert",)
    headline, seen = split_seen(select(["pair_classification", "rqe-train"]), "augmented_sbert")
    assert [t.name for t in seen] == ["rqe-train"] and "rqe-test" in {t.name for t in headline}
    params = AugSBERTParams.from_dict({"model": "tiny-random-bert", "benchmarks": ["rqe"], "nli_train_size": None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        (split,) = Study(params, tmp_path).splits("rqe")
    items = set(rqe_train.item_texts())
    assert set(split.train) == items and not set(split.test) & items  # all of it with every pair; tested on rqe-test
    assert set(split.test) == set(TASKS["rqe-test"].item_texts()) and not TASKS["rqe-test"].seen("augmented_sbert")


# Fixed embeddings for toy tasks of each type: texts that belong together get nearby vectors.
def toy(kind: str, n: int = 80):
    rng = np.random.default_rng(11)
    base = rng.normal(size=(n, 16))
    close = base + 0.6 * rng.normal(size=(n, 16))
    first, second = [f"a{i}" for i in range(n)], [f"b{i}" for i in range(n)]
    if kind == "sts":
        gold = rng.uniform(0, 4, n)
        second_vectors = base + (4.2 - gold[:, None]) * 0.4 * rng.normal(size=(n, 16))
        task = STSTask("toy-sts", "toy", BIOSSES, "all", "-", load=lambda: STSPairs(first, second, gold, None, "toy"))
    elif kind == "retrieval":
        second_vectors = close
        task = RetrievalTask("toy-retrieval", "toy", BIOSSES, "all", "-", load=lambda: (first, second))
    else:
        labels = np.arange(n) % 2 == 0
        second_vectors = np.where(labels[:, None], close, rng.normal(size=(n, 16)))
        task = PairClassificationTask("toy-pairs", "toy", RQE, "all", "-", load=lambda: (first, second, labels))
    vectors = dict(zip(first + second, np.concatenate([base, second_vectors]).astype(np.float32)))
    return task, vectors


def embedder(vectors: dict[str, np.ndarray], shuffle: int | None = None):
    keys = list(vectors)
    if shuffle is not None:  # every text gets another text's vector
        order = np.random.default_rng(shuffle).permutation(len(keys))
        vectors = {k: vectors[keys[j]] for k, j in zip(keys, order)}
    return lambda texts: np.stack([vectors[t] for t in texts])


@pytest.mark.parametrize("kind", ["sts", "retrieval", "pair_classification"])
def test_a_copy_with_embeddings_shuffled_across_items_is_significantly_worse(kind):
    task, vectors = toy(kind)
    good = score_task(embedder(vectors), task)
    shuffled = score_task(embedder(vectors, shuffle=0), task)
    for metric in task.metrics:
        c = paired_comparison(shuffled[metric], good[metric], seed=0, resamples=500)
        assert c.excludes_zero and c.high < 0 and c.p_value < 0.01, (metric, c)
    same = paired_comparison(good[task.main_metric], good[task.main_metric], resamples=200)
    assert same.identical and not same.tested


def test_the_sts_task_scores_as_the_studies_sts_evaluator_does():
    task, vectors = toy("sts")
    embed = embedder(vectors)
    pairs = task.data
    expected = cosine_spearman(embed(pairs.sentence1), embed(pairs.sentence2), pairs.scores)
    assert score_task(embed, task)["spearman"].value == pytest.approx(expected, abs=1e-12)


def test_several_seeds_stack_into_one_score():
    task, vectors = toy("pair_classification")
    scored = score_task([embedder(vectors), embedder(vectors, shuffle=1)], task)["ap"]
    single = [
        score_task(embedder(vectors), task)["ap"].value,
        score_task(embedder(vectors, shuffle=1), task)["ap"].value,
    ]
    assert scored.seeds == 2 and scored.value == pytest.approx(np.mean(single))
