"""The HTML the notebooks show tables with: text left-aligned, numbers right-aligned."""

import re

import pandas as pd

from kit.report.tables import dataframe_html


def left_aligned_columns(page: str) -> set[int]:
    rule = re.search(r"<style>(.*?)\{text-align: left\}</style>", page).group(1)
    return {int(n) for n in re.findall(r"td:nth-child\((\d+)\)", rule)}


def test_text_columns_are_left_aligned_and_numbers_are_not():
    df = pd.DataFrame(
        {
            "query": ["what causes iron deficiency anemia?", "糖尿病能根治吗"],
            "score": [0.5, 0.25],
            "mean ± std": ["83.14 ± 0.40", "1.00 ± 0.10"],
            "difference": ["+16.3 [+12.3, +20.2]", "−2.1 [−4.0, −0.2]"],
            "neighbour": ["Kras G12D", "HPV DNA"],
        }
    )
    page = dataframe_html(df)
    assert left_aligned_columns(page) == {2, 6}  # after the row label: query is cell 2, neighbour cell 6
    assert "tbody th" in page and "iron deficiency" in page


def test_multiindex_rows_repeat_their_labels_so_every_row_has_the_same_cells():
    df = pd.DataFrame({"task": ["a", "a"], "split": [0, 1], "text": ["x y", "z w"]}).set_index(["task", "split"])
    page = dataframe_html(df)
    assert page.count("<th>a</th>") == 2 and left_aligned_columns(page) == {3}
