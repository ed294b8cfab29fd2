"""MTEB and the kit, each running the other's tasks (kit.evaluation.mteb_tasks), and kit.evaluate's scores as MTEB
result files (kit.report.mteb_results), read back with mteb's own reader. Offline: an MTEB task's data comes from
a Hugging Face datasets cache that the test fills, in the layout a download leaves, with the kit's copy of it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import mteb  # the optional extra mteb, which make test installs
import numpy as np
import pytest

from kit.core.models import resolve_model
from kit.evaluation.embeddings import Embedder
from kit.evaluation.mteb_tasks import as_mteb, from_mteb
from kit.evaluation.suite import evaluate
from kit.evaluation.tasks import TASKS
from kit.paths import PROJECT_ROOT

BIOSSES_REVISION = "d3fb88f8f02e40887cd149695127462bbcf29b4a"  # mteb's BIOSSES declaration


def test_mteb_scores_the_kits_sts_pair_and_retrieval_tasks_as_the_kit_does():
    """MiniLM through MTEB's evaluators on three kit tasks, and through the kit's suite: every shared metric to
    1e-4 (MTEB rounds retrieval metrics to five decimals)."""
    from sentence_transformers import SentenceTransformer

    names = {"biosses-all": "cosine_spearman", "rqe-test": "cosine_ap", "meqsum-chq-summary": "ndcg_at_10"}
    model = SentenceTransformer(resolve_model("minilm").path, device="cpu")
    ran = mteb.evaluate(model, tasks=[as_mteb(TASKS[n]) for n in names], cache=None, show_progress_bar=False)
    theirs = {r.task_name: r.scores["test"][0] for r in ran.task_results}
    ours = evaluate({"minilm": Embedder.from_name("minilm", use_cache=False)}, [TASKS[n] for n in names], resamples=100)
    for result in ours.tasks:
        mine = {m: e.value for m, e in result.estimates["minilm"].items()}
        scores = theirs[result.task.name]
        assert scores["main_score"] == pytest.approx(mine[result.task.main_metric], abs=1e-4)
        assert scores[names[result.task.name]] == pytest.approx(mine[result.task.main_metric], abs=1e-4)
    retrieval = theirs["meqsum-chq-summary"]
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


def datasets_cache(folder: Path) -> Path:
    """A Hugging Face datasets cache holding mteb/biosses-sts at mteb's revision, as a download leaves it (an arrow
    file and dataset_info.json under mteb___biosses-sts/default/0.0.0/<revision>), filled with the kit's BIOSSES."""
    import shutil

    from datasets.packaged_modules.json.json import Json

    from kit.data import load_biosses

    pairs = load_biosses()
    rows = folder / "biosses.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"sentence1": a, "sentence2": b, "score": float(s)}) + "\n"
            for a, b, s in zip(pairs.sentence1, pairs.sentence2, pairs.scores)
        )
    )
    builder = Json(
        cache_dir=str(folder / "build"),
        dataset_name="biosses-sts",
        config_name="default",
        hash="local",
        data_files={"test": str(rows)},
    )
    builder.download_and_prepare()
    cache = folder / "hf-datasets"
    shutil.copytree(builder.cache_dir, cache / "mteb___biosses-sts" / "default" / "0.0.0" / BIOSSES_REVISION)
    return cache


def run_evaluate(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "kit.evaluate", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_an_mteb_task_runs_through_the_kit_with_intervals_and_every_score_is_written_as_mteb_results(tmp_path):
    """kit.evaluate on the kit's BIOSSES task and on mteb:BIOSSES (read by MTEB from the cache, which holds the
    same pairs): the same Spearman, each with its interval; the result files load with mteb's reader."""
    cache, out = datasets_cache(tmp_path), tmp_path / "out"
    done = run_evaluate(["minilm", "--tasks", "biosses-all,mteb:BIOSSES", "--out", str(out), "--no-cache"], cache)
    assert done.returncode == 0, done.stderr[-3000:]
    tasks = json.loads((out / "evaluation.json").read_text())["tasks"]
    kit_score, mteb_score = (tasks[name]["scores"]["minilm"]["spearman"] for name in ("biosses-all", "mteb:BIOSSES"))
    assert mteb_score["value"] == pytest.approx(kit_score["value"], abs=1e-6)
    assert mteb_score["low"] < mteb_score["value"] < mteb_score["high"]
    assert tasks["mteb:BIOSSES"]["declaration"]["source"].startswith(f"mteb/biosses-sts @ {BIOSSES_REVISION}")

    [folder] = list((out / "mteb" / "results").glob("*/*"))
    assert folder.parent.name == "sentence-transformers__all-MiniLM-L6-v2"
    files = {p.stem: mteb.TaskResult.from_disk(p) for p in folder.glob("*.json") if p.name != "model_meta.json"}
    assert set(files) == {"biosses-all", "BIOSSES"}
    assert files["BIOSSES"].dataset_revision == BIOSSES_REVISION
    assert files["BIOSSES"].get_score() == pytest.approx(mteb_score["value"])
    assert files["biosses-all"].scores["test"][0]["cosine_spearman_kit_interval"]["low"] == kit_score["low"]
    loaded = mteb.ResultCache(out / "mteb").load_results(
        models=["sentence-transformers/all-MiniLM-L6-v2"], tasks=["BIOSSES", "biosses-all"], include_remote=False
    )
    table = loaded.to_dataframe().set_index("task_name")["sentence-transformers/all-MiniLM-L6-v2"]
    assert np.allclose(table[["BIOSSES", "biosses-all"]], mteb_score["value"])


def test_an_mteb_task_whose_data_is_not_here_fails_at_once_saying_how_to_get_it(tmp_path):
    done = run_evaluate(["minilm", "--tasks", "mteb:SciFact", "--out", str(tmp_path / "out")], tmp_path / "empty")
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    assert "argument --tasks: mteb:SciFact: MTEB task SciFact: its data (mteb/scifact @" in line
    assert "mteb.get_task('SciFact').load_data()" in line
