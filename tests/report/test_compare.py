"""python -m kit.compare: two reports' shared rows paired on the items both scored, with the kit's test and
correction, as a table and a self-contained page; a task whose items differ left out in words. The inputs are
committed snapshots (docs/results/simcse_augmentations) and copies of their evidence changed here;
tests/test_notebooks.py compares two smoke runs, tests/faults/test_compare.py what the command refuses."""

import contextlib
import io
import json
import re
import shutil
import zlib
from dataclasses import replace
from html.parser import HTMLParser

import numpy as np
import pytest

from kit.compare import main, pairs, read_report
from kit.evaluation.bootstrap import Spearman
from kit.evaluation.inference import paired_comparison
from kit.evaluation.rows import Evidence
from kit.paths import PROJECT_ROOT, shown

SNAPSHOTS = PROJECT_ROOT / "docs" / "results" / "simcse_augmentations"
DEMO, CONTROL = SNAPSHOTS / "demo.json", SNAPSHOTS / "control_small_mean_600_steps.json"


def run(capsys, *args) -> tuple[int, str, str]:
    """kit.compare's exit code, stdout and stderr."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(tmp_path, name: str, evidence: Evidence, record=DEMO):
    """A snapshot ``tmp_path/name.json`` (a copy of ``record``) with ``evidence`` beside it as its suite family."""
    target = tmp_path / f"{name}.json"
    shutil.copyfile(record, target)
    evidence.save(tmp_path / f"{name}.suite.npz")
    return target


def small(evidence: Evidence, tasks=("biosses-all",), rows=("simcse", "mean")) -> Evidence:
    """``evidence`` on ``tasks`` and ``rows`` alone (fast: few comparisons, no retrieval metric)."""
    kept = [t for t in evidence.tasks if t.name in tasks]
    outputs = {t.name: {r: v for r, v in evidence.outputs[t.name].items() if r in rows} for t in kept}
    return replace(evidence, tasks=[replace(t, within=None) for t in kept], outputs=outputs)


@pytest.fixture(scope="module")
def demo_evidence():
    return Evidence.load(SNAPSHOTS / "demo.suite.npz")


@pytest.fixture(scope="module")
def demo_vs_control(tmp_path_factory):
    """kit.compare on the demo (A) and the control on the stronger start (B), with its page: (stdout, page)."""
    page = tmp_path_factory.mktemp("compare") / "out" / "compare.html"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(DEMO), str(CONTROL), "--html", str(page)]) == 0
    return out.getvalue(), page


def cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def table_lines(out: str) -> dict[tuple[str, str], list[str]]:
    """The terminal table's rows by (task, row)."""
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("task "))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        parts = cells(line)
        rows[(parts[0], parts[1])] = parts
    return rows


def test_the_shared_rows_are_paired_as_a_minus_b_with_an_interval_on_the_shared_tasks(demo_vs_control):
    out, _ = demo_vs_control
    rows = table_lines(out)
    shared = ["simcse", "cls", "cls_whitening", "mean", "mean_whitening", "first_last_avg", "first_last_avg_whitening"]
    assert set(rows) == {(t, r) for t in ("biosses-all", "biosses-test", "rqe-test") for r in shared}
    # each side's score is what its own report says (the record's line), and the difference is A minus B
    for side, path in ((2, DEMO), (3, CONTROL)):
        record = json.loads(path.read_text(encoding="utf-8"))
        line = next(
            x for x in record["metrics"]["suite"]["lines"] if (x["task"], x["row"]) == ("biosses-all", "simcse")
        )
        shown = f"{line['score']:.1f} [{line['score_low']:.1f}, {line['score_high']:.1f}]".replace("-", "−")
        assert rows[("biosses-all", "simcse")][side + 1] == shown
    task, seeds, a, b, difference, p, adjusted = (
        rows[("biosses-all", "simcse")][:1] + rows[("biosses-all", "simcse")][2:]
    )
    assert seeds == "3 / 5" and rows[("biosses-all", "mean")][2] == "fixed"
    estimate, low, high = (float(x.replace("−", "-")) for x in re.findall(r"[+−]\d+\.\d", difference))
    assert estimate == pytest.approx(float(a.split()[0]) - float(b.split()[0]), abs=0.11)
    assert low < estimate < high and high < 0  # the demo's SimCSE is below the stronger start's
    # the kit's own test on the two evidence files, A's seeds and B's as independent runs
    ea, eb = Evidence.load(SNAPSHOTS / "demo.suite.npz"), Evidence.load(SNAPSHOTS / f"{CONTROL.stem}.suite.npz")
    ta = next(t for t in ea.tasks if t.name == "biosses-all")
    stream = (0, zlib.crc32(b"biosses-all"))
    c = paired_comparison(ea.scores(ta, "simcse"), eb.scores(ta, "simcse"), stream, 2000).scaled(100)
    assert difference == f"{c.estimate:+.1f} [{c.low:+.1f}, {c.high:+.1f}]".replace("-", "−")
    # one exploratory family of the 14 comparisons on biosses-all and rqe-test; biosses-test lies within biosses-all
    assert "Holm's correction over the 14 comparisons of the exploratory family" in out
    assert all(rows[("biosses-test", r)][-1] == "within biosses-all" for r in shared)
    assert float(adjusted.rstrip(" *")) >= float(p)
    assert rows[("biosses-all", "first_last_avg_whitening")][-1].endswith("*")
    assert "Exploratory:" in out and "not a finding" in out
    assert "rows only in A: zero_shot, swap_10" in out


