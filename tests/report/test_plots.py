"""Figures that read a study's tables."""

import pandas as pd

from kit.report import plots


def test_silver_labels_plot_sts_scores_as_a_histogram_even_beside_nli_classes():
    """STS scores and NLI class names share one column (object dtype): each panel must still get its own kind."""
    labels = pd.DataFrame(
        {
            "benchmark": ["sts"] * 40 + ["nli"] * 4,
            "set": ["gold (train)", "random silver"] * 20 + ["gold (train)", "random silver"] * 2,
            "label": [i / 40 for i in range(40)] + ["true", "false", "false", "false"],
        }
    )
    fig = plots.silver_label_distributions(labels, {"sts": "STS", "nli": "NLI"})
    sts, nli = fig.axes[:2]
    assert sts.get_xlabel() == "label (score / max)" and sts.get_xlim()[1] <= 1.05  # a histogram over [0, 1]
    assert nli.get_xlabel() == "class" and sorted(t.get_text() for t in nli.get_xticklabels()) == ["false", "true"]


def _rows(names, twins=()):
    """Per-seed results of rows with distinct points, except ``twins`` that copy the first row's."""
    rows = []
    for i, name in enumerate(names):
        at = 0 if name in twins else i
        for seed in (0, 1):
            rows.append(
                {"method": name.lower(), "label": name, "seed": seed, "step": 10 * seed, "alignment": 0.3 + at / 100}
                | {"uniformity": -3 + at / 10, "spearman_all": 0.8, "spearman_dev": 0.7, "loss": 0.1}
                | {"pos_cos": 0.9, "neg_cos": 0.1}
            )
    return pd.DataFrame(rows)


def test_training_curves_name_rows_by_label_in_one_legend_outside_the_panels():
    names = [f"row {i}" for i in range(15)]
    fig = plots.training_curves(_rows(names), order=["start", *names])
    assert all(ax.get_legend() is None for ax in fig.axes)  # no legend over a curve
    (legend,) = fig.legends
    entries = legend.get_lines()
    assert [t.get_text() for t in legend.get_texts()] == names
    looks = {(line.get_color(), line.get_linestyle()) for line in entries}
    assert len(looks) == 15  # colour and dash pattern keep 15 rows apart


def test_alignment_uniformity_says_which_rows_share_a_point():
    rows = _rows(["SimCSE", "MixCSE", "IW only", "near"], twins=("IW only", "near"))
    rows.loc[rows.label == "near", "alignment"] += 1e-9  # apart, however close (a tiny model's scale is 1e-6)
    fig = plots.alignment_uniformity(rows)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["SimCSE (80.0)", "MixCSE (80.0)", "IW only (80.0), same point as SimCSE", "near (80.0)"]


def test_figures_given_one_order_draw_a_row_alike():
    order = ["start", "SimCSE", "MixCSE"]
    styles = plots.row_styles(order)
    few = _rows(["MixCSE"]).assign(percent=[1, 100])
    fig = plots.fewshot_curve(few, order=order)
    line = fig.axes[0].get_lines()[0]  # alone, MixCSE would take the first colour
    assert (
        tuple(line.get_color())
        == tuple(styles["MixCSE"]["color"])
        != tuple(plots.row_styles(["MixCSE"])["MixCSE"]["color"])
    )


def test_training_curves_draw_a_run_whose_loss_is_missing_everywhere():
    """A diverged run logs NaN losses: its panel is empty, and the figure (and the report) is still drawn."""
    fig = plots.training_curves(_rows(["SimCSE", "MixCSE"]).assign(loss=float("nan")))
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["SimCSE", "MixCSE"]


def test_rows_ten_apart_differ_in_line_style_in_the_few_shot_curve_and_every_training_panel():
    """Rows 1 and 11 share tab10's orange: only their dashes tell them apart, in every panel that draws them."""
    names = [f"row {i}" for i in range(12)]
    runs = _rows(names)
    few = plots.fewshot_curve(runs.assign(percent=runs.seed * 99 + 1), order=names)
    curves = plots.training_curves(runs.assign(selection=0.5), order=names, selection="select_on: rqe-validation")
    title = curves.axes[0].get_title().replace("\n", " ")  # wrapped to its panel
    assert title == "selection score x100 (select_on: rqe-validation)" and len(curves.axes) == 5
    for ax in [few.axes[0], *curves.axes]:
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
        looks = {(tuple(line.get_color()), line.get_linestyle()) for line in lines}
        assert len(looks) == len(lines) == 12, ax.get_title()


def test_the_figures_draw_the_score_they_are_given_not_always_all_pairs():
    """When the dev pairs select, the all-pairs score holds them: the figures then draw the test pairs."""
    rows = _rows(["SimCSE", "MixCSE"]).assign(spearman_test=0.25)
    test_pairs = ("spearman_test", "test-pair Spearman")
    curves = plots.training_curves(rows, "cMedQQ", score=test_pairs)
    assert curves.axes[1].get_title() == "cMedQQ test-pair Spearman"
    assert {round(y, 6) for line in curves.axes[1].get_lines() for y in line.get_ydata()} == {25.0}
    plane = plots.alignment_uniformity(rows, eval_name="cMedQQ", score=test_pairs)
    assert [t.get_text() for t in plane.axes[0].get_legend().get_texts()] == ["SimCSE (25.0)", "MixCSE (25.0)"]
    assert "label: test-pair Spearman" in plane.axes[0].get_title()


def test_the_forest_plot_draws_every_tested_comparison_control_and_primary_first_with_both_intervals():
    import json

    from kit.paths import PROJECT_ROOT

    snapshot = PROJECT_ROOT / "docs" / "results" / "simcse_augmentations" / "demo.json"
    family = json.loads(snapshot.read_text(encoding="utf-8"))["metrics"]["suite"]
    tested = [x for x in family["lines"] if x["role"] in ("control", "primary", "secondary") and x["difference"]]
    fig = plots.comparisons(family)
    (ax,) = fig.axes
    labels = [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()]  # wrapped in two lines
    assert len(labels) == len(tested) == 4  # the premise rungs are context, not drawn
    control = "SimCSE (dropout views) − starting model (no training)"
    assert labels[:2] == [control, "+ random swap 10% − SimCSE (dropout views)"]
    low, high = ax.get_xlim()  # every family interval drawn whole
    assert all(low <= x[end] <= high for x in tested for end in ("family_low", "family_high") if x[end] is not None)
    assert plots.comparisons({**family, "lines": [{**x, "role": None} for x in family["lines"]]}) is None


def test_condition_scores_name_whole_seeds_in_the_legend_and_draw_the_reference_as_a_line():
    """Study 2's figure: the untrained start has no seed (None), which made the seed column float and the legend read
    0.0, 1.0; it is drawn as a dashed line, not as a condition."""
    from kit.report.plots import condition_scores

    results = pd.DataFrame(
        {
            "benchmark": ["b"] * 5,
            "condition": ["start", "gold", "gold", "silver", "silver"],
            "seed": [None, 0, 1, 0, 1],
            "score": [50.0, 60.0, 62.0, 63.0, 61.0],
        }
    )
    ax = condition_scores(results, {"b": "B"}, reference="start").axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["gold", "silver"] and ax.get_lines()[
        -1
    ].get_linestyle() == "--"
