"""Study 3's data splits; with two tiny trained rows, the per-question ROUGE and the paired comparisons of
ROUGE and of the CHQ encoders on the evaluation suite."""

import numpy as np
import pytest
import torch

from kit.evaluation.rows import load_outputs
from kit.evaluation.summarization import rouge, rouge_items
from kit.params import ParameterError
from kit.studies.qfcl_summarization.params import ROWS, QFCLParams
from kit.studies.qfcl_summarization.seq2seq import CHQEncoder, summarizer
from kit.studies.qfcl_summarization.study import Study
from kit.study import SUITE_FILE


def test_meqsum_split_is_seeded_disjoint_and_sized(tmp_path):
    study = Study(QFCLParams.from_dict({"split_sizes": [40, 10, 20], "n_hard": 2}), tmp_path)
    parts = [study.train_data, study.dev_data, study.test_data]
    assert [len(p) for p in parts] == [40, 10, 20]
    assert not set(study.train_data.chq) & (set(study.dev_data.chq) | set(study.test_data.chq))
    assert (
        study.train_data.chq
        == Study(QFCLParams.from_dict({"split_sizes": [40, 10, 20], "n_hard": 2}), tmp_path).train_data.chq
    )
    assert all(len(p.hard) in (0, 2) for p in study.train_pairs) and not any(p.hard for p in study.test_pairs)
    assert "no official split" in study.split_note


def test_healthcaremagic_takes_dev_from_train_and_tests_on_valid(tmp_path):
    study = Study(
        QFCLParams.from_dict({"dataset": "healthcaremagic", "split_sizes": [30, 10, 15], "n_hard": 1}), tmp_path
    )
    assert [len(study.train_data), len(study.dev_data), len(study.test_data)] == [30, 10, 15]
    assert not set(study.train_data.chq) & set(study.dev_data.chq)
    assert "not available here" in study.split_note


def test_split_larger_than_meqsum_fails_in_validation():
    with pytest.raises(ParameterError, match="MeQSum has 1000"):
        QFCLParams.from_dict({"split_sizes": [900, 100, 100]})


def test_oversized_healthcaremagic_split_fails_in_validation():
    with pytest.raises(ParameterError, match="HealthCareMagic subset"):
        QFCLParams.from_dict({"dataset": "healthcaremagic", "split_sizes": [400, 100, 400]})


