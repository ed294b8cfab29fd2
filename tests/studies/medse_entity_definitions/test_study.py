"""Study 4's runs on the evaluation suite: run keys, checkpoint selection, the whitened rows' outputs, the
suite report's pairs and groups, and saved models (short trainings of the tiny random model)."""

import re

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from kit.core.models import Encoder
from kit.evaluation.embeddings import Embedder
from kit.evaluation.rows import load_outputs, score_run
from kit.evaluation.sts import BIOSSES_ALL
from kit.params import ParameterError
from kit.studies.medse_entity_definitions import Params, Study, report
from kit.studies.medse_entity_definitions.params import ROWS
from kit.study import SUITE_FILE


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, pubmed) -> str:
    """600 PubMed sentences (about 120 with a linked disease): linking them takes a second."""
    path = tmp_path_factory.mktemp("corpus") / "sentences.txt"
    path.write_text("\n".join(pubmed[:600]) + "\n", encoding="utf-8")
    return str(path)


def params(corpus: str, **change) -> Params:
    return Params.from_dict(
        {
            "model": "tiny-random-bert",
            "pooler": "mean",
            "rows": ["mean", "mean_whitening", "simcse", "medse"],
            "seeds": [0],
            "steps": 2,
            "eval_every": 1,
            "batch_size": 8,
            "train_size": 64,
            "whitening_sentences": 100,
            "corpus_path": corpus,
            **change,
        }
    )


def test_suite_selection_and_saving_enter_the_keys_of_the_runs_they_change(tmp_path, corpus):
    """``suite`` changes every table run's key and the S_none sweep's (not a lambda sweep run's away from the main
    settings), ``select_on``
    every run's (a zero-shot run scores the selection data for the positive control's choice), ``save_models``
    only the saved runs'."""
    reference = Study(params(corpus), tmp_path)

    def folders(**change):
        study = Study(params(corpus, **change), tmp_path) if change else reference
        return {
            "table medse": study.row_run_dir("medse", 0),
            "table simcse seed 1": study._run_dir(ROWS["simcse"], 1, study.main_variant(ROWS["simcse"])),
            "zero-shot": study.row_run_dir("mean_whitening", 0),
            "sweep medse": study._run_dir(ROWS["medse"], 0, {"none_share": 0.1, "lam": 1.0, "dedup": "replace"}),
            "share sweep medse": study._run_dir(ROWS["medse"], 0, {"none_share": 0.5, "lam": 0.1, "dedup": "replace"}),
            "share sweep ct": study._run_dir(ROWS["ct"], 0, {"none_share": 0.5}),  # not compared: no suite
        }

    base = folders()
    changed = {
        key: {k for k, v in folders(**{key: value}).items() if v != base[k]}
        for key, value in {
            "suite": ["biosses-all"],
            "select_on": ["dev", "rqe-validation"],
            "save_models": True,
        }.items()
    }
    assert changed == {
        "suite": {"table medse", "table simcse seed 1", "zero-shot", "share sweep medse"},
        "select_on": {
            "table medse",
            "table simcse seed 1",
            "sweep medse",
            "zero-shot",
            "share sweep medse",
            "share sweep ct",
        },
        "save_models": {"table medse"},  # the first seed of a trained table row
    }


