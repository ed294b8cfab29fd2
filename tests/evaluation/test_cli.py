"""``python -m kit.evaluate`` in a subprocess: progress lines, the table, the HTML page and the JSON record, MTEB
tasks and MTEB result files; and in-process where a setting's effect on the scores is what counts. Offline, an MTEB
task's data comes from a Hugging Face datasets cache that a test fills, in the layout a download leaves, with the
kit's copy of the data."""

import json
import os
import subprocess
import sys
from pathlib import Path

import mteb  # the optional extra mteb, which make test installs
import numpy as np
import pytest

from kit.evaluate import main
from kit.paths import PROJECT_ROOT


def run(args, tmp_path, **env):
    """``python -m kit.evaluate ARGS`` offline, its embedding cache under ``tmp_path``, with ``env`` added."""
    env = {**os.environ, "KIT_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "KIT_PROGRESS": "0", **env}
    return subprocess.run(
        [sys.executable, "-m", "kit.evaluate", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evaluate")
    done = run(["tiny-random-bert", "minilm", "--tasks", "biosses-test", "rqe-test", "--out", str(tmp / "out")], tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp, done.stdout


def test_the_console_shows_a_line_per_model_and_task_then_the_table(evaluated):
    _, out = evaluated
    for model in ("tiny-random-bert", "minilm"):
        for task in ("biosses-test", "rqe-test"):
            assert any(line.startswith("[kit.evaluate ") and f"{model} · {task}: " in line for line in out.splitlines())
    table = out[out.index("task ") :].splitlines()
    assert table[0].split() == [
        *("task", "items", "metric", "seen", "by", "model", "score", "vs", "difference", "p"),
        *("family", "interval", "p", "(holm)", "resolves"),
    ]
    rows = table[2:8]
    assert [r.split()[0] for r in rows] == ["biosses-test"] * 3 + ["rqe-test"] * 3
    assert [" minilm " in r for r in rows] == [False, True, False] * 2 and "tiny-random-bert" in rows[0]
    # minilm's rows: its score [interval], the difference [interval], p, the family interval, Holm's p, resolves
    assert rows[1].count("[") == 3 and rows[4].count("[") == 3
    # the lexical anchor after the models: its score [interval] and no comparison of its own
    assert all("tfidf (lexical anchor)" in rows[i] and rows[i].count("[") == 1 for i in (2, 5))
    assert "tiny-random-bert against the best bag-of-words anchor of each of the 2 tasks they score" in out
    assert "significant after Holm's correction over the 2 comparisons" in out


def test_a_pair_asked_for_joins_the_family_and_the_correction_can_be_changed(tmp_path):
    done = run(
        [
            "tiny-random-bert",
            "minilm",
            "pubmed-bert-mini",
            "--tasks",
            "biosses-all",
            "--out",
            str(tmp_path / "o"),
            "--compare",
            "pubmed-bert-mini",
            "minilm",
            "--correction",
            "bh",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "o" / "evaluation.json").read_text(encoding="utf-8"))
    pairs = [(c["model"], c["baseline"]) for c in record["tasks"]["biosses-all"]["comparisons"]]
    assert pairs == [
        ("minilm", "tiny-random-bert"),
        ("pubmed-bert-mini", "tiny-random-bert"),
        ("pubmed-bert-mini", "minilm"),
    ]
    assert record["correction"] == "bh"
    assert {c["family"]["size"] for c in record["tasks"]["biosses-all"]["comparisons"]} == {3}
    assert "p (bh)" in done.stdout and "Benjamini-Hochberg" in done.stdout


def test_the_html_page_names_the_models_and_holds_the_table_with_relative_paths_only(evaluated):
    tmp, _ = evaluated
    page = (tmp / "out" / "evaluation.html").read_text(encoding="utf-8")
    assert "<title>kit.evaluate: tiny-random-bert (baseline) vs minilm</title>" in page
    assert page.count("<table>") == 3 and "biosses-test" in page and "rqe-test" in page
    assert 'href="evaluation.json"' in page
    for absolute in (str(tmp), str(PROJECT_ROOT), os.path.expanduser("~"), "/tmp/", "site-packages"):
        assert absolute not in page


def test_the_json_record_holds_every_number_and_the_settings(evaluated):
    tmp, _ = evaluated
    record = json.loads((tmp / "out" / "evaluation.json").read_text(encoding="utf-8"))
    assert record["models"] == ["tiny-random-bert", "minilm"] and record["seed"] == 0
    assert record["versions"]["torch"] and record["git_commit"]
    rqe = record["tasks"]["rqe-test"]
    assert rqe["declaration"]["items"] == 230
    score = rqe["scores"]["minilm"]["ap"]
    assert score["low"] <= score["value"] <= score["high"]
    [comparison] = rqe["comparisons"]
    assert (comparison["model"], comparison["baseline"]) == ("minilm", "tiny-random-bert")
    assert {"difference", "low", "high", "p_value", "df", "variance", "detectable", "excludes_zero"} <= set(
        comparison["ap"]
    )
    assert {"p", "low", "high", "confidence", "size", "significant"} <= set(comparison["family"])
    assert comparison["family"]["size"] == 2 and record["correction"] == "holm"


def test_a_second_run_reads_every_embedding_from_the_cache(evaluated):
    tmp, _ = evaluated
    done = run(["minilm", "--tasks", "biosses-test", "--out", str(tmp / "again"), "--seed", "3"], tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "minilm · biosses-test" in done.stdout and "texts from the cache)" in done.stdout
    assert "encoded" not in done.stdout


def test_an_unknown_task_is_refused_before_anything_runs(tmp_path):
    done = run(["minilm", "--tasks", "nope", "--out", str(tmp_path)], tmp_path)
    assert done.returncode == 2 and "unknown task 'nope'" in done.stderr
    assert not (tmp_path / "evaluation.html").exists()


def test_a_small_max_length_truncates_every_text(tmp_path):
    """--max-length 3 keeps [CLS], one token of each text and [SEP]: it is recorded, and the scores change."""

    def record(*args) -> dict:
        out = tmp_path / ("-".join(args) or "default")
        assert main(["tiny-random-bert", "--tasks", "biosses-all", "--no-cache", "--out", str(out), *args]) == 0
        return json.loads((out / "evaluation.json").read_text(encoding="utf-8"))

    short, default = record("--max-length", "3"), record()
    assert short["settings"]["max_length"] == 3 and default["settings"]["max_length"] == 256
    score = [r["tasks"]["biosses-all"]["scores"]["tiny-random-bert"]["spearman"]["value"] for r in (short, default)]
    assert score[0] != score[1]


BIOSSES_REVISION = "d3fb88f8f02e40887cd149695127462bbcf29b4a"  # mteb's BIOSSES declaration


def offline(datasets_cache: Path) -> dict[str, str]:
    return {"HF_DATASETS_CACHE": str(datasets_cache), "HF_DATASETS_OFFLINE": "1"}


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


def test_an_mteb_task_runs_through_the_kit_with_intervals_and_every_score_is_written_as_mteb_results(tmp_path):
    """kit.evaluate on the kit's BIOSSES task and on mteb:BIOSSES (read by MTEB from the cache, which holds the
    same pairs): the same Spearman, each with its interval; the result files load with mteb's reader."""
    cache, out = datasets_cache(tmp_path), tmp_path / "out"
    done = run(["minilm", "--tasks", "biosses-all,mteb:BIOSSES", "--out", str(out)], tmp_path, **offline(cache))
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
    done = run(["minilm", "--tasks", "mteb:SciFact", "--out", str(tmp_path / "out")], tmp_path, **offline(tmp_path))
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    assert "argument --tasks: mteb:SciFact: MTEB task SciFact: its data (mteb/scifact @" in line
    assert "mteb.get_task('SciFact').load_data()" in line
