"""The benchmarks run in --quick mode so they cannot rot; full runs are made by hand (make bench)."""

import subprocess
import sys

import pytest

from kit.paths import PROJECT_ROOT


@pytest.mark.parametrize(
    "script, expect",
    [
        ("augment.py", "ratio (target >= 10x)"),
        ("train_step.py", "ratio to minimal"),
        ("encode.py", "speed-up over sentence-transformers (target >= 1.5, exact)"),
        ("memory.py", "peak RSS of its largest process"),
        ("evaluate.py", "speed-up over sentence-transformers' encode alone"),
        ("cluster.py", "overhead per task"),
        ("bootstrap.py", "| average precision | 1,935 | 50 x 5 |"),
        ("calibration.py", "largest false rate above alpha + 2 Monte-Carlo errors"),
        ("teacher_selection.py", "| student: bi-encoder from tiny-random-bert |"),
    ],
)
def test_benchmark_quick_mode(script, expect):
    out = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "benchmarks" / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert expect in out.stdout
