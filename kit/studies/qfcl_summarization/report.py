"""Study report prose: what the run uses, the verdicts and the record, written from the study's numbers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kit.evaluation import rows as suite_rows
from kit.report.record import RunRecord
from kit.studies.qfcl_summarization.params import ROWS
from kit.studies.qfcl_summarization.study import COLLAPSE_RATIO, COLLAPSE_SHARE, Study


def describe(study: Study) -> str:
    """What this run uses (Markdown), stating substitutes plainly."""
    p = study.p
    sub = ""
    if p.model == "minilm" or study.model_source.substitute_for:
        sub = (
            " **Substitute** for `facebook/bart-large` (no pretrained seq2seq model is available offline): a "
            "BERT2BERT "
            "encoder-decoder warm-started from the offline encoder, its decoder's cross-attention newly "
            "initialised. "
            "It has never generated text before this training, so absolute ROUGE is far below BART's."
        )
    return (
        f"**Model**: `{p.model}`.{sub}\n\n**Data**: {study.split_note}\n\n"
        f"**Training** (every row): {p.epochs} epochs, batch {p.batch_size}, lr {p.lr}, source/target max length "
        f"{p.max_source}/{p.max_target}, seeds {p.seeds}. Contrastive rows: queue K {p.queue_size}, momentum m "
        f"{p.momentum}, "
        f"temperature {p.temperature}, N_h {p.n_hard} hard negatives per pair, alpha {p.alpha}, beta {p.beta}; "
        "L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG. Test summaries by beam search "
        f"({p.num_beams} beams, at most {p.max_target} new tokens); no checkpoint selection (last epoch).\n\n"
        f"**CHQ encoder** (every row): the summarizer's encoder, mean of its last-layer token states over the "
        f"text's tokens (padding excluded; the CHQ representation of the encoder-side loss), scored on the "
        f"suite tasks {', '.join(f'`{t.name}`' for t in study.suite_tasks)} at the end of training.\n\n"
        f"**Positive control**: the baseline must beat an extractive floor, each test question's first sentence "
        f"(lead-1, at most {p.max_target} tokens, no training; scored by the same ROUGE), and must not be collapsed to "
        f"a template (more than {COLLAPSE_SHARE:.0%} of its test summaries at a seed repeating another, and more than "
        f"{COLLAPSE_RATIO:g} times the reference summaries' share); otherwise no comparison is a finding. Each "
        "contrastive row is compared with the row before it in the paper's ablation order (+S with the baseline, "
        "+S+H with +S, +S+H+D with +S+H)."
    )


def record_results(
    study: Study,
    record: RunRecord,
    results: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    rouge: suite_rows.SuiteReport | None = None,
    suite: suite_rows.SuiteReport | None = None,
) -> Path:
    """``results.json`` (per-seed scores, histories, tables, provenance, the paired comparisons of
    ``rouge_report`` and ``suite_report``, the template-collapse check of every row as ``collapse``) and
    ``results_table.txt`` (with the collapse table). The headline comparison is the run file's primary comparison, or
    the best row's ROUGE-L against the row before it over the test questions and seeds."""
    means = results.groupby("row", sort=False)[["rouge1", "rouge2", "rougeL", "focus_accuracy"]].mean()
    best = "qfcl" if "qfcl" in means.index else means.index[-1]
    return study.write_record(
        record,
        {
            **tables,
            "Template collapse: test summaries identical to another of the same seed, %": study.collapse(),
            **(rouge.tables() if rouge else {}),
            **(suite.tables() if suite else {}),
        },
        metrics={
            "per_seed": results.to_dict("records"),
            "mean": means.to_dict("index"),
            "histories": study.histories().to_dict("records"),
            "rouge_comparison": rouge,
            "suite": suite,
        },
        headline={
            "name": f"test ROUGE-L ({ROWS[best].label})",
            "value": float(means.loc[best, "rougeL"]),
            "comparison": (suite.primary_text() if suite else "")
            or (rouge.comparison(best, study.rouge_tasks[0].name) if rouge else None),
        },
        split=study.split_note,
        focus=study.focus_stats(),
        collapse=study.collapse_record(),
    )
