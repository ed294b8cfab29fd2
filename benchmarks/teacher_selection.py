"""Study 2's teacher searched on selection data only (issue 45, item 2): can any cross-encoder setting beat the
gold-only bi-encoder student it would label silver pairs for, judged within one outer fold's training pairs?

    python benchmarks/teacher_selection.py             # outer fold 1's 80 training pairs, 5 inner folds, 8 teachers
    python benchmarks/teacher_selection.py --quick     # 1 inner fold, tiny random models: that it runs (no file)

The outer folds are those of the run file (``--run-file``, by default
``params/augmented_sbert/control_small_kfold.yaml``: BIOSSES 5-fold, ``fold_seed`` 1234); only the training pairs of
outer fold ``--fold`` are read, split again into 5 inner folds (seed ``--seed``), so that no pair a declared run
scores its control on is seen by the search. On each inner split the student is the run file's bi-encoder (its model,
epochs, lr, max length) and each teacher a cross-encoder from ``TEACHER_STARTS`` x ``TEACHER_LRS`` x
``TEACHER_LENGTHS`` (a pair is one sequence, so 64 tokens cut 67 of BIOSSES' 100 pairs), at the run file's cross
epochs; both are scored by Spearman x100 on the inner held-out pairs. A search, not a test: the printed margins
carry no interval, and a teacher ahead here is a lead to declare as a run file, where the control tests it. A full
run writes ``benchmarks/results/teacher_selection.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, record  # noqa: E402

from kit.core.progress import quiet_libraries  # noqa: E402
from kit.evaluation.sts import spearman  # noqa: E402
from kit.params import read_run_file  # noqa: E402
from kit.paths import PROJECT_ROOT  # noqa: E402
from kit.studies.augmented_sbert.method import (  # noqa: E402
    bi_encoder,
    cosine_scores,
    cross_encoder,
    cross_scores,
    fit_bi_encoder,
    fit_cross_encoder,
)
from kit.studies.augmented_sbert.params import AugSBERTParams  # noqa: E402
from kit.studies.augmented_sbert.study import Study  # noqa: E402

RUN_FILE = PROJECT_ROOT / "params" / "augmented_sbert" / "control_small_kfold.yaml"
TEACHER_STARTS = ("pubmed-bert-small", "minilm")
TEACHER_LRS = (2e-5, 1e-4)
"""sentence-transformers' cross-encoder STS example's rate, and the run files'."""
TEACHER_LENGTHS = (64, 128)
"""Tokens per pair: the run files' 64, and 128, which holds all but 3 of BIOSSES' pairs."""
INNER_FOLDS = 5
QUICK_MODEL = "tiny-random-bert"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run-file", type=Path, default=RUN_FILE, help="a study 2 run file with biosses_kfold")
    ap.add_argument("--fold", type=int, default=1, choices=range(1, 6), help="the outer fold whose training pairs")
    ap.add_argument("--seed", type=int, default=0, help="seed of the inner folds and of every model (>= 0)")
    ap.add_argument("--quick", action="store_true", help="1 inner fold, tiny random models, 1 epoch (writes nothing)")
    args = ap.parse_args(argv)
    os.environ.setdefault("KIT_PROGRESS", "0")  # the trainers' bars; a line a model instead
    quiet_libraries()
    if args.seed < 0:
        ap.error(f"--seed: a whole number >= 0, got {args.seed}")
    p = AugSBERTParams.from_dict(read_run_file(args.run_file).parameters)
    if "biosses_kfold" not in p.benchmarks or args.fold > p.folds:
        ap.error(f"--run-file: {args.run_file} has no biosses_kfold benchmark with fold {args.fold} ({p.folds} folds)")
    split = Study(p, Path("/nonexistent")).splits("biosses_kfold")[args.fold - 1]
    pairs, labels = split.train, np.asarray(split.train_labels)
    teachers = list(itertools.product(TEACHER_STARTS, TEACHER_LRS, TEACHER_LENGTHS))
    if args.quick:
        p = dataclasses.replace(p, model=QUICK_MODEL, epochs=1, cross_epochs=1)
        teachers = [(QUICK_MODEL, TEACHER_LRS[0], TEACHER_LENGTHS[0])]
    inner = list(KFold(INNER_FOLDS, shuffle=True, random_state=args.seed).split(pairs))[: 1 if args.quick else None]
    student_cfg, cross_cfg = p.fit_config(args.seed), p.cross_config(args.seed)
    scores: dict[str, list[float]] = {"student": []} | {teacher_name(*t): [] for t in teachers}
    started = time.monotonic()
    for i, (tr, te) in enumerate(inner, 1):
        train, test = [pairs[j] for j in tr], [pairs[j] for j in te]
        st = bi_encoder(p.model, args.seed, p.max_length, p.device)
        fit_bi_encoder(st, train, labels[tr], student_cfg)
        scores["student"].append(spearman(cosine_scores(st, test), labels[te]) * 100)
        for start, lr, length in teachers:
            cfg = dataclasses.replace(cross_cfg, lr=lr, max_length=length)
            ce = fit_cross_encoder(cross_encoder(start, args.seed, length, p.device), train, labels[tr], cfg)
            scores[teacher_name(start, lr, length)].append(spearman(cross_scores(ce, test), labels[te]) * 100)
            print(f"inner fold {i}/{len(inner)}: {teacher_name(start, lr, length)} [{time.monotonic() - started:.0f}s]")
    student = np.asarray(scores["student"])
    lines = ["| model | Spearman x100, mean of inner folds | each inner fold | teacher - student | teacher ahead in |"]
    lines += [
        "|---|---:|---|---:|---:|",
        f"| student: bi-encoder from {p.model} | {student.mean():.1f} | {fmt(student)} | | |",
    ]
    rows = []
    for name, values in scores.items():
        if name != "student":
            margin = np.asarray(values) - student
            ahead = int((margin > 0).sum())
            rows.append({"teacher": name, "spearman": values, "margin": margin.tolist(), "ahead_in": ahead})
            lines.append(
                f"| {name} | {np.mean(values):.1f} | {fmt(np.asarray(values))} | {margin.mean():+.1f} | "
                f"{ahead} of {len(margin)} |"
            )
    where = f"outer fold {args.fold}'s {len(pairs)} training pairs of {args.run_file.name}, {len(inner)} inner folds"
    record(f"Study 2's teacher on selection data ({where}, seed {args.seed})", "\n".join(lines), args.quick)
    if not args.quick:
        out = RESULTS / "teacher_selection.json"
        payload = {"run_file": str(args.run_file.resolve().relative_to(PROJECT_ROOT)), "outer_fold": args.fold}
        payload |= {"seed": args.seed, "inner_folds": INNER_FOLDS, "student": scores["student"], "teachers": rows}
        out.write_text(json.dumps(payload, indent=1) + "\n")
        print(f"wrote {out.relative_to(PROJECT_ROOT)} [{time.monotonic() - started:.0f}s]")
    return 0


def teacher_name(start: str, lr: float, length: int) -> str:
    return f"cross-encoder from {start}, lr {lr:g}, {length} tokens a pair"


def fmt(values: np.ndarray) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


if __name__ == "__main__":
    raise SystemExit(main())
