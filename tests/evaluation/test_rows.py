"""A study's rows compared on suite tasks: outputs saved and read back, evidence saved and read back, the primary
tested alone, families without identical or nested comparisons, and verdict sentences that follow the numbers."""

import dataclasses
import re

import numpy as np
import pytest

from kit.core.models import Encoder
from kit.evaluation import rows
from kit.evaluation.sts import BIOSSES_ALL, BIOSSES_TEST
from kit.evaluation.task import within_ranks


def run(noise: float, seed: int, shuffle: bool = False, quality: float = 1.0) -> rows.RunOutputs:
    """Item outputs of a model whose cosines follow BIOSSES's gold scores up to ``noise`` (on both tasks)."""
    rng = np.random.default_rng(seed)
    gold = np.asarray(BIOSSES_ALL.data.scores, float)
    cos = quality * gold + rng.normal(0, noise, len(gold))
    if shuffle:
        cos = rng.permutation(cos)
    test = np.flatnonzero(np.asarray(BIOSSES_ALL.data.split) == "test")
    return {
        BIOSSES_ALL.name: {"spearman": within_ranks(cos)},
        BIOSSES_TEST.name: {"spearman": within_ranks(cos[test])},
    }


ROWS = {
    "start": [run(1.0, 99)],
    "good": [run(1.0, s) for s in range(3)],
    "same": [run(1.0, s) for s in range(3)],
    "shuffled": [run(1.0, s, shuffle=True) for s in range(3)],
    "better": [run(0.5, 10 + s) for s in range(3)],
}
PAIRS = [("better", "good"), ("same", "good"), ("shuffled", "good"), ("good", "start")]
LABELS = {"good": "SimCSE", "same": "+ nothing", "shuffled": "+ shuffled", "start": "starting model", "better": "+ X"}
TASKS = [BIOSSES_ALL, BIOSSES_TEST]
PRIMARY = rows.Primary("better", "good", BIOSSES_ALL.name, 4.0)


def evidence(**kwargs) -> rows.Evidence:
    return rows.Evidence.of(ROWS, PAIRS, TASKS, LABELS, fixed=["start"], resamples=400, **kwargs)


@pytest.fixture(scope="module")
def report():
    return rows.SuiteReport(evidence(), TASKS, "a study", "RQE validation", primary=PRIMARY)


@pytest.fixture(scope="module")
def compared(report):
    return report.compared


def line(compared, row, task=BIOSSES_ALL.name):
    return compared[(compared.row == row) & (compared.task == task)].iloc[0]


def test_the_primary_is_tested_alone_and_the_secondary_family_leaves_out_identical_and_nested_comparisons(compared):
    primary = line(compared, "better")
    assert primary.role == "primary" and primary.family_size == 1 and primary.family_confidence == 0.95
    assert [primary.family_low, primary.family_high] == pytest.approx([primary.low, primary.high])
    assert line(compared, "same").role == "not tested" and np.isnan(line(compared, "same").p_adjusted)
    for row in ("better", "shuffled", "good"):  # BIOSSES test lies within all pairs: part of its finding
        assert line(compared, row, BIOSSES_TEST.name).role == "within"
    secondary = rows.compared_lines(compared)
    secondary = secondary[secondary.role == "secondary"]
    assert sorted(secondary.row) == ["good", "shuffled"] and set(secondary.family_size) == {2}


def test_a_row_identical_to_its_baseline_is_not_tested_and_a_shuffled_one_is_significantly_worse(compared):
    same = line(compared, "same")
    assert same.difference == 0.0 and "same outputs" in same.reason and not same.significant
    shuffled = line(compared, "shuffled")
    assert shuffled.high < 0 and shuffled.significant and shuffled.p < 0.01
    assert shuffled.difference == pytest.approx(shuffled.score - line(compared, "good").score)


def test_a_trained_row_against_the_fixed_start_carries_its_seeds(compared):
    good = line(compared, "good")
    assert good.fixed == False and line(compared, "start").fixed == True  # noqa: E712 (numpy bools)
    assert len(good.variance["runs"]) == 1 and good.variance["runs"][0][1] == 3


