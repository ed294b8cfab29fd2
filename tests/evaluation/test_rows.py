"""A study's rows compared on suite tasks: outputs saved and read back, differences with paired intervals,
and verdict sentences that follow the numbers."""

import numpy as np
import pytest

from kit.core.models import Encoder
from kit.evaluation import rows
from kit.evaluation.sts import BIOSSES_ALL, BIOSSES_TEST
from kit.evaluation.task import within_ranks


def run(noise: float, seed: int, shuffle: bool = False) -> rows.RunOutputs:
    """Item outputs of a model whose cosines follow BIOSSES's gold scores up to ``noise``."""
    rng = np.random.default_rng(seed)
    gold = np.asarray(BIOSSES_ALL.data.scores, float)
    cos = gold + rng.normal(0, noise, len(gold))
    if shuffle:
        cos = rng.permutation(cos)
    return {BIOSSES_ALL.name: {"spearman": within_ranks(cos)}}


ROWS = {
    "start": [run(1.0, 99)],
    "good": [run(1.0, s) for s in range(3)],
    "same": [run(1.0, s) for s in range(3)],
    "shuffled": [run(1.0, s, shuffle=True) for s in range(3)],
}
PAIRS = [("same", "good"), ("shuffled", "good"), ("good", "start")]
LABELS = {"good": "SimCSE", "same": "+ nothing", "shuffled": "+ shuffled", "start": "starting model"}


@pytest.fixture(scope="module")
def compared():
    lines = rows.compare(ROWS, PAIRS, [BIOSSES_ALL], LABELS, resamples=400)
    return rows.SuiteReport(lines, [BIOSSES_ALL], "a study", "RQE validation").compared


def test_each_tail_of_a_family_interval_holds_as_many_replicates_as_a_lone_95_percent_intervals(compared):
    """3 comparisons on 1 task under Holm: each draws 3 x 400 replicates, so 10 lie at or beyond each end of its
    interval at 1 - 0.05/3 (0.05/6 of 1,200; 9 strictly beyond), as at or beyond a lone 95% interval's at 400; at
    400 replicates 3 would lie strictly beyond."""
    lines = rows.compared_lines(compared)
    assert set(lines.resamples) == {1200}
    for line in lines[lines.detectable > 0].itertuples():
        assert (line.replicates < line.family_low).sum() >= 9 and (line.replicates > line.family_high).sum() >= 9
    report = rows.SuiteReport(rows.compare(ROWS, PAIRS, [BIOSSES_ALL], LABELS, resamples=400), [BIOSSES_ALL], "s", "x")
    assert "rests on 1,200 replicates" in report.about() and "10 or more lie at or beyond each end" in report.about()
    alone = rows.compare(ROWS, PAIRS, [BIOSSES_ALL], LABELS, resamples=400, correction="none")
    assert set(rows.compared_lines(alone).resamples) == {400}
    shallow = rows.SuiteReport(alone, [BIOSSES_ALL], "s", "x").about()  # drawn for no correction, read under Holm
    assert "3 or more lie at or beyond each end" in shallow and "draw more resamples" in shallow


def test_the_power_median_leaves_out_a_row_with_its_baselines_outputs(compared):
    """``same`` has ``good``'s outputs, so it detects nothing (0.0); the median is over the two other comparisons."""
    report = rows.SuiteReport(rows.compare(ROWS, PAIRS, [BIOSSES_ALL], LABELS, resamples=400), [BIOSSES_ALL], "s", "x")
    lines = rows.compared_lines(report.compared)
    assert (lines.family_detectable == 0).sum() == 1
    expected = lines[lines.family_detectable > 0].family_detectable.median()
    assert f"`biosses-all` {expected:.1f} points" in report.power()


def test_outputs_of_a_real_encoder_round_trip_through_the_run_folder(tmp_path):
    encoder = Encoder.from_pretrained("tiny-random-bert")
    outputs = rows.score_run(lambda texts: encoder.encode(texts, show_progress=False), [BIOSSES_TEST])
    assert set(outputs[BIOSSES_TEST.name]) == {"spearman"} and len(outputs[BIOSSES_TEST.name]["spearman"]) == 20
    back = rows.load_outputs(rows.save_outputs(tmp_path / "suite.npz", outputs))
    np.testing.assert_array_equal(back[BIOSSES_TEST.name]["spearman"], outputs[BIOSSES_TEST.name]["spearman"])


