"""``kit.evaluate``'s scores as MTEB result files, in the layout of MTEB's results repository
(github.com/embeddings-benchmark/results): ``<out>/results/<model>/<revision>/<Task>.json`` and ``model_meta.json``
beside them, so that a kit-trained model's scores can be submitted, or read back with
``mteb.ResultCache(<out>).load_results(...)`` and ``mteb.TaskResult.from_disk``.

Each task's metrics carry their MTEB names on MTEB's 0-1 scale (``kit.evaluation.mteb_tasks.METRIC_NAMES``), the
main one as ``main_score``, each with the kit's bootstrap interval beside it (``<metric>_kit_interval``: low, high,
confidence, items). A kit task keeps its own name and its data's source and commit as ``dataset_revision``; an
MTEB task (``mteb:NAME``) its MTEB name and revision. A model is named as MTEB knows it where the kit can tell
(``minilm`` is sentence-transformers/all-MiniLM-L6-v2, a hub name itself), else ``medcse/<alias>`` or
``local/<folder>``; its revision is the kit's digest of its files (``kit.core.models.model_fingerprint``), since
the hub's commit of a local copy is not known.
"""

from __future__ import annotations

import time
from importlib import metadata
from pathlib import Path

from kit.core.files import json_text, write_text_atomic
from kit.evaluation.mteb_tasks import LANGUAGES, METRIC_NAMES, MTEB_TYPES, PREFIX, is_mteb, revision
from kit.evaluation.suite import SuiteResult
from kit.evaluation.task import Task


def mteb_version() -> str | None:
    try:
        return metadata.version("mteb")
    except metadata.PackageNotFoundError:
        return None


def model_name(name: str) -> str:
    """A model's name in MTEB's results: its hub name (``kit.core.models.hub_name``), else ``medcse/<alias>`` or
    ``local/<folder>``."""
    from kit.core.models import hub_name

    folder = Path(name).expanduser()
    return hub_name(name) or (f"local/{folder.resolve().name}" if folder.exists() else f"medcse/{name}")


def model_meta(name: str, fingerprint: str, about: dict, languages: list[str]) -> dict:
    """``model_meta.json``: MTEB's ``ModelMeta`` fields, unknown ones null."""
    return {
        "name": model_name(name),
        "revision": fingerprint,
        "release_date": None,
        "languages": languages,
        "n_parameters": None,
        "memory_usage_mb": None,
        "max_tokens": about.get("max_length"),
        "embed_dim": None,
        "license": None,
        "open_weights": True,
        "public_training_code": None,
        "public_training_data": None,
        "framework": ["ONNX"]
        if about.get("backend", "torch").startswith("onnx")
        else ["Sentence Transformers", "PyTorch"],
        "reference": None,
        "similarity_fn_name": "cosine",
        "use_instructions": False,
        "training_datasets": None,
        "loader": None,
    }


def task_name(task: Task) -> tuple[str, str]:
    """(the task's name in MTEB, its subset): an MTEB task's own, a kit task's name and ``default``."""
    if not is_mteb(task.name):
        return task.name, "default"
    name, _, subset = task.name.removeprefix(PREFIX).partition("/")
    return name, subset or "default"


def task_file(result: SuiteResult, k: int, model: str, languages: list[str]) -> dict:
    """One task's result file for ``model``."""
    task_result = result.tasks[k]
    task = task_result.task
    name, subset = task_name(task)
    estimates = task_result.estimates[model]
    scores = {}
    for metric, e in estimates.items():
        key = METRIC_NAMES.get(metric, metric)
        scores[key] = e.value
        scores[f"{key}_kit_interval"] = {"low": e.low, "high": e.high, "confidence": e.confidence, "items": e.items}
    split = task.split.split(",")[0] if is_mteb(task.name) else "test"
    return {
        "dataset_revision": revision(task),
        "task_name": name,
        "mteb_version": mteb_version(),
        "scores": {
            split: [
                {
                    **scores,
                    "main_score": estimates[task.main_metric].value,
                    "hf_subset": subset,
                    "languages": languages,
                }
            ]
        },
        "evaluation_time": round(task_result.seconds.get(model, 0.0), 2),
        "kg_co2_emissions": None,
        "date": time.time(),
    }


def write_mteb_results(result: SuiteResult, about: list[dict], out: Path) -> list[Path]:
    """Every (model, task) of ``result`` as an MTEB result file under ``out/results`` (the models' ``about``, from
    ``Embedder.about``, in ``result.models``' order); returns the files written."""
    from kit.core.models import model_fingerprint

    written = []
    for model, details in zip(result.models, about):
        fingerprint = (details.get("fingerprint") or model_fingerprint(model)).rpartition("@")[2]  # a hub commit
        if details.get("backend") == "onnx-int8":  # quantised weights score otherwise: never beside the exact scores
            fingerprint += "-onnx-int8"
        folder = Path(out) / "results" / model_name(model).replace("/", "__") / fingerprint
        languages = sorted({LANGUAGES.get(t.task.language, t.task.language) for t in result.tasks})
        meta = model_meta(model, fingerprint, details, languages)
        written.append(write_text_atomic(folder / "model_meta.json", json_text(meta, indent=1)))
        files: dict[str, dict] = {}  # by MTEB task name: the subsets of one task share its file
        for k, task_result in enumerate(result.tasks):
            if task_result.task.type not in MTEB_TYPES:
                continue  # a probe: no MTEB task type holds it
            language = [LANGUAGES.get(task_result.task.language, task_result.task.language)]
            record = task_file(result, k, model, language)
            if record["task_name"] in files:
                kept = files[record["task_name"]]["scores"]
                for split, subsets in record["scores"].items():
                    kept.setdefault(split, []).extend(subsets)
            else:
                files[record["task_name"]] = record
        for name, record in files.items():
            written.append(write_text_atomic(folder / f"{name}.json", json_text(record, indent=1)))
    return written
