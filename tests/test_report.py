import pandas as pd

from kit.report import cached_run, mean_std, write_tables


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


def test_tables_are_written_titled_and_returned_as_records(tmp_path):
    records = write_tables(tmp_path, {"scores": pd.DataFrame({"row": ["gold"], "value": [mean_std([1.0, 3.0])]})})
    assert records == {"scores": [{"row": "gold", "value": "2.00 ± 1.41"}]}
    assert (tmp_path / "results_table.txt").read_text(encoding="utf-8").startswith("scores\n")
