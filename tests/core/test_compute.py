"""FLOP counts and GPU-time estimates (kit.core.compute): hand-computed shapes and formulas, the measured rates
read from benchmark tables, and each study's workload agreeing with the runs it plans."""

import pytest

from kit.core import compute
from kit.core.compute import Rate, Work
from kit.params import read_run_file
from kit.paths import PARAMS
from kit.runner import study_entry

BERT_BASE_LAYER = 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 2 * 768
BERT_BASE = 12 * BERT_BASE_LAYER + (768 * 768 + 768)  # the layers and the pooler; embeddings left out


def test_bert_base_has_its_hand_counted_non_embedding_parameters_and_the_paper_name_counts_as_its_stand_in():
    assert compute.shape("random-bert-base") == compute.Shape(BERT_BASE, 12, 768)
    assert compute.shape("bert-base-uncased") == compute.shape("random-bert-base")


def test_a_seq2seq_model_is_counted_by_its_part_and_a_bert_for_both_halves_of_a_bert2bert():
    encoder, decoder = compute.shape("random-bart-large", "encoder"), compute.shape("random-bart-large", "decoder")
    assert (encoder.layers, decoder.layers, encoder.width) == (12, 12, 1024)
    assert decoder.parameters > encoder.parameters  # cross-attention
    assert compute.shape("tiny-random-bert", "decoder") == compute.shape("tiny-random-bert")


def test_a_model_without_a_known_shape_is_named():
    with pytest.raises(ValueError, match="'nobody/no-such-model'"):
        compute.shape("nobody/no-such-model")


def test_flops_follow_kaplans_formula_three_forwards_for_training():
    forward = 2 * BERT_BASE + 2 * 12 * 32 * 768
    assert Work("x", "random-bert-base", 10, 32, False).flops == 10 * 32 * forward
    assert Work("x", "random-bert-base", 10, 32, True).flops == 3 * 10 * 32 * forward
    step = compute.contrastive_training("random-bert-base", 1, 1, 128, 32)
    assert step.flops == pytest.approx(4.22e12, rel=1e-3)  # the 4.2 TFLOP of a SimCSE step on bert-base


def test_a_loop_takes_its_flops_at_the_rate_or_its_steps_at_the_floor_and_other_work_its_flops():
    rate = Rate(low=1e12, high=2e12, reference_seconds=(1.0,), floors={"kit": 0.5})
    steps = Work("x", "tiny-random-bert", 1, 4, True, steps=10, loop="kit")
    inside = Work("y", "tiny-random-bert", 1, 4, False, loop="kit")  # forward work inside the same steps
    assert compute.gpu_hours([steps, inside], rate) == (5.0 / 3600, 5.0 / 3600)  # tiny: 10 steps' host time, once
    big = Work("x", "random-bert-base", 10**6, 32, True, steps=10, loop="kit")
    outside = Work("z", "random-bert-base", 1000, 32, False)
    flops = big.flops + inside.flops
    assert compute.gpu_hours([big, inside, outside], rate) == pytest.approx(
        ((flops + outside.flops) / 2e12 / 3600, (flops + outside.flops) / 1e12 / 3600)
    )
    assert compute.checkpoint_evaluations(7800, 250) == 33 and compute.checkpoint_evaluations(4, 5) == 2


def test_the_rates_are_read_from_benchmark_tables_and_a_missing_measurement_is_named(tmp_path):
    table = (
        "## train_step.py\n\nmodel {m}, device cuda, batch {b}, length 32, 40 steps\n\n| loop | s/step |\n|---|---:|\n"
        "| kit train_contrastive (bf16 autocast) | {s} |\n| sentence-transformers trainer + MNRL | 0.0800 |\n"
    )
    results = tmp_path / "h100.md"
    results.write_text(
        table.format(m="random-bert-base", b=128, s="0.0500")
        + "\n"
        + table.format(m="random-bert-base", b=128, s="0.1000")
        + "\n"
        + table.format(m="minilm", b=64, s="0.0300"),
        encoding="utf-8",
    )
    rate = compute.measured_rate(results)
    step = compute.contrastive_training("random-bert-base", 1, 1, 128, 32).flops
    assert (rate.low, rate.high) == (step / 0.1, step / 0.05)
    assert rate.floors == {"kit": 0.03, "sentence-transformers": 0.08}
    results.write_text(table.format(m="random-bert-base", b=128, s="0.05"), encoding="utf-8")
    with pytest.raises(ValueError, match="h100.md: no measured step for kit, sentence-transformers"):
        compute.measured_rate(results)


