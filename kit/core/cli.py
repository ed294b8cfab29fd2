"""The command-line contract of every entry point (``kit.batch``, ``kit.evaluate``, ``kit.pretrain``).

Arguments and the files they name are checked before any work starts. A bad one is refused with one
line on stderr that names the argument or file and what is allowed, exit code 2, and nothing written.
``Parser`` is argparse's parser with that one-line error; the ``type=`` functions below check a value
where argparse reads it, so that the message names the argument (``argument --steps: must be an
integer >= 1, got 0``).
"""

from __future__ import annotations

import _thread
import argparse
import dataclasses
import math
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from kit.core.settings import bound_words


def interrupts_outside_finalizers() -> None:
    """A Ctrl-C that lands where Python cannot raise it (a finalizer, ``__del__``, or a weakref callback: Python
    prints "Exception ignored in ..." and drops it, and the run went on to finish as if never interrupted, as
    ``kit.evaluate`` did when its interrupt landed in a finalizer of the ``regex`` package during garbage collection)
    is raised again in the main thread 10 ms later, outside that code (``sys.unraisablehook`` starts a daemon
    timer that calls ``_thread.interrupt_main``; called in the hook itself, the interrupt lands in the hook and is
    dropped again); every other unraisable exception goes to the hook there was."""
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            timer = threading.Timer(0.01, _thread.interrupt_main)
            timer.daemon = True
            timer.start()
        else:
            previous(unraisable)

    sys.unraisablehook = hook


class Parser(argparse.ArgumentParser):
    """argparse's parser, with errors as one line: ``prog: error: MESSAGE (--help lists the arguments)``,
    exit code 2 (argparse prints its usage first, over several lines)."""

    def error(self, message: str):
        message = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {message} (--help lists the arguments)\n")


def integer(minimum: int, maximum: float = math.inf) -> Callable[[str], int]:
    """A ``type=`` for an integer of at least ``minimum`` and at most ``maximum``."""
    allowed = f">= {minimum}" if maximum == math.inf else f"in {minimum}..{maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {allowed}, got {text!r}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be an integer {allowed}, got {value}")
        return value

    parse.__name__ = f"integer {allowed}"
    return parse


def number(low: float, high: float = math.inf, *, include_low: bool = False) -> Callable[[str], float]:
    """A ``type=`` for a finite number above ``low`` (at least ``low`` with ``include_low``) and below ``high``."""
    if high < math.inf:
        allowed = f"in {'[' if include_low else '('}{low:g}, {high:g})"
    else:
        allowed = f"{'>=' if include_low else '>'} {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {allowed}, got {text!r}") from None
        above = low <= value if include_low else low < value
        if not (above and value < high and math.isfinite(value)):  # NaN fails too
            raise argparse.ArgumentTypeError(f"must be a number {allowed}, got {text}")
        return value

    parse.__name__ = f"number {allowed}"
    return parse


def setting_argument(field: dataclasses.Field, hint: type) -> dict:
    """``add_argument`` keywords for a field declared with ``kit.core.settings.setting``: its bounds become the
    argument's ``type`` check (``available`` too), its help, bounds and default the argument's help."""
    meta = field.metadata
    if hint is int:
        low = meta["min"] if meta["min"] is not None else (meta["gt"] + 1 if meta["gt"] is not None else -math.inf)
        high = meta["max"] if meta["max"] is not None else (meta["lt"] - 1 if meta["lt"] is not None else math.inf)
        kind = integer(low, high)
    elif hint is float:
        include_low = meta["min"] is not None
        low = meta["min"] if include_low else (meta["gt"] if meta["gt"] is not None else -math.inf)
        high = meta["max"] if meta["max"] is not None else (meta["lt"] if meta["lt"] is not None else math.inf)
        kind = number(low, high, include_low=include_low)
    elif meta.get("available") is not None:
        kind = checked(meta["available"])
    else:
        kind = str
    allowed = f"; {bound_words(meta)}" if bound_words(meta) else ""
    return {"type": kind, "default": field.default, "help": f"{meta['help']}{allowed}; default {field.default}"}


def checked(check: Callable[[str], None]) -> Callable[[str], str]:
    """A ``type=`` from a check that raises ``ValueError``, ``OSError`` or ``ImportError`` (an alias's package is
    missing) when it refuses a value: a setting's ``available``, ``check_device``, ``check_available``."""

    def parse(text: str) -> str:
        try:
            check(text)
        except (ValueError, OSError, ImportError) as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return text

    parse.__name__ = check.__name__
    return parse


def output_folder(text: str) -> str:
    """A ``type=`` for an output folder: one that exists, or that can be made in its nearest existing parent;
    either one where this process can write (tried with an unnamed temporary file: permission bits do not
    bind root, and /proc refuses new files whatever they say). Nothing is left behind."""
    path = Path(text)
    try:  # lexists: a link that cannot be followed (a loop, a missing target) is found, not walked past; a parent
        # this user cannot search makes lexists False all the way up, and then the root is found not writable
        existing = next(p for p in (path.absolute(), *path.absolute().parents) if os.path.lexists(p))
        followed = existing.exists()
    except OSError as err:  # a parent this user cannot search
        raise argparse.ArgumentTypeError(f"{path}: {err.strerror}; give a folder you can write in") from None
    if not followed:
        where = path if existing == path.absolute() else f"{path} is under {existing}, which"
        raise argparse.ArgumentTypeError(
            f"{where} is a symbolic link that cannot be followed (a loop, or its target is missing); "
            "give a folder you can write in"
        )
    if existing.is_dir() and _writable(existing):
        return text
    what = "not writable by this user" if existing.is_dir() else "a file"
    where = f"{path} is {what}" if existing == path.absolute() else f"{path} is under {existing}, which is {what}"
    raise argparse.ArgumentTypeError(f"{where}; give a folder you can write in (it is created if missing)")


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (an unnamed temporary file, gone when closed)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False
