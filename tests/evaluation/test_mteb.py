"""MTEB and the kit, each running the other's tasks (kit.evaluation.mteb_tasks). kit.evaluate on MTEB tasks and
its MTEB result files: tests/evaluation/test_cli.py."""

import dataclasses

import mteb  # the optional extra mteb, which make test installs
import pytest

from kit.core.models import resolve_model
from kit.evaluation.embeddings import Embedder
from kit.evaluation.mteb_tasks import as_mteb, from_mteb
from kit.evaluation.suite import evaluate
from kit.evaluation.tasks import TASKS


def test_mteb_scores_the_kits_sts_pair_and_retrieval_tasks_as_the_kit_does():
    """MiniLM through MTEB's evaluators on three kit tasks, and through the kit's suite: every shared metric to
    1e-4 (MTEB rounds retrieval metrics to five decimals). The retrieval task is MeQSum's first 250 questions (with
    their summaries as the candidates): the same scoring on a quarter of the encoding."""
    from sentence_transformers import SentenceTransformer

    full = TASKS["meqsum-chq-summary"]
    meqsum = dataclasses.replace(full, name="meqsum-250", load=lambda: tuple(texts[:250] for texts in full.data))
    tasks = {"biosses-all": "cosine_spearman", "rqe-test": "cosine_ap", "meqsum-250": "ndcg_at_10"}
    kit_tasks = [TASKS["biosses-all"], TASKS["rqe-test"], meqsum]
    model = SentenceTransformer(resolve_model("minilm").path, device="cpu")
    ran = mteb.evaluate(model, tasks=[as_mteb(t) for t in kit_tasks], cache=None, show_progress_bar=False)
    theirs = {r.task_name: r.scores["test"][0] for r in ran.task_results}
    ours = evaluate({"minilm": Embedder.from_name("minilm", use_cache=False)}, kit_tasks, resamples=100)
    assert meqsum.items == 250 and meqsum.candidates > 200
    for result in ours.tasks:
        mine = {m: e.value for m, e in result.estimates["minilm"].items()}
        scores = theirs[result.task.name]
        assert scores["main_score"] == pytest.approx(mine[result.task.main_metric], abs=1e-4)
        assert scores[tasks[result.task.name]] == pytest.approx(mine[result.task.main_metric], abs=1e-4)
    retrieval = theirs["meqsum-250"]
    assert retrieval["recall_at_1"] == pytest.approx(ours.tasks[2].estimates["minilm"]["recall_at_1"].value, abs=1e-4)
    assert retrieval["mrr_at_1000"] == pytest.approx(ours.tasks[2].estimates["minilm"]["mrr"].value, abs=1e-4)


def test_a_probe_task_has_no_mteb_type_and_bad_mteb_names_are_named():
    with pytest.raises(ValueError, match="is a probe task: MTEB has no such task type"):
        as_mteb(TASKS["cmedqq-probe"])
    for spec, message in [
        ("mteb:NoSuchTask", "MTEB has no task 'NoSuchTask'"),
        ("mteb:MedrxivClusteringS2S.v2", "a Clustering task; the kit scores STS, Retrieval, PairClassification"),
        ("mteb:PublicHealthQA", "name one of its subsets, mteb:PublicHealthQA/SUBSET: arabic"),
        ("mteb:PublicHealthQA/klingon", "no subset 'klingon'; its subsets: arabic"),
    ]:
        with pytest.raises(ValueError, match=message):
            from_mteb(spec)
