"""Settings declared once: a dataclass field made with ``setting(default, help, ...)`` carries its help text
and the values it allows, so that one declaration serves a study's parameters (``kit.params``), a training
run's configuration (``kit.core.config.TrainConfig``) and a command line (``kit.pretrain``).

``check_settings`` holds an object to its declaration (bounds, allowed values, list rules), naming the
setting that breaks it; ``settings_from`` builds one settings class from another object's values of the
same names (a study's parameters -> a run's configuration), so no field is copied by hand; ``redefault``
declares a field again with another default and the same help and rules.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import reprlib
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ParameterError(ValueError):
    """A setting (a study's parameter, a run's configuration) outside its declaration; the message names it."""

    def _render_traceback_(self) -> list[str]:
        """IPython's hook: a notebook cell (papermill's run included) shows the one line, not a traceback."""
        return [f"{type(self).__name__}: {self}"]


def setting(
    default,
    help: str,
    *,
    min=None,
    max=None,
    gt=None,
    lt=None,
    choices=None,
    nonempty: bool = False,
    unique: bool = False,
    max_items: int | None = None,
    available: Callable[[Any], None] | None = None,
):
    """A documented setting (a dataclass field). ``min``/``max`` (inclusive), ``gt``/``lt`` (exclusive) and
    ``choices`` constrain the value, or each item of a list; a float (or float item) must be finite;
    ``nonempty``, ``unique`` and ``max_items`` constrain a list. ``available(value)`` raises when the value
    names something (a model) that cannot be loaded here; ``check_resources`` calls it. A list default is
    copied for every instance."""
    metadata = {
        "help": help,
        "min": min,
        "max": max,
        "gt": gt,
        "lt": lt,
        "nonempty": nonempty,
        "unique": unique,
        "max_items": max_items,
        "choices": None if choices is None else tuple(choices),
        "available": available,
    }
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxdict = 8
_REPR.maxlevel = 3
short_repr = _REPR.repr
"""A value as error messages quote it: at most a few dozen characters, whatever its size."""


def check_constraints(key: str, value: Any, meta: dict) -> None:
    """Raise ``ParameterError`` naming ``key`` when ``value`` breaks its declaration ``meta`` (``setting``); the work
    is linear in the length of a list."""
    if isinstance(value, list):
        if meta["nonempty"] and not value:
            raise ParameterError(f"parameter '{key}': give at least one value")
        if meta.get("max_items") is not None and len(value) > meta["max_items"]:
            raise ParameterError(f"parameter '{key}': give at most {meta['max_items']} values, got {len(value):,}")
        if meta["unique"]:
            counts = Counter(json.dumps(v, sort_keys=True) for v in value)
            repeated = sorted(v for v, n in counts.items() if n > 1)
            if repeated:
                shown = ", ".join(repeated[:8]) + (f" and {len(repeated) - 8:,} more" if len(repeated) > 8 else "")
                raise ParameterError(f"parameter '{key}': value(s) {shown} given more than once")
    items = value if isinstance(value, list) else [value]
    unknown = [v for v in items if meta["choices"] is not None and v is not None and v not in meta["choices"]]
    if unknown:
        raise ParameterError(
            f"parameter '{key}': unknown value(s) {short_repr(unknown)}; allowed: {list(meta['choices'])}"
        )
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):  # None, text and choices have no bounds
            continue
        if not math.isfinite(v):  # NaN passes every comparison below; infinity every "above"
            must = f"must be a finite number {bound_words(meta)}".rstrip()
            raise ParameterError(f"parameter '{key}': {must}, got {short_repr(value)}")
        for bound, fails in (
            ("min", lambda b: v < b),
            ("max", lambda b: v > b),
            ("gt", lambda b: v <= b),
            ("lt", lambda b: v >= b),
        ):
            if meta[bound] is not None and fails(meta[bound]):
                raise ParameterError(f"parameter '{key}': must be {bound_words(meta)}, got {short_repr(value)}")


def bound_words(meta: dict) -> str:
    """The value constraints in words, without '=' (papermill reads '=' in a comment as a second assignment)."""
    words = [
        f"{name} {meta[bound]}"
        for bound, name in (("min", "at least"), ("gt", "above"), ("max", "at most"), ("lt", "below"))
        if meta[bound] is not None
    ]
    return " and ".join(words)


def check_settings(obj) -> None:
    """Raise ``ParameterError`` naming the first field of the dataclass ``obj`` whose value breaks its declaration."""
    for f in dataclasses.fields(obj):
        if "help" in f.metadata:
            check_constraints(f.name, getattr(obj, f.name), f.metadata)


def settings_from(source: object, cls: type[T], **values) -> T:
    """A ``cls`` (a settings dataclass) from the attributes of ``source`` named as its fields, then ``values``."""
    taken = {f.name: getattr(source, f.name) for f in dataclasses.fields(cls) if f.init and hasattr(source, f.name)}
    return cls(**{**taken, **values})


def redefault(cls: type, name: str, default):
    """The field ``name`` of the dataclass ``cls`` declared again with another default (same help and rules)."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    return setting(default, **{k: v for k, v in field.metadata.items()})
