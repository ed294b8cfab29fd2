"""The explorer notebook executed by papermill: its ``ratio`` parameter drives the slider and the static
section, the Chinese views keep the spaces the augmenter keeps, and no output shows a machine's path."""

import html
import re

import nbformat
import pytest

from kit.paths import NOTEBOOKS, PROJECT_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    import papermill

    out = tmp_path_factory.mktemp("explore")
    papermill.execute_notebook(
        str(NOTEBOOKS / "explore_augmentations.ipynb"),
        str(out / "executed.ipynb"),
        parameters={"sample_size": 20, "ratio": 0.3, "report_dir": str(out)},
        cwd=str(PROJECT_ROOT),
        progress_bar=False,
        kernel_name="python3",
    )
    return nbformat.read(out / "executed.ipynb", as_version=4), out


def outputs_text(cell) -> str:
    """Everything a cell shows, as text: streams, results and displays of every type."""
    return "\n".join(
        o.get("text", "") + "\n".join(str(v) for v in o.get("data", {}).values()) for o in cell.get("outputs", [])
    )


def widget_states(nb, model: str) -> list[dict]:
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [w["state"] for w in state.values() if w["model_name"] == model]


def test_the_ratio_parameter_drives_the_slider_and_the_static_section(executed):
    nb, _ = executed
    assert [s["value"] for s in widget_states(nb, "FloatSliderModel") if s["description"] == "ratio"] == [0.3]
    static = outputs_text(nb.cells[-1])
    assert static.count("<b>crop 30%</b>") == 1 and static.count("<b>crop 30% (zh)</b>") == 1
    assert "20%" not in static


def test_chinese_views_keep_the_space_between_latin_runs(executed):
    nb, _ = executed
    zh = outputs_text(nb.cells[-1]).split("(zh)", 1)[1]
    views = [html.unescape(re.sub(r"<[^>]+>", "", v)) for v in re.findall(r"<li[^>]*>(.*?)</li>", zh)]
    assert len(views) == 5 * 3 and "HPVDNA" not in "".join(views)
    assert sum("HPV DNA" in v for v in views) >= 5


def test_no_output_shows_a_path_of_this_machine(executed):
    nb, out = executed
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert not [o for o in last.outputs if o.output_type == "execute_result"]  # the last cell shows no value
    shown = "\n".join(outputs_text(c) for c in nb.cells if c.cell_type == "code")
    for leak in ("PosixPath", str(PROJECT_ROOT), str(out)):
        assert leak not in shown
