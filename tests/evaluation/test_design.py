"""Sizing before the runs: power, the seeds and items a declared effect needs, the ceiling, and kit.batch's line
before training and its --design report, read from a pilot's evidence."""

import json
import re

import numpy as np
import pytest

from kit.batch import main as batch_main
from kit.evaluation import design
from kit.evaluation.inference import Variance
from kit.evaluation.rows import Evidence, Primary
from kit.evaluation.sts import BIOSSES_ALL
from kit.evaluation.task import within_ranks
from kit.report.pilot import pilots, size


def test_more_seeds_shrink_the_run_part_and_more_items_the_item_part():
    v = Variance(item=4.0, items=100, runs=((50.0, 2), (50.0, 2)))
    assert design.power_at(20.0, v) < 0.8
    seeds = design.seeds_needed(20.0, v)
    assert seeds > 2 and design.power_at(20.0, v.at(seeds=seeds)) >= 0.8 > design.power_at(20.0, v.at(seeds=seeds - 1))
    assert design.items_needed(20.0, v) is None  # the run part alone is too large at 2 seeds
    fixed = Variance(item=25.0, items=100)
    assert design.seeds_needed(5.0, fixed) is None and design.items_needed(5.0, fixed) > 100


def test_a_design_limited_by_both_parts_names_seeds_and_items():
    v = Variance(item=40.0, items=100, runs=((30.0, 2),))
    seeds, items = design.design_needed(4.0, v)
    assert items > 100 and design.power_at(4.0, v.at(seeds=seeds, items=items)) >= 0.8
    text = design.sizing_sentence(4.0, v, 2)
    assert "more seeds alone cannot either" in text and f"{seeds} seeds per trained row and {items:,} items" in text


def test_an_effect_past_the_scales_maximum_is_named():
    assert "would pass the scale's maximum of 100" in design.ceiling(17.1, 84.4)
    assert design.ceiling(4.3, 81.0) == "" and design.ceiling(5.0, None) == ""


def pilot_evidence(tmp_path, simcse=(0.3, 0.7), swap=(0.5, 0.8)):
    """A pilot of study 1's rows on BIOSSES whose runs' quality differs from seed to seed (by default a lot)."""
    gold = np.asarray(BIOSSES_ALL.data.scores, float)
    rng = np.random.default_rng(0)

    def runs(quality, n):
        return [{BIOSSES_ALL.name: {"spearman": within_ranks(q * gold + rng.normal(0, 0.5, 100))}} for q in quality]

    rows = {"zero_shot": runs([0.5], 1), "simcse": runs(simcse, 2), "swap_10": runs(swap, 2)}
    evidence = Evidence.of(rows, [("swap_10", "simcse")], [BIOSSES_ALL], fixed=["zero_shot"], resamples=500)
    return evidence.save(tmp_path / "simcse_augmentations" / "twenty" / "evidence" / "suite.npz")


def test_a_primary_is_sized_on_the_pilot_and_a_missing_row_is_stood_in_for(tmp_path):
    path = pilot_evidence(tmp_path)
    assert pilots("simcse_augmentations", "twenty", "tiny-random-bert", tmp_path)[0] == path
    sized = size(Primary("swap_10", "simcse", "biosses-all", 20.0), 2, {"zero_shot"}, [path])
    assert sized.power < 0.8 and len(sized.variance.runs) == 2 and sized.stand_ins == {}
    stood = size(Primary("crop_10", "simcse", "biosses-all", 20.0), 3, {"zero_shot"}, [path])
    assert stood.stand_ins == {"crop_10": "swap_10"} and stood.variance.runs[0][1] == 3
    assert size(Primary("swap_10", "simcse", "rqe-test", 20.0), 2, set(), [path]) is None  # not in the pilot


RUN_FILE = (
    "model: tiny-random-bert\nseeds: [0, 1]\nsteps: 2\neval_every: 1\nbatch_size: 8\ncorpus_size: 64\n"
    "rows: [zero_shot, simcse, swap_10]\nfewshot_rows: []\n"
    "primary: swap_10 - simcse on biosses-all\nprimary_effect: 20\n"
)


