"""The documentation: generated pages match their sources, a hand-edited snapshot number is caught, the site
builds offline with --strict, and kit.docs keeps the entry-point contract."""

import json
import re
import shutil
import subprocess
import sys

import pytest

from kit import docs
from kit.data.resolver import DATA_PAGE
from kit.paths import PROJECT_ROOT

README_LINES = 200


def test_the_committed_generated_pages_are_what_the_snapshots_and_declarations_give():
    stale = docs.stale_pages(docs.pages())
    assert not stale, f"run: python -m kit.docs render ({[str(p.relative_to(PROJECT_ROOT)) for p in stale]})"


def test_committed_snapshots_have_evidence_to_recompute():
    assert docs.committed_snapshots(), "no committed snapshot has evidence beside it"


@pytest.mark.parametrize("snapshot", docs.committed_snapshots(), ids=lambda f: f"{f.parent.name}/{f.stem}")
def test_every_committed_verdict_is_what_its_evidence_gives_under_todays_inference(snapshot):
    """``python -m kit.docs recompute --check``, one snapshot a test (so that ``pytest -n`` spreads them): a change
    of inference or correction shows here, and is carried into the snapshots by ``recompute``, never by a training."""
    assert json.loads(snapshot.read_text(encoding="utf-8")) == docs.recompute(snapshot), (
        f"run: python -m kit.docs recompute {snapshot.relative_to(PROJECT_ROOT)}"
    )


def test_every_committed_held_out_task_carries_its_folds_and_they_are_the_runs_own():
    """A k-fold run's evidence on ``biosses-cv`` holds each pair's fold (the items' clusters), over which the pages
    show its differences; the folds are those the run's own parameters draw (``folds``, ``fold_seed``)."""
    from kit.evaluation.rows import Evidence
    from kit.studies.augmented_sbert.held_out import HELD_OUT
    from kit.studies.augmented_sbert.params import AugSBERTParams
    from kit.studies.augmented_sbert.study import Study

    held = {
        f: t
        for f in docs.committed_snapshots()
        for e in docs.evidence_files(f)
        for t in Evidence.load(e).tasks
        if t.name == HELD_OUT
    }
    assert held and all(t.clusters is not None for t in held.values()), sorted(f.name for f in held)
    for snapshot, task in held.items():
        params = AugSBERTParams.from_dict(json.loads(snapshot.read_text(encoding="utf-8"))["parameters"])
        assert tuple(task.clusters.tolist()) == Study(params, PROJECT_ROOT / "reports" / "unused").held_out.clusters


def test_a_family_whose_run_could_not_form_its_control_stays_withheld_when_recomputed(tmp_path):
    """A family recorded with the premise ``NO_CONTROL`` (its run lacked the control's rows) keeps it under
    ``recompute``: its comparisons stay shown and none becomes a finding."""
    from kit.evaluation.rows import NO_CONTROL

    source = docs.SNAPSHOTS / "simcse_augmentations" / "demo.json"
    snapshot = tmp_path / "demo.json"
    shutil.copyfile(source.with_name("demo.suite.npz"), tmp_path / "demo.suite.npz")
    record = json.loads(source.read_text(encoding="utf-8"))
    record["metrics"]["suite"].update(control=None, premise=NO_CONTROL)
    snapshot.write_text(json.dumps(record), encoding="utf-8")
    suite = docs.recompute(snapshot)["metrics"]["suite"]
    assert suite["premise"] == NO_CONTROL and not suite.get("control")
    assert suite["lines"] and not any(line.get("finding") for line in suite["lines"])


def test_a_number_changed_by_hand_in_a_snapshot_changes_the_pages(tmp_path):
    """A committed snapshot of a finished report, and the committed kit.evaluate snapshot, each with one number
    edited: the page rendered from it is no longer the committed one."""
    snapshots = tmp_path / "results"
    shutil.copytree(docs.SNAPSHOTS, snapshots)
    paths = sorted(p for p in snapshots.glob("*/*.json") if p.parent.name != docs.EVALUATIONS)
    record = json.loads(paths[0].read_text(encoding="utf-8"))
    record["headline"]["value"] += 0.01
    paths[0].write_text(json.dumps(record), encoding="utf-8")
    assert docs.results_page(docs.load_snapshots(snapshots)) != (docs.DOCS / "results.md").read_text("utf-8")

    suite = snapshots / docs.EVALUATIONS / f"{docs.SUITE_TABLE}.json"
    record = json.loads(suite.read_text(encoding="utf-8"))
    record["tasks"]["biosses-all"]["scores"]["minilm"]["spearman"]["value"] += 0.0001
    suite.write_text(json.dumps(record), encoding="utf-8")
    page = docs.EVALUATION_PAGE.read_text("utf-8")
    assert docs.with_block(docs.EVALUATION_PAGE, docs.suite_block(snapshots), docs.EVALUATION_MARKERS) != page


