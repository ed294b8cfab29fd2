"""Faults, class 4: bad values and malformed run files are refused before anything runs, one line per
file naming the file, the key or line, and what is allowed; never a traceback, never a late failure."""

import pytest

from kit.batch import main as batch_main

SMOKE = "model: tiny-random-bert\n"

BAD_VALUES = {
    # file content after a "model:" line (study 1 unless a notebook key says otherwise) -> what the message names
    "seeds: [0, 0]": "parameter 'seeds': value(s) 0 given more than once",
    "seeds: []": "parameter 'seeds': give at least one value",
    "seeds: [" + ", ".join(map(str, range(101))) + "]": "parameter 'seeds': give at most 100 values, got 101",
    "lr: .nan": "parameter 'lr': must be a finite number above 0, got nan",
    "lr: 1e400": "parameter 'lr': must be a finite number above 0, got inf",
    "temperature: .inf": "parameter 'temperature': must be a finite number above 0, got inf",
    "mix_lambda: .nan": "parameter 'mix_lambda': must be a finite number at least 0 and at most 1, got nan",
    "max_grad_norm: -.inf": "parameter 'max_grad_norm': must be a finite number",
    "fewshot_percents: [10, .nan]": "parameter 'fewshot_percents': must be a finite number above 0 and at most 100",
    "steps: 0": "parameter 'steps': must be at least 1",
    "lr: -1": "parameter 'lr': must be above 0",
    "lr: fast": "parameter 'lr': expected float, got str 'fast'",
    "batch_size: 64\ncorpus_size: 40": "parameter 'corpus_size': 40 sentences are fewer than one batch",
    "rows: []": "parameter 'rows': give at least one value",
    "rows: [zero_shot]": "parameter 'rows': ['zero_shot'] has no trained row",
    "device: gpu": "parameter 'device': device 'gpu' is not one of",
    "eval_every: 0": "parameter 'eval_every': must be at least 1",
    "max_length: 2": "parameter 'max_length': must be at least 3",
    "temperature: 0": "parameter 'temperature': must be above 0",
    "mix_lambda: 1.5": "parameter 'mix_lambda': must be at least 0 and at most 1",
    "fewshot_seeds: []": "parameter 'fewshot_seeds': give at least one value",
    "corpus_size: 0": "parameter 'corpus_size': must be at least 1",
    "corpus_size: -5": "parameter 'corpus_size': must be at least 1",
    "model: no-such/model": "parameter 'model': model 'no-such/model' is not in the Hugging Face cache",
    "stpes: 10": "unknown parameter(s) ['stpes']",
    "steps: 10\nsteps: 20": "line 3: key 'steps' given a second time",  # line 1 is the model
    "corpus_size: 100000": "parameter 'corpus_size': 100,000 sentences, but the shared PubMed corpus (after the 300",
    "corpus_size: 40000\nlanguage: zh": "parameter 'corpus_size': 40,000 sentences, but the pooled ChineseBLUE",
    "map_sentences: 60000": "parameter 'map_sentences': 60,000 sentences held out for the map, but the shared PubMed",
    "notebook: qfcl_summarization\nsplit_sizes: [900, 50, 100]": "parameter 'split_sizes': [900, 50, 100] needs 1050",
    "notebook: medse_entity_definitions\ntrain_size: 100000": "parameter 'train_size': 100,000 sentences per run",
    "notebook: augmented_sbert\nfolds: 1": "parameter 'folds': must be at least 2",
    "primary: swap - simcse on biosses-all": "parameter 'primary': 'swap' is not a row of this run; its rows:",
    "primary: swap_10 - simcse on biosses": "parameter 'primary': 'biosses' is not a task this run scores; its tasks:",
    "primary: swap_10 vs simcse": "parameter 'primary': 'swap_10 vs simcse' is not 'ROW - ROW on TASK'",
    "primary: simcse - simcse on biosses-all": "parameter 'primary': a row compared with itself ('simcse')",
    "primary: swap_10 - simcse on rqe-test\nlanguage: zh": "parameter 'primary': 'rqe-test' is not a task this run",
    "primary_effect: 0": "parameter 'primary_effect': must be above 0",
    "primary_effect: .nan": "parameter 'primary_effect': must be a finite number above 0, got nan",
    "notebook: qfcl_summarization\nprimary: qfcl - baseline on healthcaremagic-test-rougeL": "is not a task this run",
}