def test_rows_without_a_baseline_get_a_score_interval_only(compared):
    start = line(compared, "start")
    assert start.seeds == 1 and start.score_low <= start.score <= start.score_high
    assert not isinstance(start.baseline, str)


def test_evidence_round_trips_and_gives_the_same_lines(report, tmp_path):
    path = report.evidence.save(tmp_path / "suite.npz")
    back = rows.Evidence.load(path)
    assert back.fixed == {"start"} and back.pairs == PAIRS and [t.within for t in back.tasks] == [None, "biosses-all"]
    again = rows.SuiteReport(back, TASKS, "a study", "RQE validation", primary=PRIMARY).compared
    columns = ["difference", "low", "high", "p", "p_adjusted", "significant", "role"]
    assert again[columns].equals(report.compared[columns])
    with pytest.raises(ValueError, match="not a report's evidence"):
        rows.Evidence.load(tmp_path / "missing.npz")


def test_a_recomputed_record_equals_the_reports_record(report):
    record, tables = rows.recomputed(report.evidence, report.record())
    assert record["lines"] == report.record()["lines"] and record["primary_text"] == report.primary_text()
    assert list(tables) == list(report.tables())
    extended = {**report.record(), "left_out": {}}  # a study's record with a key of its own, written last
    assert list(rows.recomputed(report.evidence, extended)[0]) == list(extended)  # read back in its order


def test_rows_left_out_of_a_task_are_absent_from_it():
    left = rows.Evidence.of(ROWS, PAIRS, TASKS, LABELS, fixed=["start"], left_out={"biosses-test": ["shuffled"]})
    assert "shuffled" not in left.outputs["biosses-test"] and "shuffled" in left.outputs["biosses-all"]
    lines = rows.compare(left)
    assert not ((lines.row == "shuffled") & (lines.task == "biosses-test")).any()


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


def test_the_same_seed_gives_the_same_table(compared):
    again = rows.SuiteReport(evidence(), TASKS, "a study", "RQE validation", primary=PRIMARY).compared
    assert again.drop(columns="comparison").equals(compared.drop(columns="comparison"))


def test_verdicts_are_written_from_the_adjusted_results(compared):
    lines = rows.verdicts(compared, BIOSSES_ALL.name)
    assert len(lines) == 4 and lines[0].startswith("+ X vs SimCSE")  # the primary first
    same = next(x for x in lines if x.startswith("+ nothing"))
    shuffled = next(x for x in lines if x.startswith("+ shuffled"))
    assert same == "+ nothing vs SimCSE: the same output on every item, not tested"
    assert shuffled.startswith("+ shuffled vs SimCSE: −") and "worse, significant" in shuffled
    row = line(compared, "shuffled")
    assert (
        "Holm over the 2 comparisons of its family" in shuffled and f"{100 * (1 - 0.05 / 2):.4g}% interval" in shuffled
    )
    assert f"resolves {row.family_detectable:.1f} points" in shuffled
    assert row.family_detectable > row.detectable and row.family_low < row.low
    nested = rows.verdicts(compared, BIOSSES_TEST.name)
    assert all("lie within `biosses-all`" in x for x in nested if not x.startswith("+ nothing"))


def test_the_primary_says_its_result_and_a_null_the_largest_gain_it_rules_out(compared):
    text = rows.primary_summary(compared, PRIMARY)
    assert text.startswith("Primary comparison (better - good on biosses-all): + X − SimCSE: +")
    null = compared.copy()
    at = (null.row == "shuffled") & (null.task == "biosses-all")
    null.loc[at, ["low", "high", "significant", "p", "family_confidence"]] = [-3.0, 2.5, False, 0.4, 0.95]
    bound = rows.primary_summary(null, rows.Primary("shuffled", "good", "biosses-all", 4.0))
    assert (
        "not significant, and inconclusive at this design; its 95% interval rules out gains above 2.5 points" in bound
    )
    assert "losses beyond 3.0" in bound and "it was declared for, 4.0 points" in bound
    assert rows.primary_summary(compared, rows.Primary("better", "good", "rqe-test")) == ""