def test_two_seeds_and_a_20_point_primary_on_100_items_get_the_line_before_training(tmp_path, capsys):
    """kit.batch --design sizes the run file on its pilot; the line kit.batch prints before training says that 2
    seeds cannot tell run-to-run variation from 20 points and names the seeds needed."""
    reports = tmp_path / "reports"
    pilot_evidence(reports)
    run_file = tmp_path / "simcse_augmentations" / "twenty.yaml"
    run_file.parent.mkdir()
    run_file.write_text(RUN_FILE, encoding="utf-8")
    assert batch_main([str(run_file), "--reports", str(reports), "--design"]) == 0
    out = capsys.readouterr().out
    assert "primary swap_10 - simcse on biosses-all, sized for 20.0 points" in out
    assert "80% power needs" in out and "seeds per trained row" in out and "ceiling:" in out
    # what the pilot's 2 seeds leave open, and that this pilot is the run's own report (power after the fact)
    assert re.search(r"the pilot's 2 seeds leave the run-to-run variance between 0\.\d\d and [\d.]+ times", out), out
    assert re.search(r"resolves [\d.]+-[\d.]+ points and has \d+%-\d+% power for 20\.0 points", out), out
    assert "this pilot is the run's own result, so its power is power after the fact" in out

    from kit.batch import sizing
    from kit.runner import plan, prepare

    study = plan(prepare(run_file), reports).study
    line = sizing(study, "twenty", reports)
    assert "2 seeds cannot tell run-to-run variation from a difference of 20.0 points" in line
    assert line.count("\n") == 0 and "power needs" in line


def test_no_line_when_the_design_resolves_the_declared_effect(tmp_path):
    from kit.batch import sizing
    from kit.runner import plan, prepare

    reports = tmp_path / "reports"
    pilot_evidence(reports, simcse=(0.5, 0.51), swap=(0.6, 0.61))  # seeds that agree: 2 are enough for 25 points
    run_file = tmp_path / "simcse_augmentations" / "twenty.yaml"
    run_file.parent.mkdir()
    run_file.write_text(RUN_FILE.replace("primary_effect: 20", "primary_effect: 25"), encoding="utf-8")
    assert sizing(plan(prepare(run_file), reports).study, "twenty", reports) is None


def test_a_pilot_on_another_model_is_named_and_the_ceiling_reads_the_runs_own_model(tmp_path):
    path = pilot_evidence(tmp_path)
    (path.parent.parent / "results.json").write_text('{"parameters": {"model": "pubmed-bert-mini"}}')
    sized = size(Primary("swap_10", "simcse", "biosses-all", 20.0), 2, {"zero_shot"}, [path], "minilm")
    assert sized.other_model == "the pilot ran pubmed-bert-mini, not minilm: its variances may not carry over"
    assert sized.other_model in sized.sentence()
    same = size(Primary("swap_10", "simcse", "biosses-all", 20.0), 2, {"zero_shot"}, [path], "pubmed-bert-mini")
    assert same.other_model == ""


def test_study_2s_design_sizes_its_teacher_control_and_reads_the_ceiling_from_its_snapshot(tmp_path, capsys):
    """Augmented SBERT's gold model reads 84.4 on the BIOSSES test pairs in its snapshot: the paper's +17.1 would pass
    100, which --design says. Its control compares the teacher (``<b>: cross-encoder``, not a table row) with the
    gold-only student; --design crashed on it (the study lists no ``row_seeds``) and now sizes it from the snapshot's
    evidence, without the best-of-six caveat of a chosen training-free baseline."""
    from kit.paths import PROJECT_ROOT

    run_file = PROJECT_ROOT / "params" / "augmented_sbert" / "cpu.yaml"
    assert batch_main([str(run_file), "--reports", str(tmp_path), "--design"]) == 0
    out = capsys.readouterr().out
    control = out.splitlines()[1]
    head = "  positive control biosses_blurb: cross-encoder - biosses_blurb: gold on biosses-test (pilot docs/results/"
    assert control.startswith(head) and "with 3 seeds it resolves" in control and "best-of-" not in control
    # sized on its own snapshot, the control resolves what its report said: the gold student's seeds count too (they
    # were taken as a fixed row's, which dropped their run-to-run part and gave 93.2 points)
    from kit.docs import SNAPSHOTS, corrected_families

    record = json.loads((SNAPSHOTS / "augmented_sbert" / "cpu.json").read_text(encoding="utf-8"))
    (line,) = [x for f in corrected_families(record) for x in f["lines"] if x.get("role") == "control"]
    assert f"it resolves {line['family_detectable']:.1f} points" in control, (control, line["family_detectable"])
    assert "An effect of +17.1 points on a baseline of 84.4 would pass the scale's maximum of 100" in out


def test_a_run_with_one_seed_per_trained_row_is_told_that_its_primary_goes_untested(tmp_path, capsys):
    from kit.batch import sizing
    from kit.runner import plan, prepare

    reports = tmp_path / "reports"
    pilot_evidence(reports)
    run_file = tmp_path / "simcse_augmentations" / "twenty.yaml"
    run_file.parent.mkdir()
    run_file.write_text(RUN_FILE.replace("seeds: [0, 1]", "seeds: [0]"), encoding="utf-8")
    line = sizing(plan(prepare(run_file), reports).study, "twenty", reports)
    assert line.endswith(
        "a trained row with one seed is not tested (its run-to-run variance is unmeasured): declare 2 seeds or more"
    )
    assert batch_main([str(run_file), "--reports", str(reports), "--design"]) == 0
    out = capsys.readouterr().out
    assert "declare 2 seeds or more" in out and "power for" not in out


