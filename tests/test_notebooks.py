"""Every notebook executed by papermill with its smoke parameters, exported to HTML, indexed."""

import html
import json
import re

import pytest

from kit.batch import main as batch_main
from kit.paths import NOTEBOOKS, PARAMS, PROJECT_ROOT
from kit.report.index import findings
from kit.report.opening import contents

pytestmark = pytest.mark.xdist_group("smoke")  # the session's smoke runs (conftest's smoke_reports), made once


@pytest.fixture
def reports(smoke_reports):
    return smoke_reports


def report_page(run, *texts: str) -> str:
    """The run's exported report, after checking that each of ``texts`` is in it."""
    page = (run / "report.html").read_text(encoding="utf-8")
    missing = [t for t in texts if t not in page]
    assert not missing, f"{run.name}: not in the report: {missing}"
    return page


def test_every_notebook_has_a_smoke_file_and_a_study_package():
    from kit.runner import notebooks

    names = {p.stem for p in NOTEBOOKS.glob("*.ipynb")}
    assert names == {p.parent.name for p in PARAMS.glob("*/smoke.yaml")} == set(notebooks())


def test_papermill_reads_run_files_and_single_parameters_as_the_batch_runner_does(tmp_path):
    """``papermill NOTEBOOK OUT -f params/<notebook>/<run>.yaml -p NAME VALUE -y "NAME: [LIST]"``: the run
    file's values, the overridden ones, and the declared defaults for the rest, as ``kit.batch`` sets them."""
    import subprocess
    import sys

    import yaml

    from kit.studies.explore_augmentations import Params

    smoke = PARAMS / "explore_augmentations" / "smoke.yaml"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "papermill",
            str(NOTEBOOKS / "explore_augmentations.ipynb"),
            str(tmp_path / "out.ipynb"),
            "-f",
            str(smoke),
            "-p",
            "seed",
            "3",
            "-y",
            "languages: [en]",
            "-p",
            "report_dir",
            str(tmp_path),
            "--cwd",
            str(PROJECT_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    record = json.loads((tmp_path / "results.json").read_text())
    expected = {**yaml.safe_load(smoke.read_text()), "seed": 3, "languages": ["en"]}
    assert record["parameters"] == Params.from_dict(expected).to_dict()


def test_a_bad_parameter_given_to_papermill_ends_its_output_in_the_kits_one_line(tmp_path):
    """papermill showed the cell's 35-line traceback around the ParameterError; the cell's part is now the one line
    (IPython's ``_render_traceback_``), which ends papermill's output and the executed notebook's error output."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "papermill", str(NOTEBOOKS / "explore_augmentations.ipynb"), str(tmp_path / "o.ipynb")]
        + ["-p", "ratio", "nan", "-p", "report_dir", str(tmp_path), "--cwd", str(PROJECT_ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = "ParameterError: parameter 'ratio': must be a finite number above 0 and below 1, got nan"
    assert out.returncode == 1 and out.stderr.strip().splitlines()[-1] == line, out.stderr[-3000:]
    assert "from_namespace" not in out.stderr  # no frame of the cell
    (error,) = [
        o
        for c in json.loads((tmp_path / "o.ipynb").read_text())["cells"]
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert error["traceback"] == [line]


def interval_and_p_hold(line: dict) -> bool:
    """A tested comparison's interval holds its difference and its p lies in [0, 1]; a secondary one's adjusted p is
    at least its own (the primary is tested alone, a line within another task's finding has no adjusted p)."""
    inside = line["low"] <= line["difference"] <= line["high"] and 0 <= line["p"] <= 1
    return inside and (line["role"] != "secondary" or line["p"] <= line["p_adjusted"] <= 1)


def test_study_report_has_every_table_and_figure(reports):
    run = reports / "simcse_augmentations" / "smoke"
    page = report_page(
        run,
        "mean ± std",
        "Substitute",
        "Checkpoint policy",
        "are never read in full",
        "Alignment and uniformity",
        "Few-shot",
        "UMAP",
        "retrieval",
        "Over 10 queries: one query is 10 points of hit@1.",  # how coarse hit@1 is
        "This run trains SimCSE (dropout views), + MixCSE-IW on 10%, 100% of the corpus, seed 0.",  # its own shares
        "the two differ by the seeds they average",  # the 100% point against the main table's two seeds
        "<td>yes</td>",  # a gold partner in the retrieval table, said in words
        "starting model (no training)",
        "MixCSE-IW",
        '<math display="block"',  # the notebook states its loss, as MathML
    )
    assert "def " not in page and "import " not in page  # code hidden
    assert page.count("<img") >= 4
    for fig in ("training_curves", "alignment_uniformity", "fewshot", "embedding_map", "comparisons"):
        assert all((run / "figures" / f"{fig}.{kind}").stat().st_size > 0 for kind in ("png", "svg", "pdf"))
        assert fig in page.split("Beside this report: results.json, results_table.txt, tables.tex; under figures/")[1]
    assert (run / "tables.tex").read_text(encoding="utf-8").count("\\begin{tabular}") >= 2  # kit.report.latex
    record = json.loads((run / "results.json").read_text(), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert record["parameters"]["model"] == "tiny-random-bert" and record["parameters"]["seeds"] == [0, 1]
    untrained = [r for r in record["metrics"]["per_seed"] if r["method"] not in ("simcse", "crop_10", "mixcse_iw")]
    assert len(untrained) == 7 and all(0 <= r["selection"] <= 1 for r in untrained)  # rung (c)'s candidates
    # the positive control first (SimCSE against its start read out the same way, the zero-shot row here): with 4
    # steps of a random model it does not pass, so the primary, tested alone, is reported and not a finding
    control = record["metrics"]["suite"]["control"]
    assert control["row"] == "simcse" and control["baseline"] == "zero_shot"
    assert control["outcome"] != "passes" and not any(x.get("finding") for x in record["metrics"]["suite"]["lines"])
    assert record["headline"]["control"] == control["text"] and "cannot test the paper's claim" in control["text"]
    assert record["headline"]["comparison"].startswith(
        "Not a finding, as the positive control did not pass. Primary comparison (crop_10 - simcse on biosses-all): "
    )
    sections = page[page.index("</nav>") :]  # after the opening's verdict and contents
    assert sections.index("Positive control (") < sections.index("Primary comparison (") < sections.index("mean ± std")
    opening = page[page.index("class='kit-opening'") : page.index("<h2")]  # the verdict under the title, then contents
    assert "So no comparison below is a finding" in opening and "2 seeds (0, 1)" in opening
    assert all(f'href="#{anchor}"' in opening for anchor, _ in contents(page)) and opening.count("<li>") >= 8
    assert {"torch", "transformers", "sentence-transformers", "python"} <= set(record["versions"])
    assert record["git_commit"] and record["device"].startswith("cpu") and record["wall_seconds"] > 0
    assert len(record["metrics"]["per_seed"]) == 1 + 6 + 3 * 2  # untrained rows once, three trained x two seeds
    iw = record["metrics"]["instance_weighting_effect"]
    assert iw["pairs"] > 0 and 0 <= iw["removed"] <= iw["pairs"] and "Instance weighting (phi 0.9) removed" in page
    suite = record["metrics"]["suite"]  # every row on every suite task, each difference with its interval
    assert suite["groups"]["headline tasks"] == ["biosses-all", "biosses-test", "rqe-test"]  # 16 dev pairs left out
    lines = [line for line in suite["lines"] if line["baseline"]]
    declared = [line for line in lines if line["role"] not in ("rung", "rung's pair")]
    assert len(declared) == 3 * len(record["parameters"]["suite"])  # three rows' baselines, SimCSE's the control's
    rungs = suite["rungs"]  # the premise ladder beside the control, each rung tested alone on the control's task
    assert rungs[0]["rung"] == "b" and rungs[-1]["baseline"] == "tfidf" and "Premise ladder" in opening
    tested = [line for line in lines if line["role"] == "rung"]
    assert len(tested) == len(rungs) and {line["task"] for line in tested} == {control["task"]}
    assert all(interval_and_p_hold(line) for line in lines if not line.get("reason"))
    assert "Which differences are real" in page and "vs SimCSE (dropout views): " in page
    table = (run / "results_table.txt").read_text(encoding="utf-8")
    assert "Evaluation suite, headline tasks" in table and "family interval" in table and "p adjusted" in table
    secondary = [line for line in lines if line["role"] == "secondary"]
    assert suite["correction"] == "holm" and {line["family_size"] for line in secondary} == {len(secondary)}
    assert "Holm over the" in page and "(80% power at its family's level)" in page  # the family's verdicts; power


def test_chinese_report_has_the_chineseblue_and_retrieval_tables(reports):
    run = reports / "simcse_augmentations" / "smoke_zh"
    page = report_page(
        run,
        "ChineseBLUE: probe scores x100 on test",
        "cMedQQ (F1)",
        "cMedIC (weighted F1)",
        "cMedQA (weighted F1)",
        "cMedTC (macro F1)",
        "not available",
        "train on dev, test on test",
        "<th>hit@1</th>",  # the retrieval table's hit_at_1 column, titled
        "Not run here: the run file",  # smoke_zh asks for no few-shot points
        "partner",
        "Spearman correlation of cosine with the 0/1 label",
        "test pairs alone, 1 of which shares a text with the selection data",  # smoke_zh: 60 + 60 pairs
        "pooled from the cMedQQ, cMedIC and cMedTC train files",
    )
    assert "charset" in page.lower() and "utf-8" in page.lower() and "糖尿病" in page  # Chinese text, no mojibake
    record = json.loads((run / "results.json").read_text(encoding="utf-8"))
    per_seed = record["metrics"]["per_seed"]
    assert len(per_seed) == 1 + 6 + 3 * 2  # the start, the control's six training-free rows, three trained x 2 seeds
    for row in per_seed:  # every available cell filled from a real run
        assert all(0.0 <= row[t] <= 1.0 for t in ("cMedQQ", "cMedIC", "cMedQA", "cMedTC"))
    table = record["tables"]["ChineseBLUE: probe scores x100 on test"]
    assert all(r["cMedQNLI (F1)"] == "not available" for r in table)
    hits = record["metrics"]["retrieval"]
    assert len(hits) == len(per_seed) and all(0.0 <= h["hit_at_1"] <= 1.0 and h["queries"] > 500 for h in hits)


def test_augmented_sbert_report_fills_table_2_from_real_runs(reports):
    run = reports / "augmented_sbert" / "smoke"
    report_page(
        run,
        "BIOSSES (BLURB test, 20 pairs)",
        "BIOSSES (k-fold CV, all 100 pairs)",
        "RQE (MedNLI stand-in)",
        "Stand-in for MedNLI",
        "gold + random silver",
        "gold + semantic silver",
        "the silver labeller",
        "Silver minus gold, mean of",
        "Which differences are real",
        "vs gold (BIOSSES BLURB): ",
        "cross-encoder label",
        "never hold a self-pair",
        "reloaded",
    )
    for fig in ("scores", "silver_labels"):
        assert (run / "figures" / f"{fig}.png").stat().st_size > 0
    record = json.loads((run / "results.json").read_text())
    table = record["tables"]["Table 2 layout: bi-encoder scores by training data"]
    assert [r["training data"] for r in table][1:4] == ["gold", "gold + random silver", "gold + semantic silver"]
    assert all(r[c] != "n/a" for r in table[1:] for c in r)  # every trained cell filled
    per_run = record["metrics"]["per_run"]
    # BLURB 2 seeds + 2 folds x 1 k-fold seed + RQE 2 seeds, four scores each; the starting model on 3 STS splits
    assert len(per_run) == (2 + 2 + 2) * 4 + 3
    assert all(-100 <= r["score"] <= 100 for r in per_run)
    sizes = {r["benchmark"]: r for r in record["tables"]["silver-set sizes"]}
    blurb = sizes["BIOSSES (BLURB test, 20 pairs)"]
    assert blurb["gold"] == 64 and blurb["semantic"] == 2 * blurb["pool"] == blurb["random"]
    saved = sorted(p.name for p in (run / "models" / "biosses_blurb").iterdir())
    assert saved == ["gold", "gold+random_silver", "gold+semantic_silver"]
    assert (run / "models" / "biosses_blurb" / "gold" / "modules.json").exists()  # sentence-transformers format
    suite = record["metrics"]["suite"]  # every bi-encoder on every suite task, silver vs gold with intervals
    assert suite["groups"] == {"headline tasks": ["biosses-test", "rqe-test"]}
    assert "no checkpoint" in suite["selected_on"]
    assert suite["left_out"] == {"biosses-test": ["biosses_kfold"]}  # each k-fold model trained on test pairs
    lines = [line for line in suite["lines"] if line["baseline"]]
    pairs = {(line["task"], line["row"], line["baseline"]) for line in lines}
    for task, study_task in [("biosses-test", "biosses_blurb"), ("rqe-test", "biosses_kfold"), ("rqe-test", "rqe")]:
        gold = f"{study_task}: gold"
        assert (task, gold, "starting model (no training)") in pairs
        assert {(task, f"{study_task}: gold + {s} silver", gold) for s in ("random", "semantic")} <= pairs
    # k-fold rows only on rqe-test; the control (the BLURB cross-encoder teacher - its gold student) on biosses-test,
    # and its pair beside it on rqe-test
    assert len(lines) == 3 * 2 + 3 * 3 + 2
    control = suite["control"]
    assert (control["row"], control["baseline"], control["task"]) == (
        "biosses_blurb: cross-encoder",
        "biosses_blurb: gold",
        "biosses-test",
    )
    assert control["outcome"] == "passes" or not any(line.get("finding") for line in lines)
    assert not any(line["task"] == "biosses-test" and line["row"].startswith("biosses_kfold") for line in lines)
    assert all(
        line["low"] <= line["difference"] <= line["high"] and 0 <= line["p"] <= (line["p_adjusted"] or 1) <= 1
        for line in lines
    )
    assert all(line["p_adjusted"] is not None for line in lines if line["role"] != "aside")
    comparison = record["headline"]["comparison"]
    assert (control["outcome"] != "passes") == comparison.startswith("Not a finding, as the positive control")
    assert comparison.removeprefix("Not a finding, as the positive control did not pass. ").startswith(
        "Primary comparison (biosses_blurb: gold + semantic silver - biosses_blurb: gold on biosses-test): "
        "gold + semantic silver (BIOSSES BLURB) − gold (BIOSSES BLURB): "
    )
    assert "Evaluation suite, headline tasks" in (run / "results_table.txt").read_text(encoding="utf-8")


def test_qfcl_report_has_all_four_rows_curves_and_examples(reports):
    run = reports / "qfcl_summarization" / "smoke"
    report_page(
        run,
        "baseline (cross-entropy only)",
        "+S+H+D (QFCL)",
        "rougeL",
        "<th>focus accuracy</th>",  # the focus_accuracy column, titled
        "hard negatives",
        "MeQSum has no official split",
        "Substitute",
        "gold FAQ",
        "Which differences are real: ROUGE with paired intervals",
        "The CHQ encoder of each row on the evaluation suite",
        "+S+H+D (QFCL) vs baseline (cross-entropy only): ",
    )
    assert (run / "figures" / "similarity_curves.png").stat().st_size > 0
    for fig in ("comparisons_rouge", "comparisons"):  # a forest plot of each family: ROUGE's, the suite's
        assert (run / "figures" / f"{fig}.pdf").stat().st_size > 0
    record = json.loads((run / "results.json").read_text())
    per_seed = record["metrics"]["per_seed"]
    assert len(per_seed) == 4 * 2 and all(0 <= r["rougeL"] <= 100 for r in per_seed)
    epochs = [h for h in record["metrics"]["histories"] if h["row"] == "qfcl"]
    assert len(epochs) == 2 * 2 and all("chq_hard" in h and "loss_GH" in h for h in epochs)
    rouge = record["metrics"]["rouge_comparison"]  # ROUGE per test question, paired over questions and seeds
    assert rouge["groups"] == {"headline tasks": [f"meqsum-test-{m}" for m in ("rougeL", "rouge1", "rouge2")]}
    means = {r: sum(s["rougeL"] for s in per_seed if s["row"] == r) / 2 for r in ("baseline", "qfcl")}
    lines = {(line["task"], line["row"], line["baseline"]): line for line in rouge["lines"]}
    qfcl = lines[("meqsum-test-rougeL", "qfcl", "baseline")]  # the primary (the ablation steps compare qfcl with sh)
    assert qfcl["items"] == 8 and qfcl["seeds"] == 2 and ("meqsum-test-rougeL", "qfcl", "sh") in lines
    assert abs(qfcl["difference"] - (means["qfcl"] - means["baseline"])) < 1e-9
    assert (  # the baseline vs the question's first sentence, and collapsed: the control fails, nothing is a finding
        "Primary comparison (qfcl - baseline on meqsum-test-rougeL): +S+H+D (QFCL) − baseline (cross-entropy only): "
        in record["headline"]["comparison"]
    )
    assert rouge["control"]["baseline"] == "lead" and rouge["control"]["outcome"] != "passes"
    assert not any(line.get("finding") for family in (rouge, record["metrics"]["suite"]) for line in family["lines"])
    assert record["metrics"]["suite"]["premise"] == rouge["control"]["text"]  # the embedding suite withheld too
    suite = record["metrics"]["suite"]  # every row's CHQ encoder on the suite tasks, MeQSum retrieval apart
    assert suite["groups"] == {
        "headline tasks": ["biosses-test", "rqe-test"],
        "tasks whose data qfcl_summarization trains on (reported apart)": ["meqsum-chq-summary"],
    }
    compared = [line for line in suite["lines"] if line["baseline"]]
    assert len(compared) == 4 * len(record["parameters"]["suite"])  # three ablation steps and the primary
    assert all(interval_and_p_hold(line) for line in compared if not line.get("reason"))
    assert all(len(list(folder.glob("suite.npz"))) == 1 for folder in (run / "runs").iterdir())
    assert "CHQ encoder on the evaluation suite, headline tasks" in (run / "results_table.txt").read_text()


def test_medse_report_has_baselines_sweeps_and_the_alignment_uniformity_figure(reports):
    run = reports / "medse_entity_definitions" / "smoke"
    report_page(
        run,
        "BIOSSES stands in for MedSTS",
        "entity-centric view",
        "starting model, mean + whitening",
        "contrastive tension",
        "ConSERT token cutoff",
        "ConSERT token shuffle",
        "Which differences are real",
        "MED-SE (SimCSE + entity-definition loss) vs SimCSE: ",
        "top-10% entities",
        "Substitute",
    )
    for fig in ("alignment_uniformity", "sweep_none_share", "sweep_lam", "sweep_dedup"):
        assert (run / "figures" / f"{fig}.png").stat().st_size > 0
    record = json.loads((run / "results.json").read_text())
    per_seed = record["metrics"]["per_seed"]
    # cls and mean_whitening, the control's four other training-free rows, five trained rows x two seeds
    assert len(per_seed) == 2 + 4 + 5 * 2 and all(-1 <= r["spearman_entity"] <= 1 for r in per_seed)
    sweep = record["metrics"]["sweeps"]["none_share"]
    assert sorted({r["none_share"] for r in sweep}) == [0.0, 0.1, 0.5] and {r["method"] for r in sweep} == {
        "simcse",
        "medse",
    }
    medse = [h for h in record["metrics"]["histories"] if h["method"] == "medse" and h["step"] > 0]
    assert medse and all(h["entity_loss"] > 0 for h in medse)
    shares = record["metrics"]["share_family"]  # MED-SE - SimCSE at each share, on the primary's task, one seed
    assert [(line["row"], line["baseline"]) for line in shares["lines"] if line["baseline"]] == [
        (f"medse@{share}", f"simcse@{share}")
        for share in ("0.0", "0.5")  # not the main share: the table's
    ]
    assert all(
        line["task"] == "biosses-all" and "one seed" in line["reason"] for line in shares["lines"] if line["baseline"]
    )
    assert (run / "evidence" / "share_family.npz").stat().st_size > 0
    suite = record["metrics"]["suite"]  # every row on every suite task, each difference with its interval
    assert suite["groups"] == {"headline tasks": ["biosses-all", "biosses-test", "rqe-test"]}
    # BIOSSES dev selects here: the headline reads the test pairs, not all pairs; the primary (on all pairs) is
    # tested on the pairs that share no text with the selection data
    assert record["headline"]["name"].startswith("BIOSSES test-pair Spearman")
    assert "Primary comparison (medse - simcse on biosses-all): " in record["headline"]["comparison"]
    control = suite["control"]  # SimCSE against the best training-free row on the selection data
    assert control["row"] == "simcse" and control["baseline"] in {r["method"] for r in per_seed if r["seed"] == 0}
    assert control["outcome"] == "passes" or not any(line.get("finding") for line in suite["lines"])
    left_out = {line["task"]: line["left_out"] for line in suite["lines"]}
    # BIOSSES dev selects the checkpoints: its 16 pairs and 3 more that reuse one of their sentences are left out
    assert left_out == {"biosses-all": 19, "biosses-test": 0, "rqe-test": 0}
    baselines = {
        line["row"]: line["baseline"]
        for line in suite["lines"]
        if line.get("role") not in ("control", "aside", "rung", "rung's pair")
        and line["row"] not in ("tfidf", "bm25", "simcse_whitening")  # the anchors, rung (b)'s row
    }
    assert suite["control"]["baseline"] == "cls"  # SimCSE against the starting model pooled as the trained rows are
    assert baselines == {
        "cls": None,
        "mean_whitening": None,  # no row "mean" to compare it with
        "ct": "cls",
        "consert_cutoff": "cls",
        "consert_shuffle": "cls",
        "medse": "simcse",
        **dict.fromkeys(["cls_whitening", "mean", "first_last_avg", "first_last_avg_whitening"]),  # the control's
    }
    lines = [line for line in suite["lines"] if line["baseline"] and line["role"] not in ("rung", "rung's pair")]
    assert len(lines) == 5 * len(record["parameters"]["suite"])  # five rows' baselines, SimCSE's the control's
    tested = [line for line in lines if not line.get("reason")]
    assert tested and all(interval_and_p_hold(line) for line in tested)
    comparison = record["headline"]["comparison"]
    assert "MED-SE (SimCSE + entity-definition loss) − SimCSE: " in comparison
    tables = record["tables"]  # the results table is the study's own, the suite's tables come beside it
    assert "spearman_entity" in tables["BIOSSES: Spearman x100, alignment, uniformity"][0]
    assert "Evaluation suite, headline tasks" in (run / "results_table.txt").read_text(encoding="utf-8")


def test_saved_models_carry_a_card_with_their_parameters_suite_scores_and_command(reports):
    """Study 1 (Encoder.save) and study 2 (sentence-transformers' own save): every saved folder loads in plain
    SentenceTransformer and its README.md is sentence-transformers' card with the kit's section: the row, the
    run's parameters, each of the row's suite lines with its interval, the commit and the command."""
    from sentence_transformers import SentenceTransformer

    from kit.report.model_card import KIT_SECTION, push, saved_models

    for run in (reports / "simcse_augmentations" / "smoke", reports / "augmented_sbert" / "smoke"):
        record = json.loads((run / "results.json").read_text(encoding="utf-8"))
        models = saved_models(run)
        assert len(models) == 3, run
        for model in models:
            card = (model.folder / "README.md").read_text(encoding="utf-8")
            assert card.startswith("---\n") and "library_name: sentence-transformers" in card and KIT_SECTION in card
            lines = [line for line in record["metrics"]["suite"]["lines"] if line["row"] == model.facts["row"]]
            assert lines and f"`{model.facts['row']}`" in card
            for line in lines:
                score = f"{line['score']:.2f} [{line['score_low']:.2f}, {line['score_high']:.2f}]"
                assert score.replace("-", "−") in card
            assert f"batch_size: {record['parameters']['batch_size']}" in card
            assert (
                record["git_commit"][:12] in card and f"python -m kit.batch params/{run.parent.name}/smoke.yaml" in card
            )
            assert SentenceTransformer(str(model.folder), device="cpu").encode(["IL-6 rises"]).shape[0] == 1
    uploads = push(reports / "simcse_augmentations" / "smoke", "someone/medcse-smoke", dry_run=True)
    assert [repo for repo, _ in uploads] == [
        f"someone/medcse-smoke-{row}" for row in ("crop_10", "mixcse_iw", "simcse")
    ]
    assert 'SentenceTransformer("someone/medcse-smoke-simcse")' in uploads[-1][1].read_text(encoding="utf-8")


def test_finished_runs_are_not_recomputed_and_the_console_says_so(reports, capsys):
    """A rerun finds every training cached; the console has a line per planned training (k of N, its
    name) and one for the run with its headline metric."""
    run = reports / "simcse_augmentations" / "smoke" / "runs"
    stamps = {p: p.stat().st_mtime for p in run.glob("*/result.json")}
    assert stamps and not list(run.glob("*/checkpoint.pt"))
    assert batch_main([str(PARAMS / "simcse_augmentations" / "smoke.yaml"), "--reports", str(reports)]) == 0
    assert stamps == {p: p.stat().st_mtime for p in run.glob("*/result.json")}
    out = capsys.readouterr().out
    assert "run file 1/1 simcse_augmentations/smoke: 17 trainings planned" in out  # 6 of them the control's rows
    assert "training 1/17 simcse_augmentations/smoke zero_shot seed 0: cached" in out
    assert "training 17/17 simcse_augmentations/smoke mixcse_iw seed 0: cached" in out
    assert "run 1/1 simcse_augmentations/smoke finished in" in out and "Spearman x100 (" in out
    finished = next(x for x in out.splitlines() if "smoke finished in" in x)
    assert "positive control SimCSE (dropout views) − starting model (no training)" in finished  # the premise first
    assert "so no comparison is a finding (primary " in finished  # the smoke's control does not pass


def test_explorer_report_shows_chinese_views_without_mojibake(reports):
    page = (reports / "explore_augmentations" / "smoke" / "report.html").read_text(encoding="utf-8")
    assert "charset" in page.lower() and "utf-8" in page.lower()
    assert "阳" in page and "(zh)" in page and "Kras G12D" in page


def test_index_links_every_report(reports):
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert "simcse_augmentations/smoke/report.html" in index and "explore_augmentations/smoke/report.html" in index


def test_index_groups_runs_by_study_with_its_question_comparison_and_main_figure(reports):
    """A section per study, in study order, each with its one-line question; a finished run shows its
    headline comparison with its interval (or why none is stated) and a thumbnail of the main figure."""
    from kit.batch import studies_about

    index = (reports / "index.html").read_text(encoding="utf-8")
    about = studies_about()
    titles = [index.index(a.title) for a in about.values()]
    assert titles == sorted(titles) and all(a.question.split()[-1] in index for a in about.values())
    assert "<img src='simcse_augmentations/smoke/figures/training_curves.png'" in index
    assert "<img src='augmented_sbert/smoke/figures/scores.png'" in index
    record = json.loads((reports / "simcse_augmentations" / "smoke" / "results.json").read_text(encoding="utf-8"))
    comparison = record["headline"]["comparison"]  # the run file's primary, tested alone
    assert "Primary comparison (" in comparison and html.escape(comparison) in index
    assert html.escape(record["headline"]["control"]) in index  # the positive control, above it
    assert " p = " in comparison or " p < " in comparison
    assert f"<b>Finds:</b> {html.escape(findings(record))}" in index


def test_reports_are_portable_titled_and_name_no_machine_path(reports):
    """No absolute path of the project or the reports folder in any report (data are named relative to the
    project); the page title names the study and the run."""
    for page in sorted(reports.glob("*/smoke*/report.html")):
        text = page.read_text(encoding="utf-8")
        assert str(reports) not in text and str(PROJECT_ROOT) not in text, page
        assert "<title>" in text and f": run {page.parent.name}</title>" in text, page
        assert not re.search(r"<script[^>]*\bsrc=", text), page  # renders offline: nothing loaded from a CDN
        if page.parent.parent.name != "explore_augmentations":  # every study states its loss: as MathML
            assert "<math" in text and "$$" not in text, page
    simcse = (reports / "simcse_augmentations" / "smoke" / "report.html").read_text(encoding="utf-8")
    assert "<title>Study 1: SimCSE with text augmentations and MixCSE: run smoke</title>" in simcse
    assert "../shared/data/biosses/biosses.tsv" in simcse or "$KIT_DATA/biosses/biosses.tsv" in simcse
    assert "{text-align: left}" in simcse  # text columns of its tables are left-aligned


def test_the_batch_trains_ahead_every_run_the_notebook_reads(reports):
    """Every training a smoke notebook reads was planned (kit.batch trains it ahead, in this process or as a
    Ray task): its run folders are exactly those of the planned trainings (found cached again here; sweep
    points may share a table row's folder), none trained by the notebook alone."""
    from kit.runner import plan, prepare

    for file in sorted(PARAMS.glob("*/smoke*.yaml")):
        run = prepare(file)
        p = plan(run, reports)
        if p.study is None:  # the explorer trains nothing
            continue
        for args in p.trainings:
            p.study.run(*args)
        assert not p.study.computed_runs, file  # all cached
        runs = run.report_dir(reports) / "runs"
        assert {r.parent.name for r in runs.glob("*/result.json")} == set(p.study.run_seconds), file


def test_a_smoke_report_exports_to_a_snapshot_whose_numbers_are_the_reports(reports, tmp_path):
    """kit.docs snapshot, end to end: the results page rendered from the snapshot shows the report's headline,
    and every cell of its suite table is the report's own text table's."""
    from kit import docs

    report = reports / "simcse_augmentations" / "smoke"
    snapshots = tmp_path / "results"
    path = docs.snapshot(report, snapshots)
    assert path == snapshots / "simcse_augmentations" / "smoke.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    page = docs.results_page(docs.load_snapshots(snapshots))
    assert f"{record['headline']['value']:.2f}" in page and record["git_commit"][:12] in page
    text_table = (report / "results_table.txt").read_text(encoding="utf-8")
    suite = next(rows for title, rows in record["tables"].items() if title.startswith("Evaluation suite"))
    for row in suite:
        for value in row.values():
            assert str(value) in text_table and str(value).replace("|", "\\|") in page, value


def test_two_smoke_runs_are_compared_on_the_rows_and_items_they_share(reports, tmp_path, capsys):
    """python -m kit.compare on two smoke runs: study 1's against study 4's (both train SimCSE on the tiny model and
    score its training-free starts on BIOSSES and RQE) pairs the rows both hold, each with an interval, on the items
    both kept, and writes its page; study 1's report against its own snapshot differs by nothing; its Chinese half
    shares nothing with it and is refused in one line."""
    from kit import docs
    from kit.compare import main as compare_main

    def table(out: str) -> dict[tuple[str, str], list[str]]:
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("task ")) + 2
        cells = [re.split(r"\s{2,}", line.strip()) for line in lines[start : lines.index("", start)]]
        return {(c[0], c[1]): c for c in cells}

    simcse = reports / "simcse_augmentations" / "smoke"
    page = tmp_path / "compare.html"
    assert compare_main([str(simcse), str(reports / "medse_entity_definitions" / "smoke"), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    rows = table(out)
    assert {task for task, _ in rows} == {"biosses-all", "biosses-test", "rqe-test"}
    assert {row for _, row in rows} >= {"simcse", "cls", "mean", "mean_whitening"}
    simcse_row = rows[("biosses-all", "simcse")]
    assert simcse_row[2] == "2 / 2" and re.fullmatch(r"[+−]\d+\.\d \[[+−]\d+\.\d, [+−]\d+\.\d\]", simcse_row[5])
    assert rows[("biosses-all", "mean")][-1] == "identical outputs"  # the same untrained start, item for item
    assert "Exploratory:" in out and "rows only in A: zero_shot, crop_10, mixcse_iw" in out
    assert "<table>" in page.read_text(encoding="utf-8") and "<script" not in page.read_text(encoding="utf-8")

    snapshot = docs.snapshot(simcse, tmp_path / "results")
    assert compare_main([str(simcse), str(snapshot)]) == 0
    rows = table(capsys.readouterr().out)
    # ten table rows and TF-IDF on three tasks, SimCSE + whitening (rung b) on the control's task alone
    assert len(rows) == 11 * 3 + 1 and {r[-1] for r in rows.values()} == {"identical outputs"}
    assert {r[5] for r in rows.values()} == {"+0.0"}

    with pytest.raises(SystemExit) as exit_:
        compare_main([str(simcse), str(reports / "simcse_augmentations" / "smoke_zh")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "REPORT_A and REPORT_B share no row on a task with the same items" in err
