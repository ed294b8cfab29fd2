"""The folder tree is the architecture: which part of the kit may import which, no study importing another,
no module reading another object's private attributes, and the code style (ruff) clean."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from kit.paths import PROJECT_ROOT

KIT = PROJECT_ROOT / "kit"

# What each part may import from the kit (itself always). kit.params reaches kit.core lazily, for its model
# and device checks, kit.data for the BIOSSES path every English study declares and kit.evaluation for the
# task names the suite parameters accept; the studies build on
# everything shared, never on kit.batch or on each other.
ALLOWED = {
    "kit": set(),  # the package's __init__: a docstring and the version
    "kit.paths": set(),
    "kit.registry": set(),  # the one registration style of augmenters, datasets, tasks and studies
    "kit.data": {"kit.paths", "kit.registry"},
    "kit.core": {"kit.data", "kit.paths", "kit.registry"},
    "kit.params": {"kit.core", "kit.data", "kit.evaluation"},
    "kit.evaluation": {"kit.core", "kit.data", "kit.paths", "kit.registry"},
    "kit.evaluate": {"kit.core", "kit.data", "kit.evaluation", "kit.paths", "kit.report"},  # the suite's command
    "kit.compare": {"kit.core", "kit.evaluation", "kit.paths", "kit.report"},  # two reports' evidence, paired
    "kit.report": {"kit.core", "kit.evaluation", "kit.params", "kit.paths"},
    "kit.study": {"kit.core", "kit.evaluation", "kit.params", "kit.registry", "kit.report"},
    "kit.studies": {"kit.core", "kit.data", "kit.evaluation", "kit.params", "kit.paths", "kit.report", "kit.study"},
    # what running one run file means (its study, its trainings, its notebook's execution), below both runners
    "kit.runner": {"kit.core", "kit.params", "kit.paths", "kit.registry", "kit.report", "kit.study", "kit.studies"},
    "kit.batch": {"kit.cluster", "kit.runner", "kit.core", "kit.params", "kit.paths", "kit.report"},
    "kit.cluster": {"kit.runner", "kit.core", "kit.paths"},  # kit.batch's Ray scheduler
    "kit.pretrain": {"kit.core", "kit.data", "kit.report"},  # the raw starts' pretraining, below every study
    # the documentation's generated pages (kit.params: the paper files it estimates are read, not run)
    "kit.docs": {"kit.core", "kit.data", "kit.evaluation", "kit.params", "kit.paths", "kit.report", "kit.runner"},
}
# Private attributes of other libraries' objects that the kit must touch: transformers keeps a model's attention
# implementation in ``config._attn_implementation``; torch's ``Module._apply`` is how a module moves its parts.
FOREIGN_PRIVATE = {"_attn_implementation", "_apply"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def kit_imports(path: Path) -> set[str]:
    """Every kit module imported anywhere in the file (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("kit")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kit"):
            found.add(node.module)
    return found


def part(module: str) -> str:
    """The part of the kit a module belongs to: kit.core, kit.data, ..., or kit.studies.<notebook>."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[1:2] == ["studies"] and len(parts) > 2 else ".".join(parts[:2])


SOURCES = sorted(KIT.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_each_part_imports_only_what_the_layout_allows(path):
    own = part(module_name(path))
    allowed = ALLOWED["kit.studies" if own.startswith("kit.studies") else own] | {own}
    for imported in kit_imports(path):
        target = part(imported)
        if own.startswith("kit.studies.") and target.startswith("kit.studies."):
            assert target == own, f"{path.name}: a study imports another study ({imported})"
        elif target not in ("kit", "kit.studies"):
            assert target in allowed, f"{module_name(path)} imports {imported}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_no_module_reads_another_objects_private_attributes(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        base = node.value
        own = (isinstance(base, ast.Name) and base.id in ("self", "cls")) or (
            isinstance(base, ast.Call) and getattr(base.func, "id", "") == "super"
        )
        assert own or node.attr in FOREIGN_PRIVATE, f"{path.name}:{node.lineno}: {ast.unparse(node)}"


SCORING_LIBRARIES = ("scipy.stats", "sklearn.metrics", "sklearn.linear_model", "rouge_score")


def imported_libraries(path: Path) -> set[str]:
    """Every module a file imports (``from scipy import stats`` counts as ``scipy.stats``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_scoring_lives_in_kit_evaluation_alone(path):
    """Metrics, probes and ROUGE are computed in ``kit/evaluation`` only; every other part imports them from there."""
    if part(module_name(path)) != "kit.evaluation":
        libraries = imported_libraries(path)
        assert not [lib for lib in libraries if lib.startswith(SCORING_LIBRARIES)], f"{path.name} scores by itself"


def import_graph() -> dict[str, set[str]]:
    """Every kit module -> the kit modules it imports (at the top or inside a function), as files: an import
    of a package is an import of its ``__init__``, and ``from kit.x import name`` of ``kit.x.name`` when
    that is a module."""
    modules = {module_name(p) for p in SOURCES}
    graph = {}
    for path in SOURCES:
        targets = set()
        for imported in kit_imports(path):
            targets.add(imported if imported in modules else imported.rsplit(".", 1)[0])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kit"):
                targets |= {f"{node.module}.{a.name}" for a in node.names} & modules
        graph[module_name(path)] = targets & modules - {module_name(path)}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_modules_import_each_other_even_through_others():
    assert circles(import_graph()) == []


def test_the_circle_check_can_fail():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_layout_check_can_fail(tmp_path):
    bad = tmp_path / "kit" / "studies" / "one" / "study.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from kit.studies.two.method import thing\nimport kit.batch\n")
    assert kit_imports(bad) == {"kit.studies.two.method", "kit.batch"}
    assert part("kit.studies.two.method") == "kit.studies.two" and part("kit.core.models") == "kit.core"


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command):
    """E, W, F, I and UP rules at line length 120, and ruff's formatting (pyproject.toml)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "."], cwd=PROJECT_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_every_extension_point_is_a_registry_filled_where_things_are_declared():
    """Augmenters, datasets, suite tasks and studies: one ``Registry`` each, every study under its package's name."""
    from kit.core.augment import AUGMENTERS
    from kit.data import DATASETS
    from kit.evaluation.tasks import TASKS
    from kit.registry import Registry
    from kit.runner import studies

    registries = (AUGMENTERS, DATASETS, TASKS, studies())
    assert all(isinstance(r, Registry) and len(r) for r in registries)
    assert sorted(studies()) == sorted(p.name for p in (KIT / "studies").iterdir() if (p / "__init__.py").is_file())
    with pytest.raises(KeyError, match="unknown task 'nope'; tasks: .*biosses-all"):
        TASKS["nope"]
    with pytest.raises(ValueError, match="a dataset named 'biosses' is registered already"):
        DATASETS.add(DATASETS["biosses"])