MALFORMED = {  # the whole file
    "steps: [1\nlr: 2": "YAML syntax error at line 2, column 3",
    "steps: 3\n  lr: 2": "YAML syntax error at line 2",
    "- steps\n- 3": "a run file is a YAML mapping of parameter names to values",
    "just a sentence": "a run file is a YAML mapping of parameter names to values ('name: value' lines), got a str",
    "notebook: [simcse_augmentations]": "key 'notebook': a notebook name, got list",
    "notebook: simcse": "unknown notebook 'simcse'",
    "": "no parameters (the file is empty, or only comments); a run file sets at least one",  # ran the defaults
    "# a comment and nothing else\n": "no parameters",
    "null": "no parameters",
    "model: tiny-random-bert\n? [a, b]\n: 1": "line 2: a key is a parameter name, got a list",  # was a TypeError
}


def alias_bomb(levels: int) -> str:
    """A description whose YAML aliases expand to 9**levels strings ("billion laughs")."""
    items = ["&a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    items += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "description: [" + ", ".join(items) + "]\n"


def test_a_yaml_alias_bomb_is_refused_at_once_in_one_short_line(tmp_path, capsys):
    """Eight levels of nine took 19 s and wrote a 351 MB error line; one more level exhausted memory."""
    import time

    t0 = time.monotonic()
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "bomb", alias_bomb(9)))
    assert code == 2 and time.monotonic() - t0 < 5
    (line,) = err.strip().splitlines()
    assert "its aliases expand to 490,329,059 values; a run file holds at most 100,000" in line and len(line) < 400


def test_aliases_within_the_limit_are_read(tmp_path):
    from kit.runner import prepare

    run = prepare(write(tmp_path, "anchors", "seeds: &s [0, 1]\nfewshot_seeds: *s\nsteps: 2"))
    assert run.parameters["seeds"] == run.parameters["fewshot_seeds"] == [0, 1]


def test_a_huge_run_file_is_refused_unread(tmp_path, capsys):
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "huge", "description: " + "x" * 2_000_000))
    assert code == 2 and "bytes; a run file is at most 1,048,576" in err


def test_a_long_bad_value_is_quoted_short(tmp_path, capsys):
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "long", "lr: " + "y" * 100_000))
    (line,) = err.strip().splitlines()
    assert code == 2 and "parameter 'lr': expected float, got str 'yyyy" in line and len(line) < 400


def test_an_empty_file_outside_a_notebook_folder_is_refused_as_empty(tmp_path, capsys):
    """It was reported as an unknown notebook named after its folder."""
    empty = tmp_path / "elsewhere.yaml"
    empty.write_text("")
    code, err = run_batch(tmp_path, capsys, empty)
    assert code == 2 and "no parameters" in err and "unknown notebook" not in err


def run_batch(tmp_path, capsys, *files) -> tuple[int, str]:
    code = batch_main([*map(str, files), "--reports", str(tmp_path / "reports")])
    return code, capsys.readouterr().err


def write(tmp_path, name: str, content: str | bytes, after_model: bool = True):
    """A run file of study 1 (its folder) holding ``content``, after a line naming the tiny model."""
    path = tmp_path / "simcse_augmentations" / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else ((SMOKE if after_model else "") + content).encode())
    return path


@pytest.mark.parametrize("content, message", {**BAD_VALUES, **MALFORMED}.items(), ids=list({**BAD_VALUES, **MALFORMED}))
def test_each_bad_file_is_one_line_naming_the_file_and_what_is_wrong(tmp_path, capsys, content, message):
    file = write(tmp_path, "bad", content, after_model=content in BAD_VALUES and not content.startswith("model"))
    code, err = run_batch(tmp_path, capsys, file)
    assert code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"invalid: {file}") and message in line, line
    assert not (tmp_path / "reports").exists()  # nothing ran