class Page(HTMLParser):
    """A page's tags, the addresses it would load or link (``src``, ``href``) and its tables as lists of rows of
    cell texts."""

    def __init__(self, text: str):
        super().__init__()
        self.tags, self.links, self.tables, self._cell = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_the_page_is_written_whole_and_loads_nothing(demo_vs_control):
    out, page = demo_vs_control
    assert out.rstrip().endswith(f"page {shown(page)}")  # relative when the project and the page share a folder
    text = page.read_text(encoding="utf-8")
    parsed = Page(text)
    assert not {"script", "link", "img", "iframe"} & set(parsed.tags) and not parsed.links, parsed.links
    assert "url(" not in text and "@import" not in text and text.rstrip().endswith("</html>")
    assert "Exploratory:" in text
    # the scores and the comparisons as two tables of one row per comparison (each narrower than the terminal's),
    # then the tasks and what each row is in each report
    scores, differences, tasks, rows = parsed.tables
    assert scores[0] == ["task", "row", "seeds A / B", "A score [95%]", "B score [95%]"] and len(scores) == 1 + 21
    assert differences[0] == ["task", "row", "A − B [95%]", "p", "p (holm)", "family interval", "resolves"]
    assert [r[:2] for r in differences] == [r[:2] for r in scores]
    line = next(r for r in differences if r[:2] == ["biosses-all", "simcse"])
    terminal = table_lines(out)[("biosses-all", "simcse")]
    assert line[2:5] == terminal[5:8] and re.fullmatch(r"−\d+\.\d \[−\d+\.\d, [+−]\d+\.\d\]", line[5])
    assert tasks == [
        ["task", "metric", "items"],
        ["biosses-all", "cosine Spearman", "100"],
        ["biosses-test", "cosine Spearman", "20"],
        ["rqe-test", "cosine average precision", "230"],
    ]
    assert ["simcse", "SimCSE (dropout views)", "SimCSE (dropout views)"] in rows and len(rows) == 1 + 7


def test_a_report_against_itself_differs_by_nothing(tmp_path, capsys, demo_evidence):
    a = snapshot(tmp_path, "a", small(demo_evidence, rows=("zero_shot", "simcse", "mean")))
    code, out, err = run(capsys, a, a)
    assert code == 0, err
    rows = table_lines(out)
    assert list(rows) == [("biosses-all", "zero_shot"), ("biosses-all", "simcse"), ("biosses-all", "mean")]
    assert {r[5] for r in rows.values()} == {"+0.0"} and {r[-1] for r in rows.values()} == {"identical outputs"}
    assert "No comparison is tested" in out


def test_a_task_whose_items_differ_is_left_out_in_words_and_the_rest_compared(tmp_path, capsys, demo_evidence):
    a = snapshot(tmp_path, "a", small(demo_evidence, ("biosses-all", "rqe-test")))
    b_evidence = small(demo_evidence, ("biosses-all", "rqe-test"))
    biosses = b_evidence.tasks[0]
    reversed_gold = replace(biosses, statistic=Spearman(biosses.statistic.gold[::-1].copy()))
    b = snapshot(tmp_path, "b", replace(b_evidence, tasks=[reversed_gold, b_evidence.tasks[1]]))
    code, out, err = run(capsys, a, b)
    assert code == 0, err
    assert {task for task, _ in table_lines(out)} == {"rqe-test"}
    assert "biosses-all left out: the gold scores of its items differ between A and B: not the same items" in out


