"""One registration style for every extension point: augmenters, datasets, evaluation tasks and studies.

A ``Registry`` holds the named things of one kind. A thing registers itself where it is declared, by its
``name``: ``REGISTRY.add(thing)`` for an object (a dataset's ``DatasetSpec``, a suite ``Task``, a study's
``StudyEntry``), ``@REGISTRY.add`` on a class (an augmenter); a second thing of the same name is refused.
``REGISTRY[name]`` looks one up and, for an unknown name, raises ``KeyError`` naming the kind and every
choice; iteration gives the names in the order they were registered, or by an ``order`` key (stable: things
of one key keep their registration order), for things registered by several modules in any import order.
Like lm-evaluation-harness's
registry (``lm_eval/api/registry.py``): adding an augmenter, a dataset, a task or a study means declaring
it and registering it, in one place, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Named things of one ``kind`` (a word for messages: "augmenter", "dataset", "task", "notebook")."""

    def __init__(self, kind: str, order: Callable[[T], Any] | None = None):
        self.kind, self.order = kind, order
        self._things: dict[str, T] = {}

    def add(self, thing: T) -> T:
        """Register ``thing`` under its ``name`` and return it (so that it can decorate a class)."""
        name = thing.name
        if name in self._things:
            raise ValueError(f"a {self.kind} named '{name}' is registered already")
        self._things[name] = thing
        if self.order is not None:
            self._things = dict(sorted(self._things.items(), key=lambda item: self.order(item[1])))
        return thing

    def __getitem__(self, name: str) -> T:
        try:
            return self._things[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} '{name}'; {self.kind}s: {', '.join(self._things)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._things)

    def __len__(self) -> int:
        return len(self._things)
