"""Study report prose: what the run uses, the verdicts and the record, written from the study's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.models import resolve_model
from kit.report.record import RunRecord
from kit.studies.augmented_sbert.held_out import HELD_OUT, KFOLD
from kit.studies.augmented_sbert.method import CONDITIONS
from kit.studies.augmented_sbert.params import BENCHMARKS, STARTING, suite_row
from kit.studies.augmented_sbert.study import Study, SuiteReport


def warmup_text(study: Study) -> str:
    """``; on STS benchmarks it first learns 8,587 RQE training pairs ...``, or '' when no benchmark warms up."""
    p = study.p
    if not any(study.warmup_pairs(b) for b in p.benchmarks):
        return ""
    n = len(study.rqe_warmup[0])
    sample = p.cross_warmup == n  # else None, or more than the file holds: all of them
    size = f"{n:,} (seeded sample, seed {p.nli_seed}) of the" if sample else f"all {n:,}"
    return (
        f"; on STS benchmarks it first learns {size} RQE training pairs for one epoch, computed once per seed (a "
        "question and its shortened form as 1, a question and the shortened form of another as 0: the pairs RQE "
        "trains on), a warm-up the paper's teacher does not have; the teacher's score on RQE tasks then follows that "
        "training"
    )


def describe(study: Study) -> str:
    """What this run uses (Markdown), stating substitutes plainly."""
    p, m = study.p, study.model_source
    sub = (
        " **Substitute** for `dmis-lab/biobert-v1.1` (the paper's model; not available offline)."
        if m.substitute_for
        else ""
    )
    if p.model == "minilm" and p.cross_model is None:
        sub += (
            " MiniLM is already trained for sentence similarity, so the bi-encoders start strong (the 'starting "
            "model' row), and there is no pretrained biomedical cross-encoder here: the cross-encoder is "
            "warm-started from the same checkpoint with a new, seeded head, so the silver labeller starts from "
            "a model trained for bi-encoding."
        )
    if p.cross_model is not None:
        teacher = resolve_model(p.cross_model).description
        sub += (
            f" **The cross-encoder teacher starts from `{p.cross_model}`** ({teacher}), not from the bi-encoders' "
            "model, where the paper starts both from one BERT; it gets a new, seeded head."
        )
    lines = [f"**Model**: `{p.model}`: {m.description}.{sub}", "", "**Tasks**:", ""]
    for t in p.benchmarks:
        lines.append(f"- **{BENCHMARKS[t].title}** ({BENCHMARKS[t].metric}): " + _benchmark_note(study, t))
    lines.append(
        f"\n**Silver sampling**: the pool is the set of sentences of the split's training pairs"
        f"{f' plus {p.pool_pubmed:,} PubMed sentences (STS benchmarks)' if p.pool_pubmed else ''}. Semantic: each pool "
        f"sentence's top-{p.top_k} new neighbours under the gold-trained bi-encoder (sentence-transformers "
        "`semantic_search`); random: as many uniformly drawn new pairs. Both never hold a self-pair, a gold pair "
        "or a test pair of the split (either order), or a duplicate.\n\n"
        f"**Training** (identical for the three bi-encoders of a split and seed): {p.epochs} epochs, batch "
        f"{p.batch_size}, lr {p.lr}, warm-up 10%, max length {p.max_length}; gold + silver trains the same number "
        "of epochs on more pairs, so more steps (as in the paper). STS: CosineSimilarityLoss on score/4; NLI: "
        "SoftmaxLoss over (u, v, |u-v|), scored by that classifier on independently encoded sentences. "
        f"Cross-encoder: {p.cross_epochs} epochs, lr {p.cross_lr}, binary cross-entropy (STS) or cross-entropy "
        f"(NLI){warmup_text(study)}. "
        "No checkpoint selection: every model is read after its last epoch. "
        + "; ".join(
            f"{what} {seeds}"
            for what, seeds in (
                ("Seeds", p.seeds if set(p.benchmarks) - {KFOLD} else None),
                ("k-fold seeds", p.kfold_seeds if KFOLD in p.benchmarks else None),
            )
            if seeds
        )
        + "."
    )
    return "\n".join(lines)


def _benchmark_note(study: Study, benchmark: str) -> str:
    p = study.p
    if benchmark == "biosses_blurb":
        return "train on the 64 BLURB train pairs, score the 20 test pairs (the 16 dev pairs are unused)."
    if benchmark == "biosses_kfold":
        return (
            f"{p.folds}-fold cross-validation over all 100 pairs (folds fixed by seed {p.fold_seed}); each "
            f"fold trains on {100 - 100 // p.folds} pairs and scores the held-out ones; the cell pools every "
            "(fold, seed) score."
            + (
                f" On the evaluation suite its rows are also scored on `{HELD_OUT}`: every pair by the fold model that "
                "held it out."
                if study.held_out
                else ""
            )
        )
    size = "all" if p.nli_train_size is None else f"{p.nli_train_size:,} (seeded sample, seed {p.nli_seed}) of the"
    if benchmark == "rqe":
        return (
            f"{size} RQE training pairs (consumer question vs FAQ, true/false), scored on the 230 MEDIQA 2019 "
            "test pairs. **Stand-in for MedNLI**, which is credentialed and not available here; its numbers "
            "are not comparable with the paper's MedNLI column."
        )
    return f"{size} MedNLI training pairs from `{p.mednli_path}`, scored on the official test file."


def verdict(study: Study, results: pd.DataFrame) -> str:
    """Per benchmark, computed from the results (Markdown): the conditions' means, each silver set minus gold
    as the mean of paired differences over the same (split, seed) runs, and the labeller's score.
    Whether a silver set differs from gold beyond the noise is the suite's to say, with its intervals
    (``suite_report``)."""
    lines = []
    for benchmark in study.p.benchmarks:
        r = results[results.benchmark == benchmark]
        wide = r[r.seed.notna()].pivot_table(index=["split", "seed"], columns="condition", values="score")
        mean = r.groupby("condition").score.mean()
        start = f"starting model {mean[STARTING]:.2f}, " if STARTING in mean else ""
        parts = []
        for c in CONDITIONS[1:]:
            d = (wide[c] - wide["gold"]).to_numpy()
            spread = f" (std {d.std(ddof=1):.2f})" if len(d) > 1 else ""
            parts.append(f"{c.removeprefix('gold + ')} {d.mean():+.2f}{spread}")
        ce = mean["cross-encoder"]
        if BENCHMARKS[benchmark].kind == "nli":
            majority = (
                100
                * np.bincount(study.splits(benchmark)[0].test_labels).max()
                / len(study.splits(benchmark)[0].test_labels)
            )
            if abs(mean["gold"] - majority) < 2:
                parts.append(
                    f"**the gold bi-encoder is at the majority-class rate ({majority:.1f}%): nothing is "
                    "learned at this budget, so this column cannot show an effect of silver data**"
                )
        lines.append(
            f"- **{BENCHMARKS[benchmark].title}**: {start}gold {mean['gold']:.2f}. Silver minus gold, mean of "
            f"{len(wide)} paired run(s): "
            + "; ".join(parts)
            + f". The labelling cross-encoder scores {ce:.2f}"
            + (
                ", below the gold bi-encoder: its silver labels are noisier than what the bi-encoder already knows, "
                "so Augmented SBERT's premise (a teacher better than its student) does not hold in these means (the "
                "positive control, above, tests it with intervals)."
                if ce < mean["gold"]
                else "."
            )
        )
    lines.append(
        "\nWhether a silver set differs from gold beyond the seed-to-seed and item-to-item noise is not read "
        "off these means: the evaluation-suite section below compares them with paired intervals."
    )
    return "\n".join(lines)


def record_results(
    study: Study,
    record: RunRecord,
    results: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    suite: SuiteReport | None = None,
) -> Path:
    """``results.json`` (per-run scores, tables, the suite's comparisons, provenance, compute time) and
    ``results_table.txt``. The headline's comparison is the suite's: the primary (said to be no finding when the
    positive control did not pass), else the first benchmark's semantic silver against its gold, on the suite task
    with the same test pairs when it is a headline task; ``write_record`` adds the control's sentences."""
    first = study.p.benchmarks[0]
    means = results.groupby(["benchmark", "condition"]).score.mean()
    comparison = None
    if suite is not None:
        row, own = suite_row(first, CONDITIONS[2]), BENCHMARKS[first].suite_task
        headline = [t.name for t in suite.headline_tasks()]
        comparison = (suite.comparison(row, own) if own in headline else None) or suite.comparison(row)
    return study.write_record(
        record,
        {**tables, **suite.tables()} if suite else tables,
        metrics={
            "per_run": results.to_dict("records"),
            "mean": {f"{t} / {c}": v for (t, c), v in means.items()},
            "suite": suite,
        },
        headline={
            "name": f"{BENCHMARKS[first].title}: gold + semantic silver ({BENCHMARKS[first].metric})",
            "value": float(means[(first, CONDITIONS[2])]),
            "comparison": comparison,
        },
        seeds=sorted({seed for benchmark in study.p.benchmarks for seed in study.p.seeds_for(benchmark)}),
    )