def test_only_the_items_both_reports_kept_are_paired(tmp_path, capsys, demo_evidence):
    """B left the first 10 BIOSSES pairs out (they shared a text with its selection data): the pairs are on the other
    90, the same comparison as A's and B's outputs cut to them."""
    ea = small(demo_evidence)
    task = ea.tasks[0]
    idx = np.arange(10, 100)
    eb = replace(
        ea,
        tasks=[replace(task, kept=idx, statistic=task.statistic.subset(idx))],
        outputs={task.name: {r: v[:, idx] for r, v in ea.outputs[task.name].items()}},
    )
    found, notes = pairs(read_report(snapshot(tmp_path, "a", ea)), read_report(snapshot(tmp_path, "b", eb)))
    assert [(p.row, p.a.items) for p in found] == [("simcse", 90), ("mean", 90)]
    assert notes == ["biosses-all: compared on the 90 items both kept (A kept 100, B 90 of 100)"]
    for p in found:
        assert np.array_equal(p.a.outputs, ea.outputs[task.name][p.row][:, idx])
        assert np.array_equal(p.a.statistic.gold, task.statistic.gold[idx])
        assert p.a.fixed == (p.row == "mean")
    other = replace(eb, tasks=[replace(eb.tasks[0], items=120)])
    found, notes = pairs(read_report(snapshot(tmp_path, "a", ea)), read_report(snapshot(tmp_path, "c", other)))
    assert not found and notes == ["biosses-all left out: A holds 100 items, B 120: not the same items"]


def test_correction_none_leaves_each_p_alone(tmp_path, capsys, demo_evidence):
    a = snapshot(tmp_path, "a", small(demo_evidence))
    b = snapshot(tmp_path, "b", small(Evidence.load(SNAPSHOTS / f"{CONTROL.stem}.suite.npz")), CONTROL)
    holm, none = (run(capsys, a, b, "--correction", c)[1] for c in ("holm", "none"))
    assert "  p (holm)" in holm and "  p (no correction)" in none and "  p (holm)" not in none
    holm, none = table_lines(holm), table_lines(none)
    assert list(none) == list(holm) == [("biosses-all", "simcse"), ("biosses-all", "mean")]
    # row by row (a set of each column's values would not see two rows' p-values swapped, nor an empty table)
    for key, cells_ in none.items():
        assert cells_[7].rstrip(" *") == cells_[6] == holm[key][6], key
    assert holm[("biosses-all", "simcse")][7].rstrip(" *") != holm[("biosses-all", "simcse")][6]


def test_the_item_draws_use_the_seed_the_evidence_drew_with_unless_seed_gives_another(tmp_path, capsys, demo_evidence):
    """Both reports' evidence drew with seed 7: the comparison draws with 7 (the interval differs from seed 0's and
    3's in its first decimal), and with 3 when --seed says so."""
    control = small(Evidence.load(SNAPSHOTS / f"{CONTROL.stem}.suite.npz"))
    demo = small(demo_evidence)
    a = snapshot(tmp_path, "a", replace(demo, seed=7))
    b = snapshot(tmp_path, "b", replace(control, seed=7), CONTROL)
    task = demo.tasks[0]
    for args, seed in (((), 7), (("--seed", "3"), 3)):
        code, out, err = run(capsys, a, b, *args)
        assert code == 0, err
        assert f"item draws, seed {seed})" in out
        stream = (seed, zlib.crc32(task.name.encode()))
        c = paired_comparison(demo.scores(task, "simcse"), control.scores(task, "simcse"), stream)
        c = c.scaled(100)
        expected = f"{c.estimate:+.1f} [{c.low:+.1f}, {c.high:+.1f}]".replace("-", "−")
        assert table_lines(out)[(task.name, "simcse")][5] == expected


def test_runs_both_reports_hold_are_named_as_the_same_trainings(tmp_path, demo_evidence):
    """B repeats A's three SimCSE runs and adds a fourth (one run file at two commits that left training unchanged, with
    a seed added): the comparison is still made, and the note says that the test took shared runs as independent."""
    ea = small(demo_evidence)
    task = ea.tasks[0]
    simcse = ea.outputs[task.name]["simcse"]
    third = simcse[:1] + np.random.default_rng(0).normal(0, 0.01, simcse.shape[1])
    eb = replace(ea, outputs={task.name: {**ea.outputs[task.name], "simcse": np.concatenate([simcse, third])}})
    found, notes = pairs(read_report(snapshot(tmp_path, "a", ea)), read_report(snapshot(tmp_path, "b", eb)))
    assert [(p.row, p.a.seeds, p.b.seeds) for p in found] == [("simcse", 3, 4), ("mean", 1, 1)]
    assert notes == [
        "simcse on biosses-all: 3 of A's 3 runs give one of B's runs' outputs item for item (the same trainings), "
        "which the test takes as independent: its interval is wider than it need be"
    ]
