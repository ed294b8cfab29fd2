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
