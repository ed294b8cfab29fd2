"""Test the test: the false "significant" rate under the null and the power of the kit's comparisons
(``kit.evaluation.inference``) against the multi-bootstrap it replaced, on simulated studies
(``kit.evaluation.simulation``) at the seeds and items the run files use.

    python benchmarks/calibration.py            # 400 null and 400 alternative pairs per cell (about an hour on 2 cores)
    python benchmarks/calibration.py --quick    # 20 items, 2 and 3 seeds, 20 pairs per cell: that it runs
    python benchmarks/calibration.py --seeds 2 --items 100 --df-cap inf   # without the df cap (writes nothing)

For each metric (Spearman, average precision), noise regime (item, run, mixed), items (20, 100) and seeds per method
(2, 3, 5, 10): the share of null pairs called significant at alpha 0.05 with its Monte-Carlo error, by the kit's
test and by the reference, and the share of pairs with a true difference (signal weight +``EFFECT``, its size in the
metric x100 printed beside it) that each calls significant. A full run writes ``benchmarks/results/calibration.json``,
from which ``python -m kit.docs render`` generates the table on the evaluation page.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, record  # noqa: E402

from kit.evaluation import inference  # noqa: E402
from kit.evaluation.simulation import NOISES, calibrated, multi_bootstrap, rejection_rates  # noqa: E402

METRICS = ("spearman", "average_precision")
ITEMS = (20, 100)
SEEDS = (2, 3, 5, 10)
EFFECT = 0.15
"""The alternative: the first method's signal weight 0.45 + 0.15 (about +6 Spearman points x100 on 100 items)."""
ALPHA = 0.05


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="20 items, 2 and 3 seeds, 20 pairs per cell, 200 draws; writes nothing"
    )
    ap.add_argument("--runs", type=int, default=None, help="simulated pairs per cell and hypothesis (default 400)")
    ap.add_argument("--resamples", type=int, default=None, help="item draws per comparison (default 500)")
    ap.add_argument("--seeds", type=int, nargs="+", choices=SEEDS, help="only these seeds per method (writes nothing)")
    ap.add_argument("--items", type=int, nargs="+", choices=ITEMS, help="only these item counts (writes nothing)")
    ap.add_argument(
        "--df-cap",
        type=float,
        default=inference.RUN_DF_CAP,
        help=f"the kit's df cap, x the seeds' df (default {inference.RUN_DF_CAP}; another value writes nothing)",
    )
    args = ap.parse_args(argv)
    if not args.df_cap > 0:
        ap.error(f"--df-cap: a positive number or inf, got {args.df_cap}")
    for name in ("runs", "resamples"):
        if getattr(args, name) is not None and getattr(args, name) < 2:
            ap.error(f"--{name}: at least 2, got {getattr(args, name)}")
    quick = args.quick or args.df_cap != inference.RUN_DF_CAP or bool(args.seeds or args.items)
    inference.RUN_DF_CAP = args.df_cap
    runs = args.runs or (20 if args.quick else 400)
    resamples = args.resamples or (200 if args.quick else 500)
    tests = {"kit": calibrated(resamples), "reference": multi_bootstrap(resamples)}
    started = time.perf_counter()
    cells = []
    for metric in METRICS:
        for noise in NOISES:
            for items in args.items or (ITEMS[:1] if args.quick else ITEMS):
                for seeds in args.seeds or (SEEDS[:2] if args.quick else SEEDS):
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
    result = {
        "alpha": ALPHA,
        "runs": runs,
        "resamples": resamples,
        "effect": EFFECT,
        "command": shlex.join(["python", "benchmarks/calibration.py", *(sys.argv[1:] if argv is None else argv)]),
        "df_cap": args.df_cap,
        "seconds": round(time.perf_counter() - started),
        "cells": cells,
    }
    worst = max(c["kit"]["false"] - ALPHA - 2 * c["kit"]["error"] for c in cells)
    record("calibration.py: the kit's t test vs the multi-bootstrap on simulated nulls", table(result), quick)
    print(f"largest false rate above alpha + 2 Monte-Carlo errors: {worst:+.3f} (kit; at most 0 expected)")
    if not quick:
        (RESULTS / "calibration.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


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
