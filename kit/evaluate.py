"""Score any encoder on the evaluation suite: ``python -m kit.evaluate MODEL [MODEL ...] [--tasks ...]
[--out DIR] [--seed N]``.

A MODEL is an offline alias (``minilm``, ``tiny-random-bert``, ``pubmed-bert-mini``, ...), a Hugging Face
name, a local model folder or a sentence-transformers folder. The first MODEL is the baseline: every other
one gets its paired difference to it on every task (interval, p-value from the same bootstrap, smallest
detectable difference), and ``--compare A B`` adds the difference A - B. The comparisons on the tasks' main
metrics are one family, corrected by ``--correction`` (Holm by default): ``*`` marks a difference whose
adjusted p-value is below 1 - confidence. The console gets one line per (model, task)
with its time, then the table; ``DIR/evaluation.html`` holds the same table, every metric and the task
declarations, and ``DIR/evaluation.json`` every number with the settings and versions. Embeddings are
cached per model checkpoint and text list (``kit.evaluation.embeddings``), so a second run of a model only
recomputes the intervals. ``DIR/mteb/results/`` holds the scores as MTEB result files (``kit.report.mteb_results``),
and ``--tasks mteb:NAME`` scores an MTEB task with the kit's intervals (``kit.evaluation.mteb_tasks``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kit.core.cli import Parser, checked, integer, interrupts_outside_finalizers, output_folder
from kit.core.files import json_text, write_text_atomic
from kit.evaluation.embeddings import (
    BACKENDS,
    PRECISIONS,
    Embedder,
    EmbeddingCache,
    backend_device,
    default_cache,
    model_pooler,
    onnx_refusal,
)
from kit.evaluation.families import add_family_options
from kit.evaluation.lexical import ANCHORS, Lexical
from kit.evaluation.mteb_tasks import from_mteb, is_mteb
from kit.evaluation.suite import SuiteResult, comparison_pairs, evaluate
from kit.evaluation.task import Task
from kit.evaluation.tasks import GROUPS, NAMED_ONLY, TASKS, select
from kit.paths import REPORTS, shown
from kit.report.evaluation_page import legend, render_html, text_table, title
from kit.report.mteb_results import write_mteb_results

MIN_DRAWS = 100  # resamples: below 100 a 95% interval ends on fewer than three draws, p on 0.02
MAX_DRAWS = 100_000  # resamples: a p value to 1e-5; more only costs time (each draw rescores every task)


class Console:
    """Plain progress lines stamped with the elapsed time: ``[kit.evaluate 0:00:04] minilm · biosses-all: 1.2s``."""

    def __init__(self):
        self.started = time.monotonic()

    def __call__(self, text: str) -> None:
        s = round(time.monotonic() - self.started)
        print(f"[kit.evaluate {s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}] {text}", flush=True)


def task_or_group(names: str) -> str:
    """A ``type=`` for ``--tasks``: task or group names of ``kit.evaluation.tasks``, or MTEB tasks (``mteb:NAME``,
    ``mteb:NAME/SUBSET``), several joined by commas."""
    for name in names.split(","):
        try:
            if is_mteb(name):
                from_mteb(name)
            else:
                select([name])
        except KeyError as err:
            raise argparse.ArgumentTypeError(err.args[0]) from None
        except (ImportError, ValueError) as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return names


def tasks_named(names: list[str]) -> list[Task]:
    """The kit's tasks (in suite order) and then the MTEB tasks, of ``--tasks`` values (comma-joined names); an MTEB
    task named twice (``mteb:X``, ``mteb:X/default``) once."""
    flat = [name for value in names for name in value.split(",")]
    kit = [name for name in flat if not is_mteb(name)]
    mteb = {task.name: task for task in (from_mteb(name) for name in flat if is_mteb(name))}
    return (select(kit) if kit else []) + list(mteb.values())


def parser() -> Parser:
    """The arguments, each checked where argparse reads it (see ``kit.core.cli``); the models' folders and
    files too (``kit.core.models.check_available``)."""
    from kit.core.devices import check_device
    from kit.core.models import MIN_MAX_LENGTH, POOLERS, check_available

    ap = Parser(prog="python -m kit.evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "models",
        nargs="+",
        type=checked(check_available),
        help="aliases, Hugging Face names or folders; the first is the baseline",
    )
    ap.add_argument(
        "--tasks",
        nargs="+",
        type=task_or_group,
        default=["all"],
        help=f"task names or groups ({', '.join(GROUPS)}), or MTEB tasks as mteb:NAME (mteb:NAME/SUBSET), where the "
        f"hub or the Hugging Face datasets cache has their data; commas join names; tasks: {', '.join(TASKS)} "
        f"(in no group, scored only when named: {', '.join(NAMED_ONLY) or 'none'}) (default: all)",
    )
    ap.add_argument(
        "--out",
        type=output_folder,
        default=str(REPORTS / "evaluation"),
        help="output folder (default: reports/evaluation)",
    )
    ap.add_argument("--seed", type=integer(0), default=0, help="seed of the bootstrap draws, 0 or more (default 0)")
    ap.add_argument(
        "--resamples",
        type=integer(MIN_DRAWS, MAX_DRAWS),
        default=2000,
        help=f"bootstrap resamples, {MIN_DRAWS} to {MAX_DRAWS:,} (default 2000)",
    )
    ap.add_argument(
        "--compare",
        nargs=2,
        action="append",
        default=[],
        metavar=("MODEL", "BASELINE"),
        help="also compare MODEL with BASELINE (both among the models; repeat for more pairs)",
    )
    add_family_options(ap)
    ap.add_argument(
        "--anchors",
        nargs="+",
        choices=(*ANCHORS, "none"),
        default=list(ANCHORS),
        help="lexical anchors scored beside the models where they apply (English pair and retrieval tasks: tfidf; "
        "English retrieval tasks: bm25), each model compared with them outside the family; none: no anchor "
        "(default: tfidf bm25)",
    )
    ap.add_argument(
        "--pooler",
        choices=("auto", *POOLERS),
        default="auto",
        help="pooler, or auto: what the model declares (default)",
    )
    ap.add_argument(
        "--max-length",
        type=integer(MIN_MAX_LENGTH),
        default=256,
        help=f"tokens per text, [CLS] and [SEP] included (default 256; at least {MIN_MAX_LENGTH}: one text token)",
    )
    ap.add_argument(
        "--batch-tokens",
        type=integer(0),
        default=1024,
        help="padded tokens per forward pass (default 1024; 0: --batch-size)",
    )
    ap.add_argument(
        "--batch-size", type=integer(1), default=64, help="texts per forward pass with --batch-tokens 0 (default 64)"
    )
    ap.add_argument("--precision", choices=PRECISIONS, default="fp32", help="fp32 (default) or bf16 autocast")
    ap.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="auto (default: onnx where it can run, a kit encoder on the CPU in fp32, else torch), torch, onnx (ONNX "
        "Runtime on the CPU, fp32: the same scores, an export cached per model) or onnx-int8 (quantised weights: "
        "faster, scores move)",
    )
    ap.add_argument(
        "--device", type=checked(check_device), default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps"
    )
    ap.add_argument(
        "--cache",
        type=output_folder,
        default=str(default_cache()),
        help="embedding cache folder (default: $KIT_CACHE/embeddings)",
    )
    ap.add_argument(
        "--no-cache",
        action="store_true",
        help="encode every text, read and write no embedding cache (an ONNX export is still cached)",
    )
    return ap


def backend_refusal(backend: str, models: list[str], pooler: str, precision: str, device: str) -> None:
    """ValueError naming ``--backend`` when an ONNX backend cannot encode one of ``models`` (``onnx_refusal``)."""
    from kit.core.devices import resolve_device
    from kit.core.models import resolve_model

    device_type = resolve_device(backend_device(backend, device)).type
    for model in models:
        chosen = model_pooler(resolve_model(model)) if pooler == "auto" else pooler
        if why := onnx_refusal(chosen, device_type, precision):
            raise ValueError(f"argument --backend: {backend} runs in fp32 on the CPU with ONNX Runtime; {model}: {why}")


def checked_tasks(args: argparse.Namespace) -> list[Task]:
    """The tasks, after what argparse cannot check one value at a time: no model named twice, a backend that can run
    them (``backend_refusal``), every pair of ``--compare`` among the models, and every task's dataset read (a missing
    or malformed one, or one with no item, is refused before any model runs). Raises ``ValueError`` naming the
    argument."""
    same = [str(Path(m).expanduser().resolve()) if Path(m).expanduser().is_dir() else m for m in args.models]
    twice = sorted({m for m, key in zip(args.models, same) if same.count(key) > 1})
    if twice:
        raise ValueError(f"argument models: {', '.join(twice)} name one model twice; name each model once")
    if args.backend.startswith("onnx"):
        backend_refusal(args.backend, args.models, args.pooler, args.precision, args.device)
    out = Path(args.out)
    for name, kind in (("evaluation.html", "a file"), ("evaluation.json", "a file"), ("mteb", "a folder")):
        path = out / name
        if path.exists() and (path.is_dir() if kind == "a file" else not path.is_dir()):
            raise ValueError(f"argument --out: {path} is in the way: it must be {kind}")
    if "none" in args.anchors and len(args.anchors) > 1:
        raise ValueError(f"argument --anchors: none stands alone, got {' '.join(args.anchors)}")
    try:
        comparison_pairs(args.models, [tuple(pair) for pair in args.compare])
    except ValueError as err:
        raise ValueError(f"argument --compare: {err}") from None
    tasks = tasks_named(args.tasks)
    for task in tasks:
        try:
            task.texts()
        except (OSError, ValueError) as err:
            raise ValueError(f"argument --tasks: {task.name}: {err}") from None
        if not task.items:
            raise ValueError(f"argument --tasks: {task.name}: no item to score (a retrieval task: no judged query)")
    return tasks


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report written; 2 (``SystemExit``) when an argument, or a model or dataset it names, is
    refused before any work; 1 when a model fails while it runs; 130 on Ctrl-C (one line)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = parser()
    args = ap.parse_args(argv)
    try:
        try:
            tasks = checked_tasks(args)
        except ValueError as err:
            ap.error(str(err))
        return _evaluate(args, argv, tasks, Console())
    except KeyboardInterrupt:
        message = "a report is whole once its last line, naming its files, is printed"
        print(f"kit.evaluate: interrupted; rerun the same command ({message})", file=sys.stderr)
        return 130


def _evaluate(args: argparse.Namespace, argv: list[str], tasks: list[Task], say) -> int:
    """Embed, score and compare, then write the report; 1 when a model fails to load or to run."""
    try:
        cache = None if args.no_cache else EmbeddingCache(args.cache)
        embedders = {
            name: Embedder.from_name(
                name,
                args.pooler,
                args.max_length,
                args.batch_size,
                args.precision,
                args.device,
                cache,
                use_cache=not args.no_cache,
                batch_tokens=args.batch_tokens,
                backend=args.backend,
            )
            for name in args.models
        }
        say(f"{len(args.models)} model(s), {len(tasks)} task(s): {', '.join(t.name for t in tasks)}")
        pairs = [tuple(pair) for pair in args.compare]
        anchors = [Lexical(name) for name in args.anchors if name != "none"]
        result = evaluate(
            embedders,
            tasks,
            args.seed,
            args.resamples,
            args.confidence,
            pairs,
            args.correction,
            progress=say,
            anchors=anchors,
        )
    except (OSError, ValueError) as err:  # a model that fails to load or to run
        print(f"kit.evaluate: error: {err}", file=sys.stderr)
        return 1
    say(f"done in {result.seconds:.1f}s")
    print(f"\n{title(result.models)}: scores x100 [{result.confidence:.0%} bootstrap interval]\n")
    print(text_table(result.rows()))
    print(f"\n{legend(result)}")
    out = Path(args.out)
    about = [e.about for e in embedders.values()]
    write_text_atomic(out / "evaluation.html", render_html(result, about))
    write_text_atomic(out / "evaluation.json", json_text(record(result, about, args, argv), indent=1, default=str))
    write_mteb_results(result, about, out / "mteb")
    files = f"MTEB result files {shown(out / 'mteb' / 'results')}"
    print(f"\nreport {shown(out / 'evaluation.html')}; numbers {shown(out / 'evaluation.json')}; {files}")
    return 0


def record(result: SuiteResult, about: list[dict], args: argparse.Namespace, argv: list[str]) -> dict:
    """evaluation.json: every number, the settings, the models, versions, device, commit and times."""
    import torch

    from kit.core.devices import describe, resolve_device
    from kit.report.record import git_commit, versions

    return {
        "command": "python -m kit.evaluate " + " ".join(argv),
        "settings": {
            **{k: v for k, v in vars(args).items() if k not in ("models", "out", "cache")},
            "cache": None if args.no_cache else shown(EmbeddingCache(args.cache).folder),
        },
        "model_details": about,
        **result.to_dict(),
        "versions": versions(),
        "device": describe(resolve_device(args.device)),
        "torch_threads": torch.get_num_threads(),
        "git_commit": git_commit(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


if __name__ == "__main__":
    interrupts_outside_finalizers()  # a command's process only: a caller's own handlers stay as they are
    sys.exit(main())
