"""Study 3's data splits; with two tiny trained rows, the per-question ROUGE and the paired comparisons of
ROUGE and of the CHQ encoders on the evaluation suite; the extractive floor, the template-collapse check, the
positive control and the incremental ablations, and a smoke run whose control fails."""

import json

import numpy as np
import pytest
import torch
import yaml
from rouge_score import rouge_scorer
from transformers import AutoTokenizer

from kit.core.models import resolve_model
from kit.core.onnx_encoder import OnnxEncoder, onnx_available
from kit.evaluation.rows import load_outputs
from kit.evaluation.summarization import rouge, rouge_items
from kit.params import ParameterError
from kit.paths import PARAMS
from kit.report.record import RunRecord
from kit.studies.qfcl_summarization import report as qfcl_report
from kit.studies.qfcl_summarization.params import ROWS, QFCLParams
from kit.studies.qfcl_summarization.seq2seq import CHQEncoder, summarizer
from kit.studies.qfcl_summarization.study import (
    LEAD,
    Collapse,
    Study,
    first_sentence,
    lead_summaries,
    repeated_share,
)
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
        assert s["items"] == 6 and s.baseline == "baseline" and base.baseline == "lead"  # the positive control
        assert s.score == pytest.approx(100) and base.score == pytest.approx(baseline[metric])
        assert s.difference == pytest.approx(100 - baseline[metric]) and "one seed" in s.reason and np.isnan(s.low)
    assert report.comparison("s", "meqsum-test-rougeL").startswith(
        "+S vs baseline (cross-entropy only): +100.0 (a trained row with one seed: its run-to-run variance is not "
        "measured), not tested"
    )
    assert report.comparison("lead") is None  # the floor is compared with nothing
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


def test_the_chq_encoder_is_the_mean_of_the_encoder_states_over_the_tokens(tmp_path):
    s = summarizer("tiny-random-bert")
    texts = ["Is it safe to take ibuprofen with aspirin?", "How long does a cold last?", "Rash"]
    got = CHQEncoder(s).encode(texts, max_length=16)
    s.model.eval()  # encode runs in eval mode (no dropout)
    enc = s.tokenizer(texts, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        states = s.encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    np.testing.assert_allclose(got, ((states * mask).sum(1) / mask.sum(1)).numpy(), atol=1e-5)
    if onnx_available():  # its suite scoring's fast path: the same graph, ids and mask its only inputs
        fast = OnnxEncoder.from_encoder(CHQEncoder(s), cache=tmp_path)
        assert fast.names == ["input_ids", "attention_mask"]
        np.testing.assert_allclose(fast.encode(texts, max_length=16), got, atol=1e-5)


# ---- the extractive floor, the collapse check, the positive control, the incremental ablations ------------------


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(resolve_model("tiny-random-bert").path)


def test_the_lead_is_the_questions_first_sentence_cut_to_max_target_tokens(tokenizer):
    questions = [
        "How long does a cold last?  I have had one for two weeks. Help!",
        "SUBJECT: Cold and flu\nMESSAGE: Is it safe to take aspirin for them? My doctor said no.",
        "my mother has a cold and it is getting worse every day",  # one sentence, 12 tokens
        "MESSAGE: Rash on my arm\nwhat is it",
    ]
    assert [first_sentence(q) for q in questions] == [
        "How long does a cold last?",
        "Cold and flu",  # MeQSum's field label dropped, the subject line a sentence
        questions[2],
        "Rash on my arm",
    ]
    assert lead_summaries(questions, tokenizer, 7) == [
        "How long does a cold last?",  # 7 tokens, the question mark one of them
        "Cold and flu",
        "my mother has a cold and it",  # truncated to its first 7 tokens
        "Rash on my arm",
    ]
    assert lead_summaries(questions[:1], tokenizer, 6) == ["How long does a cold last"]
    assert lead_summaries(["Is it safe to take ibuprofen?"], tokenizer, 6) == ["Is it safe to take ib"]  # word pieces


def test_the_lead_row_is_scored_by_rouge_score_fixed_and_trains_nothing(trained):
    """The floor's summaries are the test questions' first sentences; its per-question ROUGE in the report's evidence
    is rouge-score's F1 of them against the gold summaries; one fixed set of outputs, no run, not in the suite."""
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(TINY["model"]).path)
    for lead, question in zip(trained.lead, trained.test_data.chq, strict=True):
        sentence, most = first_sentence(question), TINY["max_target"]
        if len(tokenizer.tokenize(sentence)) <= most:
            assert lead == sentence
        else:  # its first max_target tokens
            assert sentence.startswith(lead) and tokenizer.tokenize(lead) == tokenizer.tokenize(sentence)[:most]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    expected = [scorer.score(ref, lead) for lead, ref in zip(trained.lead, trained.test_data.summary)]
    report = trained.rouge_report()
    for metric in ("rougeL", "rouge1", "rouge2"):
        task = f"meqsum-test-{metric}"
        outputs = report.evidence.outputs[task][LEAD]
        assert outputs.shape == (1, 6)
        np.testing.assert_allclose(outputs[0], [e[metric].fmeasure for e in expected])
        line = report.compared.set_index(["task", "row"]).loc[(task, LEAD)]
        assert line.fixed and line.seeds == 1 and line.method == "extractive floor: the question's first sentence"
        assert line.score == pytest.approx(100 * np.mean([e[metric].fmeasure for e in expected]))
    assert LEAD in report.evidence.fixed and not any(
        d.name.startswith("lead") for d in (trained.report_dir / "runs").iterdir()
    )
    assert LEAD not in set(trained.suite_report().compared.row)


