"""Study parameters: declared once, typed, documented and checked before any work starts.

A study declares its parameters as a dataclass deriving from ``Params``, every field made with
``param(default, help, ...)``, which records the field's help text and its value constraints.
From that one declaration:

- ``Params.from_dict`` checks keys, types (``int``, ``float``, ``str``, ``bool``, ``list[...]``,
  ``X | None``, ``Literal[...]``) and constraints (bounds, allowed values, non-empty and
  duplicate-free lists), then the study's cross-field ``validate``; every error names its key;
- ``Params.check_resources`` checks that the named models can be loaded here;
- ``Params.describe`` lists every field (``python -m kit.batch --describe NOTEBOOK``);
- ``Params.parameters_cell`` renders the notebook's papermill ``parameters`` cell, so that the
  notebook shows the defaults and ``papermill --help-notebook`` lists them.

A run file, ``params/<notebook>/<run>.yaml``, is a flat YAML mapping of parameters, read alike by
``kit.batch`` and by ``papermill NOTEBOOK OUT -f params/<notebook>/<run>.yaml``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml

from kit.core.config import TrainConfig, TrainSettings
from kit.core.models import ALIASES, PoolerName, check_available
from kit.core.settings import ParameterError, bound_words, check_constraints, settings_from, short_repr
from kit.core.settings import setting as param
from kit.evaluation.design import MOST_SEEDS
from kit.evaluation.families import Correction  # noqa: F401  (re-exported for the studies' parameters)

if TYPE_CHECKING:
    from kit.evaluation.rows import Primary


def model_param(default: str | None = "minilm", what: str = "encoder", none: str = ""):
    """A model name, checked by ``check_resources`` (``kit.core.models.check_available``); ``none``: what None
    means, for an optional one."""
    return param(
        default,
        f"{what}: an offline alias ({', '.join(ALIASES)}), a Hugging Face name or a local folder"
        + (f"; None: {none}" if none else ""),
        available=lambda name: None if name is None and none else check_available(name),
    )


def data_param(help: str, load: Callable[[Any], object], shared: bool = True):
    """An optional path to a data file (or folder) used instead of the shared copy. ``check_resources``
    loads it with ``load(path)`` (and, when ``shared``, the shared copy that None stands for), so a
    missing or malformed file fails before any run starts, naming the file and line."""
    return param(None, help, available=lambda path: None if path is None and not shared else load(path))


def biosses_param():
    """``biosses_path``: the BIOSSES file of every English study, checked up front like any ``data_param``."""
    from kit.data import load_biosses

    return data_param("a BIOSSES file to use instead of the shared one (same columns)", load_biosses)


def suite_param(default: list[str] | None, none: str = ""):
    """``suite``: the evaluation-suite tasks (``kit.evaluation.tasks``) that every table run scores at its
    selected checkpoint; the report compares the rows on them with paired intervals. ``none``: what a
    None default stands for."""
    from kit.evaluation.tasks import GROUPS, TASKS

    return param(
        default,
        "evaluation-suite tasks or groups scored by every table run at its selected checkpoint "
        "(python -m kit.evaluate --help lists them); the report compares rows on them with paired intervals"
        + (f"; None: {none}" if none else ""),
        choices=[*GROUPS, *TASKS],
        nonempty=True,
        unique=True,
    )


def selection_param(own_dev: str, default: list[str] | None = None, none: str = ""):
    """``select_on``: what selects a run's checkpoint: the mean main metric of the study's own dev split
    (``dev``, which is ``own_dev``) and of suite tasks; ``default`` None (described by ``none``) lets the study
    fill it in, by language say."""
    from kit.evaluation.tasks import TASKS

    return param(
        ["dev"] if default is None and not none else default,
        f"checkpoint selection: the mean main metric of these{'; None: ' + none if none else ''}; 'dev' is "
        f"{own_dev}, any other name a suite task "
        "(the suite items that share a text with them are left out of their task; a task whose every item does is "
        "reported apart)",
        choices=["dev", *TASKS],
        nonempty=True,
        unique=True,
    )


LANGUAGES = {"en": "English", "zh": "Chinese"}


def seeds_param(default: list[int], help: str):
    """A list of training seeds: each at least 0, at least one, no repeats, at most ``MOST_SEEDS`` (the most a design
    considers; each seed is a training of every trained row)."""
    return param(default, help, min=0, nonempty=True, unique=True, max_items=MOST_SEEDS)


def check_task_languages(params: Params, language: str, keys: tuple[str, ...] = ("suite", "select_on")) -> None:
    """Refuse suite tasks named in ``keys`` (``suite``, ``select_on``; its ``dev`` is the study's own split)
    in another language than ``language``, the one the study's models read."""
    from kit.evaluation.tasks import select

    for key in keys:
        names = [n for n in getattr(params, key) if n != "dev"]
        other = [t.name for t in select(names) if t.language != language] if names else []
        if other:
            words = LANGUAGES[language]
            raise ParameterError(f"parameter '{key}': {other} are not {words} tasks (the study's models read {words})")


def correction_param():
    """``correction``: how a report corrects the comparisons of a family (``kit.evaluation.families``)."""
    return param(
        "holm",
        "correction for the number of comparisons in each family of a report: holm (family-wise error rate), "
        "bh (Benjamini-Hochberg, false discovery rate) or none; the verdicts and * follow the adjusted p-values",
    )


def compare_param():
    """``compare``: comparisons a user adds to the declared ones (``Params.comparisons``)."""
    return param(
        [],
        "comparisons added to the declared ones, each 'ROW - ROW' (the first row minus the second on every suite "
        "task; any table row, the untrained ones included); a pair compared already, in either order, is compared "
        "once",
        unique=True,
    )


def primary_param(default: str | None):
    """``primary``: the run file's one primary comparison (``Params.primary_comparison``); ``default``: the
    notebook's (its demo's)."""
    return param(
        default,
        "the run's one primary comparison, 'ROW - ROW on TASK' (the paper's central claim): tested alone at alpha and "
        "shown first in the report, the batch's finish line, the index and the results page; every other comparison "
        "is secondary, corrected within its family; None: no primary (the default, the demo's, is dropped when the "
        "run lacks its rows or task)",
    )


def control_task_param(study: str):
    """``control_task``: the suite task a training-free positive control (studies 1 and 4) is tested on; never one
    whose data ``study`` trains on (``Task.seen_by``), where training would win by having seen the items."""
    from kit.evaluation.tasks import TASKS

    return param(
        None,
        "the suite task the positive control (the base method against the start's best training-free embedding) is "
        "tested on, before any method comparison, among those whose data this study does not train on; None: the "
        "primary's task, else the paper's claim's when the suite scores it, else the suite's first task",
        choices=[name for name, task in TASKS.items() if not task.seen(study)],
    )


def primary_effect_param(default: float | None = None, why: str = ""):
    """``primary_effect``: the difference the primary is sized for (``kit.evaluation.design``); ``why``: what a
    default other than None is."""
    return param(
        default,
        "the difference (main metric x100) the primary comparison is sized to detect: kit.batch says before training "
        "when the run's seeds cannot resolve it, and the report states its power; None: the paper's effect when the "
        "primary is on the paper's task" + (f"; the default: {why}" if why else ""),
        gt=0,
    )


def whitening_sentences_param(default: int = 20000):
    """``whitening_sentences``: the corpus sample a whitening row is fitted on (``kit.core.whitening``). On
    pubmed-bert-mini and all BIOSSES pairs, a whitened score's sd between disjoint fitting samples is 1.0-1.7 points at
    2,000 sentences (25 samples, ranges up to 7 points), 0.3-0.9 at 10,000 (5 samples) and at most 0.6 at the default
    20,000 (2 samples) (``benchmarks/whitening_fit.py``)."""
    return param(
        default,
        "corpus sentences the whitening is fitted on (never an evaluation sentence; at most the corpus); more than "
        "the model's width",
        min=2,
    )


def whitening_dim_param():
    """``whitening_dim``: the dimensions a whitening keeps."""
    return param(None, "dimensions kept after whitening; None: every one the fitting embeddings span", min=1)


def check_whitening(params: Params, whitened: bool, available: int | None = None) -> None:
    """A whitening sample wider than the model (a covariance needs more samples than dimensions), when any row of
    the run is ``whitened``: ``whitening_sentences``, or the ``available`` corpus sentences it is drawn from when
    fewer; ParameterError naming ``whitening_sentences`` otherwise."""
    from kit.core.models import hidden_size

    dim = hidden_size(params.model)
    n = min(params.whitening_sentences, available or params.whitening_sentences)
    if whitened and n <= dim:
        corpus = f" (the corpus it is drawn from holds {available:,})" if n < params.whitening_sentences else ""
        raise ParameterError(
            f"parameter 'whitening_sentences': whitening {params.model}'s {dim} dimensions needs more than {dim} "
            f"sentences, got {n}{corpus}"
        )


def save_models_param():
    """``save_models``: keep trained rows as sentence-transformers folders."""
    return param(
        False,
        "save the first seed of every trained table row as a sentence-transformers folder under "
        "<report>/models/<row>/ (score or reuse it: python -m kit.evaluate FOLDER)",
    )


_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _is_optional(tp) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in typing.get_args(tp)


def _check_type(key: str, value: Any, tp: Any) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _check_type(key, value, arg)
            except ParameterError as err:
                errors.append(str(err))
        raise ParameterError(" or ".join(errors))
    if origin is Literal:
        if value not in args:
            raise ParameterError(
                f"parameter '{key}': {short_repr(value)} is not one of the allowed values {list(args)}"
            )
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ParameterError(f"parameter '{key}': expected a list, got {type(value).__name__} {short_repr(value)}")
        return [_check_type(f"{key}[{i}]", v, args[0]) for i, v in enumerate(value)]
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer beyond about 1e308 (YAML reads 400 digits as one)
            raise ParameterError(f"parameter '{key}': must be a finite number, got {short_repr(value)}") from None
    if tp is float and isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads 1e-5 (no dot) as a string
    if tp in (int, float, str, bool) and not (isinstance(value, tp) and not (tp is int and isinstance(value, bool))):
        raise ParameterError(
            f"parameter '{key}': expected {tp.__name__}, got {type(value).__name__} {short_repr(value)}"
        )
    return value


def _constraint_text(meta: dict, tp) -> str:
    parts = []
    allowed = meta["choices"] or _literal_values(tp)
    if allowed:
        parts.append("one of: " + ", ".join(map(str, allowed)))
    if bound_words(meta):
        parts.append(bound_words(meta))
    if meta["nonempty"]:
        parts.append("non-empty")
    if meta["unique"]:
        parts.append("no repeats")
    if meta.get("max_items") is not None:
        parts.append(f"at most {meta['max_items']} values")
    return "; ".join(parts)


def _literal_values(tp) -> tuple:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return args
    return next((v for v in map(_literal_values, args) if v), ()) if args else ()


def _type_name(tp, for_papermill: bool = False) -> str:
    """``int``, ``list[str]``, ``float | None``; for papermill's inspector (which reads only simple
    annotations) ``Optional[float]``. A Literal shows as its values' type."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if _is_optional(tp):
        inner = _type_name(next(a for a in args if a is not type(None)), for_papermill)
        return f"Optional[{inner}]" if for_papermill else f"{inner} | None"
    if origin is Literal:
        return type(args[0]).__name__
    if origin is list:
        return f"list[{_type_name(args[0], for_papermill)}]"
    return tp.__name__


def python_literal(value: Any) -> str:
    """``value`` as Python source: strings in double quotes, lists item by item."""
    if isinstance(value, list):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


@dataclass
class Params:
    """Base class of every study's parameters; the fields of a subclass are made with ``param``."""

    description: str = param("", "what this run is for, shown at the top of its report")

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> Params:
        """Check keys, types and constraints, then ``validate``; raise ParameterError naming the key."""
        values = dict(values or {})
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ParameterError(
                f"unknown parameter(s) {short_repr(unknown)} for {cls.__name__}; allowed: {sorted(fields)}"
            )
        checked = {k: _check_type(k, v, hints[k]) for k, v in values.items()}
        params = cls(**checked)
        for name, f in fields.items():
            check_constraints(name, getattr(params, name), f.metadata)
        params.validate()
        params.comparisons()
        params.check_control_task()
        try:
            params.primary_comparison()
        except ParameterError:
            if "primary" in values:
                raise
            params.primary = None  # the notebook's default primary names rows or a task this run lacks
        return params

    @classmethod
    def from_namespace(cls, namespace: dict[str, Any]) -> Params:
        """The declared parameters found in ``namespace`` (a notebook's globals after papermill's
        injection), checked as ``from_dict`` does, with the models checked as well."""
        params = cls.from_dict({name: namespace[name] for name in cls.names() if name in namespace})
        params.check_resources()
        return params

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def validate(self) -> None:
        """Cross-field checks; subclasses raise ParameterError."""

    def table_rows(self) -> list[str]:
        """The rows of the study's tables, which ``compare`` may name."""
        return list(getattr(self, "rows", []))

    def comparisons(self) -> list[tuple[str, str]]:
        """The ``compare`` parameter as (row, baseline) pairs (none when the study declares no ``compare``)."""
        pairs = []
        rows = self.table_rows()
        for i, entry in enumerate(getattr(self, "compare", [])):
            parts = [part.strip() for part in entry.split(" - ")]
            if len(parts) != 2 or not all(parts):
                raise ParameterError(
                    f"parameter 'compare[{i}]': {short_repr(entry)} is not 'ROW - ROW' (two table rows around ' - ')"
                )
            unknown = [part for part in parts if part not in rows]
            if unknown:
                raise ParameterError(
                    f"parameter 'compare[{i}]': {short_repr(unknown[0])} is not a row of this run; its rows: {rows}"
                )
            if parts[0] == parts[1]:
                raise ParameterError(f"parameter 'compare[{i}]': a row compared with itself ({parts[0]!r})")
            pairs.append((parts[0], parts[1]))
        return pairs

    def check_control_task(self) -> None:
        """A declared ``control_task`` must be a task this run scores (``primary_tasks``)."""
        task, tasks = getattr(self, "control_task", None), self.primary_tasks()
        if task is not None and task not in tasks:
            raise ParameterError(
                f"parameter 'control_task': {short_repr(task)} is not a task this run scores; its tasks: {tasks}"
            )

    def primary_tasks(self) -> list[str]:
        """The tasks a ``primary`` may name: the suite's (a study adds those it scores itself)."""
        from kit.evaluation.tasks import select

        suite = getattr(self, "suite", None)
        return [t.name for t in select(suite)] if suite else []

    def primary_comparison(self, effect: float | None = None) -> Primary | None:
        """The ``primary`` parameter as a ``Primary`` (None when not set), its rows among the table's and its task
        among ``primary_tasks``; ``effect`` stands in for an unset ``primary_effect``."""
        from kit.evaluation.rows import Primary

        text = getattr(self, "primary", None)
        if text is None:
            return None
        try:
            primary = Primary.parse(text, getattr(self, "primary_effect", None))
        except ValueError as err:
            raise ParameterError(f"parameter 'primary': {err}") from None
        rows, tasks = self.table_rows(), self.primary_tasks()
        unknown = [r for r in (primary.row, primary.baseline) if r not in rows]
        if unknown:
            raise ParameterError(
                f"parameter 'primary': {short_repr(unknown[0])} is not a row of this run; its rows: {rows}"
            )
        if primary.row == primary.baseline:
            raise ParameterError(f"parameter 'primary': a row compared with itself ({primary.row!r})")
        if primary.task not in tasks:
            raise ParameterError(
                f"parameter 'primary': {short_repr(primary.task)} is not a task this run scores; its tasks: {tasks}"
            )
        if primary.effect is None and effect is not None:
            primary = dataclasses.replace(primary, effect=effect)
        return primary

    def check_resources(self) -> None:
        """Every field declared with ``available`` names something that can be loaded here; a study adds
        the checks that need its data (sizes that must fit a corpus, say)."""
        for f in dataclasses.fields(self):
            if f.metadata.get("available") is not None:
                try:
                    f.metadata["available"](getattr(self, f.name))
                except (OSError, ValueError, ImportError) as err:  # ImportError: an alias's package is missing
                    raise ParameterError(f"parameter '{f.name}': {err}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def reference(cls) -> list[dict[str, str]]:
        """Every parameter as text: its ``name``, ``type``, ``allowed`` values, ``default`` and ``help``."""
        hints = typing.get_type_hints(cls)
        return [
            {
                "name": f.name,
                "type": _type_name(hints[f.name]),
                "allowed": _constraint_text(f.metadata, hints[f.name]),
                "default": python_literal(_default(f)),
                "help": f.metadata["help"],
            }
            for f in dataclasses.fields(cls)
        ]

    @classmethod
    def describe(cls) -> str:
        """Every parameter with its type, constraint, default and help, as text."""
        summary = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        lines = [f"{cls.__name__}: {summary}", ""]
        for f in cls.reference():
            spec = ", ".join(x for x in (f["type"], f["allowed"]) if x)
            lines += [f"  {f['name']}  ({spec}; default {f['default']})", f"      {f['help']}"]
        return "\n".join(lines)

    @classmethod
    def parameters_cell(cls, notebook: str) -> str:
        """The notebook's papermill ``parameters`` cell: one ``name: type = default  # help`` line per field."""
        hints = typing.get_type_hints(cls)
        lines = [
            "# Parameters. The defaults are a small run, so that Run All finishes in minutes. Override them with",
            f"# `papermill ... -p NAME VALUE` or `-f params/{notebook}/<run>.yaml`; kit.batch sets all of them.",
            f"# Declared, typed and checked in {cls.__module__}.{cls.__name__}; this cell is generated from it",
            "# (python -m kit.batch --sync-notebooks).",
            "from typing import Optional",
            "",
        ]
        for f in dataclasses.fields(cls):
            note = _constraint_text(f.metadata, hints[f.name])
            lines.append(
                f"{f.name}: {_type_name(hints[f.name], for_papermill=True)} = {python_literal(_default(f))}"
                f"  # {f.metadata['help']}" + (f" ({note})" if note else "")
            )
        lines.append(f"report_dir: Optional[str] = None  # output folder (default: reports/{notebook}/interactive)")
        return "\n".join(lines)


def _default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


@dataclass
class EncoderParams(Params):
    """The sentence encoder a study trains: the model, its pooler and the seeds of every trained row."""

    model: str = model_param()
    pooler: PoolerName = param("mean", "how the trained encoder's token states become a sentence embedding")
    seeds: list[int] = seeds_param([0, 1], "training seeds of every trained row")


@dataclass
class ContrastiveTrainingParams(TrainSettings, EncoderParams):
    """The parameters of every study that trains sentence encoders with ``kit.core.train``'s contrastive loop:
    the encoder (``EncoderParams``) and the loop's settings (``kit.core.config.TrainSettings``, declared there
    once; the defaults are a demo-sized budget)."""

    def validate(self) -> None:
        self.check_speed_options()

    def train_config(self, seed: int, **loss_options) -> TrainConfig:
        """The ``TrainConfig`` of one run: these settings, ``seed`` and the row's ``loss_options``
        (``mix_lambda``, ``iw_phi``)."""
        return settings_from(self, TrainConfig, seed=seed, **loss_options)


# ---- run files ----------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, (str, int, float, bool)):
                raise ParameterError(
                    f"line {key_node.start_mark.line + 1}: a key is a parameter name, got a {type(key).__name__}"
                )
            if key in seen:
                raise ParameterError(f"line {key_node.start_mark.line + 1}: key '{key}' given a second time")
            seen.add(key)
        return super().construct_mapping(node, deep)


@dataclass(frozen=True)
class RunFile:
    """A run file: its path, the notebook it runs and its parameters (as written, unchecked)."""

    path: Path
    notebook: str
    parameters: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.stem


MAX_RUN_FILE_BYTES = 1 << 20
"""A run file is a few lines of parameters; a larger one is refused unread."""
MAX_RUN_FILE_NODES = 100_000
"""Values in a run file once its YAML aliases are expanded: a bomb (aliases of aliases) is refused unbuilt."""


def _expanded_nodes(node: yaml.Node, sizes: dict[int, int]) -> int:
    """The number of values ``node`` stands for once every alias in it is expanded (memoised by node)."""
    if id(node) not in sizes:
        sizes[id(node)] = 1  # a node that contains itself counts once
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        if isinstance(node, yaml.CollectionNode):
            sizes[id(node)] = 1 + sum(_expanded_nodes(child, sizes) for child in children)
    return sizes[id(node)]


def _load_yaml(path: Path) -> Any:
    """The YAML document of ``path`` (None when it holds none), refusing a file over ``MAX_RUN_FILE_BYTES`` and
    a document of more than ``MAX_RUN_FILE_NODES`` values after alias expansion, before building it."""
    size = path.stat().st_size
    if size > MAX_RUN_FILE_BYTES:
        raise ParameterError(
            f"{size:,} bytes; a run file is at most {MAX_RUN_FILE_BYTES:,} (a few lines of parameters)"
        )
    loader = _UniqueKeyLoader(path.read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        nodes = _expanded_nodes(node, {})
        if nodes > MAX_RUN_FILE_NODES:
            raise ParameterError(
                f"its aliases expand to {nodes:,} values; a run file holds at most {MAX_RUN_FILE_NODES:,}"
            )
        return loader.construct_document(node)
    except RecursionError:  # PyYAML composes and builds nested values recursively
        raise ParameterError("values nested too deeply for a run file") from None
    finally:
        loader.dispose()


def read_run_file(path: str | Path) -> RunFile:
    """A flat YAML mapping of parameters, at least one. The notebook is the file's folder name
    (``params/<notebook>/<run>.yaml``), or the optional top-level key ``notebook``."""
    path = Path(path)
    try:
        data = _load_yaml(path)
    except ParameterError as err:
        raise ParameterError(f"{path}: {err}") from None
    except UnicodeDecodeError as err:
        raise ParameterError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); save it as UTF-8") from None
    except yaml.MarkedYAMLError as err:  # one line: where, and what the parser expected
        mark = err.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ParameterError(f"{path}: YAML syntax error at {where}: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise ParameterError(f"{path}: YAML error: {' '.join(str(err).split())}") from None
    if data is None:
        raise ParameterError(
            f"{path}: no parameters (the file is empty, or only comments); a run file sets at least one (to run "
            "a notebook's defaults on purpose, write a line 'description: ...')"
        )
    if not isinstance(data, dict):
        raise ParameterError(
            f"{path}: a run file is a YAML mapping of parameter names to values ('name: value' lines), "
            f"got a {type(data).__name__}"
        )
    notebook = data.pop("notebook", None) or path.parent.name
    if not isinstance(notebook, str):
        raise ParameterError(
            f"{path}: key 'notebook': a notebook name, got {type(notebook).__name__} {short_repr(notebook)}"
        )
    return RunFile(path, notebook, data)