def test_the_committed_h100_tables_give_the_rates():
    rate = compute.measured_rate()
    assert len(rate.reference_seconds) >= 3 and 20e12 < rate.low <= rate.high < 400e12


def test_encoding_counts_each_text_at_its_tokens_and_combined_sums_one_kind():
    work = compute.encoding("x", "minilm", ["hello world", "hello"], 3, max_length=256, train=True, batch=2, loop="kit")
    assert (work.sequences, work.tokens, work.steps) == (6, round((4 + 3) / 2), 3)  # [CLS] ... [SEP]
    assert compute.encoding("x", "minilm", ["hello world"], 1, max_length=3).tokens == 3
    assert compute.encoding("x", "minilm", [], 5, max_length=3) == Work("x", "minilm", 0, 0, False)
    a, b = Work("x", "minilm", 10, 4, True, steps=2, loop="kit"), Work("x", "minilm", 30, 8, True, steps=3, loop="kit")
    assert compute.combined([a, b, Work("y", "minilm", 1, 1, False)]) == [
        Work("x", "minilm", 40, 7, True, steps=5, loop="kit"),
        Work("y", "minilm", 1, 1, False),
    ]


def workload(run_file: str):
    rf = read_run_file(PARAMS / run_file)
    entry = study_entry(rf.notebook)
    params = entry.params.from_dict(rf.parameters)
    return params, entry.study.workload(params), entry.study(params, "/nonexistent")


@pytest.mark.parametrize(
    "run_file",
    ["simcse_augmentations/smoke.yaml", "simcse_augmentations/cpu.yaml", "medse_entity_definitions/cpu.yaml"],
)
def test_a_contrastive_studys_training_work_is_its_distinct_planned_trainings(run_file):
    """Counted against the run folders (the run cache's identity) of the planned runs that train (``run_trains``,
    which progress lines time apart from the training-free ones)."""
    p, work, study = workload(run_file)
    trained = [args for args in study.planned_runs() if study.run_trains(*args)]
    assert len(trained) < len(study.planned_runs())  # each file has training-free rows
    if run_file.startswith("medse"):
        from kit.studies.medse_entity_definitions.params import ROWS
        from kit.studies.medse_entity_definitions.study import run_variant

        folders = {
            study._run_dir(ROWS[name], seed, run_variant(p, ROWS[name], *variant)) for name, seed, *variant in trained
        }
    else:
        from kit.studies.simcse_augmentations.params import ROWS

        folders = {study._run_dir(ROWS[name], seed, *(percent or [100.0])) for name, seed, *percent in trained}
    [training] = [w for w in work if w.what.startswith("contrastive training")]
    assert training.sequences == len(folders) * p.steps * p.batch_size * 2
    assert training.steps == len(folders) * p.steps


def test_qfcl_reads_every_training_question_once_an_epoch_in_every_run():
    p, work, study = workload("qfcl_summarization/smoke.yaml")
    [questions] = [w for w in work if w.what == "the encoder reads each question"]
    assert questions.sequences == len(study.planned_runs()) * p.epochs * p.split_sizes[0]
    assert questions.part == "encoder" and questions.train


def test_augmented_sbert_trains_a_bi_encoder_on_gold_in_every_run():
    p, work, study = workload("augmented_sbert/smoke.yaml")
    [gold] = [w for w in work if w.what == "bi-encoder on gold"]
    runs = study.planned_runs()
    assert gold.sequences == sum(2 * len(study.splits(b)[i].train) for b, i, _ in runs) * p.epochs
    assert gold.loop == "sentence-transformers" and gold.steps > 0


def test_kit_batch_estimate_prints_each_files_work_and_refuses_a_notebook_that_trains_nothing(capsys):
    from kit.batch import main as batch_main

    assert batch_main(["--estimate", str(PARAMS / "simcse_augmentations" / "smoke.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("simcse_augmentations/smoke.yaml: ") and "GPU hours on one H100 (estimate)" in out
    assert "contrastive training: two views per sentence: " in out
    assert batch_main(["--estimate", str(PARAMS / "explore_augmentations" / "demo.yaml")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("notebook explore_augmentations trains nothing: no GPU time to estimate")
