"""The fault tests of the kit.compare entry point: a missing, damaged or evidence-less report, a bad argument, or two
reports that share nothing to compare are refused before any work with one line on stderr naming the argument and
what is allowed; exit code 2; nothing written; never a traceback."""

import shutil
from dataclasses import replace

import pytest

from kit.compare import main
from kit.evaluation.bootstrap import Spearman
from kit.evaluation.rows import Evidence
from kit.paths import PROJECT_ROOT

SNAPSHOTS = PROJECT_ROOT / "docs" / "results" / "simcse_augmentations"
DEMO = SNAPSHOTS / "demo.json"


def refusal(capsys, *args) -> str:
    """The one line kit.compare prints refusing ``args``, after checking exit code 2, no traceback, no stdout."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2 and not out and "Traceback" not in err, (code, out, err[-2000:])
    (line,) = err.strip().splitlines()
    assert line.startswith("python -m kit.compare: error: "), line
    return line


def snapshot(tmp_path, name: str, evidence: Evidence):
    """A snapshot ``tmp_path/name.json`` (the demo's record) with ``evidence`` beside it as its suite family."""
    target = tmp_path / f"{name}.json"
    shutil.copyfile(DEMO, target)
    evidence.save(tmp_path / f"{name}.suite.npz")
    return target


@pytest.fixture(scope="module")
def biosses_evidence():
    """The demo's evidence on all BIOSSES pairs, for two rows."""
    evidence = Evidence.load(SNAPSHOTS / "demo.suite.npz")
    task = next(t for t in evidence.tasks if t.name == "biosses-all")
    rows = {r: v for r, v in evidence.outputs[task.name].items() if r in ("simcse", "mean")}
    return replace(evidence, tasks=[task], outputs={task.name: rows})


def test_nothing_shared_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, biosses_evidence):
    ev = biosses_evidence
    renamed = replace(ev, outputs={t: {f"other_{r}": v for r, v in rows.items()} for t, rows in ev.outputs.items()})
    page = tmp_path / "page" / "compare.html"
    line = refusal(capsys, snapshot(tmp_path, "a", ev), snapshot(tmp_path, "b", renamed), "--html", page)
    assert "REPORT_A and REPORT_B share no row on a task with the same items, so there is nothing to compare" in line
    assert "A: tasks biosses-all; rows simcse, mean. B: tasks biosses-all; rows other_simcse, other_mean" in line
    assert not page.parent.exists()
    # a shared task whose items differ is named with the reason
    task = ev.tasks[0]
    other = replace(ev, tasks=[replace(task, statistic=Spearman(task.statistic.gold[::-1].copy()))])
    line = refusal(capsys, snapshot(tmp_path, "a", ev), snapshot(tmp_path, "c", other))
    assert line.endswith(
        "biosses-all left out: the gold scores of its items differ between A and B: not the same "
        "items) (--help lists the arguments)"
    )


def test_evidence_drawn_with_two_seeds_needs_seed(tmp_path, capsys, biosses_evidence):
    a, b = snapshot(tmp_path, "a", biosses_evidence), snapshot(tmp_path, "b", replace(biosses_evidence, seed=5))
    line = refusal(capsys, a, b)
    assert (
        "the two reports' evidence drew its items with different seeds (A's suite with seed 0, B's suite with " in line
    )
    assert "seed 5): give --seed" in line
    assert main([str(a), str(b), "--seed", "5"]) == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["{tmp}/nope", DEMO], "argument REPORT_A: {tmp}/nope: no such file or folder; give a report folder"),
        ([DEMO, SNAPSHOTS / "cpu.json"], "simcse_augmentations/cpu.json: no evidence (cpu.<family>.npz beside it)"),
        ([DEMO, SNAPSHOTS], "argument REPORT_B: {snapshots}: a folder without results.json"),
        ([DEMO, SNAPSHOTS / "demo.suite.npz"], "demo.suite.npz: neither a folder nor a .json file"),
        ([DEMO, PROJECT_ROOT / "docs/results/evaluation/minilm-en.json"], "minilm-en.json: a kit.evaluate output"),
        ([DEMO, "{tmp}/damaged.json"], "argument REPORT_B: {tmp}/damaged.json: not a report's record"),
        ([DEMO], "the following arguments are required: REPORT_B"),
        ([DEMO, DEMO, "--correction", "bonferroni"], "argument --correction: invalid choice: 'bonferroni'"),
        ([DEMO, DEMO, "--confidence", "1"], "argument --confidence: must be a number in (0, 1), got 1"),
        ([DEMO, DEMO, "--seed", "-1"], "argument --seed: must be an integer >= 0, got -1"),
        ([DEMO, DEMO, "--html", "{tmp}"], "argument --html: {tmp} is a folder; give the page's file name"),
        ([DEMO, DEMO, "--html", "/proc/page.html"], "argument --html: /proc/page.html: /proc is not writable"),
    ],
    ids=[
        "missing path",
        "snapshot without evidence",
        "folder without a record",
        "evidence file",
        "kit.evaluate snapshot",
        "damaged record",
        "one report",
        "correction",
        "confidence",
        "seed",
        "html a folder",
        "html not writable",
    ],
)
def test_each_bad_argument_is_one_line_naming_it_and_nothing_is_written(tmp_path, capsys, args, message):
    (tmp_path / "damaged.json").write_text("{not json", encoding="utf-8")
    shutil.copyfile(SNAPSHOTS / "demo.suite.npz", tmp_path / "damaged.suite.npz")
    before = sorted(tmp_path.rglob("*"))
    line = refusal(capsys, *(str(a).replace("{tmp}", str(tmp_path)) for a in args))
    assert message.replace("{tmp}", str(tmp_path)).replace("{snapshots}", str(SNAPSHOTS)) in line, line
    assert sorted(tmp_path.rglob("*")) == before