def test_a_primary_effect_past_the_scales_maximum_is_named(compared):
    good = line(compared, "good").score
    text = rows.primary_summary(compared, rows.Primary("better", "good", "biosses-all", 101 - good))
    assert "would pass the scale's maximum of 100" in text


def test_the_table_marks_differences_significant_after_the_correction(compared):
    shown = rows.table(compared).loc["biosses-all"]
    assert shown.loc["+ shuffled", "p adjusted"].endswith(" *") and shown.loc["+ shuffled", "family interval"]
    assert shown.loc["+ X", "test"] == "primary, alone" and shown.loc["+ nothing", "test"] == "identical outputs"
    assert shown.loc["+ nothing", "p adjusted"] == "" and shown.loc["+ shuffled", "test"] == "Holm, 2"
    assert rows.table(compared).loc[("biosses-test", "+ shuffled"), "test"] == "within biosses-all"
    assert shown.loc["starting model", "difference"] == "" and shown.loc["SimCSE", "vs"] == "starting model"


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("swap_10 - simcse on biosses-all", ("swap_10", "simcse", "biosses-all")),
        (
            "rqe: gold + semantic silver - rqe: gold on rqe-test",
            ("rqe: gold + semantic silver", "rqe: gold", "rqe-test"),
        ),
    ],
)
def test_a_primary_is_parsed_from_its_one_line(text, parsed):
    p = rows.Primary.parse(text)
    assert (p.row, p.baseline, p.task) == parsed and str(p) == text


@pytest.mark.parametrize("text", ["swap_10 - simcse", "swap_10 on biosses-all", " - simcse on x", "a - b - c on t"])
def test_a_malformed_primary_is_refused_naming_the_form(text):
    with pytest.raises(ValueError, match="ROW - ROW on TASK"):
        rows.Primary.parse(text)


def controlled(control: rows.Control | None, premise: str | None = None, rungs=()) -> rows.SuiteReport:
    pairs = PAIRS + ([(control.row, control.baseline)] if control else []) + [(r.row, r.baseline) for r in rungs]
    return rows.SuiteReport(
        rows.Evidence.of(ROWS, pairs, TASKS, LABELS, fixed=["start"], resamples=400),
        TASKS,
        "a study",
        "RQE validation",
        primary=PRIMARY,
        control=control,
        premise=premise,
        rungs=tuple(rungs),
    )


PASSING = rows.Control("better", "start", BIOSSES_ALL.name, "the method beats the start")
FAILING = rows.Control("shuffled", "start", BIOSSES_ALL.name, "a shuffled model beats the start")


def test_a_control_that_passes_is_tested_alone_and_leaves_the_findings():
    report = controlled(PASSING)
    lines = rows.compared_lines(report.compared)
    control = lines[lines.role == "control"]
    assert len(control) == 1 and control.iloc[0].family_size == 1 and control.iloc[0].significant
    assert rows.control_outcome(report.compared, PASSING)[0] == "passes" and report.withheld() is None
    assert lines[lines.role == "aside"].task.tolist() == [BIOSSES_TEST.name]  # its pair elsewhere: not tested
    assert lines[lines.role == "primary"].finding.all()  # "better" beats "good" with these seeds
    assert report.control_text().startswith("Positive control (the method beats the start): + X − starting model")
    assert "passes" in report.control_text() and report.primary_text().startswith("Primary comparison")
    assert report.verdict().startswith(f"**{report.control_text()}**")


def test_a_control_that_fails_withholds_every_finding_and_says_so():
    report = controlled(FAILING)
    lines = rows.compared_lines(report.compared)
    assert rows.control_outcome(report.compared, FAILING)[0] == "fails"  # significantly worse than the start
    assert lines.significant.any() and not lines.finding.any()  # significant at alpha, yet no finding
    assert "cannot test the paper's claim" in report.control_text() and report.withheld() == report.control_text()
    assert report.primary_text().startswith("Not a finding, as the positive control did not pass.")
    assert "not a finding (the positive control did not pass)" in report.verdict()
    table = next(iter(report.tables().values()))
    starred = table[table["p adjusted"].str.endswith("*")]
    assert (starred.test == "positive control, alone").all()  # the control's own verdict, and nothing else
    record = report.record()
    assert record["control"]["outcome"] == "fails" and not any(x.get("finding") for x in record["lines"])


