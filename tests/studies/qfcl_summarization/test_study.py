"""Study 3's data splits, without training (the notebook smoke run trains)."""

import pytest

from kit.params import ParameterError
from kit.studies.qfcl_summarization.params import QFCLParams
from kit.studies.qfcl_summarization.study import Study


def test_meqsum_split_is_seeded_disjoint_and_sized(tmp_path):
    study = Study(QFCLParams.from_dict({"split_sizes": [40, 10, 20], "n_hard": 2}), tmp_path)
    parts = [study.train_data, study.dev_data, study.test_data]
    assert [len(p) for p in parts] == [40, 10, 20]
    assert not set(study.train_data.chq) & (set(study.dev_data.chq) | set(study.test_data.chq))
    assert (
        study.train_data.chq
        == Study(QFCLParams.from_dict({"split_sizes": [40, 10, 20], "n_hard": 2}), tmp_path).train_data.chq
    )
    assert all(len(p.hard) in (0, 2) for p in study.train_pairs) and not any(p.hard for p in study.test_pairs)
    assert "no official split" in study.split_note


def test_healthcaremagic_takes_dev_from_train_and_tests_on_valid(tmp_path):
    study = Study(
        QFCLParams.from_dict({"dataset": "healthcaremagic", "split_sizes": [30, 10, 15], "n_hard": 1}), tmp_path
    )
    assert [len(study.train_data), len(study.dev_data), len(study.test_data)] == [30, 10, 15]
    assert not set(study.train_data.chq) & set(study.dev_data.chq)
    assert "not available here" in study.split_note


def test_split_larger_than_meqsum_fails_in_validation():
    with pytest.raises(ParameterError, match="MeQSum has 1000"):
        QFCLParams.from_dict({"split_sizes": [900, 100, 100]})


def test_oversized_healthcaremagic_split_fails_in_validation():
    with pytest.raises(ParameterError, match="HealthCareMagic subset"):
        QFCLParams.from_dict({"dataset": "healthcaremagic", "split_sizes": [400, 100, 400]})
