"""Faults, class 5: malformed datasets and corpora named in a run file are refused before anything runs,
in one line naming the file, the line where there is one, what is wrong and what to do."""

import gzip
from pathlib import Path

import pytest

from kit.batch import main as batch_main
from kit.data import MalformedDataError, load_biosses, load_pubmed_sentences


def test_a_sentence_pair_given_twice_under_two_ids_is_refused(tmp_path, biosses_file):
    lines = open(biosses_file, encoding="utf-8").read().splitlines()
    again = "\t".join(["101", *lines[1].split("\t")[1:]])
    path = tmp_path / "biosses.tsv"
    path.write_text("\n".join([*lines, again]) + "\n", encoding="utf-8")
    with pytest.raises(MalformedDataError, match=":102: the sentence pair repeats line 2"):
        load_biosses(path)


def biosses_with(tmp_path, biosses_file, edit) -> str:
    """The shared BIOSSES file with ``edit(cells)`` applied to its first data row."""
    lines = open(biosses_file, encoding="utf-8").read().splitlines()
    cells = lines[1].split("\t")
    edit(cells)
    path = tmp_path / "biosses.tsv"
    path.write_text("\n".join([lines[0], "\t".join(cells), *lines[2:]]) + "\n", encoding="utf-8")
    return str(path)


def set_cell(index, value):
    def edit(cells):
        cells[index] = value

    return edit


CORPORA = {
    "empty": (b"", "corpus.txt", "no sentences"),
    "blank line": (b"A sentence.\n\nAnother.\n", "corpus.txt", "corpus.txt:2: empty sentence"),
    "not utf-8": (b"A sentence.\ncaf\xe9 au lait\n", "corpus.txt", "corpus.txt:2: not UTF-8 text (byte 0xe9)"),
    "not gzip": (b"A sentence.\n", "corpus.txt.gz", "not a readable gzip file"),
    "cut-off gzip": (gzip.compress(b"A sentence.\n" * 100)[:30], "corpus.txt.gz", "not a readable gzip file"),
}


@pytest.mark.parametrize("content, name, message", CORPORA.values(), ids=list(CORPORA))
def test_bad_corpora_are_named_with_their_line(tmp_path, content, name, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(MalformedDataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_pubmed_sentences(path)


BIOSSES_EDITS = {
    "score above 4": (set_cell(-1, "4.5"), ":2: score 4.5 is outside BIOSSES' 0-4 scale"),
    "negative score": (set_cell(-1, "-1"), ":2: score -1.0 is outside"),
    "misspelt split": (set_cell(1, "tset"), ":2: split 'tset' is not one of ('train', 'dev', 'test')"),
    "score not a number": (set_cell(-1, "high"), ":2: score 'high' is not a number"),
    "empty sentence": (set_cell(2, " "), ":2: empty sentence1"),
    "repeated pair id": (set_cell(0, "2"), ":3: pair id '2' repeats line 2"),
    "repeated pair id, written otherwise": (set_cell(0, " 02"), ":3: pair id '2' repeats line 2"),
}


@pytest.mark.parametrize("edit, message", BIOSSES_EDITS.values(), ids=list(BIOSSES_EDITS))
def test_bad_biosses_rows_are_named_with_their_line(tmp_path, biosses_file, edit, message):
    path = biosses_with(tmp_path, biosses_file, edit)
    with pytest.raises(MalformedDataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_biosses(path)


@pytest.mark.parametrize(
    "key, content, message",
    [
        ("corpus_path", b"", "no sentences"),
        ("corpus_path", b"ok\n\xff\n", ":2: not UTF-8 text"),
        ("biosses_path", b"id\tsplit\n", ":1: not a BIOSSES header"),
        ("biosses_path", None, "the explicit path"),
    ],
)
def test_the_batch_refuses_bad_data_files_up_front(tmp_path, capsys, key, content, message):
    data = tmp_path / "data.txt"
    if content is not None:
        data.write_bytes(content)
    run_file = tmp_path / "simcse_augmentations" / "run.yaml"
    run_file.parent.mkdir()
    run_file.write_text(f"model: tiny-random-bert\n{key}: {data}\n")
    assert batch_main([str(run_file), "--reports", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert f"parameter '{key}'" in line and message in line and "Traceback" not in err
    assert not (tmp_path / "reports").exists()


def test_every_study_checks_its_data_paths_up_front(tmp_path):
    """A path parameter that names no file fails in ``check_resources`` for every study that has one."""
    import dataclasses

    from kit.params import ParameterError
    from kit.runner import notebooks, study_params

    checked = []
    for notebook in notebooks():
        params = study_params(notebook)
        for field in dataclasses.fields(params):
            if field.name.endswith("_path"):
                with pytest.raises(ParameterError, match=f"parameter '{field.name}'"):
                    params.from_dict(
                        {"model": "tiny-random-bert", field.name: str(tmp_path / "none")}
                    ).check_resources()
                checked.append(f"{notebook}.{field.name}")
    assert len(checked) >= 9, checked


SECRET = "root:$6$Xk2pQ9$d8f7secretHASHvalue:19700:0:99999:7:::"


def _disease_ontology(path):
    from kit.data import load_disease_ontology

    return load_disease_ontology(path)


def _meqsum(path):
    from kit.data import load_meqsum

    return load_meqsum(path)


def _medsts(path):
    from kit.data.medsts import load_sts_tsv

    return load_sts_tsv(path)


def _rqe(path):
    from kit.data import load_rqe

    return load_rqe("test_mediqa2019", path)


@pytest.mark.parametrize("load", [load_biosses, _disease_ontology, _meqsum, _medsts, _rqe])
@pytest.mark.parametrize("second_line", ["", "daemon:*:19700:0:99999:7:::\n"])
def test_a_file_that_is_not_the_dataset_is_named_without_quoting_it(tmp_path, load, second_line):
    """``biosses_path: /etc/shadow``: the error names the file and line, and echoes none of its content."""
    path = tmp_path / "shadow"
    path.write_text(f"{SECRET}\n{second_line}")
    with pytest.raises(MalformedDataError) as err:
        load(path)
    assert str(path) in str(err.value) and ":1" in str(err.value)
    for part in ("root", "secret", "Xk2p", "19700", "daemon"):
        assert part not in str(err.value).replace(str(path), ""), err.value


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz"])
def test_a_byte_order_mark_before_the_header_is_read_as_the_same_file(tmp_path, biosses_file, suffix):
    """A UTF-8 BOM (spreadsheet programs write one) was refused as "not a BIOSSES header" with matching columns."""
    data = b"\xef\xbb\xbf" + Path(biosses_file).read_bytes()
    path = tmp_path / f"biosses{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    with_bom, plain = load_biosses(path), load_biosses(biosses_file)
    assert (with_bom.sentence1, with_bom.scores.tolist()) == (plain.sentence1, plain.scores.tolist())

    bad = data.replace(b"\n", b"\n\xff", 1)  # a bad byte at the start of line 2: named as in a file without the mark
    path.write_bytes(gzip.compress(bad) if suffix.endswith(".gz") else bad)
    with pytest.raises(MalformedDataError, match=r":2: not UTF-8 text \(byte 0xff\)"):
        load_biosses(path)