def test_a_control_behind_a_baseline_chosen_from_many_fails_only_below_alpha_over_their_number():
    """Behind the best of k chosen on the same items is a fail only at alpha / k (``rows.fail_level``): the shuffled
    model is behind the start with a small p, a fail with one candidate or six, and only "not shown" when the level
    allowing for the choice lies below its p; the record keeps the count, so a recomputed snapshot gives the same."""
    line = rows.compared_lines(controlled(FAILING).compared).query("role == 'control'").iloc[0]
    six = dataclasses.replace(FAILING, candidates=6, chosen="the strongest of 6")
    many = dataclasses.replace(FAILING, candidates=int(0.05 / line.p * 10), chosen="the strongest of many")
    assert rows.control_outcome(controlled(six).compared, six)[0] == "fails" and line.p < 0.05 / 6
    assert "fails (p below 0.0083, which allows for its baseline being the best of 6 on these items)" in (
        controlled(six).control_text()
    )
    report = controlled(many)
    assert rows.control_outcome(report.compared, many)[0] == "not shown"
    assert "not shown (behind at alpha, but not at" in report.control_text()
    assert "is not shown to hold here" in report.control_text() and not report.compared.finding.any()
    record = report.record()
    assert record["control"]["candidates"] == many.candidates
    assert rows.recomputed(report.evidence, record)[0]["control"] == record["control"]
    legacy = {k: v for k, v in record["control"].items() if k != "candidates"}  # written before the count was kept
    chosen = "the strongest of 6 training-free embeddings on this task, x100: ..."
    assert rows.Control.from_record({**legacy, "chosen": chosen}).candidates == 6
    assert rows.Control.from_record({**legacy, "chosen": ""}).candidates == 1


def test_a_veto_fails_a_control_whose_comparison_passes_and_a_premise_withholds_another_report():
    vetoed = rows.Control("good", "start", BIOSSES_ALL.name, "SimCSE beats the start", vetoes=("It collapsed.",))
    report = controlled(vetoed)
    assert rows.control_outcome(report.compared, vetoed)[0] == "fails" and "It collapsed." in report.control_text()
    other = controlled(None, premise="Positive control (x): fails.")
    assert other.withheld() == "Positive control (x): fails." and not other.compared.finding.any()
    assert other.verdict().startswith("**Positive control (x): fails.**")


def test_a_recomputed_record_keeps_the_control_and_its_outcome():
    for control in (PASSING, FAILING):
        report = controlled(control)
        record = report.record()
        again, _ = rows.recomputed(report.evidence, record)
        assert again["control"] == record["control"] and again["lines"] == record["lines"]
        assert rows.withheld_by(again) == report.withheld()


def test_a_control_not_shown_names_the_cost_of_choosing_its_baseline_only_when_it_was_chosen():
    """Study 2's teacher is tested against the one gold student, study 1's SimCSE against the best of six
    training-free embeddings: only the second pays for the choice, and only its text says so."""
    fixed = rows.Control("good", "start", BIOSSES_ALL.name, "SimCSE beats the start")
    chosen = rows.Control("good", "start", BIOSSES_ALL.name, "SimCSE beats the start", chosen="the best of 2")
    assert rows.control_outcome(controlled(fixed).compared, fixed)[0] == "not shown"
    assert "points with 80% power)" in controlled(fixed).control_text()
    assert "candidates costs more" not in controlled(fixed).control_text()
    assert "points with 80% power, and choosing its baseline as the best of its candidates costs more)" in (
        controlled(chosen).control_text()
    )


