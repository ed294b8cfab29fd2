"""What every study shares: run folders keyed by their settings, the run cache, the run record,
reading rows and seeds, and the ``Study`` protocol that ``kit.batch`` is typed against.

A study (``kit/studies/<notebook>/study.py``) derives from ``StudyBase``. Each training it makes is a
*run*, identified by everything that determines its result: its settings, the content of the data it
reads (``kit.core.fingerprint.digest`` of the loaded values, not file names), the model's weights or
revision, and ``CACHE_VERSION``. The run's folder ``<report_dir>/runs/<name>-<digest>/`` holds its
checkpoint while it trains and its ``result.json`` once it has finished, so a rerun with unchanged
inputs computes nothing and a changed input is never served from the cache. Raise ``CACHE_VERSION``
when a change to the kit changes what a cached run would compute.

Damage is decided by rules, not by a list of exception types. A finished run is its ``result.json`` and
the files its computation wrote beside it (``suite.npz``, ``history.json``, embeddings: its artefacts),
whose SHA-256 the result records. A result that cannot be read (any error), an artefact that is missing
or whose bytes differ from what was written, or an artefact whose reader raises anything, make the run
damaged: the files are set aside (renamed, never deleted), named on stderr, and the run computed again.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, TypeVar

import numpy as np
import pandas as pd

from kit.core.compute import EVALUATION_LENGTH, Work, encoding
from kit.core.files import set_aside, write_text_atomic
from kit.core.models import Encoder, load_tokenizer, model_fingerprint, resolve_model
from kit.core.shared_poolings import PoolingView, SharedPoolings, frozen_fast_path
from kit.core.whitening import fit_whitening
from kit.evaluation import rows as suite_rows
from kit.evaluation.embeddings import Embedder
from kit.evaluation.lexical import ANCHOR_LABELS, ANCHORS, Lexical
from kit.evaluation.retrieval import RetrievalTask
from kit.evaluation.task import PairCosineTask, Task
from kit.evaluation.tasks import TASKS, select
from kit.params import Params
from kit.registry import Registry
from kit.report.index import EVIDENCE, StudyAbout
from kit.report.model_card import MODELS, mark, publish, write_cards
from kit.report.record import RunRecord
from kit.report.tables import write_tables

T = TypeVar("T")

CACHE_VERSION = 5
"""Part of every run key (1: the kit before run keys had a version; 2: before keys held content digests;
3: before the zh stopword list excluded numerals and traditional forms; 4: before runs scored the
evaluation suite)."""
ARTEFACTS = "artefacts"
"""The key of a run's ``result.json`` that maps each artefact's file name to its SHA-256."""
NOT_ARTEFACTS = frozenset({"result.json", "checkpoint.pt"})
SUITE_FILE = "suite.npz"
"""A run's item outputs on the study's suite tasks (``kit.evaluation.rows``), beside its ``result.json``."""
WHITENED_FILE = "suite_whitened.npz"
"""A run of the control's base row: its outputs on the control's task after BERT-whitening (the ladder's rung b)."""


def run_key(name: str, settings: dict) -> str:
    """``<name>-<8 hex digits>``: the folder name of a run, from its settings and ``CACHE_VERSION``."""
    payload = json.dumps({"cache_version": CACHE_VERSION, **settings}, sort_keys=True, default=str)
    return f"{name}-{hashlib.sha1(payload.encode()).hexdigest()[:8]}"


def cached_run(run_dir: Path, compute: Callable[[], dict], seconds: dict[str, float]) -> dict:
    """A finished run: ``run_dir/result.json`` if it exists whole with its artefacts (``read_result``), else
    ``compute()`` (a dict), timed into its ``seconds`` field and saved there with the SHA-256 of the artefacts
    it wrote (``artefact_digests``; not part of the returned dict). The compute time of every run used,
    cached or not, is recorded in ``seconds`` under the folder's name (the reports sum it). An exclusive lock
    on the folder makes a process that wants a run another is computing (``kit.batch`` Ray tasks) wait for
    its result instead of training it a second time."""
    run_dir = Path(run_dir)
    result_file = run_dir / "result.json"
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = read_result(result_file)
        if result is None:
            t0 = time.perf_counter()
            result = compute()
            result["seconds"] = time.perf_counter() - t0
            result[ARTEFACTS] = artefact_digests(run_dir)
            write_text_atomic(result_file, json.dumps(result))
    seconds[run_dir.name] = result["seconds"]
    return {k: v for k, v in result.items() if k != ARTEFACTS}


def artefact_digests(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every file a run's computation left in ``run_dir`` besides its result: its artefacts
    (not the lock, a checkpoint, temporary files or files set aside)."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(Path(run_dir).iterdir())
        if path.is_file()
        and path.name not in NOT_ARTEFACTS
        and not path.name.startswith(".")
        and ".damaged-" not in path.name
    }


def read_result(result_file: Path) -> dict | None:
    """A finished run's result, or None: when there is none, or when the run is damaged (the result is
    not JSON, or not a record with its ``seconds``; an artefact it lists is missing or changed), in which
    case its files are set aside and the run is computed again."""
    if not result_file.exists():
        return None
    try:
        result = json.loads(result_file.read_text(encoding="utf-8"))
        if not isinstance(result, dict) or not isinstance(result.get("seconds"), (int, float)):
            raise ValueError("not a run result with its compute time")
        recorded = dict(result.get(ARTEFACTS, {}))  # none in a result written before artefacts were recorded
    except Exception as err:  # the module's rule: any error reading a file the kit wrote whole is damage
        set_aside(result_file, f"{type(err).__name__}: {err}")
        return None
    found = artefact_digests(result_file.parent)
    changed = sorted(name for name, sha in recorded.items() if found.get(name) != sha)
    for name in changed:
        if (result_file.parent / name).exists():  # a file with other bytes, or something else in its place
            set_aside(result_file.parent / name, "its bytes differ from what the run wrote")
    if changed:
        set_aside(result_file, f"its artefacts {changed} are missing or changed")
        return None
    return result


@dataclass(frozen=True)
class StudyEntry:
    """A notebook's registration in ``STUDIES``: its name, the declaration of its parameters, its ``Study`` (None
    for a notebook that trains nothing) and what the reports index says of it."""

    name: str
    params: type[Params]
    study: type[Study] | None
    about: StudyAbout


STUDIES: Registry[StudyEntry] = Registry("notebook")
"""Every notebook by name: each study package registers itself (``STUDIES.add``) in its ``__init__``."""


class Study(Protocol):
    """What ``kit.batch`` needs of a study: built from its parameters and report folder, it lists the
    arguments of every ``run`` its notebook makes, ``run(*args)`` computes (or loads) one of them and
    names in ``computed_runs`` what it computed, ``run_label(*args)`` names it for progress lines and
    ``run_trains(*args)`` says whether it trains (a training-free row takes seconds; progress times it apart)."""

    def __init__(self, params: Params, report_dir: str | Path) -> None: ...

    computed_runs: set[str]

    def planned_runs(self) -> list[tuple]: ...

    def run(self, *args) -> dict: ...

    def run_label(self, *args) -> str: ...

    def run_trains(self, *args) -> bool: ...


TRAINING_FREE_POOLERS = {
    "cls": ("cls_before_pooler", "[CLS]"),
    "mean": ("mean", "mean"),
    "first_last_avg": ("first_last_avg", "first-last average"),
}
"""The start's training-free poolings of the premise ladder (row name: the pooler and its words)."""
CONTROL_ROWS = [f"{name}{'_whitening' * w}" for name in TRAINING_FREE_POOLERS for w in (False, True)]
"""Studies 1 and 4's training-free rows (each pooling with and without BERT-whitening): the start read out as SimCSE
is (the control, rung a), its whitened twin (rung b) and the candidates of rung (c) (``StudyBase.rungs``), added to
any table that trains SimCSE."""


def with_control_rows(rows: Sequence[str], base: str = "simcse") -> list[str]:
    """``rows``, and when they train ``base`` the premise ladder's training-free rows (``CONTROL_ROWS``) not
    listed."""
    return [*rows, *(r for r in CONTROL_ROWS if base in rows and r not in rows)]


HEADLINE_TASKS = {"spearman_all": "biosses-all", "spearman_test": "biosses-test"}
"""The suite task with the items of each BIOSSES headline column (studies 1 in English and 4)."""


class StudyBase:
    """The run machinery of every study: ``run_dir`` names a run's folder from its settings, ``cached``
    computes a run once, ``suite_report`` compares the table's rows (the table-row protocol: a study declares
    ``row_seeds``, ``row_run_dir``, ``row_label`` and ``baseline_of``), ``write_record`` writes the report's
    tables and ``results.json``."""

    NO_SELECTION: ClassVar[str] = ""
    """A study that selects no checkpoint says so here, in words: its reports' "selected on"."""
    SUITE_TITLE: ClassVar[str] = "Evaluation suite"
    """The title of the report's suite tables."""
    TRAINING_FREE_CONTROL: ClassVar[str] = ""
    """A study whose positive control is its base method against its start read out the same way, with the premise
    ladder beside it (``training_free_control``, ``rungs``), names that base row here (studies 1 and 4: "simcse")."""

    @property
    def notebook(self) -> str:
        """The study's notebook: its package, ``kit.studies.<notebook>``."""
        return type(self).__module__.split(".")[2]

    def __init__(self, params: Params, report_dir: str | Path):
        self.p = params
        self.report_dir = Path(report_dir)
        self.model_source = resolve_model(params.model)  # what the model is and stands in for, for the reports
        self.run_seconds: dict[str, float] = {}  # compute time of every run used, cached or not
        self.computed_runs: set[str] = set()  # folders of the runs computed (not found cached) by this object
        self.shared_starts: dict[int, SharedPoolings] = {}  # training_free_encoder's, per seed
        self.anchor_scores: dict[tuple[str, str], suite_rows.RunOutputs] = {}  # (anchor, task): anchor_outputs'

    def planned_runs(self) -> list[tuple]:
        """The arguments of every ``run`` the notebook makes (``kit.batch`` computes them ahead)."""
        raise NotImplementedError

    def run(self, *args) -> dict:
        raise NotImplementedError

    def run_label(self, *args) -> str:
        """A run's name in progress lines and bars: its arguments (studies name them better)."""
        return " ".join(map(str, args))

    def run_trains(self, *args) -> bool:
        """Whether a planned run trains (studies with training-free rows say which do not)."""
        return True

    @classmethod
    def workload(cls, p: Params) -> list[Work]:
        """The compute a run file plans, as ``kit.core.compute.Work`` (what the GPU-time estimates count), from
        its parameters and data alone: no model is loaded, so a paper file is estimated without its models (a
        study object may be built for its data: building one writes nothing)."""
        raise NotImplementedError

    @staticmethod
    def evaluation_work(
        p: Params,
        scored: int,
        evaluations: int = 0,
        evaluator_texts: Sequence[str] = (),
        given: Sequence[str] = (),
        part: str = "all",
        max_length: int = EVALUATION_LENGTH,
    ) -> list[Work]:
        """The forward passes of evaluation: ``scored`` models (``part`` of ``p.model``) embed the texts of the
        ``suite`` tasks (but those the study scores itself, ``given``), and each of ``evaluations`` checkpoint
        evaluations embeds ``evaluator_texts`` (what the study's own evaluator reads) and the texts of the
        ``select_on`` suite tasks; every text at ``max_length`` tokens at most."""

        def texts(tasks: Iterable[Task]) -> list[str]:
            return [text for task in tasks for texts in task.texts() for text in texts]

        chosen = texts(TASKS[name] for name in getattr(p, "select_on", []) if name != "dev") + list(evaluator_texts)
        suite = texts(task for task in select(p.suite) if task.name not in given)
        work = [encoding("evaluation suite", p.model, suite, scored, max_length, part=part)]
        if chosen and evaluations:
            work.append(encoding("checkpoint evaluations", p.model, chosen, evaluations, max_length, part=part))
        return work

    @staticmethod
    def whitened_control_work(p: Params, runs: int) -> list[Work]:
        """Rung (b)'s reads (``score_trained_whitened``): each of ``runs`` trained runs of the control's base row
        embeds the control's task again to whiten it (the task ``control_task`` names, else the primary's; neither:
        nothing counted). Its whitening fit is counted with the whitening rows'."""
        name = getattr(p, "control_task", None) or getattr(p.primary_comparison(), "task", None)
        if not runs or name not in TASKS:
            return []
        texts = [text for part in TASKS[name].texts() for text in part]
        what = "premise ladder, rung (b): the control's task read again to be whitened"
        return [encoding(what, p.model, texts, runs, EVALUATION_LENGTH)]

    def run_dir(self, name: str, settings: dict, data: str) -> Path:
        """The folder of the run identified by ``settings`` (every setting its result depends on),
        ``data`` (the ``digest`` of every data value it reads: the corpus as sampled, the evaluation
        sets as loaded) and the model's weights (``model_fingerprint``)."""
        inputs = {"data": data, "model_weights": self.model_fingerprint}
        return self.report_dir / "runs" / run_key(name, {**settings, "inputs": inputs})

    @functools.cached_property
    def model_fingerprint(self) -> str:
        return model_fingerprint(self.p.model)

    def cached(self, run_dir: Path, compute: Callable[[], dict]) -> dict:
        """``cached_run``, noted in ``computed_runs`` when it computes; a finished run's checkpoint is
        deleted (its result is the record)."""

        def computed() -> dict:
            self.computed_runs.add(run_dir.name)
            return compute()

        result = cached_run(run_dir, computed, self.run_seconds)
        (run_dir / "checkpoint.pt").unlink(missing_ok=True)
        return result

    # ---- the evaluation suite (kit.evaluation) --------------------------------------------------------
    @functools.cached_property
    def suite_tasks(self) -> list[Task]:
        """The suite tasks of the ``suite`` parameter, in suite order."""
        return select(self.p.suite)

    @functools.cached_property
    def selection_tasks(self) -> list[Task]:
        """The suite tasks of ``select_on`` (its ``dev`` entry is the study's own dev split)."""
        return [TASKS[name] for name in self.p.select_on if name != "dev"]

    def selection(self, encoder, own_dev: float | None) -> dict[str, float]:
        """The evaluation row's selection columns: ``dev <task>`` for every suite task in ``select_on`` and
        ``selection``, the mean of those and ``own_dev`` (the study's dev metric) when ``dev`` is listed."""
        embed = Embedder.from_encoder(encoder, "selection")
        scores = {f"dev {t.name}": suite_rows.main_score(embed, t) for t in self.selection_tasks}
        parts = [*scores.values(), *([own_dev] if "dev" in self.p.select_on else [])]
        return {**scores, "selection": sum(parts) / len(parts)}

    def own_dev(self) -> tuple[str, list[str]]:
        """(the study's own dev split in words, its texts): what the ``dev`` entry of ``select_on`` names."""
        raise NotImplementedError

    def headline_spearman(self) -> tuple[str, str]:
        """The STS column a headline reads and its words: all pairs, or the test pairs alone when ``select_on``
        holds the study's own dev split, whose pairs the all-pairs score includes."""
        if not self.NO_SELECTION and "dev" in self.p.select_on:
            return "spearman_test", "test-pair Spearman"
        return "spearman_all", "all-pairs Spearman"

    def headline_task(self, suite: suite_rows.SuiteReport, column: str | None = None) -> str | None:
        """The suite task that holds the items of the headline's ``column`` (default ``headline_spearman``'s):
        ``HEADLINE_TASKS``, when the suite scores it, so that the reports index sets the comparison beside the
        score it is about; None (the largest headline task) otherwise."""
        task = HEADLINE_TASKS[column or self.headline_spearman()[0]]
        return task if task in {t.name for t in suite.tasks} else None

    def selection_caveat(self) -> str:
        """Sentences for the checkpoint policy of a study with scored pairs (``sts``, named ``eval_name``: BIOSSES,
        or cMedQQ's cosine view): how many of them share a text with the selection data (``selection_texts``) and
        what the headline reads because of it; '' when no selection."""
        if self.NO_SELECTION:
            return ""
        seen = self.selection_texts()
        sts = self.sts
        shares = np.array([a in seen or b in seen for a, b in zip(sts.sentence1, sts.sentence2)])

        def share(n: int) -> str:
            return f"{n:,} of which {'shares' if n == 1 else 'share'}" if n else "none of which shares"

        if "dev" not in self.p.select_on:
            if not shares.any():
                return f" No {self.eval_name} pair shares a text with the selection data."
            n = int(shares.sum())
            return (
                f" {n:,} of the {len(sts):,} {self.eval_name} pairs {'shares' if n == 1 else 'share'} a text with the "
                "selection data; the all-pairs column includes them."
            )
        dev, test = (np.asarray(sts.split) == s for s in ("dev", "test"))
        return (
            f" The all-pairs column includes the {dev.sum():,} dev pairs, so the headline and the seed spread read "
            f"the {test.sum():,} test pairs alone, {share(int(shares[test].sum()))} a text with the selection data."
        )

    def selected_on(self) -> str:
        """What selected the checkpoints, in words for the reports: ``select_on``, or ``NO_SELECTION``."""
        if self.NO_SELECTION:
            return self.NO_SELECTION
        names = [
            self.own_dev()[0] if n == "dev" else f"`{n}` ({TASKS[n].description}, {TASKS[n].items:,} items)"
            for n in self.p.select_on
        ]
        return ("the mean main metric of " if len(names) > 1 else "") + " and ".join(names)

    def selection_texts(self) -> frozenset[str]:
        """Every text the checkpoints were selected on: the study's own dev texts when ``dev`` is in ``select_on``,
        and the texts of its suite tasks; a reported item sharing one is left out (``kept_items``)."""
        if self.NO_SELECTION:
            return frozenset()
        texts = set(self.own_dev()[1]) if "dev" in self.p.select_on else set()
        for task in self.selection_tasks:
            texts.update(t for part in task.texts() for t in part)
        return frozenset(texts)

    def score_suite(self, encoder, run_dir: Path, given: suite_rows.RunOutputs | None = None) -> None:
        """Score the run's final (selected) encoder on the suite tasks; outputs saved as ``SUITE_FILE``. ``given``:
        the outputs of the tasks it names, which the study computed itself (the probes it fitted for its table)."""
        given = given or {}
        tasks = [t for t in self.suite_tasks if t.name not in given]
        fast = frozen_fast_path(encoder, suite_rows.text_count(tasks))
        outputs = suite_rows.score_run(Embedder.from_encoder(fast, run_dir.name), tasks)
        suite_rows.save_outputs(run_dir / SUITE_FILE, {**outputs, **given})

    def score_whitened(self, encoder, whitening, run_dir: Path, tasks: Sequence[Task], name: str) -> None:
        """Score ``encoder``'s vectors after ``whitening`` (``kit.core.whitening.Whitening``) on ``tasks``; outputs
        saved as ``name`` in ``run_dir``."""
        embed = Embedder.from_encoder(frozen_fast_path(encoder, suite_rows.text_count(tasks)), run_dir.name)
        suite_rows.save_outputs(run_dir / name, suite_rows.score_run(lambda texts: whitening(embed(texts)), tasks))

    def whitens_trained(self, row: str) -> bool:
        """Whether a run of ``row`` also scores its trained model after whitening on the control's task (rung b of the
        premise ladder): the base row of a training-free control, when the run forms that control on a task scored
        from embeddings (not a probe's predictions)."""
        if not self.TRAINING_FREE_CONTROL or row != self.TRAINING_FREE_CONTROL or self.control() is None:
            return False
        task = next((t for t in self.suite_tasks if t.name == self.control_task()), None)
        return isinstance(task, (PairCosineTask, RetrievalTask))

    def whitened_settings(self) -> list:
        """What a trained row's whitened scores depend on, for its run key (``whitens_trained``)."""
        p = self.p
        return [p.whitening_sentences, p.whitening_dim, EVALUATION_LENGTH, self.control_task()]

    def score_trained_whitened(self, encoder, run_dir: Path, sentences: list[str]) -> None:
        """Rung (b)'s outputs of a trained run: its model whitened on ``whitening_sentences`` of ``sentences`` (the
        whitening rows' fit: ``kit.core.whitening.fit_whitening``), scored on the control's task (``WHITENED_FILE``)."""
        p = self.p
        whitening = fit_whitening(encoder, sentences, p.whitening_sentences, p.corpus_seed + 1, p.whitening_dim)
        tasks = [t for t in self.suite_tasks if t.name == self.control_task()]
        self.score_whitened(encoder, whitening, run_dir, tasks, WHITENED_FILE)

    def whitened_outputs(self) -> dict[str, list[suite_rows.RunOutputs]]:
        """``<base>_whitening``: the control's base row after whitening, one output per seed on the control's task,
        when the run scores it (``whitens_trained``); else nothing."""
        base = self.TRAINING_FREE_CONTROL
        if not base or not self.whitens_trained(base):
            return {}
        tasks = [t for t in self.suite_tasks if t.name == self.control_task()]
        read = functools.partial(suite_rows.load_outputs, tasks=tasks)
        rerun = functools.partial(self.run, base)
        runs = [
            self.run_artefact(self.row_run_dir(base, seed), WHITENED_FILE, read, functools.partial(rerun, seed))
            for seed in self.row_seeds()[base]
        ]
        return {f"{base}_whitening": runs}

    def suite_outputs(
        self, run_dir: Path, rerun: Callable[[], object], name: str = SUITE_FILE
    ) -> suite_rows.RunOutputs:
        """A finished run's suite outputs (its file ``name``, read by ``run_artefact``): missing, damaged,
        lacking a task of ``suite`` or holding another number of a task's items (its data changed), the run
        is computed again."""
        return self.run_artefact(run_dir, name, lambda file: suite_rows.load_outputs(file, self.suite_tasks), rerun)

    @staticmethod
    def run_artefact(run_dir: Path, name: str, read: Callable[[Path], T], rerun: Callable[[], object]) -> T:
        """``read(run_dir / name)``, a file a finished run wrote beside its ``result.json``. When it is missing
        or ``read`` raises anything (the module's rule), the file and the run's result are set aside, ``rerun()``
        computes the run again, and the new file is read."""
        file = run_dir / name
        try:
            return read(file)
        except Exception as err:
            why = f"{type(err).__name__}: {err}"
            if file.exists():
                set_aside(file, why)
            if (run_dir / "result.json").exists():
                set_aside(run_dir / "result.json", f"its {name} is unusable ({why})")
        rerun()
        return read(file)

    # ---- the table-row protocol: a study declares its rows, the base class compares them ---------------------
    def row_seeds(self) -> dict[str, list[int]]:
        """Each table row and the seeds it is trained at (one for a deterministic row)."""
        raise NotImplementedError

    def row_label(self, row: str) -> str:
        """A row's name in the reports."""
        return row

    def row_run_dir(self, row: str, seed: int) -> Path:
        """The run folder of a table row at one seed (where its suite outputs are)."""
        raise NotImplementedError

    def baseline_of(self, row: str) -> str | None:
        """The row a row is compared with (None: none)."""
        return None

    def training_free_encoder(self, pooler: str, seed: int) -> PoolingView:
        """The start under ``pooler``, as ``Encoder.from_pretrained(model, pooler, seed)``, for a row that does not
        train: a view of one ``SharedPoolings`` per seed over ``training_free_poolers``, so that the positive
        control's candidates and the starting-model row encode each text once, not once each."""
        shared = self.shared_starts.get(seed)
        if shared is None:
            start = Encoder.from_pretrained(self.p.model, "cls_before_pooler", seed=seed)  # a cls* pooler: the MLP
            shared = self.shared_starts[seed] = SharedPoolings(start, self.training_free_poolers())
        return shared.view(pooler)

    def training_free_poolers(self) -> list[str]:
        """The poolers of the table's rows that do not train (studies with such rows say which)."""
        return []

    def table_runs(self) -> list[tuple[str, int]]:
        """(row, seed) of every run in the table."""
        return [(row, seed) for row, seeds in self.row_seeds().items() for seed in seeds]

    def row_outputs(self) -> dict[str, list[suite_rows.RunOutputs]]:
        """Each table row's suite outputs, one per seed (``suite_outputs`` of its runs)."""
        return {
            row: [
                self.suite_outputs(self.row_run_dir(row, seed), functools.partial(self.run, row, seed))
                for seed in seeds
            ]
            for row, seeds in self.row_seeds().items()
        }

    def suite_report(self) -> suite_rows.SuiteReport:
        """Every table row on the suite tasks, each against ``baseline_of`` it (``kit.evaluation.rows``)."""
        return self.row_report(self.row_outputs(), self.suite_tasks, self.SUITE_TITLE)

    def row_fixed(self, row: str) -> bool:
        """Whether a table row is deterministic (an untrained model: one set of outputs, no run-to-run variance);
        a trained row's comparisons carry the spread of its seeds (``kit.evaluation.inference``)."""
        return False

    def trains(self, row: str) -> bool:
        """Whether this run trains ``row`` (a table row with seeds, or a study's own trained row such as study 2's
        teacher)."""
        return row in self.row_seeds() and not self.row_fixed(row)

    def row_run_count(self, row: str, task: str | None = None) -> int:
        """How many runs a table row's outputs stack on ``task`` (None: the suite's): its seeds (study 2: its
        benchmark's splits x seeds, its k-fold rows' seeds on their held-out task)."""
        return len(self.row_seeds()[row])

    def rows_left_out(self) -> dict[str, list[str]]:
        """Suite task -> the rows left out of it (study 2: rows trained on the task's pairs); none by default."""
        return {}

    def primary(self) -> suite_rows.Primary | None:
        """The run file's primary comparison (``primary``), sized for ``primary_effect`` or, when that is unset and
        the primary is on the paper's task, for the paper's effect (``paper_effect``)."""
        primary = self.p.primary_comparison()
        claim = self.paper_effect()
        if primary is not None and primary.effect is None and claim is not None and claim.task == primary.task:
            primary = self.p.primary_comparison(claim.effect)
        return primary

    def comparisons(self, rows: Iterable[str], added: Collection[str] = ()) -> list[tuple[str, str]]:
        """The (row, baseline) pairs among ``rows`` that a report compares: the positive control's, the primary's and
        the premise rungs', each table row with ``baseline_of`` it (not the ``added`` rows: the anchors, a whitened
        trained row) and the ``compare`` parameter's pairs; a pair compared already, in either order, once (the
        declared ones in their declared order)."""
        rows = list(rows)
        pairs = [
            (declared.row, declared.baseline)
            for declared in (self.control(), self.primary(), *self.rungs())
            if declared and {declared.row, declared.baseline} <= set(rows)
        ]
        pairs += [(row, self.baseline_of(row)) for row in rows if row not in added and self.baseline_of(row)]
        pairs += [(a, b) for a, b in self.p.comparisons() if a in rows and b in rows]
        out: dict[frozenset[str], tuple[str, str]] = {}
        for pair in pairs:
            out.setdefault(frozenset(pair), pair)
        return list(out.values())

    def kept_items(self, tasks: list[Task]) -> dict[str, np.ndarray]:
        """Per task, the items to score: those sharing no text with the checkpoint-selection data (a task all of
        whose items share one keeps them all and is reported apart, ``SuiteReport.groups``)."""
        texts = self.selection_texts()
        keep = {}
        for task in tasks:
            shared = suite_rows.shared_items(task, texts) if texts else np.zeros(task.items, bool)
            if shared.any() and not shared.all():
                keep[task.name] = np.flatnonzero(~shared)
        return keep

    def anchor_outputs(self, tasks: Sequence[Task]) -> dict[str, list[suite_rows.RunOutputs]]:
        """The bag-of-words anchors (``kit.evaluation.lexical``: TF-IDF, BM25) as fixed rows, each on the ``tasks``
        it applies to (none: left out), computed once per study object."""
        out = {}
        for name in ANCHORS:
            anchor, outputs = Lexical(name), {}
            for task in tasks:
                if anchor.applies(task):
                    key = (name, task.name)
                    if key not in self.anchor_scores:
                        scores = anchor.score_task(task)
                        self.anchor_scores[key] = {task.name: {m: s.outputs[0] for m, s in scores.items()}}
                    outputs.update(self.anchor_scores[key])
            if outputs:
                out[name] = [outputs]
        return out

    def row_report(self, outputs: dict[str, list[suite_rows.RunOutputs]], tasks: list[Task], title: str):
        """Rows' ``outputs`` on ``tasks`` and the bag-of-words anchors where they apply (``anchor_outputs``) as
        ``Evidence`` (the items shared with the selection data left out, the deterministic rows marked), compared and
        read as the report shows them (``report_of``)."""
        anchors = self.anchor_outputs(tasks)
        whitened = self.whitened_outputs() if self.TRAINING_FREE_CONTROL in outputs else {}
        left_out = {t.name: list(self.rows_left_out().get(t.name, [])) for t in tasks}
        for name, runs in {**anchors, **whitened}.items():
            for task in tasks:
                left_out[task.name] += [name] * (task.name not in runs[0])
        rows = {**outputs, **whitened, **anchors}
        labels = {row: self.row_label(row) for row in outputs}
        labels.update({row: f"{self.row_label(row.removesuffix('_whitening'))} + whitening" for row in whitened})
        evidence = suite_rows.Evidence.of(
            rows,
            self.comparisons(rows, [*anchors, *whitened]),
            tasks,
            {**labels, **{name: f"{ANCHOR_LABELS[name]} (bag of words)" for name in anchors}},
            keep=self.kept_items(tasks),
            fixed=[row for row in rows if row in anchors or (row not in whitened and self.row_fixed(row))],
            left_out=left_out,
        )
        return self.report_of(evidence, tasks, title)

    def report_of(
        self, evidence: suite_rows.Evidence, tasks: list[Task], title: str, **declared
    ) -> suite_rows.SuiteReport:
        """The report of compared rows: the primary alone, the tasks grouped into headline and apart, each group's
        secondary comparisons a family corrected by the ``correction`` parameter (``SuiteReport``). ``declared``:
        what a secondary family has instead of the run's paper effect, primary and control (MED-SE's share family:
        the suite's ``premise`` alone)."""
        own = declared or {
            "paper_effect": self.paper_effect(),
            "primary": self.primary(),
            **self.control_of(tasks),
            "rungs": self.rungs(),
        }
        return suite_rows.SuiteReport(
            evidence,
            tasks,
            self.notebook,
            self.selected_on(),
            self.selection_texts(),
            title,
            correction=self.p.correction,
            **own,
        )

    def control_of(self, tasks: Sequence[Task]) -> dict:
        """A report's positive control: the study's ``control()`` when its task is among ``tasks``; else, when that
        control did not pass in the report that holds it (``control_report``), its sentences as ``premise``; when the
        run cannot form one, ``kit.evaluation.rows.NO_CONTROL`` as ``premise``: its premise is not shown, so nothing
        is a finding."""
        control = self.control()
        if control is None:
            return {"premise": suite_rows.NO_CONTROL}
        if control.task in {t.name for t in tasks}:
            return {"control": control}
        if self.control_report().control is None:
            raise ValueError(f"the positive control's task {control.task} is in none of the run's reports")
        return {"premise": self.control_report().withheld()}

    def control(self) -> suite_rows.Control | None:
        """The study's positive control (``kit.evaluation.rows.Control``): the premise its method comparisons rest
        on, tested before them (``training_free_control`` when the study names ``TRAINING_FREE_CONTROL``). None:
        this run cannot form one (its rows lack the base method)."""
        return self.training_free_control(self.TRAINING_FREE_CONTROL) if self.TRAINING_FREE_CONTROL else None

    @property
    def starting_row(self) -> str:
        """The training-free row (``CONTROL_ROWS``) that reads the start out as the trained rows are read: their pooler
        without whitening; for either [CLS] pooler, [CLS] before the MLP (a ``cls`` pooler's MLP is untrained in the
        start, so the start is read without it)."""
        return "cls" if self.p.pooler.startswith("cls") else self.p.pooler

    def control_baseline(self) -> str:
        """The row the control tests the base row against: ``starting_row`` (study 1 names its own row that is the
        same start under the same pooler, so that the pair is compared once)."""
        return self.starting_row

    def training_free_control(self, base: str) -> suite_rows.Control | None:
        """Studies 1 and 4's positive control, rung (a) of the premise ladder: ``base`` (SimCSE) against its start
        read out the same way (``control_baseline``), on the control's task (``control_task``): what training added
        to the embedding the trained model is read by, as MED-SE's Table 3 sets each language model, evaluated
        directly with its [CLS] token or first-last average, beside the contrastive models (the augmentation paper's
        Table 5 lists no start). The stronger baselines are rungs (``rungs``), reported beside it and never a gate:
        until 2026-12-07 the gate was the best of six training-free read-outs chosen on the tested items themselves,
        which favoured the baseline and gave the trained row one read-out against six. None when ``base`` is not in
        ``rows`` or no training-free row pools as the trained rows do (an ``embed_last_avg`` pooler: its reports then
        say they have no control, and no comparison is a finding)."""
        if base not in self.p.rows or self.starting_row not in CONTROL_ROWS:
            return None
        words = TRAINING_FREE_POOLERS[self.starting_row][1]
        return suite_rows.Control(
            base,
            self.control_baseline(),
            self.control_task(),
            f"{self.row_label(base)} improves on its start read out the same way ({words})",
        )

    def rungs(self) -> list[suite_rows.Rung]:
        """The premise ladder beyond the control (rung a), on the control's task, each tested alone and reported:
        (b) ``base`` + whitening against the start + whitening, read out the same way, each whitening fitted on the
        same corpus sample (``whitened_outputs``); (c) ``base`` against the start's best training-free read-out chosen
        on the checkpoint-selection data (never the tested items; omitted when that is the control's own baseline);
        (d) ``base`` against each bag-of-words anchor that scores the task (``kit.evaluation.lexical``). Empty without
        a training-free control."""
        control = self.control() if self.TRAINING_FREE_CONTROL else None
        if control is None:
            return []
        base, task = control.row, control.task
        like = f"{self.row_label(base)} + whitening improves on its start + whitening (like for like)"
        whitened = (f"{base}_whitening", f"{self.starting_row}_whitening", task, "b", like)
        rungs = [suite_rows.Rung(*whitened)] if self.whitens_trained(base) else []
        chosen = self.selection_choice()
        if chosen is not None and chosen != self.starting_row:
            rungs.append(
                suite_rows.Rung(
                    base,
                    chosen,
                    task,
                    "c",
                    f"{self.row_label(base)} beats the start's best training-free read-out, chosen on "
                    f"{self.selected_on()}",
                )
            )
        task_object = TASKS[task] if task in TASKS else None
        for name in ANCHORS:
            if task_object is not None and Lexical(name).applies(task_object):
                words = f"{self.row_label(base)} beats bag of words ({ANCHOR_LABELS[name]})"
                rungs.append(suite_rows.Rung(base, name, task, "d", words))
        return rungs

    def selection_choice(self) -> str | None:
        """The training-free row (``CONTROL_ROWS``) with the best score on the checkpoint-selection data (its run's
        ``selection`` metric, first seed; a tie goes to the row listed first); None when no run records one."""
        scores = {}
        for row in CONTROL_ROWS:
            seeds = self.row_seeds().get(row)
            if seeds:
                value = self.run(row, seeds[0])["metrics"].get("selection")
                if value is not None and np.isfinite(value):
                    scores[row] = value
        return max(scores, key=lambda row: scores[row]) if scores else None

    def control_task(self) -> str | None:
        """The task a training-free positive control (``TRAINING_FREE_CONTROL``) is tested on, known before the run:
        the ``control_task`` parameter, else ``declared_task``; None for a study whose control is its own."""
        if not self.TRAINING_FREE_CONTROL:
            return None
        return getattr(self.p, "control_task", None) or self.declared_task()

    def declared_task(self) -> str:
        """The suite task a study's own tests read: the primary's, else the paper's claim's when the suite scores it,
        else the first suite task."""
        suite = [t.name for t in self.suite_tasks]
        declared = [d.task for d in (self.primary(), self.paper_effect()) if d is not None and d.task in suite]
        return (declared or suite)[0]

    def control_report(self) -> suite_rows.SuiteReport:
        """The report that holds the positive control (the suite's; QFCL's is its ROUGE report)."""
        return self.suite_report()

    def paper_effect(self) -> suite_rows.PaperEffect | None:
        """What the study's paper claims for its main comparison (None: no claim on these tasks)."""
        return None

    def save_model(self, encoder, row: str, seed: int, run_dir: Path) -> Path:
        """``<run>/models/<row>/``: the encoder as a sentence-transformers folder (``Encoder.save``) in its run's
        folder, marked with its row, seed, run and training data for its model card; the report's record publishes
        it as ``<report>/models/<row>/`` (``kit.report.model_card``)."""
        folder = encoder.save(run_dir / MODELS / row)
        seeds = self.row_seeds()[row]
        mark(folder, row, self.row_label(row), seed, run_dir.name, self.training_data(row), seeds, row)
        return folder

    def training_data(self, row: str) -> str:
        """What a table row trains on, in words (a saved model's card)."""
        raise NotImplementedError

    @classmethod
    def saved_rows(cls, p: Params) -> list[str]:
        """The table rows whose models a run file saves (``save_models``), from its parameters."""
        return []

    def write_record(
        self, record: RunRecord, tables: dict[str, pd.DataFrame], metrics: dict, headline: dict, **extra
    ) -> Path:
        """``results_table.txt`` (every table, titled; the batch runner prints it) and ``results.json``:
        ``metrics``, ``headline`` ({"name", "value"}: what the reports index shows), the tables, the model, what it
        substitutes and the trained positions it was read within (``model_positions``), provenance, ``extra`` and the
        compute time of every run used; then the models those runs saved, published in ``<report>/models/`` with
        their cards (``kit.report.model_card``). A metric given as a ``SuiteReport`` is recorded as its
        ``record()``, its evidence saved as ``<report>/evidence/<metric>.npz`` (what ``python -m kit.docs recompute``
        computes its verdicts from)."""
        for key, value in metrics.items():
            if isinstance(value, suite_rows.SuiteReport):
                value.evidence.save(self.report_dir / EVIDENCE / f"{key}.npz")
        controls = [v.control_text() for v in metrics.values() if isinstance(v, suite_rows.SuiteReport)]
        if any(controls):
            headline = {**headline, "control": next(text for text in controls if text)}
        metrics = {k: v.record() if isinstance(v, suite_rows.SuiteReport) else v for k, v in metrics.items()}
        path = record.write(
            metrics=metrics,
            headline=headline,
            tables=write_tables(self.report_dir, tables),
            model=self.model_source.description,
            substitute_for=self.model_source.substitute_for,
            model_positions=load_tokenizer(self.p.model).model_max_length,  # no text was read beyond them
            runs=len(self.run_seconds),
            compute_seconds=round(sum(self.run_seconds.values()), 1),
            run_seconds={name: round(s, 1) for name, s in self.run_seconds.items()},
            **extra,
        )
        publish(self.report_dir, [self.report_dir / "runs" / name for name in self.run_seconds])
        write_cards(self.report_dir, json.loads(path.read_text(encoding="utf-8")))
        return path


def best_row(results: pd.DataFrame, metric: str, rows: Iterable[str] | None = None) -> str:
    """The row (``method`` column) with the highest mean ``metric`` over seeds, among ``rows`` (default:
    every row); a tie goes to the row listed first."""
    pool = results if rows is None else results[results.method.isin(list(rows))]
    return pool.groupby("method", sort=False)[metric].mean().idxmax()


def seed_spread(results: pd.DataFrame, metric: str, what: str, by: str = "method", scale: float = 100.0) -> str:
    """A sentence on the seed-to-seed spread of ``metric`` (sample std over seeds per row, x ``scale``),
    the smallest difference between rows that is more than noise at this budget."""
    spread = results.groupby(by)[metric].std().dropna() * scale
    if not len(spread):
        return f"One seed per row: the seed-to-seed spread of {what} is not measured."
    return (
        f"Seed-to-seed std of {what} ranges {spread.min():.2f}-{spread.max():.2f} points over the rows: differences "
        "smaller than that are noise at this budget."
    )
