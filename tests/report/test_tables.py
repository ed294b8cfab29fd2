"""The HTML the notebooks show tables with: text left-aligned, numbers right-aligned."""

import re

import pandas as pd

from kit.report.tables import dataframe_html, summarize


def left_aligned_columns(page: str) -> set[int]:
    rule = re.search(r"<style>(.*?)\{text-align: left\}", page).group(1)
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
    assert left_aligned_columns(page) == {1, 5}  # no row labels: query is cell 1, neighbour cell 5
    nowrap = re.search(r"\}\s*([^{}]*)\{white-space: nowrap\}", page).group(1)
    assert {int(n) for n in re.findall(r"td:nth-child\((\d+)\)", nowrap)} == {2, 3, 4}  # intervals stay whole
    assert "iron deficiency" in page
    labelled = dataframe_html(df.set_index("query"))  # the query is a row label now: still the first column
    assert left_aligned_columns(labelled) == {1, 5} and "td:nth-child(1) {font-weight: bold}" in labelled


def test_a_default_index_is_left_out_and_a_meaningful_one_is_kept_as_columns_under_one_header_row():
    df = pd.DataFrame({"method": ["SimCSE", "MixCSE"], "score": [1.0, 2.0]})
    assert "<th>0</th>" not in dataframe_html(df) and "<td>0</td>" not in dataframe_html(df)
    page = dataframe_html(df.set_index("method"))
    assert "<td>SimCSE</td>" in page and page.count("<tr") == 3  # one header row (no row of index names), two rows


def test_multiindex_rows_repeat_their_labels_so_every_row_has_the_same_cells():
    df = pd.DataFrame({"task": ["a", "a"], "split": [0, 1], "text": ["x y", "z w"]}).set_index(["task", "split"])
    page = dataframe_html(df)
    assert page.count("<td>a</td>") == 2 and left_aligned_columns(page) == {1, 3}
    assert "td:nth-child(1), #" in page and "td:nth-child(2) {font-weight: bold}" in page  # both labels bold


def test_a_pivoted_table_with_a_named_columns_axis_aligns_its_text_columns_too():
    df = pd.DataFrame({"task": ["a", "b"], "row": ["x", "x"], "text": ["one two", "three"]})
    pivoted = df.pivot(index="task", columns="row", values="text").reset_index()  # columns axis named "row"
    assert left_aligned_columns(dataframe_html(pivoted)) == {1, 2}


def test_a_missing_number_reads_n_a():
    from kit.report.tables import number

    assert [number(None), number(float("nan")), number(0.8312, scale=100)] == ["n/a", "n/a", "83.12"]


def test_metric_columns_read_as_titles_in_the_html_the_text_file_and_the_docs_while_the_records_keep_field_names(
    tmp_path,
):
    from kit.docs import markdown_table
    from kit.report.tables import write_tables

    table = pd.DataFrame({"method": ["SimCSE"], "spearman_test": ["80.1 ± 0.2"], "rougeL": ["31.0"], "seeds": [3]})
    page = dataframe_html(table)
    assert "<th>Spearman test</th>" in page and "<th>ROUGE-L</th>" in page and "spearman_test" not in page
    records = write_tables(tmp_path, {"t": table})
    assert list(records["t"][0]) == ["method", "spearman_test", "rougeL", "seeds"]  # scripts' keys unchanged
    text = (tmp_path / "results_table.txt").read_text()
    assert "Spearman test" in text and "spearman_test" not in text
    header = markdown_table(records["t"]).splitlines()[0]
    assert header == "| method | Spearman test | ROUGE-L | seeds |"


def test_a_metric_of_the_task_is_shown_alone_and_a_models_metric_with_its_seed_spread():
    results = pd.DataFrame({"method": ["a", "a"], "label": ["A", "A"], "hit_at_1": [0.5, 0.7], "chance": [0.1, 0.1]})
    row = summarize(results, ("hit_at_1", "chance")).iloc[0]
    assert (row.seeds, row.hit_at_1, row.chance) == (2, "60.00 ± 14.14", "10.00")
