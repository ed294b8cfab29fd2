"""The run machinery every study shares: run keys, the run cache, the record, best row, seed spread."""

import json
from dataclasses import asdict

import pandas as pd

import kit.study
from kit.core.config import TrainConfig
from kit.params import ContrastiveTrainingParams
from kit.report.record import RunRecord
from kit.report.tables import mean_std, write_tables
from kit.study import StudyBase, best_row, cached_run, run_key, seed_spread


def test_cached_run_computes_once_and_records_seconds_either_way(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"score": 0.5}

    seconds = {}
    first = cached_run(tmp_path / "run-a", compute, seconds)
    again = cached_run(tmp_path / "run-a", compute, seconds)
    assert len(calls) == 1 and first == again and first["score"] == 0.5
    assert seconds == {"run-a": first["seconds"]} and first["seconds"] >= 0


def test_run_keys_change_with_every_setting_and_with_the_cache_version(monkeypatch):
    settings = {"train": asdict(TrainConfig()), "seed": 0}
    key = run_key("simcse-seed0", settings)
    assert key.startswith("simcse-seed0-") and key == run_key("simcse-seed0", dict(reversed(settings.items())))
    for field in TrainConfig.__dataclass_fields__:  # every training setting, later additions included
        changed = {**settings["train"], field: "changed"}
        assert run_key("simcse-seed0", {**settings, "train": changed}) != key, field
    monkeypatch.setattr(kit.study, "CACHE_VERSION", kit.study.CACHE_VERSION + 1)
    assert run_key("simcse-seed0", settings) != key  # a new cache version recomputes every run


def test_a_finished_runs_checkpoint_is_removed_and_the_record_sums_every_runs_time(tmp_path):
    params = ContrastiveTrainingParams(model="tiny-random-bert")
    study = StudyBase(params, tmp_path)
    run_dir = study.run_dir("row-seed0", {"a": 1}, data="d")

    def compute():
        (run_dir / "checkpoint.pt").write_text("state")
        return {"score": 1.0}

    assert study.cached(run_dir, compute)["score"] == 1.0 and not (run_dir / "checkpoint.pt").exists()
    table = pd.DataFrame({"row": ["gold"], "value": [mean_std([1.0, 3.0])]})
    out = study.write_record(
        RunRecord("a_study", tmp_path, params.to_dict()),
        {"scores": table},
        metrics={"m": 1},
        headline={"name": "h", "value": 2.0},
        note="x",
    )
    record = json.loads(out.read_text())
    assert record["runs"] == 1 and record["compute_seconds"] >= 0 and record["note"] == "x"
    assert record["model"].startswith("random-initialised BERT") and record["parameters"]["model"] == "tiny-random-bert"
    assert record["tables"] == {"scores": [{"row": "gold", "value": "2.00 ± 1.41"}]}


def test_tables_are_written_titled_and_returned_as_records(tmp_path):
    records = write_tables(tmp_path, {"scores": pd.DataFrame({"row": ["gold"], "value": [mean_std([1.0, 3.0])]})})
    assert records == {"scores": [{"row": "gold", "value": "2.00 ± 1.41"}]}
    assert (tmp_path / "results_table.txt").read_text(encoding="utf-8").startswith("scores\n")


def test_best_row_ties_go_to_the_row_listed_first_and_rows_can_be_restricted():
    results = pd.DataFrame({"method": ["zero_shot", "simcse", "ct"], "spearman_dev": [0.9, 0.7, 0.7]})
    assert best_row(results, "spearman_dev") == "zero_shot"
    assert best_row(results, "spearman_dev", ["simcse", "ct"]) == "simcse"


def test_seed_spread_reads_the_range_of_the_per_row_std_or_says_there_is_none():
    results = pd.DataFrame({"method": ["a", "a", "b", "b", "c"], "score": [0.80, 0.82, 0.70, 0.75, 0.9]})
    text = seed_spread(results, "score", "the score")
    assert "ranges 1.41-3.54 points" in text
    assert "not measured" in seed_spread(results[results.method == "c"], "score", "the score")