def test_every_bad_file_of_a_batch_is_named_and_the_good_ones_do_not_run(tmp_path, capsys):
    files = [write(tmp_path, f"bad{i}", content) for i, content in enumerate(BAD_VALUES)]
    good = write(tmp_path, "good", "steps: 2")
    code, err = run_batch(tmp_path, capsys, good, *files)
    assert code == 2 and len(err.strip().splitlines()) == len(files)
    assert not (tmp_path / "reports").exists()


def test_floats_written_without_a_dot_are_floats(tmp_path, capsys):
    from kit.runner import prepare

    assert prepare(write(tmp_path, "lr", "lr: 1e-5\ntemperature: 5E-2")).parameters["lr"] == 1e-5


def test_a_run_file_that_is_not_utf8_says_so(tmp_path, capsys):
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "latin1", "description: caf\xe9\n".encode("latin-1")))
    assert code == 2 and "not UTF-8 text" in err and "Traceback" not in err


def test_a_corpus_smaller_than_a_batch_is_refused(tmp_path, capsys, pubmed):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(pubmed[:24]) + "\n")
    file = write(tmp_path, "small", f"corpus_path: {corpus}\ncorpus_size: null\nmap_sentences: 0\nbatch_size: 32")
    code, err = run_batch(tmp_path, capsys, file)
    assert code == 2 and f"parameter 'batch_size': 32 sentences per batch, but {corpus}" in err and "has 24" in err


def test_two_files_that_would_share_a_report_folder_are_refused(tmp_path, capsys):
    a = write(tmp_path, "run", "steps: 2")
    b = tmp_path / "elsewhere" / "simcse_augmentations" / "run.yaml"
    b.parent.mkdir(parents=True)
    b.write_text(SMOKE)
    code, err = run_batch(tmp_path, capsys, a, b)
    assert code == 2 and "would write one report folder" in err and str(a) in err and str(b) in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.yaml"], "no such run file or folder: missing.yaml"),
        (["{empty}"], "no .yaml run files in"),
        (["{good}", "--reports", "{file}"], "argument --reports: {file} is a file; give a folder you can write in"),
        (["{good}", "--reports", "{file}/sub"], "argument --reports: {file}/sub is under {file}, which is a file"),
        (["{good}", "--jobs", "0"], "argument --jobs: must be an integer >= 1, got 0"),
        (["{good}", "--push-to-hub", "medcse"], "argument --push-to-hub: must name its owner, owner/name, got"),
        (["{good}", "--push-to-hub", "a/b/c"], "argument --push-to-hub: not a Hugging Face repository name"),
    ],
)
def test_bad_command_lines_are_usage_errors(tmp_path, capsys, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("")
    names = {"empty": tmp_path / "empty", "good": write(tmp_path, "good", "steps: 2"), "file": tmp_path / "file"}
    with pytest.raises(SystemExit) as exit_:
        batch_main([a.format(**names) for a in args])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and message.format(**names) in line


def test_a_push_that_cannot_happen_is_refused_before_any_training(tmp_path, capsys, monkeypatch):
    """Offline, without a token, with a run file that saves no model (or whose notebook saves none), or with a
    repository name the Hub would refuse for one of the rows: one line each, nothing runs."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))  # no stored token either
    saving = write(tmp_path, "saving", "steps: 2\nsave_models: true\nrows: [zero_shot, simcse]")
    plain = write(tmp_path, "plain", "steps: 2")
    summaries = tmp_path / "qfcl_summarization" / "smoke.yaml"
    summaries.parent.mkdir()
    summaries.write_text("model: tiny-random-bert\n")
    long = "someone/" + "m" * 92  # with "-simcse", over the 96 characters the Hub allows a name
    code, err = run_batch(tmp_path, capsys, saving, plain, summaries, "--push-to-hub", long)
    lines = err.splitlines()
    assert code == 2 and not (tmp_path / "reports").exists()
    assert lines[:2] == [
        "invalid: argument --push-to-hub: HF_HUB_OFFLINE is set; unset it to upload",
        "invalid: argument --push-to-hub: no Hugging Face token (huggingface-cli login, or set HF_TOKEN)",
    ]
    assert lines[2].startswith(f"invalid: argument --push-to-hub: {long}-simcse (row simcse of {saving}): ")
    assert "96" in lines[2]
    assert lines[3:] == [
        f"invalid: {plain}: saves no model to push (set save_models)",
        f"invalid: {summaries}: saves no model to push (its notebook saves none)",
    ]
    monkeypatch.setenv("HF_HUB_OFFLINE", "false")  # as huggingface_hub reads it: not offline
    code, err = run_batch(tmp_path, capsys, saving, "--push-to-hub", "someone/medcse")
    assert code == 2 and err.splitlines() == [
        "invalid: argument --push-to-hub: no Hugging Face token (huggingface-cli login, or set HF_TOKEN)"
    ]


def test_a_second_call_refuses_a_report_folder_that_holds_another_run_files_report(tmp_path, capsys):
    """Two files of one name in different folders, run by two calls with one --reports: the second replaced
    the first's report with no notice."""
    from kit.paths import PARAMS

    first, second = (tmp_path / side / "explore_augmentations" / "run.yaml" for side in ("a", "b"))
    for file in (first, second):
        file.parent.mkdir(parents=True)
        file.write_text((PARAMS / "explore_augmentations" / "smoke.yaml").read_text())
    assert batch_main([str(first), "--reports", str(tmp_path / "reports")]) == 0
    report = tmp_path / "reports" / "explore_augmentations" / "run" / "report.html"
    before = report.read_bytes()
    capsys.readouterr()
    code, err = run_batch(tmp_path, capsys, second)
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith(f"invalid: {second}: its report folder") and f"report of {first}" in line
    assert report.read_bytes() == before


def test_a_model_folder_whose_weights_do_not_fit_its_config_is_refused_before_any_training(tmp_path, capsys):
    """It was trained on, failed, and left a report folder with an error.log."""
    import json

    from kit.core.models import Encoder

    folder = Encoder.from_pretrained("tiny-random-bert", "mean").save(tmp_path / "model")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_size": 16, "num_attention_heads": 2}))
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "misfit", f"model: {folder}\nsteps: 2", after_model=False))
    (line,) = err.strip().splitlines()
    assert code == 2 and f"parameter 'model': {folder / 'model.safetensors'}: tensor" in line and "has shape" in line
    assert not (tmp_path / "reports").exists()


