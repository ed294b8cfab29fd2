"""Test the test: the false "significant" rate under the null and the power of the kit's comparisons
(``kit.evaluation.inference``) against the multi-bootstrap it replaced, on simulated studies
(``kit.evaluation.simulation``) at the seeds and items the run files use.

    python benchmarks/calibration.py            # 400 null and 400 alternative pairs per cell (about an hour on 2 cores)
    python benchmarks/calibration.py --quick    # 20 items, 2 and 3 seeds, 20 pairs per cell: that it runs
    python benchmarks/calibration.py --seeds 2 --items 100 --df-cap inf   # without the df cap (writes nothing)
    python benchmarks/calibration.py --control --metric mean --seeds 2 --items 9962 --lone-run-df inf  # without the
                                                # 1-df rule for 2 seeds against a fixed row (writes nothing)
    python benchmarks/calibration.py --control  # the positive control's design (about 10 minutes on 2 cores)
    python benchmarks/calibration.py --control --folds 5  # study 2's control on its cross-fitted held-out task
    python benchmarks/calibration.py --metric mean --resamples 200           # a mean of per-item scores (ROUGE-L,
    python benchmarks/calibration.py --control --metric mean --resamples 200 # nDCG@10) at 500 and 9,962 items

For each metric (Spearman, average precision), noise regime (item, run, mixed), items (20, 100) and seeds per method
(2, 3, 5, 10): the share of null pairs called significant at alpha 0.05 with its Monte-Carlo error, by the kit's
test and by the reference, and the share of pairs with a true difference (signal weight +``EFFECT``, its size in the
metric x100 printed beside it) that each calls significant. A full run writes ``benchmarks/results/calibration.json``,
from which ``python -m kit.docs render`` generates the table on the evaluation page.

``--control`` simulates the positive control instead (``kit.evaluation.simulation.control_pair``): a trained method
against the best of ``CANDIDATES`` deterministic training-free embeddings chosen on the same items, Spearman on 100
items, each noise regime and seeds per method; a pass is a significant difference with the trained side ahead, a
fail one with it behind at alpha / candidates (``kit.evaluation.rows.fail_level``), and both are counted under the
null. With one candidate the choice costs nothing; with six independent ones it costs the most, so the kit's control
(six correlated candidates) lies between. A full run writes ``benchmarks/results/calibration_control.json``.
``--control --folds K`` simulates study 2's control on its held-out task instead (``cross_fitted_pair``): teacher and
student trained on K fixed folds of 100 items, each seed's fold models pooled, at ``FOLD_SEEDS``, without and with a
method-by-fold effect that every seed shares (``FOLD_SDS``), into ``benchmarks/results/calibration_control_folds.json``.
``--metric mean`` simulates a metric that is a mean of per-item scores in (0, 1) (per-question ROUGE-L, per-query
nDCG@10) at ``MEAN_ITEMS`` (MeQSum's 500 test questions; the Disease Ontology's 9,962 queries) and ``MEAN_SEEDS``,
the two-row table into ``benchmarks/results/calibration_mean.json`` and with ``--control`` the control's into
``benchmarks/results/calibration_control_mean.json``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, record  # noqa: E402

from kit.evaluation import inference  # noqa: E402
from kit.evaluation.simulation import (  # noqa: E402
    NOISES,
    calibrated,
    control_pair,
    cross_fitted_pair,
    multi_bootstrap,
    rejection_rates,
)

METRICS = ("spearman", "average_precision")
ITEMS = (20, 100)
SEEDS = (2, 3, 5, 10)
EFFECT = 0.15
"""The alternative: the first method's signal weight 0.45 + 0.15 (about +6 Spearman points x100 on 100 items)."""
ALPHA = 0.05
CANDIDATES = (1, 6)
"""The control's training-free candidates: one (no choice) and six (the kit's count, independent: the worst case)."""
MEAN_ITEMS = (500, 9962)
"""``--metric mean``: the test questions of QFCL's MeQSum split (ROUGE-L) and the Disease Ontology's queries
(``doid-definition-name``, nDCG@10)."""
MEAN_SEEDS = (2, 3, 5)
"""``--metric mean``: the seeds per trained row of the run files scored on such tasks."""
FOLD_SEEDS = (3, 5)
"""``--folds``: seeds per method (study 2's k-fold control runs 5)."""
FOLD_SDS = (0.0, 0.1, 0.2)
"""``--folds``: the method-by-fold effect's standard deviation: none, and a tenth and a fifth of the signal weight's
scale."""
CONTROL_EFFECT = 0.4
"""A control's larger alternative: training's gain over the start is the base method's whole effect (about +20
Spearman points x100), not a method's margin over another."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="20 items, 2 and 3 seeds, 20 pairs per cell, 200 draws; writes nothing"
    )
    ap.add_argument("--runs", type=int, default=None, help="simulated pairs per cell and hypothesis (default 400)")
    ap.add_argument("--resamples", type=int, default=None, help="item draws per comparison (default 500)")
    ap.add_argument("--seeds", type=int, nargs="+", choices=SEEDS, help="only these seeds per method (writes nothing)")
    ap.add_argument(
        "--items", type=int, nargs="+", choices=(*ITEMS, *MEAN_ITEMS), help="only these item counts (writes nothing)"
    )
    ap.add_argument(
        "--df-cap",
        type=float,
        default=inference.RUN_DF_CAP,
        help=f"the kit's df cap, x the seeds' df (default {inference.RUN_DF_CAP}; another value writes nothing)",
    )
    ap.add_argument(
        "--lone-run-df",
        type=float,
        default=inference.LONE_RUN_DF,
        help=f"the kit's df when the lone run part has 1 df (default {inference.LONE_RUN_DF:g}; another value writes "
        "nothing)",
    )
    ap.add_argument("--control", action="store_true", help="simulate the positive control's design instead")
    ap.add_argument(
        "--folds", type=int, help="with --control: study 2's control on K cross-fitted folds of 100 items (at least 2)"
    )
    ap.add_argument(
        "--metric",
        choices=("mean",),
        help=f"mean: a mean of per-item scores at {' and '.join(map(str, MEAN_ITEMS))} items and "
        f"{', '.join(map(str, MEAN_SEEDS))} seeds (default: Spearman and average precision; with --control Spearman "
        "on 100 items)",
    )
    args = ap.parse_args(argv)
    if not args.df_cap > 0:
        ap.error(f"--df-cap: a positive number or inf, got {args.df_cap}")
    if not args.lone_run_df >= 1:
        ap.error(f"--lone-run-df: a number of at least 1, or inf, got {args.lone_run_df}")
    if args.folds is not None and (args.folds < 2 or not args.control or args.metric):
        ap.error(f"--folds: at least 2, with --control and Spearman, got {args.folds}")
    for name in ("runs", "resamples"):
        if getattr(args, name) is not None and getattr(args, name) < 2:
            ap.error(f"--{name}: at least 2, got {getattr(args, name)}")
    quick = (
        args.quick
        or args.df_cap != inference.RUN_DF_CAP
        or args.lone_run_df != inference.LONE_RUN_DF
        or bool(args.seeds or args.items)
    )
    inference.RUN_DF_CAP, inference.LONE_RUN_DF = args.df_cap, args.lone_run_df
    runs = args.runs or (20 if args.quick else 400)
    resamples = args.resamples or (200 if args.quick else 500)
    command = shlex.join(["python", "benchmarks/calibration.py", *(sys.argv[1:] if argv is None else argv)])
    if args.control:
        return control(args, runs, resamples, quick, command)
    tests = {"kit": calibrated(resamples), "reference": multi_bootstrap(resamples)}
    metrics, all_items, all_seeds = ((args.metric,), MEAN_ITEMS, MEAN_SEEDS) if args.metric else (METRICS, ITEMS, SEEDS)
    started = time.perf_counter()
    cells = []
    for metric in metrics:
        for noise in NOISES:
            for items in args.items or (ITEMS[:1] if args.quick else all_items):
                for seeds in args.seeds or (all_seeds[:2] if args.quick else all_seeds):
                    cell = {"metric": metric, "noise": noise, "items": items, "seeds": seeds}
                    null = rejection_rates(tests, NOISES[noise], seeds, items, metric, runs, alpha=ALPHA)
                    power = rejection_rates(tests, NOISES[noise], seeds, items, metric, runs, EFFECT, ALPHA)
                    for name in tests:
                        cell[name] = {"false": null[name].rate, "error": null[name].error, "power": power[name].rate}
                    cell["effect"] = power["kit"].difference
                    cells.append(cell)
                    print(
                        f"{metric} {noise} {items} items {seeds} seeds: false {cell['kit']['false']:.3f} "
                        f"(reference {cell['reference']['false']:.3f}), power {cell['kit']['power']:.2f} "
                        f"[{time.perf_counter() - started:.0f}s]",
                        flush=True,
                    )
    result = measured(runs, resamples, command, started, cells, df_cap=args.df_cap, lone_run_df=args.lone_run_df)
    worst = max(c["kit"]["false"] - ALPHA - 2 * c["kit"]["error"] for c in cells)
    record("calibration.py: the kit's t test vs the multi-bootstrap on simulated nulls", table(result), quick)
    print(f"largest false rate above alpha + 2 Monte-Carlo errors: {worst:+.3f} (kit; at most 0 expected)")
    if not quick:
        name = f"calibration_{args.metric}.json" if args.metric else "calibration.json"
        (RESULTS / name).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def measured(runs: int, resamples: int, command: str, started: float, cells: list[dict], **extra) -> dict:
    """A results file's record: the settings, the command, the time since ``started`` and the cells."""
    return {
        "alpha": ALPHA,
        "runs": runs,
        "resamples": resamples,
        "effect": EFFECT,
        **extra,
        "command": command,
        "seconds": round(time.perf_counter() - started),
        "cells": cells,
    }


