"""Score any encoder on the evaluation suite: ``python -m kit.evaluate MODEL [MODEL ...] [--tasks ...]
[--out DIR] [--seed N]``.

A MODEL is an offline alias (``minilm``, ``tiny-random-bert``, ``pubmed-bert-mini``, ...), a Hugging Face
name, a local model folder or a sentence-transformers folder. The first MODEL is the baseline: every other
one gets its paired difference to it on every task (interval, permutation p-value, smallest detectable
difference), marked ``*`` when the interval excludes zero. The console gets one line per (model, task)
with its time, then the table; ``DIR/evaluation.html`` holds the same table, every metric and the task
declarations, and ``DIR/evaluation.json`` every number with the settings and versions. Embeddings are
cached per model checkpoint and text list (``kit.evaluation.embeddings``), so a second run of a model only
recomputes the intervals.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from pathlib import Path

from kit.core.cli import Parser, checked, integer, number, output_folder
from kit.core.files import write_text_atomic
from kit.evaluation.embeddings import PRECISIONS, Embedder, EmbeddingCache, default_cache
from kit.evaluation.suite import SuiteResult, evaluate
from kit.evaluation.task import Task
from kit.evaluation.tasks import GROUPS, TASKS, select
from kit.paths import REPORTS, shown

NUMERIC = ("items", "score", "p", "detectable")
MIN_DRAWS = 100  # resamples, permutations: below 100 a 95% interval ends on fewer than three draws, p on 0.01


class Console:
    """Plain progress lines stamped with the elapsed time: ``[kit.evaluate 0:00:04] minilm · biosses-all: 1.2s``."""

    def __init__(self):
        self.started = time.monotonic()

    def __call__(self, text: str) -> None:
        s = round(time.monotonic() - self.started)
        print(f"[kit.evaluate {s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}] {text}", flush=True)


def text_table(rows: list[dict]) -> str:
    """Rows as aligned text columns (numbers right-aligned, text left-aligned)."""
    if not rows:
        return ""
    columns = list(rows[0])
    cells = [[str(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]

    def line(values):
        return "  ".join(
            v.rjust(w) if c in NUMERIC or c.startswith("vs ") else v.ljust(w)
            for c, v, w in zip(columns, values, widths)
        ).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def all_metric_rows(result: SuiteResult, scale: float = 100.0, digits: int = 2) -> list[dict]:
    """One row per (task, metric, model): every metric with its interval, and the difference to the baseline."""
    rows = []
    for r in result.tasks:
        for metric in r.task.metrics:
            for model in result.models:
                row = {
                    "task": r.task.name,
                    "metric": r.task.metric_labels[metric],
                    "model": model,
                    "score": f"{r.estimates[model][metric].scaled(scale):.{digits}f}",
                    f"vs {result.baseline}": "baseline",
                }
                if model in r.comparisons:
                    c = r.comparisons[model][metric].scaled(scale)
                    row[f"vs {result.baseline}"] = f"{c:.{digits}f}" + (" *" if c.excludes_zero else "")
                rows.append(row)
    return rows


def _html_table(rows: list[dict]) -> str:
    if not rows:
        return "<p>(no rows)</p>"
    columns = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)

    def cell(column, value):
        numeric = column in NUMERIC or column.startswith("vs ")
        return f'<td class="{"num" if numeric else "text"}">{html.escape(str(value))}</td>'

    body = "".join("<tr>" + "".join(cell(c, r[c]) for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def title(models: list[str]) -> str:
    return f"kit.evaluate: {models[0]} (baseline)" + "".join(f" vs {m}" for m in models[1:])


def render_html(result: SuiteResult, about: list[dict]) -> str:
    """The report page: the suite table, every metric, the models and the task declarations. Plain HTML,
    no scripts, links relative to the page (evaluation.json beside it)."""
    conf = f"{result.confidence:.0%}"
    method = (
        f"Scores x100 with {conf} percentile bootstrap intervals ({result.resamples:,} resamples of the task's "
        f"items, seed {result.seed}). Every model after the first is compared with the first, "
        f"{html.escape(result.baseline)}: the paired difference (both models scored on the same item draws) "
        f"with its {conf} interval, marked * when the interval excludes zero; p is a two-sided paired "
        f"permutation test ({result.permutations:,} permutations, swapping the two models' outputs item by "
        "item); detectable is the smallest true difference this comparison would detect with 80% power at "
        "alpha 0.05 (2.80 x the bootstrap standard error of the difference)."
    )
    models = "".join(
        f"<li><b>{html.escape(a['name'])}</b>: {html.escape(a.get('description', ''))}; pooler "
        f"{html.escape(str(a.get('pooler', '')))}, max length {a.get('max_length', '')}, "
        f"{html.escape(str(a.get('precision', '')))}</li>"
        for a in about
    )
    declarations = [
        {
            "task": r.task.name,
            "type": r.task.type,
            "data": r.task.dataset.name,
            "split": r.task.split,
            "items": r.task.items,
            "metric": r.task.metric_labels[r.task.main_metric],
            "positive": r.task.positive,
            "seen by": ", ".join(r.task.seen_by) or "-",
            "source": r.task.dataset.source,
        }
        for r in result.tasks
    ]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}"
        "table{border-collapse:collapse;margin:1em 0}th,td{padding:3px 10px;border-bottom:1px solid #ddd;"
        "vertical-align:top}th{text-align:left}td.text{text-align:left}td.num{text-align:right;"
        "white-space:nowrap;font-variant-numeric:tabular-nums}"
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title(result.models))}'
        f"</title><style>{style}</style></head><body>\n<h1>{html.escape(title(result.models))}</h1>\n"
        f"<p>{method}</p>\n{_html_table(result.rows())}\n"
        f"<p>* the paired {conf} interval of the difference excludes zero. A task is 'seen by' the studies "
        "that train on its data: report it apart for them.</p>\n"
        f"<h2>Every metric</h2>\n{_html_table(all_metric_rows(result))}\n"
        f"<h2>Models</h2>\n<ul>{models}</ul>\n<h2>Tasks</h2>\n{_html_table(declarations)}\n"
        f'<p>Every number, the settings and the versions: <a href="evaluation.json">evaluation.json</a>. '
        f"Suite time {result.seconds:.0f} s.</p>\n</body></html>\n"
    )


def task_or_group(name: str) -> str:
    """A ``type=`` for ``--tasks``: a task or group name of ``kit.evaluation.tasks``."""
    try:
        select([name])
    except KeyError as err:
        raise argparse.ArgumentTypeError(err.args[0]) from None
    return name


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
        help=f"task names or groups ({', '.join(GROUPS)}); tasks: {', '.join(TASKS)} (default: all)",
    )
    ap.add_argument(
        "--out",
        type=output_folder,
        default=str(REPORTS / "evaluation"),
        help="output folder (default: reports/evaluation)",
    )
    ap.add_argument(
        "--seed", type=integer(0), default=0, help="seed of the bootstrap and permutation draws, 0 or more (default 0)"
    )
    ap.add_argument(
        "--resamples",
        type=integer(MIN_DRAWS),
        default=2000,
        help=f"bootstrap resamples, at least {MIN_DRAWS} (default 2000)",
    )
    ap.add_argument(
        "--permutations",
        type=integer(MIN_DRAWS),
        default=2000,
        help=f"permutations of the p-value, at least {MIN_DRAWS} (default 2000)",
    )
    ap.add_argument(
        "--confidence", type=number(0, 1), default=0.95, help="interval level, between 0 and 1 (default 0.95)"
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
        default=3072,
        help="padded tokens per forward pass (default 3072; 0: --batch-size)",
    )
    ap.add_argument(
        "--batch-size", type=integer(1), default=64, help="texts per forward pass with --batch-tokens 0 (default 64)"
    )
    ap.add_argument("--precision", choices=PRECISIONS, default="fp32", help="fp32 (default) or bf16 autocast")
    ap.add_argument(
        "--device", type=checked(check_device), default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps"
    )
    ap.add_argument(
        "--cache",
        type=output_folder,
        default=str(default_cache()),
        help="embedding cache folder (default: $KIT_CACHE/embeddings)",
    )
    ap.add_argument("--no-cache", action="store_true", help="encode every text, read and write no cache")
    return ap


def checked_tasks(args: argparse.Namespace) -> list[Task]:
    """The tasks, after what argparse cannot check one value at a time: no model named twice, and every task's
    dataset read (a missing or malformed one is refused before any model runs). Raises ``ValueError``
    naming the argument."""
    twice = sorted({m for m in args.models if args.models.count(m) > 1})
    if twice:
        raise ValueError(f"argument models: {', '.join(twice)} named twice; name each model once")
    tasks = select(args.tasks)
    for task in tasks:
        try:
            task.texts()
        except (OSError, ValueError) as err:
            raise ValueError(f"argument --tasks: {task.name}: {err}") from None
    return tasks


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report written; 2 (``SystemExit``) when an argument, or a model or dataset it names, is
    refused before any work; 1 when a model fails while it runs."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = parser()
    args = ap.parse_args(argv)
    try:
        tasks = checked_tasks(args)
    except ValueError as err:
        ap.error(str(err))
    say = Console()
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
            )
            for name in args.models
        }
        say(f"{len(args.models)} model(s), {len(tasks)} task(s): {', '.join(t.name for t in tasks)}")
        result = evaluate(embedders, tasks, args.seed, args.resamples, args.permutations, args.confidence, progress=say)
    except (OSError, ValueError) as err:  # a model that fails to load or to run
        print(f"kit.evaluate: error: {err}", file=sys.stderr)
        return 1
    say(f"done in {result.seconds:.1f}s")
    print(f"\n{title(result.models)}: scores x100 [{result.confidence:.0%} bootstrap interval]\n")
    print(text_table(result.rows()))
    print(
        f"\n* the paired {result.confidence:.0%} interval excludes zero; p: paired permutation test; detectable: "
        "smallest difference detectable with 80% power at alpha 0.05"
    )
    out = Path(args.out)
    about = [e.about for e in embedders.values()]
    write_text_atomic(out / "evaluation.html", render_html(result, about))
    write_text_atomic(out / "evaluation.json", json.dumps(record(result, about, args, argv), indent=1, default=str))
    print(f"\nreport {shown(out / 'evaluation.html')}; numbers {shown(out / 'evaluation.json')}")
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
    sys.exit(main())