def test_the_repeated_share_counts_summaries_identical_to_another():
    assert repeated_share(["what is x?", "what is x?", "What is  x?", "how to treat y?"]) == 0.75
    assert repeated_share(["a", "b", "c", "d"]) == 0
    assert repeated_share(["", "", "a", "b"]) == 0.5  # empty summaries repeat each other
    assert repeated_share([]) == 0


def test_a_collapsed_baseline_is_vetoed_with_its_numbers():
    def check(shares, reference):
        return Collapse("baseline", "baseline (cross-entropy only)", (0, 1), shares, reference)

    veto = check((0.25, 0.75), 0.0).veto()
    assert veto == (
        "baseline (cross-entropy only) is collapsed to a template: 75% of its test summaries (seed 1, the most of "
        "its 2 seeds) repeat another summary of the same seed, against 0% of the reference summaries (the limit: more "
        "than 50%, and more than 2 times the references' share)."
    )
    assert check((0.5, 0.5), 0.0).veto() is None  # not more than half
    assert check((0.75, 0.6), 0.4).veto() is None  # not more than twice the references' share
    assert check((0.75, 0.6), 0.3).veto() is not None


def with_summaries(study, monkeypatch, row, summaries):
    """``row``'s runs as if it had written ``summaries`` of the test questions."""
    run, gold = study.run, study.test_data.summary

    def patched(name, seed):
        result = run(name, seed)
        if name != row:
            return result
        return {**result, "summaries": summaries, "rouge_items": rouge_items(summaries, gold)}

    monkeypatch.setattr(study, "run", patched)


def test_the_control_is_the_baseline_against_the_floor_vetoed_when_collapsed(trained, monkeypatch):
    with_summaries(trained, monkeypatch, "baseline", trained.test_data.summary)
    control = trained.control()
    assert (control.row, control.baseline, control.task, control.vetoes) == (
        "baseline",
        LEAD,
        "meqsum-test-rougeL",
        (),
    )
    assert control.premise == (
        "the baseline summarizer beats the question's first sentence and is not collapsed to a template"
    )
    with_summaries(trained, monkeypatch, "baseline", ["what is the treatment?"] * 5 + ["what causes it?"])
    (veto,) = trained.control().vetoes
    assert veto.startswith("baseline (cross-entropy only) is collapsed to a template: 83% of its test summaries")
    report = trained.rouge_report()
    assert veto in report.control_text() and report.withheld() is not None
    assert trained.suite_report().premise == report.control_text()  # the suite's findings are withheld too
    assert trained.control_report().control_text() == report.control_text()
    table = trained.collapse().set_index("summaries")
    assert table.loc["baseline (cross-entropy only)", "collapsed"] == "yes"
    assert table.loc["baseline (cross-entropy only)", "largest %"] == pytest.approx(83.3)