def test_a_data_warning_does_not_add_lines_to_a_refusal(tmp_path, capsys):
    """Study 2 loads RQE to check its paths, and RQE's public train split warns of a dropped empty pair: the
    refusal of a bad mednli_path was three lines."""
    shadow = tmp_path / "shadow"
    shadow.write_text("root:$6$secret:19700:0:99999:7:::\n")
    file = tmp_path / "augmented_sbert" / "run.yaml"
    file.parent.mkdir()
    file.write_text(f"model: tiny-random-bert\nmednli_path: {shadow}\n")
    code, err = run_batch(tmp_path, capsys, file)
    (line,) = err.strip().splitlines()
    assert code == 2 and "parameter 'mednli_path'" in line and "secret" not in line


def test_values_nested_a_thousand_deep_are_refused_in_one_line(tmp_path, capsys):
    """A RecursionError of 2,995 lines."""
    code, err = run_batch(tmp_path, capsys, write(tmp_path, "deep", "description: " + "[" * 1000 + "]" * 1000))
    (line,) = err.strip().splitlines()
    assert code == 2 and line.endswith("deep.yaml: values nested too deeply for a run file")


def test_a_report_folder_whose_run_file_mark_is_not_utf8_is_refused_in_one_line(tmp_path, capsys):
    """A ``.run_file`` with non-UTF-8 bytes was a 17-line UnicodeDecodeError traceback."""
    from kit.report.index import RUN_FILE_MARK

    file = write(tmp_path, "run", "steps: 2")
    folder = tmp_path / "reports" / "simcse_augmentations" / "run"
    folder.mkdir(parents=True)
    (folder / RUN_FILE_MARK).write_bytes(b"params/\xff\xfe.yaml\n")
    code, err = run_batch(tmp_path, capsys, file)
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith(f"invalid: {file}: its report folder") and "holds the report of" in line