def test_outputs_saved_for_another_number_of_items_or_without_a_task_are_refused(tmp_path):
    """A suite.npz written before a task's data changed must not be scored against other items' gold values."""
    short = {BIOSSES_ALL.name: {"spearman": np.arange(15.0)}}
    path = rows.save_outputs(tmp_path / "suite.npz", short)
    with pytest.raises(ValueError, match="another number of items"):
        rows.load_outputs(path, [BIOSSES_ALL])
    with pytest.raises(ValueError, match="no outputs for"):
        rows.load_outputs(path, [BIOSSES_TEST])
    assert len(rows.load_outputs(path)[BIOSSES_ALL.name]["spearman"]) == 15  # read as saved without tasks


def test_a_verdict_takes_its_direction_from_the_interval(compared):
    """A percentile interval need not contain the point estimate: 'better' and 'worse' follow the interval."""
    odd = compared.copy()
    at = odd.row == "shuffled"
    odd.loc[at, ["difference", "low", "high"]] = [-0.1, 0.2, 0.5]
    line = rows.verdicts(odd, BIOSSES_ALL.name)[2]
    assert "better, significant" in line


def test_a_row_identical_to_its_baseline_differs_by_zero_and_a_shuffled_one_is_significantly_worse(compared):
    same = compared.set_index("row").loc["same"]
    assert (same.difference, same.low, same.high, same.p) == (0.0, 0.0, 0.0, 1.0) and not same.significant
    shuffled = compared.set_index("row").loc["shuffled"]
    assert shuffled.high < 0 and shuffled.significant and shuffled.p < 0.01
    assert shuffled.difference == pytest.approx(shuffled.score - compared.set_index("row").loc["good"].score)


def test_rows_without_a_baseline_get_a_score_interval_only(compared):
    start = compared.set_index("row").loc["start"]
    assert start.seeds == 1 and start.score_low <= start.score <= start.score_high
    assert not isinstance(start.baseline, str)


def test_the_same_seed_gives_the_same_table(compared):
    again = rows.compare(ROWS, PAIRS, [BIOSSES_ALL], LABELS, resamples=400)
    again = rows.SuiteReport(again, [BIOSSES_ALL], "a study", "RQE validation").compared
    assert again.drop(columns="replicates").equals(compared.drop(columns="replicates"))
    assert all(np.array_equal(a, b) for a, b in zip(again.replicates, compared.replicates) if isinstance(a, np.ndarray))


def test_verdicts_are_written_from_the_adjusted_results(compared):
    lines = rows.verdicts(compared, BIOSSES_ALL.name)
    assert len(lines) == 3
    good, same, shuffled = lines  # in the order of the rows
    assert same == "+ nothing vs SimCSE: the same output on every item, no difference"
    assert shuffled.startswith("+ shuffled vs SimCSE: −") and "worse, significant" in shuffled
    row = compared.set_index("row").loc["shuffled"]
    assert (
        "Holm over the 3 comparisons of its family" in shuffled and f"{100 * (1 - 0.05 / 3):.4g}% interval" in shuffled
    )
    assert f"detects differences of {row.family_detectable:.1f} or more" in shuffled
    assert row.family_detectable > row.detectable and row.family_low < row.low


def test_the_table_marks_differences_significant_after_the_correction(compared):
    shown = rows.table(compared).droplevel("task")
    assert shown.loc["+ shuffled", "p (holm)"].endswith(" *") and shown.loc["+ shuffled", "family interval"]
    assert not shown.loc["+ nothing", "p (holm)"].endswith("*")
    plain = rows.table(compared, correction="none").droplevel("task")
    assert "p (holm)" not in plain and plain.loc["+ shuffled", "p"].endswith(" *")
    assert shown.loc["starting model", "difference"] == "" and shown.loc["SimCSE", "vs"] == "starting model"


def test_the_papers_effect_is_set_beside_the_power_of_this_design_not_called_told_apart():
    claim = rows.PaperEffect("biosses-all", 4.3, "augmentation X beats SimCSE (85.4 vs 81.0)")
    found, missed = claim.against(2.8), claim.against(6.0)
    assert found.endswith("with at least 80% power.") and missed.endswith("with less than 80% power.")
    assert "with its model and corpus" in found and "80% power to detect 2.8 on `biosses-all`" in found
