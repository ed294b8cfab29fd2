"""LaTeX tables (kit.report.latex): every committed snapshot's tables compile with pdfLaTeX, a broken cell does not."""

import json
import shutil
import subprocess

import pytest

from kit.docs import committed_snapshots
from kit.docs import main as docs_main
from kit.paths import PROJECT_ROOT
from kit.report.latex import comparisons_table, escape, tables_tex, tabular

HAS_LATEX = shutil.which("kpsewhich") and subprocess.run(["kpsewhich", "booktabs.sty"], capture_output=True).stdout
pytestmark = pytest.mark.skipif(
    not (HAS_LATEX and shutil.which("pdflatex")),
    reason="pdflatex with booktabs not installed (make test installs Debian's texlive-latex-recommended)",
)
DEMO = PROJECT_ROOT / "docs" / "results" / "simcse_augmentations" / "demo.json"


def compile_errors(body: str, folder) -> list[str]:
    """pdfLaTeX's error lines for ``body`` in an article with booktabs (none: it compiled to a PDF)."""
    tex = folder / "doc.tex"
    tex.write_text(
        "\\documentclass{article}\\usepackage{booktabs}\\usepackage[margin=1cm,landscape]{geometry}\n"
        f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )
    errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
    return errors or ([] if run.returncode == 0 and (folder / "doc.pdf").exists() else [f"exit {run.returncode}"])


def test_every_committed_snapshots_tables_compile(tmp_path):
    records = [json.loads(p.read_text(encoding="utf-8")) for p in committed_snapshots()]
    records = [r for r in records if r.get("tables") or r.get("metrics")]
    body = "\n\\clearpage\n".join(tables_tex(r) for r in records)
    assert len(records) >= 10 and body.count("\\begin{tabular}") >= 2 * len(records) - 5
    assert compile_errors(body, tmp_path) == []


def test_a_broken_cell_fails_to_compile(tmp_path):
    tex = tables_tex(json.loads(DEMO.read_text(encoding="utf-8")))
    assert compile_errors(tex, tmp_path) == []
    for broken in (" & extra \\\\", " under_score \\\\", " {unclosed \\\\"):  # a cell too many, a bare _, a brace
        assert compile_errors(tex.replace(" \\\\", broken, 3), tmp_path), broken


def test_every_special_character_of_a_cell_is_escaped(tmp_path):
    text = "a_b & 50% $5 #1 {x} ~y ^z \\ <0.001 > −2.1 ± 0.3 † λ τ 中文\n\nafter a blank line"
    assert "中" not in escape(text) and compile_errors(escape(text), tmp_path) == []
    row = [{"method": "[CLS] + whitening", "interval": "[−1.0, +2.0]"}]  # a cell opening with [ after \\ or \midrule
    assert compile_errors(tabular(row * 2, "c"), tmp_path) == []


def test_the_comparisons_table_marks_significance_and_the_methods_say_what_the_run_rests_on():
    qfcl = PROJECT_ROOT / "docs" / "results" / "qfcl_summarization" / "cpu.json"
    tex = tables_tex(json.loads(qfcl.read_text(encoding="utf-8")))
    table = tex[tex.index("\\caption{ROUGE on the test questions: differences}") :]
    table = table[: table.index("\\end{table}")]
    # +S is significant on ROUGE-2, but the control did not pass: as in the report, no dagger but the note's
    assert table.count("\\textsuperscript{\\dag}") == 1 and "The positive control did not pass" in table
    methods = tex[tex.index("\\paragraph{Methods.}") :]
    for said in (
        "Model: minilm",
        "Seeds: 0, 1 (2)",
        "Training: 4 epochs, batch 16, learning rate 0.0003.",
        "torch 2.13.0",
        "commit ",
    ):
        assert said in methods, said
    raw = json.loads((DEMO.parent / "raw.json").read_text(encoding="utf-8"))  # verdicts withdrawn: no comparisons
    assert "differences}" not in tables_tex(raw) and "main metric x100 [95\\% interval]: scores}" in tables_tex(raw)


def test_a_passing_control_and_its_findings_get_daggers_and_no_withheld_note():
    record = json.loads(DEMO.read_text(encoding="utf-8"))
    family = record["metrics"]["suite"]
    family["control"]["outcome"] = "passes"
    for line in family["lines"]:
        if line["role"] == "control" or (line["role"] == "secondary" and line["task"] == "rqe-test"):
            line.update(significant=True, finding=line["role"] != "control")
    table = comparisons_table(family)
    assert table.count("\\textsuperscript{\\dag}") == 1 + 1 + 1  # the control, the finding on rqe-test, the note
    assert "did not pass" not in table and "after Holm" in table


def test_kit_docs_latex_prints_or_writes_a_reports_tables_and_refuses_what_is_not_one(tmp_path, capsys):
    assert docs_main(["latex", str(DEMO)]) == 0
    assert capsys.readouterr().out == tables_tex(json.loads(DEMO.read_text(encoding="utf-8")))
    assert docs_main(["latex", str(DEMO), "--out", str(tmp_path / "t.tex")]) == 0
    assert (tmp_path / "t.tex").read_text(encoding="utf-8").startswith("% simcse_augmentations: tables")
    for bad in (["latex", str(tmp_path)], ["latex", str(DEMO), "--out", str(tmp_path / "no" / "t.tex")]):
        with pytest.raises(SystemExit) as exit_:
            docs_main(bad)
        assert exit_.value.code == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.xdist_group("smoke")
def test_a_smoke_reports_tables_tex_compiles(smoke_reports, tmp_path):
    tex = (smoke_reports / "qfcl_summarization" / "smoke" / "tables.tex").read_text(encoding="utf-8")
    assert tex.count("\\begin{tabular}") >= 4 and compile_errors(tex, tmp_path) == []