def test_checkpoints_selected_on_a_suite_task_and_rows_compared_and_saved(selected_on_rqe_validation, tmp_path, corpus):
    """``select_on`` a suite task: its main metric is the selection column; the suite report pairs MED-SE
    with SimCSE, SimCSE with the starting model pooled as it is and the whitened row with its pooler, and
    keeps the selection task apart from the headline; a whitening row's outputs are those of its whitened vectors;
    ``save_models`` writes the selected model, whose vectors give the run's saved suite outputs."""
    study = Study(
        params(corpus, suite=["biosses-all", "rqe-validation"], select_on=["rqe-validation"], save_models=True),
        tmp_path,
    )
    history = study.run("medse", 0)["history"]
    report = selected_on_rqe_validation(study, history)
    on_task = report.compared[report.compared.task == "biosses-all"]
    baselines = {row: set(on_task[on_task.row == row].baseline.dropna()) for row in study.p.rows}
    chosen = study.selection_choice()  # the training-free read-out best on rqe-validation, rung (c)
    assert chosen != "mean"
    assert baselines == {  # SimCSE's pair with its start is the positive control, (a); TF-IDF its rung (d)
        "mean": set(),
        "mean_whitening": {"mean"},
        "simcse": {"mean", chosen, "tfidf"},
        "medse": {"simcse"},
    }
    assert report.control.baseline == "mean" and [(r.rung, r.row, r.baseline) for r in report.rungs] == [
        ("b", "simcse_whitening", "mean_whitening"),  # like for like: the trained model whitened as the start is
        ("c", "simcse", chosen),
        ("d", "simcse", "tfidf"),
    ]
    whitened = report.evidence.outputs["biosses-all"]["simcse_whitening"]  # on the control's task alone
    assert "simcse_whitening" not in report.evidence.outputs["rqe-validation"]
    assert whitened.shape == report.evidence.outputs["biosses-all"]["simcse"].shape
    assert not np.array_equal(whitened, report.evidence.outputs["biosses-all"]["simcse"])
    lines = report.compared[report.compared.role.isin(["primary", "secondary"])].set_index(["task", "row"])
    line = lines.loc[("biosses-all", "medse")]
    assert (
        line.role == "primary" and "one seed" in line.reason and np.isnan(line.low)
    )  # a trained row with one seed: its run part is unknown
    assert report.comparison("medse").startswith(  # the control is not tested either (one seed): withheld
        "Not a finding, as the positive control did not pass. "
        "Primary comparison (medse - simcse on biosses-all): MED-SE (SimCSE + entity-definition loss) − SimCSE: "
        "not tested (a trained row with one seed"
    )

    start = Encoder.from_pretrained("tiny-random-bert", "mean")
    whitening = study.whitening(start)
    embed = Embedder.from_encoder(start, "starting model")  # the suite's batches: the random model's whitening
    whitened = score_run(lambda texts: whitening(embed(texts)), [BIOSSES_ALL])  # is near-singular, sensitive
    recorded = load_outputs(study.row_run_dir("mean_whitening", 0) / SUITE_FILE)["biosses-all"]["spearman"]
    np.testing.assert_allclose(whitened["biosses-all"]["spearman"], recorded, atol=1e-5)
    assert not np.allclose(score_run(embed, [BIOSSES_ALL])["biosses-all"]["spearman"], recorded, atol=1e-3)

    saved = {p.parent.name for p in (tmp_path / "runs").glob("*/models/*/modules.json")}
    assert saved == {"medse", "simcse"}  # the first seed of each trained row, in its run's folder
    saved = SentenceTransformer(str(study.row_run_dir("medse", 0) / "models" / "medse"), device="cpu")
    again = score_run(lambda texts: saved.encode(texts, convert_to_numpy=True), [BIOSSES_ALL])
    recorded = load_outputs(study.row_run_dir("medse", 0) / SUITE_FILE)
    np.testing.assert_allclose(again["biosses-all"]["spearman"], recorded["biosses-all"]["spearman"], atol=1e-5)