def test_a_snapshots_provenance_says_how_many_item_draws_its_comparisons_rest_on():
    record = {
        "parameters": {"model": "m", "seeds": [0, 1]},
        "git_commit": "0" * 40,
        "device": "cpu",
        "wall_seconds": 3,
        "versions": {"torch": "2"},
        "metrics": {"suite": {"correction": "holm", "lines": [{"baseline": "b", "resamples": 2000}]}},
    }
    assert "each comparison's item part from 2,000 item draws" in docs.provenance(record)


def test_the_readme_is_a_front_door():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LINES
    assert readme.index("make demo") < readme.index("make test") < 1200  # the two commands lead
    for history in ("issue ", "session", "Issue "):
        assert history not in readme, history


def test_the_site_builds_offline_with_strict_and_loads_nothing_from_the_network(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pages = sorted((tmp_path / "site").rglob("*.html"))
    assert len(pages) >= 15
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and 'src="http' not in text, page
    api = (tmp_path / "site" / "reference" / "api.html").read_text(encoding="utf-8")
    assert "paired_comparison" in api and "adjusted_p" in api  # mkdocstrings read the docstrings
    assert len(re.findall(r'<math[^>]*display="block"', api)) >= 5 and "$$" not in api  # docstrings' TeX, as MathML
    study = (tmp_path / "site" / "studies" / "simcse_augmentations.html").read_text(encoding="utf-8")
    assert "<math" in study  # the loss as MathML, no MathJax needed
    results = (tmp_path / "site" / "results.html").read_text(encoding="utf-8")
    figures = re.findall(r'src="(results/figures/[^"]+\.svg)"', results)  # drawn by kit/report/site_figures.py
    drawn = re.findall(r"results/figures/[^)\"]+\.svg", (docs.DOCS / "results.md").read_text(encoding="utf-8"))
    assert len(figures) == len(drawn) >= 5  # one per family of a snapshot whose verdicts stand
    assert all((tmp_path / "site" / f).read_bytes().startswith(b"<?xml") for f in figures)
    assert results.index("Every run at a glance") < results.index('<h2 id="study-1-simcse-with-text-augmentations')


@pytest.mark.parametrize(
    "args, message",
    [
        (["snapshot", "/nonexistent/report"], "argument reports: /nonexistent/report: not a folder"),
        (["snapshot"], "the following arguments are required: reports"),
        (["render", "--force"], "unrecognized arguments: --force"),
        (["publish"], "argument command: invalid choice: 'publish'"),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(docs, "SNAPSHOTS", tmp_path / "snapshots")
    with pytest.raises(SystemExit) as exit_:
        docs.main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "snapshots").exists()


def test_a_folder_without_a_finished_record_is_refused_before_any_is_copied(tmp_path, capsys, monkeypatch):
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir(), bad.mkdir()
    (good / "results.json").write_text(json.dumps(dict.fromkeys(docs.REQUIRED, "x")), encoding="utf-8")
    (good / docs.RUN_FILE_MARK).write_text("params/x/good.yaml\n", encoding="utf-8")
    (bad / "results.json").write_text('{"notebook": "x"}', encoding="utf-8")
    monkeypatch.setattr(docs, "SNAPSHOTS", tmp_path / "snapshots")
    with pytest.raises(SystemExit):
        docs.main(["snapshot", str(good), str(bad)])
    assert "not a finished report's results.json (no headline" in capsys.readouterr().err
    assert not (tmp_path / "snapshots").exists()


def strict_json(text: str):
    """``json.loads`` as JavaScript's ``JSON.parse`` and ``jq`` read it: no bare NaN or Infinity."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_every_snapshot_is_strict_json():
    files = sorted((PROJECT_ROOT / "docs" / "results").rglob("*.json"))
    assert files and all(strict_json(f.read_text(encoding="utf-8")) for f in files)


def test_a_missing_value_is_snapshotted_as_null(tmp_path):
    """A results.json written before the kit wrote strict JSON (NaN for a zero-shot row's selection score) is
    snapshotted with null there; numbers stay as they were."""
    run = tmp_path / "old"
    run.mkdir()
    record = dict.fromkeys(docs.REQUIRED, "x") | {"metrics": {"per_seed": [{"selection": float("nan"), "x": 0.5}]}}
    (run / "results.json").write_text(json.dumps(record), encoding="utf-8")
    (run / docs.RUN_FILE_MARK).write_text("params/x/old.yaml\n", encoding="utf-8")
    assert "NaN" in (run / "results.json").read_text()
    path = docs.snapshot(run, tmp_path / "snapshots")
    assert strict_json(path.read_text(encoding="utf-8"))["metrics"]["per_seed"] == [{"selection": None, "x": 0.5}]


def test_strict_json_writes_every_kind_of_missing_float_as_null():
    import numpy as np

    from kit.core.files import json_text

    values = [float("nan"), float("inf"), np.float32("nan"), np.float64("-inf"), np.float32(0.5), 1, None]
    assert strict_json(json_text({"v": values})) == {"v": [None, None, None, None, 0.5, 1, None]}


def test_a_missing_headline_or_score_renders_as_n_a():
    """A NaN headline (a report whose selected row scored nothing) or kit.evaluate score is null in its snapshot;
    the pages say n/a instead of failing to render."""
    demo = docs.load_snapshots()[("simcse_augmentations", "demo")]
    record = {**demo, "headline": {**demo["headline"], "value": None}}
    assert f"**Headline:** {demo['headline']['name']}: n/a" in docs.results_page(
        {("simcse_augmentations", "x"): record}
    )
    evaluation = json.loads((docs.SNAPSHOTS / docs.EVALUATIONS / f"{docs.SUITE_TABLE}.json").read_text("utf-8"))
    task = next(iter(evaluation["tasks"].values()))
    model = evaluation["models"][0]
    task["scores"][model][task["declaration"]["main_metric"]]["value"] = None
    assert "n/a [" in docs.suite_rows(evaluation)[0][model]


def test_a_kit_evaluate_folder_snapshots_to_the_evaluation_pages_table(tmp_path):
    """kit.evaluate's output (evaluation.json) is snapshotted under evaluation/ and rendered with its numbers."""
    from kit.evaluate import main as evaluate_main

    out = tmp_path / docs.SUITE_TABLE
    args = ["tiny-random-bert", "--tasks", "biosses-test", "--out", str(out), "--no-cache", "--resamples", "100"]
    assert evaluate_main(args) == 0
    path = docs.snapshot(out, tmp_path / "snapshots")
    assert path == tmp_path / "snapshots" / docs.EVALUATIONS / f"{docs.SUITE_TABLE}.json"
    score = strict_json((out / "evaluation.json").read_text())["tasks"]["biosses-test"]["scores"]["tiny-random-bert"]
    block = docs.suite_block(tmp_path / "snapshots")
    spearman = score["spearman"]
    assert f"{100 * spearman['value']:.2f} [{100 * spearman['low']:.2f}, {100 * spearman['high']:.2f}]" in block
    assert "python -m kit.evaluate tiny-random-bert --tasks biosses-test" in block
    assert docs.load_snapshots(tmp_path / "snapshots") == {}  # not a study's report


def test_a_kit_evaluate_record_whose_tasks_lack_their_numbers_is_refused_before_it_is_copied(tmp_path, capsys):
    folder = tmp_path / "minilm-en"
    folder.mkdir()
    record = json.loads((docs.SNAPSHOTS / docs.EVALUATIONS / f"{docs.SUITE_TABLE}.json").read_text(encoding="utf-8"))
    del record["tasks"]["biosses-all"]["declaration"]["items"]
    (folder / "evaluation.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(SystemExit):
        docs.main(["snapshot", str(folder)])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "not a finished kit.evaluate's evaluation.json (a task lacks 'items')" in line


def test_a_study_page_states_the_primary_or_the_papers_claim_when_none_is_declared():
    """The primary's sentences carry its sizing; without a primary the page says so and names the paper's claim."""
    claim = {"task": "biosses-all", "effect": 4.3, "claim": "X over SimCSE"}
    declared = {"metrics": {"suite": {"correction": "holm", "primary_text": "Primary comparison (x - y on t): ..."}}}
    assert docs._power(declared) == ""
    text = docs._power({"metrics": {"suite": {"correction": "holm", "paper_effect": claim, "lines": []}}})
    assert text.startswith("The run declares no primary comparison; the paper claims X over SimCSE, +4.3 points")


def test_a_snapshot_is_named_after_its_run_file_and_a_bare_results_json_is_refused(tmp_path, capsys):
    """A copy of a report under ``x/`` became ``docs/results/<notebook>/x.json``, a run that does not exist."""
    copy = tmp_path / "x"
    copy.mkdir()
    record = dict.fromkeys(docs.REQUIRED, "nb") | {"metrics": {}}
    (copy / "results.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(SystemExit):
        docs.main(["snapshot", str(copy)])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{copy}: not a report folder of kit.batch (no {docs.RUN_FILE_MARK}" in line
    (copy / docs.RUN_FILE_MARK).write_bytes(b"params/nb/\xffpaper.yaml\n")
    with pytest.raises(SystemExit):
        docs.main(["snapshot", str(copy)])
    assert f"{copy}: not a report folder of kit.batch (a damaged {docs.RUN_FILE_MARK}" in capsys.readouterr().err
    (copy / docs.RUN_FILE_MARK).write_text("params/nb/paper.yaml\n", encoding="utf-8")
    assert docs.snapshot(copy, tmp_path / "snapshots") == tmp_path / "snapshots" / "nb" / "paper.json"
    kept = copy / "last_good"  # a failed rerun's last finished report: its run's mark is its parent's
    kept.mkdir()
    (kept / "results.json").write_text(json.dumps(record), encoding="utf-8")
    assert docs.snapshot(kept, tmp_path / "kept") == tmp_path / "kept" / "nb" / "paper.json"


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_a_damaged_snapshot_is_named_in_one_line(tmp_path, capsys, monkeypatch, check):
    """``render`` printed the JSON error without the file's name."""
    snapshots = tmp_path / "results"
    shutil.copytree(docs.SNAPSHOTS, snapshots)
    damaged = snapshots / "simcse_augmentations" / "demo.json"
    damaged.write_text(damaged.read_text(encoding="utf-8")[:500], encoding="utf-8")
    monkeypatch.setattr(docs, "SNAPSHOTS", snapshots)
    assert docs.main(["render", *check]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"[kit.docs] error: {damaged}: not a committed snapshot"), line
    assert "(JSONDecodeError)" in line, line


def test_a_study_page_tables_its_tested_controls_and_says_plainly_when_none_passes():
    """``controls_section``: the demo's control (3 seeds, fails) is a row; a one-seed search's is not (it goes
    untested); with none passing the page says the offline setting cannot test the claim, and a control edited to
    pass turns that into a count. Study 3's control, vetoed for template collapse, says why it fails in its own
    words."""
    demo = json.loads((docs.SNAPSHOTS / "simcse_augmentations" / "demo.json").read_text(encoding="utf-8"))
    search = json.loads((docs.SNAPSHOTS / "simcse_augmentations" / "search_mean_t01.json").read_text(encoding="utf-8"))
    snapshots = {("simcse_augmentations", "demo"): demo, ("simcse_augmentations", "search_mean_t01"): search}
    text = "\n".join(docs.controls_section("simcse_augmentations", snapshots))
    row = (
        "| `demo.yaml` (pubmed-bert-mini, cls_before_pooler, 100) | `doid-definition-name` (8,962) | 3 | simcse 5.0 − "
    )
    assert f"{row}zero_shot 5.5 |" in text and "A baseline marked chosen" not in text and "Vetoes" not in text
    assert "| (b) cls_whitening 13.0: below; (c) first_last_avg_whitening 24.6: below; (d) tfidf 20.9: below;" in text
    assert "search_mean_t01" not in text
    withdrawn = json.loads((docs.SNAPSHOTS / "simcse_augmentations" / "control_small_doid.json").read_text("utf-8"))
    assert "control_small_doid" not in "\n".join(  # its start read untrained positions: its verdict does not stand
        docs.controls_section(
            "simcse_augmentations", {**snapshots, ("simcse_augmentations", "control_small_doid"): withdrawn}
        )
    )
    assert "It does not pass" in text and "cannot test the paper's claim" in text
    demo["metrics"]["suite"]["control"]["outcome"] = "passes"
    assert "1 of 1 passes." in "\n".join(docs.controls_section("simcse_augmentations", snapshots))
    assert docs.controls_section("augmented_sbert", snapshots) == []
    qfcl = json.loads((docs.SNAPSHOTS / "qfcl_summarization" / "cpu.json").read_text(encoding="utf-8"))
    assert (
        docs.controls_section("qfcl_summarization", {("qfcl_summarization", "cpu"): qfcl}) == []
    )  # one rate: withdrawn
    qfcl["parameters"]["new_lr"] = 3e-4  # as a run with a rate per parameter group records
    text = "\n".join(docs.controls_section("qfcl_summarization", {("qfcl_summarization", "cpu"): qfcl}))
    assert "| baseline 16.8 − lead 22.0 | −5.2 [−62.1, +51.7] | 63.0 | fails (vetoed) |" in text  # its interval: zero
    assert "Vetoes:\n\n- `cpu.yaml`: baseline (cross-entropy only) is collapsed to a template" in text
    assert "the premise that the baseline summarizer beats the question's first sentence" in text
    assert "chosen" not in text and "training-free" not in text  # study 1's wording, not study 3's


def test_a_study_page_tables_its_search_by_setting_from_the_selection_scores():
    """``search_section``: each ``search_*`` snapshot is a row with its pooler, temperature, steps x batch and corpus
    share, and the base row's selection score against the best training-free row's; a run file that is not a search
    is not a row, and a study without searches has no section."""
    search = json.loads((docs.SNAPSHOTS / "simcse_augmentations" / "search_mean_t01.json").read_text(encoding="utf-8"))
    demo = json.loads((docs.SNAPSHOTS / "simcse_augmentations" / "demo.json").read_text(encoding="utf-8"))
    snapshots = {("simcse_augmentations", "search_mean_t01"): search, ("simcse_augmentations", "demo"): demo}
    text = "\n".join(docs.search_section("simcse_augmentations", snapshots))
    assert "| `search_mean_t01.yaml` | mean, 0.1, 200 x 64, 20,000 sentences | 60.2 |" in text
    assert "first_last_avg_whitening 60.6 | −0.4 |" in text and "demo.yaml" not in text
    search["parameters"]["corpus_size"], search["corpus_sentences"] = None, 55414
    search["metrics"]["per_seed"] = [
        {**line, "selection": line["selection"] + 0.01} if line["method"] == "simcse" else line
        for line in search["metrics"]["per_seed"]
    ]
    text = "\n".join(docs.search_section("simcse_augmentations", snapshots))
    assert "| mean, 0.1, 200 x 64, all (55,414 sentences) | 61.2 |" in text and "| +0.6 |" in text
    search["parameters"]["mlm_weight"] = 0.1  # a setting with SimCSE's auxiliary MLM loss says so
    assert "| mean, 0.1, 200 x 64, all (55,414 sentences), auxiliary MLM 0.1 | 61.2 |" in "\n".join(
        docs.search_section("simcse_augmentations", snapshots)
    )
    assert docs.search_section("augmented_sbert", snapshots) == []


def test_the_glance_table_marks_a_significant_primary_not_a_finding_where_the_control_failed():
    """``summary_section``: study 2's warm-up run has a significant primary and a failing control, so its cell says the
    primary is not a finding; a run whose control did not fail is not marked."""
    warmup = json.loads((docs.SNAPSHOTS / "augmented_sbert" / "control_small_kfold_warmup.json").read_text("utf-8"))
    glance = lambda record: "\n".join(docs.summary_section({("augmented_sbert", "w"): record})).splitlines()  # noqa: E731
    (row,) = [line for line in glance(warmup) if line.startswith("| Study 2")]
    assert "verdicts withdrawn (its start read beyond its trained positions)" in row  # pubmed-bert-small, before 12-07
    warmup["model_positions"] = 48  # as a run since then records
    (row,) = [line for line in glance(warmup) if line.startswith("| Study 2")]
    assert "p = 0.026, significant; not a finding, as the control did not pass |" in row
    warmup["metrics"]["suite"]["control"]["outcome"] = "passes"
    (row,) = [line for line in glance(warmup) if line.startswith("| Study 2")]
    assert row.endswith("p = 0.026, significant |")


def test_the_data_page_lists_every_declared_dataset_from_its_declaration(monkeypatch, tmp_path):
    """The data page had seven typed lines; its tables are now the declarations': each dataset in both tables, the
    same tables on a machine without the data (they once measured the files in ../shared/data), and a declaration that
    changes (a dataset added, a licence) changes the page."""
    import dataclasses

    import kit.data
    from kit.data import DATASETS, resolver

    block = docs.datasets_block()
    for name in DATASETS:
        assert block.count(f"| `{name}` |") == 2, name
    with monkeypatch.context() as no_data:
        no_data.setattr(resolver, "shared_data", lambda: tmp_path / "no data")
        no_data.setenv("KIT_DATA", str(tmp_path / "no data"))
        assert docs.datasets_block() == block
    page = (PROJECT_ROOT / DATA_PAGE).read_text(encoding="utf-8")
    assert block in page and docs.data_paths_block() in page
    for parameter in ("`mednli_path`", "`medsts_path`", "`biosses_path`", "`corpus_path`"):
        assert f"| {parameter} |" in page, parameter
    added = dataclasses.replace(DATASETS["rqe"], name="rqe-copy", licence="a licence of its own", relpath="copy.jsonl")
    monkeypatch.setattr(kit.data, "DATASETS", {**DATASETS, "rqe-copy": added})
    changed = docs.datasets_block()
    assert "| `rqe-copy` | `copy.jsonl` | no | a licence of its own |" in changed and changed not in page


def test_the_speed_tables_are_each_benchmarks_newest_and_a_missing_one_is_named(tmp_path):
    from kit.docs import latest_benchmarks

    results = tmp_path / "machine.md"
    cmd = "2026-11-29, machine, `python {}`"
    results.write_text(
        f"## encode.py: old\n\n{cmd.format('encode.py')}\n\n| a |\n\n## evaluate.py: only\n\n"
        f"{cmd.format('evaluate.py')}\n\nx\n\n## encode.py: new\n\n{cmd.format('benchmarks/encode.py')}\n\n| b |\n\n"
        f"## encode.py: another model\n\n{cmd.format('encode.py --sentences 9')}\n\n| c |\n\n"
        f"## encode.py: from the root\n\n{cmd.format('benchmarks/encode.py --sentences 9')}\n\n| d |\n"
    )
    block = latest_benchmarks(results, ("evaluate.py", "encode.py"))
    assert block == (
        f"#### evaluate.py: only\n\n{cmd.format('evaluate.py')}\n\nx\n\n"
        f"#### encode.py: new\n\n{cmd.format('benchmarks/encode.py')}\n\n| b |\n"  # run from the root
    )
    with pytest.raises(ValueError, match="no table of memory.py"):
        latest_benchmarks(results, ("memory.py",))


def test_study_2s_teacher_search_is_tabled_from_its_results_file_and_absent_without_one(tmp_path):
    assert docs.teacher_search_section(tmp_path / "missing.json") == [] and docs.teacher_search_section(None) == []
    path = tmp_path / "teacher_selection.json"
    teacher = {"teacher": "cross-encoder from minilm", "spearman": [30.0, 50.0], "margin": [-20.0, 5.0], "ahead_in": 1}
    common = {"run_file": "params/augmented_sbert/x.yaml", "outer_fold": 2, "inner_folds": 2, "seed": 0}
    path.write_text(json.dumps({**common, "student": [50.0, 45.0], "teachers": [teacher]}))
    text = "\n".join(docs.teacher_search_section(path))
    assert "outer fold 2 of `params/augmented_sbert/x.yaml`" in text and "no interval is stated" in text
    assert "| student: the run file's bi-encoder | 47.5 | 50.0, 45.0 |  |  |" in text
    assert "| cross-encoder from minilm | 40.0 | 30.0, 50.0 | −7.5 | 1 of 2 |" in text
