"""The batch's console lines: counts, names, elapsed and remaining time, one plain line per event."""

import io
import re

from kit.report.progress import BatchProgress, duration


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_durations_read_as_a_person_would_write_them():
    assert [duration(s) for s in (4.4, 59.6, 725, 7380)] == ["4s", "1m00s", "12m05s", "2h03m"]


def test_remaining_time_is_the_trainings_and_reports_left_at_their_mean_cost_and_cached_runs_cost_nothing():
    out = io.StringIO()
    p = BatchProgress(runs=2, trainings=4, stream=out)
    p.run_started(1, "simcse_augmentations/demo", 3, "params/simcse_augmentations/demo.yaml")
    p.training_done("simcse_augmentations/demo", "simcse seed 0", 60.0, cached=False)
    assert lines(out)[-1].endswith("remaining about 3m00s + the reports (not timed yet)")  # 3 trainings left at 60 s
    p.training_done("simcse_augmentations/demo", "simcse seed 1", 0.2, cached=True)
    p.training_done("simcse_augmentations/demo", "crop_10 seed 0", 120.0, cached=False)
    p.run_finished("simcse_augmentations/demo", 200.0, 20.0, "BIOSSES Spearman 80.00", "reports/x/report.html")
    assert p.remaining() == f"remaining about {duration(90 + 20)}"  # 1 training at 90 s, 1 report at 20 s
    text = lines(out)
    assert re.fullmatch(
        r"\[kit\.batch \d+:\d\d:\d\d\] run file 1/2 simcse_augmentations/demo: 3 trainings planned .*", text[0]
    )
    assert "training 2/4 simcse_augmentations/demo simcse seed 1: cached" in text[2]
    p.training_beat("simcse_augmentations/demo", "swap_10 seed 0: 130/200 (65%) in 5m00s; about 2m42s more")
    assert lines(out)[-1].endswith(
        "] training 4/4 simcse_augmentations/demo swap_10 seed 0: 130/200 (65%) in 5m00s; about 2m42s more"
    )  # the training under way is the one after those done
    assert (
        "run 1/2 simcse_augmentations/demo finished in 3m20s: BIOSSES Spearman 80.00; report reports/x/report.html"
        in text[-1]
    )
    assert "\r" not in out.getvalue()


def test_a_failed_training_skips_the_rest_of_its_file_in_the_counts():
    out = io.StringIO()
    p = BatchProgress(runs=1, trainings=5, stream=out)
    p.training_done("s/r", "a seed 0", 10.0, cached=False)
    p.training_failed("s/r", "b seed 0", "RuntimeError: out of memory")
    p.trainings_skipped(3)  # the failed one and the two after it
    assert p.trainings_done == 4 and "FAILED: RuntimeError: out of memory" in lines(out)[-1]
    p.run_failed("s/r", 30.0, 5.0, "RuntimeError: out of memory (notebook cell In [7])", "reports/s/r/error.log")
    assert p.remaining() == "remaining about 10s"  # one training left, at 10 s
    p.summary(failures=1)
    assert re.search(r"\] 1 run in \d+s, 1 failed$", lines(out)[-1])


def test_training_free_rows_are_timed_apart_from_the_trainings():
    # The demo's order: a training-free row, trainings of minutes, then six more training-free rows. One mean over
    # all of them said "remaining about 1m16s" after the first row where about 13 minutes were left.
    out = io.StringIO()
    p = BatchProgress(runs=1, trainings=6, free=3, stream=out)
    p.training_done("s/r", "zero_shot seed 0", 6.0, cached=False, trains=False)
    assert lines(out)[-1].endswith("remaining about 12s + the trainings and the reports (not timed yet)")
    p.training_done("s/r", "simcse seed 0", 144.0, cached=False)
    assert p.remaining() == f"remaining about {duration(2 * 144 + 2 * 6)} + the reports (not timed yet)"
    p.training_done("s/r", "cls seed 0", 4.0, cached=False, trains=False)
    p.training_done("s/r", "swap_10 seed 0", 0.1, cached=True)  # cached: done, and no part of a mean
    assert p.remaining() == f"remaining about {duration(144 + 5)} + the reports (not timed yet)"
    fresh = BatchProgress(runs=1, trainings=3, free=1)
    assert fresh.remaining() == "remaining: the trainings, the training-free rows and the reports are not timed yet"
    p.training_failed("s/r", "swap_10 seed 1", "RuntimeError: out of memory")
    p.trainings_skipped(2, free=1)  # the failed training and the training-free row after it
    assert (p.trainings_done, p.free_done) == (6, 3)
    assert p.remaining() == "remaining: the reports are not timed yet"
