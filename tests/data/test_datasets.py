"""Every dataset declaration, checked against its data; the resolver; malformed rows named by file and line."""

import warnings

import pytest

from kit.data import (
    BIOSSES,
    DATASETS,
    DataNotFoundError,
    DatasetSpec,
    MalformedDataError,
    load_biosses,
    load_pubmed_sentences,
    resolve,
    resolver,
)

HEADER = "id\tsplit\tsentence1\tsentence2\tannotator_a\tannotator_b\tannotator_c\tannotator_d\tannotator_e\tscore\n"


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_declared_dataset_loads_with_its_declared_splits_and_sizes(name, tmp_path, monkeypatch):
    """One test for every declaration (as MTEB's task metadata test): the declaration is complete, and each
    split loads from the shared data with exactly the declared number of rows; credentialed data fails
    with a message naming its licence."""
    spec = DATASETS[name]
    for field in ("description", "source", "licence", "citation"):
        assert getattr(spec, field).strip(), f"{name}: empty {field}"
    assert spec.load is not None and ("@" in spec.source or spec.credentialed), f"{name}: give the source's commit"
    if spec.credentialed:  # searched nowhere but an empty folder, so a copy held on this machine does not count
        monkeypatch.setattr(resolver, "candidate_roots", lambda: [("empty folder", tmp_path)])
        for split in spec.splits:
            with pytest.raises(DataNotFoundError, match="credentialed"):
                spec.load(split)
        return
    for split, rows in spec.splits.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # RQE's dropped empty pair is tested below
            assert len(spec.load(split)) == rows, f"{name} {split}"


def test_biosses_has_blurb_split(biosses):
    assert len(biosses) == 100
    assert {s: len(biosses.subset(s)) for s in ("train", "dev", "test")} == {"train": 64, "dev": 16, "test": 20}
    assert biosses.scores.min() >= 0 and biosses.scores.max() <= 4
    assert biosses.sentence1[0].startswith("It has recently been shown that Craf")


def test_pubmed_sentences(pubmed):
    assert len(pubmed) == 55_714
    assert all(pubmed[:100])


@pytest.mark.parametrize(
    "row, message",
    [
        ("1\ttrain\ta\tb\t4\t4\t4\t4\t4\n", "expected 10 tab-separated columns, got 9"),
        ("1\ttrain\ta\tb\t4\t4\t4\t4\t4\tfour\n", "score 'four' is not a number"),
        ("1\ttrain\t \tb\t4\t4\t4\t4\t4\t4\n", "empty sentence1"),
    ],
)
def test_malformed_biosses_rows_name_file_and_line(tmp_path, row, message):
    f = tmp_path / "biosses.tsv"
    f.write_text(HEADER + "1\ttrain\tok\tfine\t4\t4\t4\t4\t4\t4.0\n" + row)
    with pytest.raises(MalformedDataError, match=f"{f}:3: {message}"):
        load_biosses(f)


def test_empty_pubmed_line_is_an_error(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("one sentence.\n\nanother.\n")
    with pytest.raises(MalformedDataError, match=f"{f}:2: empty sentence"):
        load_pubmed_sentences(f)


def test_missing_dataset_names_every_place_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_DATA", str(tmp_path))
    spec = DatasetSpec("nowhere", "nowhere/data.tsv", "", "", "", "", {})
    with pytest.raises(DataNotFoundError) as err:
        resolve(spec)
    text = str(err.value)
    for place in ("$KIT_DATA", "../shared/data beside the project", "local cache", "$KIT_DATA to a folder"):
        assert place in text


def test_explicit_path_is_not_silently_replaced(tmp_path):
    with pytest.raises(DataNotFoundError, match="explicit path"):
        resolve(BIOSSES, tmp_path / "missing.tsv")


def test_kit_data_takes_precedence_over_shared(tmp_path, monkeypatch):
    (tmp_path / "biosses").mkdir()
    (tmp_path / "biosses" / "biosses.tsv").write_text(HEADER + "1\ttest\tx y\tz w\t1\t1\t1\t1\t1\t1.0\n")
    monkeypatch.setenv("KIT_DATA", str(tmp_path))
    assert len(load_biosses()) == 1


def test_rqe_splits_and_labels():
    from kit.data import RQE_SPLITS, load_rqe

    with pytest.warns(UserWarning, match="dropped 1 train pair.*pid 5860"):
        sizes = {s: len(load_rqe(s)) for s in RQE_SPLITS}
    assert sizes == {"train": 8587, "validation_amia2016_test": 302, "test_mediqa2019": 230}
    test = load_rqe("test_mediqa2019")
    assert set(test.labels) == {"true", "false"} and len(test.texts) == 2 and all(test.texts[1])
    with pytest.raises(ValueError, match="splits"):
        load_rqe("dev")


def test_mednli_reads_the_official_files_from_a_local_folder(tmp_path):
    from kit.data import load_mednli

    row = (
        '{"sentence1": "No history of blood clots.", "sentence2": "The patient has no PMH.", "gold_label": "neutral"}\n'
    )
    (tmp_path / "mli_dev_v1.jsonl").write_text(row * 3)
    dev = load_mednli("dev", tmp_path)
    assert len(dev) == 3 and dev.labels[0] == "neutral" and dev.texts[1][0] == "The patient has no PMH."
    with pytest.raises(DataNotFoundError, match="explicit path"):
        load_mednli("test", tmp_path)
    (tmp_path / "mli_train_v1.jsonl").write_text('{"sentence1": "a", "gold_label": "neutral"}\n')
    with pytest.raises(MalformedDataError, match=r"mli_train_v1.jsonl:1: missing field.*sentence2"):
        load_mednli("train", tmp_path)


def test_mednli_without_a_path_says_where_it_looked_and_that_it_is_credentialed(monkeypatch, tmp_path):
    from kit.data import load_mednli

    monkeypatch.setenv("KIT_DATA", str(tmp_path))
    monkeypatch.setenv("KIT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataNotFoundError, match="mednli/mli_train_v1.jsonl"):
        load_mednli("train")


def test_summarization_data():
    from kit.data import load_healthcaremagic, load_meqsum

    meqsum = load_meqsum()
    assert len(meqsum) == 1000 and "\n" in meqsum.chq[0] and meqsum.summary[0] == "Who manufactures cetirizine?"
    assert len(load_healthcaremagic("train")) == 1314 and len(load_healthcaremagic("valid")) == 329
    with pytest.raises(ValueError, match="splits"):
        load_healthcaremagic("test")


def test_disease_ontology_definitions_read_as_prose():
    from kit.data import load_disease_ontology

    entries = load_disease_ontology()
    assert len(entries) == 9962 and not any("_" in e.definition for e in entries)
    angio = next(e for e in entries if e.name == "angiosarcoma")
    assert "hemangiosarcoma" in angio.synonyms and "derives from" in angio.definition


def test_local_sts_file_loads_and_a_missing_one_names_the_credential(tmp_path):
    import pytest

    from kit.data import DataNotFoundError, load_sts_tsv

    f = tmp_path / "clinicalsts.tsv"
    f.write_text("a b\tc d\t3.5\ne f\tg h\t1\n", encoding="utf-8")
    pairs = load_sts_tsv(f)
    assert pairs.sentence1 == ["a b", "e f"] and list(pairs.scores) == [3.5, 1.0] and set(pairs.split) == {"test"}
    with pytest.raises(DataNotFoundError, match="credentialed"):
        load_sts_tsv(tmp_path / "missing.tsv")
