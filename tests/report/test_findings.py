"""What a run finds: its primary comparison first, then the secondary comparisons of its corrected families that
survive, on their headline tasks only."""

import json

from kit.report.index import findings, headline, write_index


def line(task, row, baseline, difference, low, high, significant):
    return {
        "task": task,
        "row": row,
        "method": row.upper(),
        "baseline": baseline,
        "difference": difference,
        "family_low": low,
        "family_high": high,
        "significant": significant,
    }


def family(lines, headline=("a",), correction="holm"):
    base = [{"task": t, "row": "base", "method": "BASE", "baseline": None} for t in {x["task"] for x in lines}]
    return {"correction": correction, "groups": {"headline tasks": list(headline)}, "lines": base + lines}


def test_survivors_on_headline_tasks_are_named_with_their_family_interval_and_the_rest_counted():
    suite = family(
        [
            line("a", "x", "base", 2.0, 0.5, 3.5, True),
            line("a", "y", "base", -1.0, -3.0, 1.0, False),
            line("apart", "x", "base", 9.0, 8.0, 10.0, True),  # not a headline task: neither named nor counted
        ],
        headline=("a",),
    )
    found = findings({"metrics": {"suite": suite, "mean": {"x": 1.0}}})
    assert (
        found
        == "1 of 2 secondary comparisons is significant after Holm (family interval): X − BASE on a: +2.0 [+0.5, +3.5]"
    )


def test_none_surviving_says_how_many_were_made_and_two_families_are_said_so():
    one = family([line("a", "x", "base", 1.0, -1.0, 3.0, False)])
    two = family([line("b", "x", "base", 1.0, -1.0, 3.0, False)], headline=("b",))
    assert findings({"metrics": {"suite": one}}) == "none of 1 secondary comparison is significant after Holm"
    assert (
        findings({"metrics": {"suite": one, "rouge": two}})
        == "none of 2 secondary comparisons in 2 families, each corrected apart, is significant after Holm"
    )
    bh = family([line("b", "x", "base", 1.0, -1.0, 3.0, False)], headline=("b",), correction="bh")
    assert findings({"metrics": {"suite": one, "rouge": bh}}).endswith("after each family's correction")
    assert findings(
        {"metrics": {"suite": family([line("a", "x", "base", 1, 0.1, 2, True)], correction="none")}}
    ).endswith("significant without correction (family interval): X − BASE on a: +1.0 [+0.1, +2.0]")
    assert findings({"metrics": {"mean": {}}}) == "" and findings({}) == ""


def test_a_family_with_no_comparison_on_a_headline_task_is_not_counted():
    one = family([line("a", "x", "base", 1.0, -1.0, 3.0, False)])
    apart = family([line("b", "x", "base", 1.0, -1.0, 3.0, False)], headline=(), correction="bh")
    assert (
        findings({"metrics": {"suite": one, "rouge": apart}})
        == "none of 1 secondary comparison is significant after Holm"
    )
    assert findings({"metrics": {"rouge": apart}}) == ""


def test_a_holm_rejection_whose_family_interval_reaches_zero_says_so():
    suite = family([line("a", "x", "base", 1.0, -0.1, 2.0, True)])
    assert findings({"metrics": {"suite": suite}}).endswith(
        "X − BASE on a: +1.0 [−0.1, +2.0] (Holm's step-down rejects where this interval reaches zero)"
    )
    bh = family([line("a", "x", "base", 1.0, -0.1, 2.0, True)], correction="bh")
    assert "Holm" not in findings({"metrics": {"suite": bh}})  # BH's interval is Benjamini-Yekutieli's, no step-down


def test_beyond_the_shown_survivors_the_rest_are_counted():
    suite = family([line("a", f"r{k}", "base", 1.0, 0.1, 2.0, True) for k in range(5)])
    found = findings({"metrics": {"suite": suite}}, shown=2)
    assert found.startswith("5 of 5 secondary comparisons are significant") and found.endswith("; and 3 more")
    assert found.count(" on a: ") == 2


def test_a_record_whose_family_is_damaged_is_listed_as_unreadable_and_its_line_says_why(tmp_path, capsys):
    suite = {"correction": "holm", "groups": {"headline tasks": ["a"]}, "lines": [{"row": "x", "baseline": "b"}]}
    damaged = {"headline": {"name": "h", "value": 1.0}, "metrics": {"suite": suite}}
    run = tmp_path / "reports" / "simcse_augmentations" / "run"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(damaged), encoding="utf-8")
    (run / "report.html").write_text("<html></html>", encoding="utf-8")  # a finished report: its page written
    assert headline(run).startswith("h 1.00; its comparisons are unreadable (KeyError('task')")
    index = write_index(tmp_path / "reports").read_text(encoding="utf-8")
    assert "simcse_augmentations/run" in index and "unreadable" in index
    assert "results.json is unreadable" in capsys.readouterr().err


def test_the_primary_comes_first_with_its_own_interval_and_a_null_its_bound():
    primary = {**line("a", "p", "base", 1.5, -2.0, 5.0, False), "role": "primary", "low": -0.5, "high": 3.5, "p": 0.2}
    suite = family([primary, line("a", "x", "base", 1.0, -1.0, 3.0, False)])
    found = findings({"metrics": {"suite": suite}})
    assert found == (
        "primary P − BASE on a: +1.5 [−0.5, +3.5], p = 0.20, not significant (rules out gains above 3.5); "
        "none of 1 secondary comparison is significant after Holm"
    )
    untested = {**primary, "reason": "a trained row with one seed: its run-to-run variance is not measured"}
    assert findings({"metrics": {"suite": family([untested])}}).startswith(
        "primary P − BASE on a: not tested (a trained"
    )