def test_medse_is_compared_with_simcse_at_each_share_in_one_family(tmp_path, corpus):
    """The S_none sweep's SimCSE and MED-SE runs score the suite; ``share_report`` compares MED-SE with SimCSE trained
    on the same share, on the primary's task, one comparison per share other than the main one (the table's) in one
    corrected family, withheld as the suite's own comparisons are while the positive control has not passed (one
    table seed: not tested)."""
    change = {"suite": ["biosses-all", "rqe-test"], "none_share_sweep": [0.0, 0.05], "sweep_seeds": [0, 1]}
    study = Study(params(corpus, **change), tmp_path)
    assert study.p.lam == 0.1 and study.p.none_share == 0.1
    suite = study.suite_report()
    shares = study.share_report(suite)
    lines = shares.compared[shares.compared.baseline.notna()]
    assert sorted(zip(lines.task, lines.row, lines.baseline)) == [
        ("biosses-all", "medse@0.0", "simcse@0.0"),
        ("biosses-all", "medse@0.05", "simcse@0.05"),
    ]
    assert set(lines.role) == {"secondary"} and set(lines.family_size) == {2} and not lines.reason.any()
    assert suite.withheld() and shares.withheld() == suite.withheld() and not lines.finding.any()
    assert "MED-SE (SimCSE + entity-definition loss), S_none 0.0 vs SimCSE, S_none 0.0: " in shares.verdict()
    assert report.share_claim(shares).startswith("MED-SE is better than SimCSE, as a finding, at 0 of the 2 swept")
    assert "not shown here" in report.share_claim(shares)
    table, share = suite.evidence.outputs["biosses-all"], shares.evidence.outputs["biosses-all"]
    assert share["medse@0.0"].shape == (2, table["medse"].shape[1])  # two sweep seeds, the items the suite keeps
    assert set(share) == {"medse@0.0", "simcse@0.0", "medse@0.05", "simcse@0.05"}  # the main share is the table's
    assert Study(params(corpus, sweep_rows=["medse"], none_share_sweep=[0.5]), tmp_path).share_report(suite) is None


def test_suite_and_selection_tasks_must_be_english(corpus):
    from kit.params import ParameterError

    with pytest.raises(ParameterError, match=r"parameter 'suite': \['cmedqq-dev'\] are not English tasks"):
        params(corpus, suite=["biosses-test", "cmedqq-dev"])
    with pytest.raises(ParameterError, match="parameter 'select_on'"):
        params(corpus, select_on=["cmedqq-dev"])
    with pytest.raises(ParameterError, match="unknown value"):
        params(corpus, suite=["medsts"])


def test_a_mixture_larger_than_the_linked_corpus_fails_when_the_study_is_built(tmp_path, corpus):
    """The corpus's 600 sentences fit train_size 300, but not with 90% of them linked (about 120 are): the
    study says so before any run, naming the parameter and the largest size that fits, which does fit when
    one more does not; a sweep's share is checked too, and named."""
    with pytest.raises(ParameterError, match=r"parameter 'train_size'.*\(none_share\)") as err:
        Study(params(corpus, train_size=300), tmp_path)
    largest = int(re.search(r"the largest that fits is ([\d,]+)", str(err.value))[1].replace(",", ""))
    assert 64 <= largest < 300
    Study(params(corpus, train_size=largest), tmp_path)
    with pytest.raises(ParameterError, match=f"the largest that fits is {largest:,}"):
        Study(params(corpus, train_size=largest + 1), tmp_path)
    with pytest.raises(ParameterError, match=r"S_none share of 0% \(none_share_sweep\)"):
        Study(params(corpus, train_size=largest, none_share_sweep=[0.0]), tmp_path)


def test_the_control_is_never_tested_on_the_definitions_it_trains_on():
    """MED-SE trains on the Disease Ontology's definitions, so its positive control may not name a task built from
    them, where training would win by having seen the items: refused in one line, before any work."""
    params = {"model": "tiny-random-bert", "rows": ["simcse"], "seeds": [0, 1], "primary": None}
    with pytest.raises(
        ParameterError,
        match=r"^parameter 'control_task': unknown value\(s\) \['doid-definition-name'\]; allowed: \['biosses-all'",
    ):
        Params.from_dict(
            {**params, "suite": ["biosses-all", "doid-definition-name"], "control_task": "doid-definition-name"}
        )
    assert (
        Params.from_dict({**params, "suite": ["biosses-all", "rqe-test"], "control_task": "rqe-test"}).control_task
        == "rqe-test"
    )
