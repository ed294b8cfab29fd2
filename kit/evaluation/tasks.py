"""The evaluation suite: every declared task (the ``TASKS`` registry, filled by the task types' modules, in
suite order) and the groups the command line accepts. An optional task (``Task.optional``: too large for the
default suite) is in no group: ``NAMED_ONLY``, scored only when named."""

from __future__ import annotations

from collections.abc import Iterable

from kit.evaluation import pair_classification, probes, retrieval, sts  # noqa: F401  (importing registers their tasks)
from kit.evaluation.task import TASKS, TYPES, Task


def dev_split(name: str) -> str | None:
    """The registered selection split of task ``name`` (``<name>-dev``: ``doid-definition-name-dev``), None when it
    has none: what checkpoint selection defaults to where a study's control is tested on ``name``."""
    return f"{name}-dev" if f"{name}-dev" in TASKS else None


NAMED_ONLY: tuple[str, ...] = tuple(name for name in TASKS if TASKS[name].optional)
"""The optional tasks: in no group, scored only when named."""
_GROUPED = [name for name in TASKS if name not in NAMED_ONLY]
GROUPS: dict[str, tuple[str, ...]] = {
    "all": tuple(_GROUPED),
    "en": tuple(name for name in _GROUPED if TASKS[name].language == "en"),
    "zh": tuple(name for name in _GROUPED if TASKS[name].language == "zh"),
    **{kind: tuple(name for name in _GROUPED if TASKS[name].type == kind) for kind in TYPES},
}


def select(names: Iterable[str] | None = None) -> list[Task]:
    """Tasks by name or group (``all``, ``en``, ``zh`` or a task type: ``GROUPS``), in suite order and without
    repeats; None: ``all``, every task but the optional ones (``NAMED_ONLY``). An unknown name raises ``KeyError``
    listing the choices."""
    chosen: set[str] = set()
    for name in names or ["all"]:
        if name in GROUPS:
            chosen.update(GROUPS[name])
        elif name in TASKS:
            chosen.add(name)
        else:
            raise KeyError(f"unknown task '{name}'; tasks: {', '.join(TASKS)}; groups: {', '.join(GROUPS)}")
    return [task for name, task in TASKS.items() if name in chosen]


def split_seen(tasks: Iterable[Task], study: str) -> tuple[list[Task], list[Task]]:
    """(tasks for ``study``'s headline, tasks whose data ``study`` trains on: reported apart)."""
    tasks = list(tasks)
    return [t for t in tasks if not t.seen(study)], [t for t in tasks if t.seen(study)]
