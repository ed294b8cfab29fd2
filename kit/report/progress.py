"""What ``kit.batch`` prints while it works: one plain line per event, stamped with the elapsed time, so the
console and a CI log read the same (no bars, no carriage returns)::

    [kit.batch 0:00:04] run file 1/2 simcse_augmentations/demo: 14 trainings planned (params/.../demo.yaml)
    [kit.batch 0:01:02] training 1/16 simcse_augmentations/demo simcse seed 0: 58s; remaining about 14m
    [kit.batch 0:01:02] training 2/16 simcse_augmentations/demo minilm seed 0: cached; remaining about 13m
    [kit.batch 0:06:02] training 3/16 simcse_augmentations/demo swap_10 seed 0: 130/200 (65%) in 5m00s; about 2m42s more
    [kit.batch 0:15:40] run 1/2 simcse_augmentations/demo finished in 15m36s: BIOSSES Spearman x100 83.14;
                        report reports/simcse_augmentations/demo/report.html

The remaining time is the trainings left times the mean time of the trainings computed so far, the
training-free rows left (a study's ``run_trains`` is False: an untrained start pooled and scored, seconds where a
training takes minutes) times theirs, and the reports left times the mean time of the reports rendered so far (a
notebook's own time, after its trainings), divided by the tasks that run at once (Ray); cached trainings cost
nothing and are not counted in the means. Until one of each has finished, the line says which part is not timed
yet.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from kit.core.progress import duration


def listed(parts: list[str]) -> str:
    """``a``, ``a and the b``, ``a, the b and the c``."""
    return ", the ".join(parts[:-1]) + " and the " * (len(parts) > 1) + parts[-1] if parts else ""


@dataclass
class BatchProgress:
    """Counts and lines of a batch of ``runs`` run files holding ``trainings`` planned trainings in all, ``free`` of
    them training-free rows."""

    runs: int
    trainings: int
    free: int = 0  # how many of the trainings are training-free rows (timed apart: seconds, not minutes)
    stream: TextIO | None = None  # None: sys.stdout at the time of each line
    started: float = field(default_factory=time.monotonic)
    trainings_done: int = 0
    free_done: int = 0
    runs_done: int = 0
    training_seconds: list[float] = field(default_factory=list)  # trainings computed (not cached) so far
    free_seconds: list[float] = field(default_factory=list)  # training-free rows computed so far
    report_seconds: list[float] = field(default_factory=list)
    at_once: int = 1  # tasks running at once (kit.batch --jobs / --ray): the work left is shared out over them

    def line(self, text: str) -> None:
        elapsed = round(time.monotonic() - self.started)
        print(
            f"[kit.batch {elapsed // 3600}:{elapsed % 3600 // 60:02d}:{elapsed % 60:02d}] {text}",
            file=self.stream or sys.stdout,
            flush=True,
        )

    def remaining(self) -> str:
        """``remaining about 14m``, or the part that is not timed yet."""
        free_left = self.free - self.free_done
        parts = [
            (self.trainings - self.trainings_done - free_left, self.training_seconds, "trainings"),
            (free_left, self.free_seconds, "training-free rows"),
            (self.runs - self.runs_done, self.report_seconds, "reports"),
        ]
        known = sum(left * statistics.mean(seconds) for left, seconds, _ in parts if left and seconds) / self.at_once
        untimed = listed([what for left, seconds, what in parts if left and not seconds])
        if not untimed:
            return f"remaining about {duration(known)}"
        if known:
            return f"remaining about {duration(known)} + the {untimed} (not timed yet)"
        return f"remaining: the {untimed} are not timed yet"

    def run_started(self, index: int, name: str, planned: int, file: str, broken: str | None = None) -> None:
        """A run file's work begins; ``broken``: why its study cannot be built (its notebook reports it)."""
        what = f"{planned} training{'s' * (planned != 1)} planned" if planned else "no training"
        self.line(f"run file {index}/{self.runs} {name}: {what} ({file})")
        if broken:
            self.line(f"{name}: its study cannot be built ({broken}); its notebook reports it in full")

    def training_done(self, name: str, label: str, seconds: float, cached: bool, trains: bool = True) -> None:
        """A planned run is computed (or found ``cached``); ``trains``: False for a training-free row."""
        self.trainings_done += 1
        self.free_done += not trains
        if not cached:
            (self.training_seconds if trains else self.free_seconds).append(seconds)
        took = "cached" if cached else duration(seconds)
        self.line(f"training {self.trainings_done}/{self.trainings} {name} {label}: {took}; {self.remaining()}")

    def training_beat(self, name: str, text: str) -> None:
        """The training under way says how far it is (``kit.core.progress.heartbeat``'s ``text``)."""
        self.line(f"training {self.trainings_done + 1}/{self.trainings} {name} {text}")

    def training_failed(self, name: str, label: str, reason: str) -> None:
        self.line(f"training {name} {label} FAILED: {reason} (the notebook meets it again and reports it in full)")

    def trainings_skipped(self, count: int, free: int = 0) -> None:
        """Trainings of a run file left to its notebook after one failed (its report fails with the error), ``free``
        of them training-free rows."""
        self.trainings_done += count
        self.free_done += free

    def run_finished(self, name: str, seconds: float, report_seconds: float, headline: str, report: str) -> None:
        """A run file's report is written: ``seconds`` since its run started, ``report_seconds`` of them
        in its notebook (the rest trained its planned runs)."""
        self.runs_done += 1
        self.report_seconds.append(report_seconds)
        self.line(
            f"run {self.runs_done}/{self.runs} {name} finished in {duration(seconds)}: {headline}; report {report}"
        )

    def run_failed(self, name: str, seconds: float, report_seconds: float, reason: str, log: str | None) -> None:
        self.runs_done += 1
        self.report_seconds.append(report_seconds)
        self.line(
            f"run {self.runs_done}/{self.runs} {name} FAILED after {duration(seconds)}: {reason}"
            + (f"; full log {log}" if log else "")
        )

    def summary(self, failures: int) -> None:
        failed = f", {failures} failed" if failures else ""
        self.line(f"{self.runs} run{'s' * (self.runs != 1)} in {duration(time.monotonic() - self.started)}{failed}")
