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