TINY = {
    "model": "tiny-random-bert",
    "rows": ["baseline", "s"],
    "seeds": [0],
    "split_sizes": [16, 4, 6],
    "epochs": 1,
    "batch_size": 8,
    "lr": 1e-3,
    "max_source": 32,
    "max_target": 8,
    "n_hard": 1,
    "queue_size": 8,
    "num_beams": 1,
    "suite": ["biosses-test", "meqsum-chq-summary"],
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two tiny rows trained once for the tests below."""
    study = Study(QFCLParams.from_dict(TINY), tmp_path_factory.mktemp("qfcl"))
    for row, seed in study.planned_runs():
        study.run(row, seed)
    return study


def test_rouge_per_question_by_hand_and_its_mean():
    items = rouge_items(["How to treat a cold?", "x"], ["how to treat the flu", "What is X?"])
    assert items["rouge1"] == pytest.approx([0.6, 0.5])  # 3 of 5 words both ways; P 1, R 1/3
    assert rouge(["How to treat a cold?", "x"], ["how to treat the flu", "What is X?"])["rouge1"] == pytest.approx(55)


def test_runs_keep_per_question_rouge_whose_means_are_the_reported_rouge(trained):
    result = trained.run("s", 0)
    items = result["rouge_items"]
    assert {k: len(v) for k, v in items.items()} == {k: 6 for k in ("rouge1", "rouge2", "rougeL")}
    assert items == rouge_items(result["summaries"], trained.test_data.summary)
    for k, v in items.items():
        assert result["rouge"][k] == pytest.approx(100 * np.mean(v))


def with_gold_summaries(study, monkeypatch, row):
    """``row``'s runs as if it had written the gold summaries (ROUGE 1 on every question)."""
    run, gold = study.run, study.test_data.summary

    def patched(name, seed):
        result = run(name, seed)
        return {**result, "summaries": gold, "rouge_items": rouge_items(gold, gold)} if name == row else result

    monkeypatch.setattr(study, "run", patched)


def test_rouge_report_compares_every_row_with_the_baseline_over_test_questions(trained, monkeypatch):
    with_gold_summaries(trained, monkeypatch, "s")
    report = trained.rouge_report()
    assert [t.name for t in report.headline_tasks()] == [
        "meqsum-test-rougeL",
        "meqsum-test-rouge1",
        "meqsum-test-rouge2",
    ]
    lines = report.compared.set_index(["task", "row"])
    baseline = trained.run("baseline", 0)["rouge"]
    for metric in ("rougeL", "rouge1", "rouge2"):
        s, base = lines.loc[(f"meqsum-test-{metric}", "s")], lines.loc[(f"meqsum-test-{metric}", "baseline")]
        assert s["items"] == 6 and s.baseline == "baseline" and not isinstance(base.baseline, str)
        assert s.score == pytest.approx(100) and base.score == pytest.approx(baseline[metric])
        assert s.difference == pytest.approx(100 - baseline[metric]) and "one seed" in s.reason and np.isnan(s.low)
    assert report.comparison("s", "meqsum-test-rougeL").startswith(
        "+S vs baseline (cross-entropy only): +100.0 (a trained row with one seed: its run-to-run variance is not "
        "measured), not tested"
    )
    assert report.comparison("baseline") is None
    assert "ROUGE on the test questions, headline tasks" in next(iter(report.tables()))


def test_a_row_identical_to_the_baseline_differs_by_zero(trained, monkeypatch):
    """The comparison pairs questions and seeds: a row whose summaries are the baseline's has the same outputs on
    every item: reported as identical, not tested."""
    with_gold_summaries(trained, monkeypatch, "baseline")
    run = trained.run
    monkeypatch.setattr(trained, "run", lambda row, seed: run("baseline", seed))
    lines = trained.rouge_report().compared.set_index("row")
    assert (lines.loc["baseline"].score == 100).all()
    for line in lines.loc[["s"]].itertuples():
        assert line.difference == 0 and "same outputs" in line.reason and not line.significant


def test_chq_encoders_are_compared_on_the_suite_and_seen_tasks_reported_apart(trained):
    report = trained.suite_report()
    groups = {title.split(" (")[0]: [t.name for t in tasks] for title, tasks in report.groups().items()}
    assert groups == {
        "headline tasks": ["biosses-test"],
        "tasks whose data qfcl_summarization trains on": ["meqsum-chq-summary"],
    }
    line = report.compared.set_index(["task", "row"]).loc[("biosses-test", "s")]
    assert (
        line.baseline == "baseline" and "one seed" in line.reason and np.isnan(line.low)
    )  # a trained row with one seed: its run part is unknown
    assert all(title.startswith("CHQ encoder on the evaluation suite, ") for title in report.tables())
    outputs = load_outputs(trained._run_dir(ROWS["s"], 0) / SUITE_FILE)
    assert outputs["meqsum-chq-summary"]["ndcg_at_10"].shape == (1000,)


def test_the_suite_enters_the_run_folder_and_must_be_english(tmp_path):
    study = Study(QFCLParams.from_dict(TINY), tmp_path)
    other = Study(QFCLParams.from_dict({**TINY, "suite": ["biosses-test"]}), tmp_path)
    assert study._run_dir(ROWS["s"], 0) != other._run_dir(ROWS["s"], 0)
    with pytest.raises(ParameterError, match="not English"):
        QFCLParams.from_dict({**TINY, "suite": ["cmedqq-test"]})
    with pytest.raises(ParameterError, match="give at least one value"):
        QFCLParams.from_dict({**TINY, "suite": []})


def test_the_chq_encoder_is_the_mean_of_the_encoder_states_over_the_tokens():
    s = summarizer("tiny-random-bert")
    texts = ["Is it safe to take ibuprofen with aspirin?", "How long does a cold last?", "Rash"]
    got = CHQEncoder(s).encode(texts, max_length=16)
    s.model.eval()  # encode runs in eval mode (no dropout)
    enc = s.tokenizer(texts, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        states = s.encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    np.testing.assert_allclose(got, ((states * mask).sum(1) / mask.sum(1)).numpy(), atol=1e-5)
