"""Typed parameter sets for notebooks: unknown or ill-typed keys fail before any work starts.

A study declares its parameters as a dataclass deriving from ``Params``; a YAML run file's
``parameters`` mapping is checked against the field types (``int``, ``float``, ``str``,
``bool``, ``list[...]``, ``X | None`` and ``Literal[...]``, whose values are listed in errors).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal

import yaml


class ParameterError(ValueError):
    """A run's parameters do not fit the study's declaration."""


def _check(key: str, value: Any, tp: Any) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _check(key, value, arg)
            except ParameterError as err:
                errors.append(str(err))
        raise ParameterError(" or ".join(errors))
    if origin is Literal:
        if value not in args:
            raise ParameterError(f"parameter '{key}': {value!r} is not one of the allowed values {list(args)}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ParameterError(f"parameter '{key}': expected a list, got {type(value).__name__} {value!r}")
        return [_check(f"{key}[{i}]", v, args[0]) for i, v in enumerate(value)]
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp in (int, float, str, bool) and not (isinstance(value, tp) and not (tp is int and isinstance(value, bool))):
        raise ParameterError(f"parameter '{key}': expected {tp.__name__}, got {type(value).__name__} {value!r}")
    return value


@dataclasses.dataclass
class Params:
    """Base class: ``from_dict`` validates keys and types, then ``validate`` checks values."""

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> "Params":
        values = dict(values or {})
        hints = typing.get_type_hints(cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields)
        if unknown:
            raise ParameterError(f"unknown parameter(s) {unknown} for {cls.__name__}; allowed: {sorted(fields)}")
        params = cls(**{k: _check(k, v, hints[k]) for k, v in values.items()})
        params.validate()
        return params

    def validate(self) -> None:
        """Cross-field and value checks; subclasses raise ParameterError."""

    def check_members(self, keys: tuple[str, ...], allowed, what: str = "row") -> None:
        """Every value of the list parameters ``keys`` must be one of ``allowed`` (names of rows, tasks...)."""
        for key in keys:
            bad = [v for v in getattr(self, key) if v not in allowed]
            if bad:
                raise ParameterError(f"parameter '{key}': unknown {what}(s) {bad}; allowed: {list(allowed)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def load_run_file(path) -> dict[str, Any]:
    """A run file: ``notebook`` (name under notebooks/), optional ``description``, ``parameters``."""
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict) or "notebook" not in data:
        raise ParameterError(f"{path}: a run file is a mapping with a 'notebook' key (and 'parameters')")
    unknown = sorted(set(data) - {"notebook", "description", "parameters"})
    if unknown:
        raise ParameterError(f"{path}: unknown top-level key(s) {unknown}; allowed: notebook, description, parameters")
    return data
