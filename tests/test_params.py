import pytest

from kit.batch import main as batch_main
from kit.params import ParameterError
from kit.simcse import StudyParams


def test_defaults_are_valid():
    StudyParams.from_dict({})


@pytest.mark.parametrize(
    "values, message",
    [
        ({"stepz": 3}, r"unknown parameter\(s\) \['stepz'\].*allowed: .*'steps'"),
        ({"steps": "ten"}, "parameter 'steps': expected int, got str"),
        ({"steps": True}, "parameter 'steps': expected int, got bool"),
        ({"pooler": "max"}, r"parameter 'pooler': 'max' is not one of the allowed values \['cls'"),
        ({"rows": ["simcse", "magic"]}, r"parameter 'rows': unknown row\(s\) \['magic'\]; allowed: \['zero_shot'"),
        ({"seeds": [0, "1"]}, r"parameter 'seeds\[1\]': expected int"),
        ({"fewshot_percents": [0]}, "fewshot_percents"),
    ],
)
def test_bad_parameters_name_the_key_and_the_allowed_values(values, message):
    with pytest.raises(ParameterError, match=message):
        StudyParams.from_dict(values)


def test_ints_are_accepted_for_floats_and_none_for_optionals():
    p = StudyParams.from_dict({"lr": 1, "corpus_size": None})
    assert isinstance(p.lr, float) and p.corpus_size is None


def test_batch_rejects_bad_files_before_running_anything(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("notebook: simcse_augmentations\nparameters:\n  steps: many\n")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("notebook: no_such_study\n")
    assert batch_main([str(bad), str(unknown), "--reports", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: parameter 'steps': expected int" in err and "unknown notebook 'no_such_study'" in err
    assert not (tmp_path / "reports").exists()


def test_best_row_ties_go_to_the_row_listed_first():
    import pandas as pd

    from kit.simcse import best_trained_method

    results = pd.DataFrame({"method": ["zero_shot", "simcse", "mixcse_iw_no_mix"], "spearman_dev": [0.9, 0.7, 0.7]})
    assert best_trained_method(results) == "simcse"
