"""The fault tests of the kit.pretrain entry point. A bad argument or file is refused before any work: one
line on stderr naming it and what is allowed, exit code 2, nothing written. An --out that holds another run
or model is refused unless --overwrite; one that holds this run resumes it, or says it is finished. Two runs
of one command in two processes write the same bytes, and a run killed (SIGKILL) and rerun ends with the
uninterrupted run's loss log and weights exactly."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from kit.data import load_pubmed_sentences
from kit.pretrain import main

LOG_EVERY, SAVE_EVERY = 10, 7  # checkpoints 7 to 63 fall between two logged steps
TOY = ["--vocab-size", "800", "--layers", "2", "--hidden", "32", "--heads", "2", "--intermediate", "64"]
TOY += ["--max-length", "24", "--batch-size", "16", "--lr", "3e-3", "--heldout", "100", "--device", "cpu"]
TOY += ["--log-every", str(LOG_EVERY), "--save-every", str(SAVE_EVERY)]
KILLED_STEPS = 150  # about a second of training after the first checkpoint: room for the kill to land


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "sentences.txt"
    path.write_text("\n".join(load_pubmed_sentences(limit=1500)) + "\n")
    return path


def command(corpus: Path, out: Path, *extra: str, steps: int = 6) -> list[str]:
    return ["--corpus", str(corpus), "--out", str(out), *TOY, "--steps", str(steps), *extra]


def refused(capsys, args: list[str]) -> str:
    """The one line ``python -m kit.pretrain ARGS`` prints on stderr, having exited with code 2."""
    with pytest.raises(SystemExit) as stop:
        main(args)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("python -m kit.pretrain: error: "), line
    return line


def files(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``folder`` with its size, modification time and mode: what 'nothing written' compares."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_mode)
        for p in folder.rglob("*")
    }


@pytest.fixture(scope="module")
def finished(corpus, tmp_path_factory) -> Path:
    """A finished toy run of ``command(corpus, out)``."""
    out = tmp_path_factory.mktemp("finished") / "model"
    main(command(corpus, out))
    return out


# -- 3. bad arguments and files: one line, exit 2, nothing created ------------------------------------------

BAD_SETTINGS = {  # extra arguments -> the line's message
    "steps-0": (["--steps", "0"], "argument --steps: must be an integer >= 1, got 0"),
    "steps-negative": (["--steps", "-3"], "argument --steps: must be an integer >= 1, got -3"),
    "steps-not-a-number": (["--steps", "many"], "argument --steps: must be an integer >= 1, got 'many'"),
    "batch-size-0": (["--batch-size", "0"], "argument --batch-size: must be an integer >= 1, got 0"),
    "lr-0": (["--lr", "0"], "argument --lr: must be a number > 0, got 0"),
    "warmup-1": (["--warmup", "1"], "argument --warmup: must be a number in (0, 1), got 1"),
    "mask-prob-0": (["--mask-prob", "0"], "argument --mask-prob: must be a number in (0, 1), got 0"),
    "weight-decay-negative": (["--weight-decay", "-0.1"], "argument --weight-decay: must be a number >= 0, got -0.1"),
    "seed-negative": (["--seed", "-1"], "argument --seed: must be an integer >= 0, got -1"),
    "hidden-not-a-multiple-of-heads": (
        ["--hidden", "30", "--heads", "4"],
        "argument --hidden: must be a multiple of --heads (4), got 30",
    ),
    "max-length-past-the-positions": (["--max-length", "600"], "argument --max-length: must be an integer in 3..512"),
    "device-unknown": (["--device", "gpu"], "argument --device: device 'gpu' is not one of 'auto', 'cpu'"),
    "until-0": (["--until", "0"], "argument --until: must be an integer >= 1, got 0"),
    "until-past-steps": (["--until", "7"], "argument --until: must be a step in 1..6 (--steps), got 7"),
    "heldout-and-a-batch-past-the-corpus": (
        ["--heldout", "1490"],
        "argument --heldout/--batch-size: --corpus {corpus} has 1,500 sentences; --heldout 1,490 plus one batch "
        "of --batch-size 16 needs at least 1,506",
    ),
}


@pytest.mark.parametrize("extra, message", BAD_SETTINGS.values(), ids=list(BAD_SETTINGS))
def test_a_bad_setting_is_one_line_naming_it_and_nothing_is_created(tmp_path, capsys, corpus, extra, message):
    line = refused(capsys, command(corpus, tmp_path / "model", *extra))
    assert message.format(corpus=corpus) in line, line
    assert not (tmp_path / "model").exists()


def test_a_missing_corpus_file_is_named(tmp_path, capsys):
    line = refused(capsys, command(tmp_path / "absent.txt", tmp_path / "model"))
    assert f"argument --corpus: no such file: {tmp_path / 'absent.txt'}" in line
    assert files(tmp_path) == {}


@pytest.mark.parametrize(
    "content, message", [("", "no sentences"), ("  \n\t\n", ":1: empty sentence")], ids=["empty", "blank"]
)
def test_an_empty_or_blank_corpus_is_named(tmp_path, capsys, content, message):
    (tmp_path / "corpus.txt").write_text(content)
    before = files(tmp_path)
    line = refused(capsys, command(tmp_path / "corpus.txt", tmp_path / "model"))
    assert f"argument --corpus: {tmp_path / 'corpus.txt'}" in line and message in line, line
    assert files(tmp_path) == before


def test_a_fifo_as_corpus_is_refused_without_reading_it(tmp_path, capsys):
    os.mkfifo(tmp_path / "corpus.txt")  # reading it would wait for a writer forever
    line = refused(capsys, command(tmp_path / "corpus.txt", tmp_path / "model"))
    assert f"argument --corpus: {tmp_path / 'corpus.txt'} is not a regular file" in line
    assert not (tmp_path / "model").exists()


def test_a_file_that_is_not_a_corpus_is_refused_by_its_name(tmp_path, capsys):
    line = refused(capsys, command(Path("/etc/passwd"), tmp_path / "model"))
    assert "argument --corpus: '/etc/passwd' is neither pubmed nor chineseblue nor a .txt or .txt.gz file" in line
    assert files(tmp_path) == {}


def test_a_corpus_too_small_for_heldout_and_a_batch_names_both_and_its_size(tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(f"sentence number {i}." for i in range(50)) + "\n")
    line = refused(capsys, command(tmp_path / "corpus.txt", tmp_path / "model"))
    assert "argument --heldout/--batch-size" in line and "has 50 sentences" in line and "needs at least 116" in line
    assert not (tmp_path / "model").exists()


def test_an_out_under_a_regular_file_is_refused(tmp_path, capsys, corpus):
    (tmp_path / "notes").write_text("a file, not a folder")
    before = files(tmp_path)
    line = refused(capsys, command(corpus, tmp_path / "notes" / "model"))
    assert f"argument --out: {tmp_path / 'notes' / 'model'} is under {tmp_path / 'notes'}, which is a file" in line
    assert files(tmp_path) == before


def test_an_out_that_is_a_file_is_refused(tmp_path, capsys, corpus):
    (tmp_path / "model").write_text("a file, not a folder")
    before = files(tmp_path)
    assert f"argument --out: {tmp_path / 'model'} is a file; give a folder" in refused(
        capsys, command(corpus, tmp_path / "model")
    )
    assert files(tmp_path) == before


def test_an_out_under_proc_is_refused(capsys, corpus):
    line = refused(capsys, command(corpus, Path("/proc/kit-pretrain-model")))
    assert "argument --out: " in line and "/proc" in line, line
    assert not Path("/proc/kit-pretrain-model").exists()


# -- 1. an --out that holds something: refused, resumed, finished or overwritten ------------------------------


def test_an_out_holding_another_model_is_refused_and_left_as_it_was(tmp_path, capsys, corpus):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"another model's weights")
    before = files(tmp_path)
    line = refused(capsys, command(corpus, model))
    assert f"argument --out: {model} holds files of no kit.pretrain run (config.json, model.safetensors)" in line
    assert "--overwrite" in line
    assert files(tmp_path) == before


def test_an_out_holding_a_run_of_other_settings_is_refused_naming_them(capsys, corpus, finished):
    before = files(finished)
    line = refused(capsys, command(corpus, finished, "--lr", "1e-3", "--seed", "2"))
    assert f"argument --out: {finished} holds another run (--lr 0.003, --seed 0 there)" in line
    assert files(finished) == before


def test_an_out_holding_a_run_on_another_corpus_is_refused(tmp_path, capsys, finished):
    other = tmp_path / "other.txt"
    other.write_text("\n".join(load_pubmed_sentences(limit=1501)[1:]) + "\n")
    before = files(finished)
    line = refused(capsys, command(other, finished))
    assert f"argument --out: {finished} holds another run (a corpus of 1500 sentences, digest " in line
    assert files(finished) == before


def test_a_finished_run_rerun_says_so_and_does_nothing(capsys, corpus, finished):
    before = files(finished)
    assert main(command(corpus, finished)) == 0
    assert "holds this run, finished: nothing to do" in capsys.readouterr().out
    assert files(finished) == before


def test_the_written_files_have_the_permissions_of_a_plain_open(finished):
    umask = os.umask(0)
    os.umask(umask)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in finished.iterdir()}
    assert modes == dict.fromkeys(modes, oct(0o666 & ~umask)), modes  # model.safetensors was 0600


def test_overwrite_replaces_another_models_files_and_leaves_the_others(tmp_path, corpus):
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"another model's weights")
    (model / "checkpoint.pt").write_bytes(b"another run's checkpoint")
    (model / "notes.txt").write_text("kept")
    assert main(command(corpus, model, "--overwrite")) == 0
    assert (model / "notes.txt").read_text() == "kept" and not (model / "checkpoint.pt").exists()
    assert json.loads((model / "training_log.json").read_text())["heldout_end"] > 0
    with safe_open(model / "model.safetensors", "pt") as weights:
        assert "embeddings.word_embeddings.weight" in weights.keys()


# -- 2. reproducible in separate processes, and across a kill -------------------------------------------------


def start(corpus: Path, out: Path, steps: int) -> subprocess.Popen:
    """``python -m kit.pretrain`` in its own process (its own hash seeds), on one thread."""
    env = {**os.environ, "KIT_PROGRESS": "0", "OMP_NUM_THREADS": "1"}
    args = [sys.executable, "-m", "kit.pretrain", *command(corpus, out, steps=steps)]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> None:
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]


def written(out: Path) -> dict:
    """What a run must reproduce: the loss log (less its time), the tokenizer and the weights."""
    log = json.loads((out / "training_log.json").read_text())
    del log["train_seconds"]
    return {"log": log, **{name: (out / name).read_bytes() for name in ("tokenizer.json", "model.safetensors")}}


@pytest.fixture(scope="module")
def uninterrupted(corpus, tmp_path_factory) -> tuple[Path, Path]:
    """Two uninterrupted runs of one command, each in its own process, side by side."""
    outs = [tmp_path_factory.mktemp("uninterrupted") / name for name in ("first", "second")]
    for process in [start(corpus, out, KILLED_STEPS) for out in outs]:
        finish(process)
    return outs


def test_two_processes_of_one_command_write_the_same_tokenizer_weights_and_loss_log(uninterrupted):
    first, second = map(written, uninterrupted)
    assert first["tokenizer.json"] == second["tokenizer.json"]
    assert first == second


def test_a_killed_run_rerun_ends_with_the_uninterrupted_loss_log_and_weights(tmp_path, corpus, uninterrupted):
    out = tmp_path / "model"
    process = start(corpus, out, KILLED_STEPS)
    while not (out / "checkpoint.pt").exists():
        assert process.poll() is None, process.communicate()[1][-3000:]
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert not (out / "training_log.json").exists(), "the run finished before the kill: give it more steps"
    step = torch.load(out / "checkpoint.pt", weights_only=False)["step"]
    assert step % LOG_EVERY, f"killed at step {step}, a logged step: the unlogged loss sum went untested"

    finish(start(corpus, out, KILLED_STEPS))  # the same command again
    assert written(out) == written(uninterrupted[0])


def test_ctrl_c_says_how_to_resume_in_one_line_and_the_rerun_finishes_the_run(tmp_path, corpus, uninterrupted):
    """Ctrl-C printed a 20-line KeyboardInterrupt traceback."""
    out = tmp_path / "model"
    process = start(corpus, out, KILLED_STEPS)
    while not (out / "checkpoint.pt").exists():
        assert process.poll() is None, process.communicate()[1][-3000:]
        time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode in (130, -signal.SIGINT) and err.strip().splitlines() == [
        f"{out}: interrupted; the same command resumes from the last checkpoint"
    ]
    finish(start(corpus, out, KILLED_STEPS))
    assert written(out) == written(uninterrupted[0])