def test_no_control_without_a_baseline(tmp_path):
    study = Study(QFCLParams.from_dict({**TINY, "rows": ["s", "sh"]}), tmp_path)
    assert study.control() is None


@pytest.mark.parametrize(
    "rows, expected",
    [
        (["baseline", "s", "sh", "qfcl"], {"baseline": None, "s": "baseline", "sh": "s", "qfcl": "sh"}),
        (["baseline", "s", "qfcl"], {"baseline": None, "s": "baseline", "qfcl": "s"}),  # no +S+H: the nearest earlier
        (["baseline", "qfcl"], {"baseline": None, "qfcl": "baseline"}),
        (["s", "sh", "qfcl"], {"s": None, "sh": "s", "qfcl": "sh"}),
        (["sh", "qfcl"], {"sh": None, "qfcl": "sh"}),
    ],
)
def test_each_row_is_compared_with_the_row_before_it_in_the_ablation_order(tmp_path, rows, expected):
    study = object.__new__(Study)  # baseline_of reads the parameters alone
    study.p = QFCLParams.from_dict({**TINY, "rows": rows, "primary": None})
    assert {row: study.baseline_of(row) for row in rows} == expected
    assert study.baseline_of(LEAD) is None


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """params/qfcl_summarization/smoke.yaml built in-process, trained, its reports and record written."""
    params = QFCLParams.from_dict(yaml.safe_load((PARAMS / "qfcl_summarization" / "smoke.yaml").read_text()))
    folder = tmp_path_factory.mktemp("qfcl-smoke")
    study = Study(params, folder)
    for row, seed in study.planned_runs():
        study.run(row, seed)
    rouge_report, suite = study.rouge_report(), study.suite_report()
    results = study.results()
    record = RunRecord("qfcl_summarization", folder, params.to_dict())
    tables = {"ROUGE on test": study.table(results)}
    path = qfcl_report.record_results(study, record, results, tables, rouge_report, suite)
    return study, rouge_report, suite, json.loads(path.read_text())


def test_a_smoke_run_whose_control_fails_has_no_finding(smoke):
    study, rouge_report, suite, record = smoke
    rouge_record = record["metrics"]["rouge_comparison"]
    assert rouge_record["control"]["outcome"] != "passes"  # a tiny random model does not beat the floor
    assert rouge_record["control"]["row"] == "baseline" and rouge_record["control"]["baseline"] == LEAD
    assert record["metrics"]["suite"]["premise"] == rouge_record["control"]["text"]
    for family in (rouge_record, record["metrics"]["suite"]):
        assert not any(line["finding"] for line in family["lines"])
    assert not rouge_report.compared.finding.any() and not suite.compared.finding.any()
    assert record["headline"]["control"] == rouge_record["control"]["text"]
    pairs = {(line["row"], line["baseline"]) for line in rouge_record["lines"] if line["baseline"]}
    assert pairs == {("baseline", LEAD), ("s", "baseline"), ("sh", "s"), ("qfcl", "sh"), ("qfcl", "baseline")}
    collapse = record["collapse"]
    assert [r["row"] for r in collapse["rows"]] == ["baseline", "s", "sh", "qfcl"]
    assert collapse["rows"][0]["shares"] == [repeated_share(study.run("baseline", s)["summaries"]) for s in (0, 1)]
    assert collapse["rows"][0]["reference"] == repeated_share(study.test_data.summary)
    assert any(title.startswith("Template collapse") for title in record["tables"])
