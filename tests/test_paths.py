"""Paths as reports show them: relative to the project, or under $KIT_DATA, never a home folder."""

from kit.paths import PROJECT_ROOT, shown


def test_shared_data_and_reports_are_shown_relative_to_the_project(monkeypatch):
    monkeypatch.delenv("KIT_DATA", raising=False)
    assert (
        shown(PROJECT_ROOT.parent / "shared" / "data" / "biosses" / "biosses.tsv")
        == "../shared/data/biosses/biosses.tsv"
    )
    assert shown(PROJECT_ROOT / "reports" / "x" / "report.html") == "reports/x/report.html"


def test_data_under_kit_data_is_shown_under_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("KIT_DATA", str(tmp_path))
    assert shown(tmp_path / "biosses" / "biosses.tsv") == "$KIT_DATA/biosses/biosses.tsv"


def test_a_place_the_user_chose_elsewhere_is_shown_as_given(monkeypatch):
    monkeypatch.delenv("KIT_DATA", raising=False)
    assert shown("/opt/corpora/my.tsv") == "/opt/corpora/my.tsv"
