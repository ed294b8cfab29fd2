"""The HTML export: formulas become MathML and no script comes from the network."""

import nbformat

from kit.report.export import report_html, to_mathml


def test_display_and_inline_formulas_become_mathml_and_other_text_stays():
    out = to_mathml("The loss\n\n$$\\mathcal{L} = -\\log \\frac{a}{b}$$\n\nwith $\\tau$ and a price of \\$5.")
    assert out.count("<math") == 2 and 'display="block"' in out and 'display="inline"' in out
    assert "<mfrac>" in out and "$$" not in out and "with " in out and "\\$5." in out


def test_a_report_loads_no_script_from_the_network_and_keeps_the_executed_notebook_unchanged():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("$$e^{s(h_i, h_i^+)/\\tau}$$"), nbformat.v4.new_code_cell("1 + 1")]
    page = report_html(nb, "a study: run smoke")
    assert "<title>a study: run smoke</title>" in page and "<math" in page and "$$" not in page
    assert "src=" not in page.split("<body")[0].replace('src="data:', "")  # no script or font from anywhere
    assert "cdnjs" not in page and "mathjax" not in page.lower() and "require.min.js" not in page
    assert nb.cells[0].source.startswith("$$") and "title" not in nb.metadata


def opening_of(page: str) -> str:
    return page[page.index("class='kit-opening'") : page.index("</nav>")]


def test_a_report_opens_under_its_title_with_its_verdict_then_the_contents_of_its_sections():
    import json

    from kit.paths import PROJECT_ROOT

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Study 1: SimCSE\n\nRows: what the study trains."),
        nbformat.v4.new_markdown_cell("## The paper's Table 7: retrieval\n\ntext"),
        nbformat.v4.new_markdown_cell("## Few-shot: share of the `unlabeled` corpus"),
    ]
    snapshots = PROJECT_ROOT / "docs" / "results" / "simcse_augmentations"
    demo = json.loads((snapshots / "demo.json").read_text(encoding="utf-8"))  # its control did not pass
    page = report_html(nb, "s", demo)
    opening = opening_of(page)
    assert page.index("</h1>") < page.index("class='kit-opening'") < page.index("Rows: what") < page.index("<h2")
    control = "<b>Positive control</b>: SimCSE (dropout views) − starting model (no training) on "
    assert control + "doid-definition-name: −0.5" in opening
    assert "So no comparison below is a finding" in opening and "<b>Secondary" not in opening
    assert "<b>Premise ladder</b>" in opening and "(d) SimCSE (dropout views) − BM25 (bag of words): −19.5" in opening
    primary = "<b>Primary comparison</b>: + random swap 10% − SimCSE (dropout views) on doid-definition-name: −1.7"
    assert primary in opening
    assert "<b>Rests on</b>: model <code>pubmed-bert-mini</code>, 3 seeds (0, 1, 2), steps 100, batch 64" in opening
    assert opening.count("<p>") <= 6 and opening.count("<li>") == 2
    for anchor in ("The-paper's-Table-7:-retrieval", "Few-shot:-share-of-the-unlabeled-corpus"):
        assert f'href="#{anchor}"' in opening and f'id="{anchor}"' in page  # each link reaches its section

    raw = json.loads((snapshots / "raw.json").read_text(encoding="utf-8"))  # computed before the calibrated test
    opening = opening_of(report_html(nb, "s", raw))
    assert "<b>Verdicts withdrawn</b>" in opening and "Secondary" not in opening and "Positive control" not in opening

    family = demo["metrics"]["suite"]  # the control passes, and a secondary comparison survives Holm
    family["control"]["outcome"] = "passes"
    swap = next(x for x in family["lines"] if x["role"] == "secondary" and x["row"] == "swap_10")
    swap.update(significant=True, finding=True)
    opening = opening_of(report_html(nb, "s", demo))
    assert "So no comparison" not in opening and "<b>Secondary comparisons</b>: 1 of 2 secondary" in opening

    family.update(control=None, premise="the control of another family did not pass")  # withheld from elsewhere
    opening = opening_of(report_html(nb, "s", demo))
    assert "<b>Positive control</b>: no positive control (the run lacks its rows). So no comparison" in opening
    assert "Secondary" not in opening

    failed = report_html(nb, "s")  # a failed run has no record: its contents, no verdict
    assert "<li>" in opening_of(failed) and "Rests on" not in failed


def test_a_damaged_record_still_gives_a_report_that_says_so():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Study\n\nRows."), nbformat.v4.new_markdown_cell("## Results")]
    page = report_html(nb, "s", {"metrics": {"suite": {"correction": "holm", "lines": [{"role": "primary"}]}}})
    assert "The verdict could not be read from results.json (KeyError(" in opening_of(page)


def test_a_run_rests_on_the_seeds_its_study_trained_with():
    """``trained_seeds``: study 2's k-fold rows train with ``kfold_seeds``, which its record names as ``seeds``; the
    ``seeds`` parameter stands in where a study writes none, and one seed is a list of one."""
    from kit.report.index import trained_seeds
    from kit.report.opening import rests_on

    kfold = {"parameters": {"model": "m", "seeds": [0, 1], "kfold_seeds": [0, 1, 2]}, "seeds": [0, 1, 2]}
    assert trained_seeds(kfold) == [0, 1, 2] and "3 seeds (0, 1, 2)" in rests_on(kfold)
    assert trained_seeds({"parameters": {"seeds": [4, 5]}}) == [4, 5]
    assert trained_seeds({"parameters": {"seeds": 7}}) == [7] and trained_seeds({"parameters": {}}) == []