def test_clustered_evidence_keeps_its_folds_through_save_and_load_and_shows_each_folds_part(tmp_path):
    """A task whose items carry folds (study 2's held-out task): the evidence keeps them for the kept items, saved
    and read back; a kept subset in one fold drops them; the spread names each fold's contribution and the folds
    with the difference's sign, or says there is none; a row not scored there is not spread."""
    folds = tuple(np.arange(100) % 5)
    task = dataclasses.replace(BIOSSES_ALL, name="folded", clusters=folds, nests=False)
    runs = {row: [{"folded": r[BIOSSES_ALL.name]} for r in rs] for row, rs in ROWS.items()}
    evidence = rows.Evidence.of(runs, PAIRS, [task], LABELS, fixed=["start"])
    kept = rows.Evidence.of(runs, PAIRS, [task], LABELS, keep={"folded": np.arange(0, 100, 5)})
    assert (evidence.tasks[0].clusters == np.array(folds)).all() and kept.tasks[0].clusters is None
    back = rows.Evidence.load(evidence.save(tmp_path / "suite.npz"))
    assert (back.tasks[0].clusters == evidence.tasks[0].clusters).all()
    t = back.tasks[0]
    spread = rows.cluster_spread(back.scores(t, "better"), back.scores(t, "good"))
    assert spread.count(",") == 4 and re.search(r"\(the sign of the difference in \d of 5 folds\)$", spread), spread
    assert rows.cluster_spread(back.scores(t, "good"), back.scores(t, "good")).endswith("(no difference)")
    assert rows.spreads_over_clusters(back, t, "good", "start")
    assert not rows.spreads_over_clusters(back, t, "good", "absent")
    assert not rows.spreads_over_clusters(kept, kept.tasks[0], "better", "good")  # one fold kept: no clusters


def test_a_premise_rung_is_tested_alone_reported_gates_nothing_and_survives_recompute():
    """A rung (``rows.Rung``) is its own family of one at alpha, its pair elsewhere is reported and not tested, its
    outcome says where the row stands (above, below, level) without withholding findings; the record keeps the
    rungs, and ``recomputed`` gives the same."""
    rung = rows.Rung("better", "shuffled", BIOSSES_ALL.name, "c", "the method beats a shuffled model")
    report = controlled(PASSING, rungs=[rung])
    lines = rows.compared_lines(report.compared)
    tested = lines[lines.role == "rung"]
    assert len(tested) == 1 and tested.iloc[0].task == BIOSSES_ALL.name and tested.iloc[0].family_size == 1
    assert lines[lines.role == "rung's pair"].task.tolist() == [BIOSSES_TEST.name]
    assert not lines[lines.role == "secondary"].apply(lambda x: (x.row, x.baseline) == ("better", "shuffled"), 1).any()
    outcome, line = rows.rung_outcome(report.compared, rung)
    assert outcome == ("above" if line.low > 0 else "below" if line.high < 0 else "level")
    assert report.withheld() is None  # a rung gates nothing
    text = report.ladder_text()
    assert text.startswith("Premise ladder on biosses-all") and "(a) + X − starting model" in text
    assert "(c) + X − + shuffled" in text and text in report.verdict()
    record = report.record()
    assert record["rungs"] == [{**rung.record(), "outcome": outcome}] and record["ladder"] == text
    again, _ = rows.recomputed(report.evidence, record)
    assert again["rungs"] == record["rungs"] and again["ladder"] == text and again["lines"] == record["lines"]
    table = next(iter(report.tables().values()))
    assert "premise rung, alone" in table.test.tolist()


def test_the_reports_prose_names_its_control_in_words_not_as_a_python_object():
    """``SuiteReport.about`` printed ``Control(row='simcse', baseline=..., candidates=6)`` in every report with a
    control: a declared comparison reads ``row - baseline on task``, as the run files write it."""
    about = controlled(PASSING).about()
    assert "Control(" not in about and f"positive control (better - start on {BIOSSES_ALL.name}: " in about
    assert str(rows.Rung("a", "b", "t", "c")) == "a - b on t" and str(PRIMARY) == f"better - good on {BIOSSES_ALL.name}"
