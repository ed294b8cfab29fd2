"""Study 1's orchestration without training (the notebook smoke runs train)."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sentence_transformers import SentenceTransformer

from kit.evaluation.rows import load_outputs, score_run
from kit.evaluation.sts import BIOSSES_ALL
from kit.evaluation.tasks import TASKS
from kit.params import ParameterError
from kit.report.record import RunRecord
from kit.studies.simcse_augmentations import Params, Study, report
from kit.studies.simcse_augmentations.params import ROWS
from kit.study import SUITE_FILE


def test_instance_weighting_effect_counts_removed_pairs(tmp_path):
    """Duplicated sentences in a batch are certain false negatives: IW must remove them."""
    study = Study(
        Params.from_dict({"model": "tiny-random-bert", "batch_size": 8, "corpus_size": 64, "map_sentences": 0}),
        tmp_path,
    )
    assert study.instance_weighting_effect(n_batches=4)["pairs"] == 4 * 8 * 7
    study.corpus = [study.corpus[0]] * 64  # every pair identical: cos = 1 >= phi
    effect = study.instance_weighting_effect(n_batches=2)
    assert effect["removed"] == effect["pairs"] and effect["share"] == 1.0


def test_best_row_is_a_trained_row_and_ties_go_to_the_row_listed_first(tmp_path):
    study = Study(Params.from_dict({"model": "tiny-random-bert", "map_sentences": 0, "corpus_size": 100}), tmp_path)
    results = pd.DataFrame({"method": ["zero_shot", "simcse", "mixcse_iw_no_mix"], "selection": [0.9, 0.7, 0.7]})
    assert study.best_trained_method(results) == "simcse"
    results["selection"] = [0.9, 0.7, 0.8]  # the selection data's score, not dev Spearman, chooses
    results["spearman_dev"] = [0.9, 0.9, 0.1]
    assert study.best_trained_method(results) == "mixcse_iw_no_mix"


@pytest.mark.parametrize("cap", [0, 30, 1000])
def test_the_embedding_map_draws_a_seeded_sample_of_at_most_map_points_texts_with_their_sources(tmp_path, cap):
    study = Study(Params.from_dict({"model": "tiny-random-bert", "map_sentences": 40, "corpus_size": 100}), tmp_path)
    study.p.map_points = cap
    n = len(study.example_texts)
    study.example_embeddings = lambda row, seed: np.arange(n, dtype=np.float32)[:, None] + 100 * seed
    maps, sources = study.embedding_map_inputs(["zero_shot", "simcse"], 1)
    shown = maps[study.row_label("simcse")][:, 0].astype(int) - 100
    assert len(shown) == (min(cap, n) if cap else n) and (cap == 30) == (len(shown) < n)
    assert list(shown) == sorted(set(shown)) and np.array_equal(maps[study.row_label("zero_shot")][:, 0] - 100, shown)
    assert sources == [study.example_sources()[i] for i in shown] and "PubMed (held out)" in sources
    assert np.array_equal(study.embedding_map_inputs(["simcse"], 1)[0][study.row_label("simcse")][:, 0] - 100, shown)


def test_every_run_setting_enters_the_run_folder(tmp_path, biosses_file):
    """A changed setting that changes a run's result gives a new folder: the run is recomputed, never reused.
    A copy of the data elsewhere is the same input (tests/faults/test_stale_cache.py changes the content)."""
    base = {"model": "tiny-random-bert", "corpus_size": 100, "map_sentences": 10}
    same_biosses = tmp_path / "biosses.tsv"
    same_biosses.write_bytes(biosses_file.read_bytes())

    def folder(**changes):
        study = Study(Params.from_dict({**base, **changes}), tmp_path)
        return study._run_dir(ROWS["simcse"], 0, 100.0).name

    reference = folder()
    assert reference == folder() == folder(biosses_path=str(same_biosses))
    assert reference == folder(correction="none", compare=["swap_10 - zero_shot"])  # the report's, not the run's
    for change in (
        {"lr": 3e-5},
        {"map_sentences": 20},
        {"corpus_seed": 1},
        {"steps": 21},
        {"crop_placeholder": "[MASK]"},
        {"temperature": 0.1},
        {"suite": ["biosses-all"]},
        {"select_on": ["dev"]},
        {"save_models": True},
        {"max_grad_norm": 2.0},
        {"max_grad_norm": None},
        {"mlm_weight": 0.1},
    ):
        assert folder(**change) != reference, change
    assert folder(mlm_weight=None) == reference  # off, as before the option existed: earlier runs keep their folders


def test_mlm_weight_trains_each_row_with_the_auxiliary_masked_token_loss(tmp_path):
    """``mlm_weight``: the trained row's history logs the MLM loss beside SimCSE's statistics; a weight of 0 is
    refused before any work, naming the parameter."""
    base = {"model": "tiny-random-bert", "rows": ["simcse"], "seeds": [0], "steps": 2, "eval_every": 1}
    base |= {"batch_size": 8, "corpus_size": 64, "map_sentences": 0, "suite": ["biosses-all"], "fewshot_percents": []}
    study = Study(Params.from_dict({**base, "mlm_weight": 0.5}), tmp_path)
    rows = study.run("simcse", 0)["history"]["rows"]
    assert all(row["mlm_loss"] > 0 for row in rows[1:]) and {"pos_cos", "neg_cos"} <= set(rows[1])
    with pytest.raises(ParameterError, match="parameter 'mlm_weight'"):
        Params.from_dict({**base, "mlm_weight": 0})


def test_checkpoints_selected_on_a_suite_task_and_rows_compared_and_saved(selected_on_rqe_validation, tmp_path):
    """``select_on`` a suite task: its main metric is the selection column; the suite report keeps that task
    apart from the headline; ``save_models`` writes the selected model, whose vectors give the run's saved
    suite outputs."""
    params = Params.from_dict(
        {
            "model": "tiny-random-bert",
            "pooler": "mean",  # as before the defaults moved to [CLS]; the saved folder's own pooling is mean
            "rows": ["zero_shot", "simcse"],
            "seeds": [0],
            "steps": 2,
            "eval_every": 1,
            "batch_size": 8,
            "corpus_size": 64,
            "map_sentences": 0,
            "suite": ["biosses-all", "rqe-validation"],
            "select_on": ["rqe-validation"],
            "save_models": True,
        }
    )
    study = Study(params, tmp_path)
    history = study.run("simcse", 0)["history"]
    report = selected_on_rqe_validation(study, history)
    results = study.results().set_index("method")  # the per-seed table holds each row's selection score
    chosen = next(row for row in history["rows"] if row["step"] == history["best_step"])
    assert (
        results.loc["simcse", "dev rqe-validation"]
        == chosen["dev rqe-validation"]
        == results.loc["simcse", "selection"]
    )
    assert results.loc["zero_shot", "dev rqe-validation"] == results.loc["zero_shot", "selection"]
    lines = report.compared.set_index(["task", "row", "baseline"])
    line = lines.loc[("biosses-all", "simcse", "zero_shot")]
    assert "one seed" in line.reason and np.isnan(line.low)  # a trained row with one seed: its run part is unknown
    control = lines.loc[("biosses-all", "simcse", report.control.baseline)]  # the positive control, not tested either
    assert control.role == "control" and "one seed" in control.reason
    assert "not tested" in report.control_text() and report.withheld()
    assert report.comparison("simcse") is None  # SimCSE's comparison with its start is the control itself

    run_dir = study._run_dir(ROWS["simcse"], 0, 100.0)
    saved = SentenceTransformer(str(run_dir / "models" / "simcse"), device="cpu")  # the report publishes it
    again = score_run(lambda texts: saved.encode(texts, convert_to_numpy=True), [BIOSSES_ALL])
    recorded = load_outputs(run_dir / SUITE_FILE)
    np.testing.assert_allclose(again["biosses-all"]["spearman"], recorded["biosses-all"]["spearman"])


def test_the_headline_leaves_out_the_dev_pairs_that_select_the_checkpoint(tmp_path):
    """The all-pairs score holds the dev pairs: when ``dev`` selects, the headline and the seed spread read the
    test pairs, say so, and the checkpoint policy names the leak of the all-pairs column; otherwise all pairs."""
    results = pd.DataFrame(
        {
            "method": ["zero_shot", "simcse", "simcse"],
            "label": ["start", "SimCSE", "SimCSE"],
            "seed": [0, 0, 1],
            "best_step": [0, 10, 10],
            "selection": [0.0, 0.5, 0.5],
            "spearman_test": [0.1, 0.2, 0.4],
            "spearman_all": [0.7, 0.8, 0.8],
            "spearman_dev": [0.9, 0.9, 0.9],
        }
    )
    for select_on, headline, spread in ((["dev"], 30.0, "test-pair"), (["rqe-validation"], 80.0, "all-pairs")):
        params = {"model": "tiny-random-bert", "map_sentences": 0, "corpus_size": 100, "select_on": select_on}
        study = Study(Params.from_dict(params), tmp_path / select_on[0])
        record = RunRecord("simcse_augmentations", study.report_dir, study.p.to_dict())
        path = report.record_results(study, record, results, pd.DataFrame(), {}, None)
        written = json.loads(path.read_text())["headline"]
        assert written["value"] == pytest.approx(headline) and spread in written["name"]
        assert f"Seed-to-seed std of {spread} Spearman" in report.verdict(study, results)
        assert ("so the headline and the seed spread read the 20 test pairs" in report.describe(study)) == (
            select_on == ["dev"]
        )
        suite = SimpleNamespace(tasks=[TASKS["biosses-all"], TASKS["biosses-test"]])
        assert study.headline_task(suite) == ("biosses-test" if select_on == ["dev"] else "biosses-all")


@pytest.mark.parametrize(
    "language, select_on, says",
    [
        ("zh", ["dev"], "read the 400 test pairs alone, 55 of which share a text with the selection data"),
        ("zh", ["cmedqq-dev"], "535 of the 800 cMedQQ pairs share a text with the selection data"),
        ("en", ["dev"], "read the 20 test pairs alone, none of which shares a text with the selection data"),
        ("en", ["dev", "biosses-test"], "read the 20 test pairs alone, 20 of which share a text"),
        ("en", ["rqe-validation"], "No BIOSSES pair shares a text with the selection data."),
    ],
)
def test_the_checkpoint_policy_says_which_reported_pairs_the_selection_data_shares_a_text_with(
    tmp_path, language, select_on, says
):
    """The zh policy named cMedQQ dev whatever ``select_on`` held, and both languages said the test pairs were
    "never used for selection" while some shared a question with the selecting pairs (zh, the default corpus seed)."""
    params = {"model": "tiny-random-bert", "language": language, "corpus_size": 100, "map_sentences": 0}
    study = Study(Params.from_dict({**params, "select_on": select_on}), tmp_path)
    policy = report.describe(study).split("**Checkpoint policy**")[1].split("\n\n")[0]
    assert study.selected_on() in policy and says in policy
    assert ("dev split of the cosine view" in policy) == ("dev" in select_on)


def test_each_row_is_compared_with_its_ablation_and_the_control_rows_with_nothing():
    """SimCSE with the start, MixCSE-IW with MixCSE alone (what instance weighting adds), other trained rows with
    SimCSE; the rows the positive control adds are in the table and compared with nothing."""
    study = object.__new__(Study)  # baseline_of reads the parameters alone
    study.p = Params.from_dict({"rows": ["zero_shot", "simcse", "crop_10", "mixcse_iw", "mixcse_iw_no_iw"]})
    baselines = {row: study.baseline_of(row) for row in study.p.table_rows()}
    assert baselines == {
        "zero_shot": None,
        "simcse": "zero_shot",
        "crop_10": "simcse",
        "mixcse_iw": "mixcse_iw_no_iw",
        "mixcse_iw_no_iw": "simcse",
        **dict.fromkeys(
            ["cls", "cls_whitening", "mean", "mean_whitening", "first_last_avg", "first_last_avg_whitening"]
        ),
    }
    study.p = Params.from_dict({"rows": ["zero_shot", "simcse", "mixcse_iw"]})
    assert study.baseline_of("mixcse_iw") == "simcse"


def test_the_positive_control_is_tested_on_its_declared_task(tmp_path):
    """``control_task`` names the task the training-free control is tested on (a task that can resolve it); without it
    the control stays on the paper's task; a task the run does not score is refused in one line."""
    base = {
        "model": "tiny-random-bert",
        "rows": ["simcse"],
        "seeds": [0, 1],
        "corpus_size": 64,
        "map_sentences": 0,
        "whitening_sentences": 64,
        "primary": None,
        "suite": ["biosses-all", "rqe-test"],
    }
    default = Study(Params.from_dict(base), tmp_path)
    assert default.control_task() == "biosses-all"
    declared = Study(Params.from_dict({**base, "control_task": "rqe-test"}), tmp_path)
    assert declared.control_task() == "rqe-test"
    control = declared.control()
    assert (control.row, control.task) == ("simcse", "rqe-test") and control.baseline in ROWS
    with pytest.raises(ParameterError, match=r"^parameter 'control_task': 'doid-name-definition' is not a task this"):
        Params.from_dict({**base, "control_task": "doid-name-definition"})
