"""Faults, class 1: a changed input must never be served from the run cache.

Each test changes one input of a run (a dataset file's content at the same path, a same-size corpus,
the model's weights, the kit's cache version) and checks that the run gets a new folder, so it is
computed again; a byte-identical copy elsewhere is the same input and keeps the folder.
"""

import shutil

import pytest

import kit.study
from kit.core.fingerprint import digest, folder_digest
from kit.core.models import Encoder, model_fingerprint
from kit.studies.augmented_sbert import Params as AugSBERTParams
from kit.studies.augmented_sbert import Study as AugSBERTStudy
from kit.studies.simcse_augmentations import Params, Study
from kit.studies.simcse_augmentations.params import ROWS

BASE = {"model": "tiny-random-bert", "corpus_size": 64, "map_sentences": 8, "batch_size": 8, "steps": 2}


def simcse_folder(tmp_path, **changes) -> str:
    study = Study(Params.from_dict({**BASE, **changes}), tmp_path / "report")
    return study._run_dir(ROWS["simcse"], 0, 100.0).name


def test_changed_biosses_content_at_the_same_path_gives_a_new_run(tmp_path, biosses_file):
    copy = tmp_path / "biosses.tsv"
    shutil.copy(biosses_file, copy)
    before = simcse_folder(tmp_path, biosses_path=str(copy))
    assert before == simcse_folder(tmp_path)  # a copy is the same input
    lines = copy.read_text(encoding="utf-8").splitlines()
    cells = lines[1].split("\t")
    cells[-1] = "0.0" if float(cells[-1]) > 1 else "4.0"  # one gold score
    copy.write_text("\n".join([lines[0], "\t".join(cells), *lines[2:]]) + "\n", encoding="utf-8")
    assert simcse_folder(tmp_path, biosses_path=str(copy)) != before


def test_a_same_size_corpus_with_other_content_gives_a_new_run(tmp_path, pubmed):
    """72 sentences: the 64 of the training sample and the 8 held out for the map, every one used."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(pubmed[:72]) + "\n", encoding="utf-8")
    before = simcse_folder(tmp_path, corpus_path=str(corpus))
    corpus.write_text("\n".join(pubmed[:71] + ["A different last sentence."]) + "\n", encoding="utf-8")
    after = simcse_folder(tmp_path, corpus_path=str(corpus))
    corpus.write_text("\n".join(pubmed[72:144]) + "\n", encoding="utf-8")
    assert len({before, after, simcse_folder(tmp_path, corpus_path=str(corpus))}) == 3


def test_changed_weights_in_a_model_folder_give_a_new_run(tmp_path):
    folder = tmp_path / "model"
    encoder = Encoder.from_pretrained("tiny-random-bert", seed=0)
    encoder.backbone.save_pretrained(folder)
    encoder.tokenizer.save_pretrained(folder)
    before = simcse_folder(tmp_path, model=str(folder))
    assert model_fingerprint(str(folder)) == folder_digest(folder)
    Encoder.from_pretrained("tiny-random-bert", seed=1).backbone.save_pretrained(folder)  # same shape, new weights
    assert simcse_folder(tmp_path, model=str(folder)) != before


def test_the_silver_pool_and_split_data_enter_augmented_sbert_runs(tmp_path, biosses_file):
    copy = tmp_path / "biosses.tsv"
    shutil.copy(biosses_file, copy)

    def folder(**changes):
        params = AugSBERTParams.from_dict({"model": "tiny-random-bert", "benchmarks": ["biosses_blurb"], **changes})
        return AugSBERTStudy(params, tmp_path / "report")._run_dir("biosses_blurb", 0, 0).name

    before = folder(biosses_path=str(copy))
    assert before == folder()
    assert folder(pool_pubmed=20) != before  # PubMed sentences join the pool
    text = copy.read_text(encoding="utf-8")
    first_test_row = next(line for line in text.splitlines() if "\ttest\t" in line)
    copy.write_text(text.replace(first_test_row, first_test_row.replace("\ttest\t", "\ttrain\t")), encoding="utf-8")
    assert folder(biosses_path=str(copy)) != before  # one pair moved from test to train


def test_a_new_cache_version_gives_every_run_a_new_folder(tmp_path, monkeypatch):
    before = simcse_folder(tmp_path)
    monkeypatch.setattr(kit.study, "CACHE_VERSION", kit.study.CACHE_VERSION + 1)
    assert simcse_folder(tmp_path) != before


def test_a_rerun_on_changed_data_computes_instead_of_reusing(tmp_path, pubmed):
    """End to end through the cache: the first data's result is not returned for the second's."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(pubmed[:64]) + "\n", encoding="utf-8")
    first = Study(Params.from_dict({**BASE, "corpus_path": str(corpus)}), tmp_path / "report").run("simcse", 0)
    corpus.write_text("\n".join(pubmed[64:128]) + "\n", encoding="utf-8")
    study = Study(Params.from_dict({**BASE, "corpus_path": str(corpus)}), tmp_path / "report")
    second = study.run("simcse", 0)
    assert second["metrics"] != first["metrics"]
    assert len(list((tmp_path / "report" / "runs").glob("simcse-*/result.json"))) == 2


@pytest.mark.parametrize(
    "a, b",
    [
        ([1, 2], [2, 1]),
        ({"a": 1}, {"a": 1.0}),
        ("1", 1),
        (["ab", "c"], ["a", "bc"]),
        ([[1], 2], [1, [2]]),
    ],
)
def test_digests_tell_apart_values_that_print_alike(a, b):
    assert digest(a) != digest(b) and digest(a) == digest(a)


def test_digests_leave_out_where_data_was_read_from(biosses):
    from dataclasses import replace

    assert digest(biosses) == digest(replace(biosses, source="/elsewhere/biosses.tsv"))
    assert digest(biosses) != digest(replace(biosses, scores=biosses.scores[::-1]))


def test_folder_digests_skip_hidden_files(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\x00\x01")
    before = folder_digest(tmp_path)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "lock").write_text("x")
    assert folder_digest(tmp_path) == before
    (tmp_path / "weights.bin").write_bytes(b"\x00\x02")
    assert folder_digest(tmp_path) != before  # rewritten within the same clock tick, same size: still seen