def control(args, runs: int, resamples: int, quick: bool, command: str) -> int:
    """``--control``: the false pass rate (a significant difference, the trained side ahead, under the null), the
    false fail rate (the trained side behind at alpha / candidates, the kit's rule, under the null) and the pass rate
    under the alternative, per noise regime, seeds and candidates (``--folds``: method-by-fold effects, one
    candidate);
    Spearman on 100 items (20 quick), or ``--metric mean``'s tasks (``MEAN_ITEMS`` at ``MEAN_SEEDS``)."""
    test = {"kit": calibrated(resamples)}
    metric = args.metric or "spearman"
    all_items, all_seeds = (
        (MEAN_ITEMS, MEAN_SEEDS) if args.metric else (ITEMS[-1:], FOLD_SEEDS if args.folds else SEEDS)
    )
    if args.folds:
        variant = "fold_sd"
        designs = {sd: functools.partial(cross_fitted_pair, folds=args.folds, fold_sd=sd) for sd in FOLD_SDS}
    else:
        variant = "candidates"
        designs = {c: functools.partial(control_pair, candidates=c) for c in CANDIDATES}
    started = time.perf_counter()
    cells = []
    for noise, items in itertools.product(NOISES, args.items or (ITEMS[:1] if args.quick else all_items)):
        for seeds in args.seeds or (all_seeds[:2] if args.quick else all_seeds):
            for value, design in designs.items():
                at = {
                    "noise": NOISES[noise],
                    "seeds": seeds,
                    "items": items,
                    "metric": metric,
                    "runs": runs,
                    "alpha": ALPHA,
                    "design": design,
                    "upper": True,
                }
                fail_alpha = ALPHA / (1 if args.folds else value)
                null = rejection_rates(test, fail_alpha=fail_alpha, **at)["kit"]
                power = rejection_rates(test, effect=EFFECT, **at)["kit"]
                large = rejection_rates(test, effect=CONTROL_EFFECT, **at)["kit"]
                cells.append(
                    {
                        "metric": metric,
                        "noise": noise,
                        "items": items,
                        "seeds": seeds,
                        variant: value,
                        "false": null.rate,
                        "error": null.error,
                        "false_fail": null.behind,
                        "false_fail_error": null.behind_error,
                        "power": power.rate,
                        "null_difference": null.difference,
                        "effect": power.difference,
                        "large_power": large.rate,
                        "large_effect": large.difference,
                    }
                )
                print(
                    f"control {metric} {noise} {items} items {seeds} seeds, {variant} {value}: "
                    f"false pass {null.rate:.3f}, false fail {null.behind:.3f}, "
                    f"pass {power.rate:.2f} and {large.rate:.2f} [{time.perf_counter() - started:.0f}s]",
                    flush=True,
                )
    extra = {"folds": args.folds} if args.folds else {}
    result = measured(runs, resamples, command, started, cells, large_effect=CONTROL_EFFECT, **extra)
    what = f"study 2's control on {args.folds} cross-fitted folds" if args.folds else "the positive control's design"
    record(f"calibration.py --control: {what} on simulated studies", control_table(result), quick)
    if not quick:
        suffix = f"_{args.metric}" if args.metric else ("_folds" if args.folds else "")
        name = f"calibration_control{suffix}.json"
        (RESULTS / name).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def control_table(result: dict) -> str:
    """The control's cells as a Markdown table (a column for the candidates, or for ``--folds``' fold effect)."""
    variant = "fold_sd" if result.get("folds") else "candidates"
    lines = [
        f"{result['cells'][0]['metric'] if result['cells'] else ''}: "
        f"{result['runs']} pairs per cell and hypothesis, {result['resamples']} item draws, alpha {result['alpha']}; a "
        f"pass: significant with the trained side ahead; the trained method's signal weight +{result['effect']} and "
        f"+{result['large_effect']} (mean differences x100 beside each).",
        "",
        f"| noise | items | seeds | {variant.replace('_', ' ')} | false pass | false fail | difference, null | pass | "
        "difference | pass, large | difference, large |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in result["cells"]:
        lines.append(
            f"| {c['noise']} | {c['items']} | {c['seeds']} | {c[variant]} | {c['false']:.3f} ± {c['error']:.3f} | "
            f"{c['false_fail']:.3f} ± {c['false_fail_error']:.3f} | {c['null_difference']:+.1f} | "
            f"{c['power']:.2f} | {c['effect']:+.1f} | {c['large_power']:.2f} | {c['large_effect']:+.1f} |"
        )
    return "\n".join(lines)


def table(result: dict) -> str:
    """The cells as a Markdown table: false rates with their Monte-Carlo errors, powers and the effect's size."""
    lines = [
        f"{result['runs']} null and {result['runs']} alternative pairs per cell, {result['resamples']} item draws per "
        f"comparison, alpha {result['alpha']}; effect: signal weight +{result['effect']} (its mean size x100 in the "
        "last column).",
        "",
        "| metric | noise | items | seeds | false, kit | false, reference | power, kit | power, reference | effect |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in result["cells"]:
        kit, ref = c["kit"], c["reference"]
        lines.append(
            f"| {c['metric'].replace('_', ' ')} | {c['noise']} | {c['items']} | {c['seeds']} | "
            f"{kit['false']:.3f} ± {kit['error']:.3f} | {ref['false']:.3f} ± {ref['error']:.3f} | "
            f"{kit['power']:.2f} | {ref['power']:.2f} | {c['effect']:+.1f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
