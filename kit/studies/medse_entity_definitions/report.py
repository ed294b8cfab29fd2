"""Study report prose: what the run uses, the verdicts and the record, written from the study's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kit.evaluation import rows as suite_rows
from kit.report.record import RunRecord
from kit.studies.medse_entity_definitions.params import ROWS
from kit.studies.medse_entity_definitions.study import Study
from kit.study import best_row, seed_spread


def describe(study: Study) -> str:
    p, m = study.p, study.model_source
    sub = f" **Substitute** for {m.substitute_for}." if m.substitute_for else ""
    evaluation = (
        f"a local MedSTS/ClinicalSTS file ({study.medsts.source}, {len(study.medsts)} pairs) and BIOSSES"
        if study.medsts
        else "**BIOSSES stands in for MedSTS** (MedSTS / ClinicalSTS are credentialed and not "
        "available here; pass `medsts_path` to evaluate on a local copy)"
    )
    return (
        f"**Model**: `{p.model}`: {m.description}; trained rows pool with `{p.pooler}`.{sub}\n\n"
        f"**Entities**: the Human Disease Ontology's names and synonyms ({len(study.ontology):,} diseases), linked "
        "by "
        "longest match on word tokens (case-insensitive; abbreviations case-sensitive; stop-word names skipped). "
        "The paper links UMLS concepts with MedCAT in clinical notes; here only diseases are linkable.\n\n"
        f"**Training data**: {p.train_size:,} PubMed sentences per run, {1 - p.none_share:.0%} with a linked "
        "entity "
        f"(S_ent) and {p.none_share:.0%} without (S_none), fixed by corpus seed {p.corpus_seed} for every row and "
        "seed; "
        f"one entity per sentence chosen at random (same seed).\n\n"
        f"**Evaluation**: {evaluation}. BIOSSES cosine Spearman x100 on the BLURB test split (20 pairs), on all "
        "100 "
        f"pairs and on the **entity-centric view**: the {len(study.entity_pairs)} pairs in which a linked entity "
        "occurs. "
        "Alignment over pairs with gold >= 4, uniformity over all sentences (L2-normalised, alpha 2, t 2).\n\n"
        f"**Training** (every trained row): {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length "
        f"{p.max_length}, "
        f"temperature {p.temperature}, seeds {p.seeds}; evaluated every {p.eval_every} steps, the checkpoint that "
        f"scores best on {study.selected_on()} is kept.{study.selection_caveat()} MED-SE: lambda {p.lam}, "
        f"entity encoder `{p.entity_encoder}`, "
        f"entity temperature {p.entity_temperature}, definition encoder "
        f"{'trained' if p.definition_trainable else 'frozen'} "
        f"(a copy of the starting model, mean pooling), duplicate entities: `{p.dedup}`. ConSERT cutoff rate "
        f"{p.cutoff_rate}. Whitening fitted on {p.whitening_sentences:,} PubMed sentences (never on the "
        "evaluation sentences)" + (f", kept dimensions {p.whitening_dim}." if p.whitening_dim else ".")
    )


def verdict(study: Study, results: pd.DataFrame) -> str:
    """What the table alone can say (Markdown): MED-SE's entity loss over training and the seed-to-seed
    spread. Whether one row beats another is the suite section's to say, with its paired intervals
    (``suite_report``)."""
    lines = []
    if "medse" in set(results.method):
        h = study.histories()
        h = h[(h.method == "medse") & (h.step > 0)]
        first, last = h[h.step == h.step.min()].entity_loss.mean(), h[h.step == h.step.max()].entity_loss.mean()
        lines.append(
            f"- MED-SE's entity loss (mean over seeds) went from {first:.3f} in the first evaluation window to "
            f"{last:.3f} in the last (uniform guessing over the batch's n entity rows gives log n, here about "
            f"{np.log((1 - study.p.none_share) * study.p.batch_size):.2f})."
        )
    lines.append(f"- {seed_spread(results, *study.headline_spearman())}")
    return "\n".join(lines)


def share_claim(shares: suite_rows.SuiteReport) -> str:
    """Whether the paper's Table 4 claim holds here, in one sentence: MED-SE better than SimCSE, a finding after the
    family's correction, at every swept share (each share's own test at alpha would do for "every"; the correction
    only makes it stricter)."""
    lines = suite_rows.compared_lines(shares.compared)
    better = lines[
        lines.significant.fillna(False).astype(bool) & (lines.low > 0) & lines.finding.fillna(False).astype(bool)
    ]
    verdict = "shown" if len(better) == len(lines) else "not shown"
    return (
        f"MED-SE is better than SimCSE, as a finding, at {len(better)} of the {len(lines)} swept shares besides the "
        f"main one (whose comparison is the table's, above): the claim that the entity loss adds at every share is "
        f"{verdict} here."
    )


def record_results(
    study: Study,
    record: RunRecord,
    results: pd.DataFrame,
    sweeps: dict[str, pd.DataFrame],
    tables: dict[str, pd.DataFrame],
    suite: suite_rows.SuiteReport | None = None,
    shares: suite_rows.SuiteReport | None = None,
) -> Path:
    """``results.json`` (per-seed metrics, sweeps, histories, tables, the suite's comparisons and the S_none share
    family's (``Study.share_report``), provenance) and ``results_table.txt``; the headline's comparison is the
    suite's (``SuiteReport.comparison``)."""
    trained = study.trained_rows()
    head = "medse" if "medse" in set(results.method) else best_row(results, "spearman_dev", trained or None)
    means = results.drop(columns=["label", "seed"]).groupby("method").mean()
    # a row chosen on BIOSSES dev (no MED-SE row) is read on the test pairs, as when dev selects the checkpoints
    column, words = study.headline_spearman() if head == "medse" else ("spearman_test", "test-pair Spearman")
    return study.write_record(
        record,
        {**tables, **(suite.tables() if suite else {}), **(shares.tables() if shares else {})},
        metrics={
            "per_seed": results.to_dict("records"),
            "mean": means.to_dict("index"),
            "sweeps": {k: v.to_dict("records") for k, v in sweeps.items()},
            "histories": study.histories().to_dict("records") if trained else [],
            "suite": suite,
            **({"share_family": shares} if shares else {}),
        },
        headline={
            "name": f"BIOSSES {words} x100 ({ROWS[head].label})",
            "value": float(means.loc[head, column] * 100),
            "comparison": suite.comparison(head, study.headline_task(suite, column)) if suite else None,
        },
        entity_pairs=len(study.entity_pairs),
    )
