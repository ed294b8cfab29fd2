"""``kit.core.cli``'s interrupt handling, in a process of its own (it installs signal handlers)."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import os, signal, time
{install}

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # the interrupt lands inside a finalizer
        time.sleep(0.05)

Finalized()  # collected at once: its __del__ runs
time.sleep(2)
print("finished as if never interrupted")
"""


def run(install: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM.format(install=install)], capture_output=True, text=True, timeout=60
    )


def test_an_interrupt_that_lands_in_a_finalizer_is_raised_again_outside_it():
    """Python drops an exception raised in a ``__del__`` ("Exception ignored in"), so a Ctrl-C landing there was lost
    and ``kit.evaluate`` finished and exited 0; with the hook it is raised 10 ms later, outside."""
    plain = run("")
    assert "finished as if never interrupted" in plain.stdout  # what the handler is for: Python drops it
    handled = run("from kit.core.cli import interrupts_outside_finalizers; interrupts_outside_finalizers()")
    assert "finished as if never interrupted" not in handled.stdout
    assert handled.stderr.rstrip().endswith("KeyboardInterrupt"), handled.stderr[-500:]
