"""Faults, class 2: damaged cache entries are detected, named, set aside (renamed, never deleted) and
recomputed; every record is written whole or not at all."""

import json

import numpy as np
import pytest

from kit.core.config import TrainConfig
from kit.core.files import write_atomic, write_text_atomic
from kit.core.models import Encoder
from kit.core.train import read_checkpoint, train_contrastive
from kit.evaluation.sts import sts_report
from kit.studies.simcse_augmentations import Params, Study
from kit.study import cached_run

DAMAGES = {
    "truncated": lambda data: data[: len(data) // 2],
    "emptied": lambda data: b"",
    "garbage": lambda data: b"\x00\xff not what was written \xfe",
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_result_is_set_aside_and_recomputed(tmp_path, capsys, damage):
    calls = []

    def compute():
        calls.append(1)
        return {"score": 0.5}

    run = tmp_path / "run-a"
    first = cached_run(run, compute, {})
    result = run / "result.json"
    written = result.read_bytes()
    result.write_bytes(DAMAGES[damage](written))
    again = cached_run(run, compute, {})
    assert len(calls) == 2 and again["score"] == first["score"]
    assert json.loads(result.read_text())["score"] == 0.5
    aside = list(run.glob("result.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == DAMAGES[damage](written)
    assert str(result) in capsys.readouterr().err


def compute_with_artefact(calls):
    def compute():
        calls.append(1)
        (run_dir := compute.run_dir).mkdir(exist_ok=True)
        np.savez(run_dir / "suite.npz", scores=np.arange(4.0))
        return {"score": 0.5}

    return compute


ARTEFACT_DAMAGES = {
    "truncated": lambda f: f.write_bytes(f.read_bytes()[:10]),
    "one byte changed, still readable": lambda f: f.write_bytes(
        f.read_bytes().replace(b"\x00\x00\xf0?", b"\x00\x00\x00@")
    ),
    "deleted": lambda f: f.unlink(),
    "replaced by a folder": lambda f: (f.unlink(), f.mkdir()),
}


@pytest.mark.parametrize("damage", ARTEFACT_DAMAGES)
def test_a_damaged_artefact_beside_a_result_is_set_aside_and_the_run_recomputed(tmp_path, capsys, damage):
    """The rule is the artefact's SHA-256 recorded in the result, whatever the damage and whatever reads it."""
    calls, run = [], tmp_path / "run-a"
    compute = compute_with_artefact(calls)
    compute.run_dir = run
    cached_run(run, compute, {})
    assert list(json.loads((run / "result.json").read_text())["artefacts"]) == ["suite.npz"]
    suite = run / "suite.npz"
    ARTEFACT_DAMAGES[damage](suite)
    again = cached_run(run, compute, {})
    assert len(calls) == 2 and again == {"score": 0.5, "seconds": again["seconds"]}
    np.testing.assert_array_equal(np.load(suite)["scores"], np.arange(4.0))
    assert (
        list(run.glob("result.json.damaged-*"))
        and "artefacts ['suite.npz'] are missing or changed" in capsys.readouterr().err
    )
    assert cached_run(run, compute, {}) and len(calls) == 2  # whole again: served from the cache


def test_an_artefact_its_reader_refuses_is_set_aside_whatever_the_error(tmp_path, capsys):
    """A result written before artefacts were recorded: the reader's error decides, of any type (a truncated
    suite.npz raised zipfile.BadZipFile, which the cache did not count as damage)."""
    from kit.study import StudyBase

    calls, run = [], tmp_path / "run-a"
    compute = compute_with_artefact(calls)
    compute.run_dir = run
    cached_run(run, compute, {})
    result = json.loads((run / "result.json").read_text())
    del result["artefacts"]
    (run / "result.json").write_text(json.dumps(result))
    (run / "suite.npz").write_bytes(b"PK\x03\x04 not a zip")

    def read(file):
        with np.load(file, allow_pickle=False) as data:
            return data["scores"]

    scores = StudyBase.run_artefact(run, "suite.npz", read, lambda: cached_run(run, compute, {}))
    np.testing.assert_array_equal(scores, np.arange(4.0))
    assert len(calls) == 2 and list(run.glob("suite.npz.damaged-*")) and list(run.glob("result.json.damaged-*"))
    assert f"{run / 'suite.npz'} is unreadable (BadZipFile" in capsys.readouterr().err


def test_a_result_without_its_compute_time_is_not_a_result(tmp_path):
    run = tmp_path / "run-a"
    run.mkdir()
    (run / "result.json").write_text(json.dumps({"score": 1.0}))  # valid JSON, but never written by the kit
    assert cached_run(run, lambda: {"score": 2.0}, {})["score"] == 2.0


CONFIG = TrainConfig(steps=4, eval_every=2, batch_size=8, max_length=24, lr=1e-3, device="cpu")


def train(run_dir, corpus, biosses, evaluate=None):
    encoder = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    history = train_contrastive(encoder, corpus, CONFIG, evaluate or (lambda e: sts_report(e, biosses)), None, run_dir)
    return encoder, history


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_checkpoint_is_set_aside_and_the_run_starts_over_to_the_same_end(tmp_path, pubmed, biosses, damage):
    corpus = pubmed[:100]
    full_encoder, full = train(tmp_path / "full", corpus, biosses)
    calls = {"n": 0}

    def crash_at_second_eval(encoder):
        calls["n"] += 1
        if calls["n"] == 3:  # the evaluations at steps 0 and 2 pass (step 2 writes a checkpoint)
            raise KeyboardInterrupt
        return sts_report(encoder, biosses)

    with pytest.raises(KeyboardInterrupt):
        train(tmp_path / "broken", corpus, biosses, crash_at_second_eval)
    ckpt = tmp_path / "broken" / "checkpoint.pt"
    ckpt.write_bytes(DAMAGES[damage](ckpt.read_bytes()))
    assert read_checkpoint(ckpt) is None and not ckpt.exists()
    assert len(list(ckpt.parent.glob("checkpoint.pt.damaged-*"))) == 1
    encoder, history = train(tmp_path / "broken", corpus, biosses)
    assert history.rows == full.rows
    np.testing.assert_array_equal(encoder.encode(corpus[:10]), full_encoder.encode(corpus[:10]))


def test_a_foreign_pickle_named_checkpoint_is_not_resumed(tmp_path):
    import torch

    torch.save({"weights": torch.zeros(2)}, tmp_path / "checkpoint.pt")
    assert read_checkpoint(tmp_path / "checkpoint.pt") is None
    assert list(tmp_path.glob("checkpoint.pt.damaged-*"))


def test_damaged_example_embeddings_recompute_their_run(tmp_path):
    study = Study(
        Params.from_dict(
            {"model": "tiny-random-bert", "corpus_size": 64, "map_sentences": 4, "batch_size": 8, "steps": 2}
        ),
        tmp_path,
    )
    expected = study.example_embeddings("simcse", 0)
    (file,) = (tmp_path / "runs").glob("simcse-*/example_embeddings.npy")
    file.write_bytes(file.read_bytes()[:100])
    np.testing.assert_array_equal(study.example_embeddings("simcse", 0), expected)
    assert list(file.parent.glob("result.json.damaged-*"))


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path):
    target = write_text_atomic(tmp_path / "results.json", '{"old": true}')

    def killed_half_way(tmp):
        tmp.write_text('{"new": ')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, killed_half_way)
    assert json.loads(target.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left behind