def test_design_sizes_the_positive_control_first_on_the_pilot_that_recorded_one(tmp_path, capsys):
    """The demo's control is known before its run (SimCSE against its start read out the same way, the zero-shot
    row): --design says first what it resolves at the demo's 3 seeds on the committed snapshot, which holds both rows;
    declared on another task (``control_task``) it is sized there on the same pilot; study 3's control (its baseline
    against the extractive floor) is sized on its own pilot."""
    from kit.paths import PROJECT_ROOT

    demo = PROJECT_ROOT / "params" / "simcse_augmentations" / "demo.yaml"
    assert batch_main([str(demo), "--reports", str(tmp_path), "--design"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = "  positive control simcse - zero_shot on doid-definition-name (pilot "
    head += "docs/results/simcse_augmentations/demo.suite.npz): with 3 seeds it resolves "
    assert lines[1].startswith(head) and lines[2].startswith("  primary swap_10 - simcse"), lines[:3]
    resolved = float(re.search(r"with 3 seeds it resolves ([\d.]+) points", lines[1]).group(1))
    assert 0.5 < resolved < 4.3  # 8,962 queries and 3 seeds: finer than the paper's BIOSSES effect
    assert "best-of" not in lines[1]  # one baseline, no choice to pay for

    elsewhere = tmp_path / "simcse_augmentations" / "control_elsewhere.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(demo.read_text(encoding="utf-8") + "\ncontrol_task: rqe-test\n", encoding="utf-8")
    assert batch_main([str(elsewhere), "--reports", str(tmp_path), "--design"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  positive control simcse - zero_shot on rqe-test (pilot "), lines[:2]

    qfcl = PROJECT_ROOT / "params" / "qfcl_summarization" / "cpu.yaml"
    assert batch_main([str(qfcl), "--reports", str(tmp_path), "--design"]) == 0
    out = capsys.readouterr().out  # study 3 sizes its own control (the baseline against the extractive floor)
    assert "  positive control baseline - lead on meqsum-test-rougeL (pilot docs/results/qfcl_summarization/cpu" in out
    assert "the pilot's control was vetoed, which no number of seeds lifts" in out  # its baseline's template collapse


def test_power_is_a_number_where_scipys_noncentral_t_tail_is_not():
    """scipy's noncentral t returns nan for the far lower tail (df 4, noncentrality 10): the results page once said a
    design "has nan% power" for an effect it finds for certain."""
    from kit.evaluation.inference import Variance, power_at

    variance = Variance(0.0, 100, ((1.0, 5),))  # run part alone: 4 degrees of freedom, se 1
    power = power_at(10.0, variance)
    assert np.isfinite(power) and 0.99 < power <= 1.0
    assert "nan" not in design.sizing_sentence(17.1, variance, 5)


def test_an_interval_past_the_scale_is_not_printed():
    from kit.evaluation.inference import Difference
    from kit.report.tables import signed_interval

    assert "not estimable" in f"{Difference(9.3, -336.8, 355.4, 500):.1f}"
    assert "not estimable" in signed_interval(9.3, -336.8, 355.4)
    assert signed_interval(9.3, -33.0, 51.6) == "+9.3 [−33.0, +51.6]"
    assert signed_interval(-58.0, -115.9, -0.2) == "−58.0 [−115.9, −0.2]"  # Spearman: differences reach ±200


def test_a_pilots_few_seeds_give_a_range_not_a_number():
    """A run variance estimated from 3 seeds has 2 degrees of freedom: its 80% bounds are 0.43 and 9.5 times the
    estimate (chi-squared quantiles), and --design prints what the design resolves and its power over that range."""
    from scipy import stats

    variance = Variance(0.5, 100, ((1.0, 3),))
    low, high, (f_low, f_high) = design.run_bounds(variance, 3)
    assert f_low == pytest.approx(2 / stats.chi2.ppf(0.9, 2)) and f_high == pytest.approx(2 / stats.chi2.ppf(0.1, 2))
    assert round(f_low, 2) == 0.43 and round(f_high, 1) == 9.5
    assert low.runs[0][0] == pytest.approx(f_low) and high.item == variance.item
    assert design.detectable(low) < design.detectable(variance) < design.detectable(high)
