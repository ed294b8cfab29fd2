"""Study report prose: what the run uses, the verdicts and the record, written from the study's numbers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kit.core.models import Encoder
from kit.evaluation import rows as suite_rows
from kit.report.record import RunRecord
from kit.studies.simcse_augmentations.chineseblue import (
    chineseblue_verdict,
)
from kit.studies.simcse_augmentations.params import ROWS
from kit.studies.simcse_augmentations.study import Study
from kit.study import seed_spread


def describe(study: Study) -> str:
    """What this run uses, in Markdown, stating substitutes plainly."""
    return _describe_en(study) if study.p.language == "en" else _describe_zh(study)


UNKNOWN_SHARE_BLIND = 0.2
"""A [UNK] share from which a model is said to see little of the Chinese text (MiniLM's English vocabulary: 70%)."""


def _describe_zh(study: Study) -> str:
    p, m = study.p, study.model_source
    encoder = Encoder.from_pretrained(p.model, p.pooler)
    unk = encoder.unknown_token_share(study.corpus[:2000])
    vocabulary = (
        f" Its vocabulary maps {unk:.1%} of the corpus's tokens to [UNK] (measured on 2,000 training sentences)"
    )
    sub = (
        " **Substitute** for hfl/chinese-bert-wwm-ext (no Chinese model is available offline)."
        + vocabulary
        + (
            ", so it sees mostly sentence length, punctuation, digits and the few common characters it knows: the "
            "numbers test the kit's Chinese pipeline, not the methods, and are not comparable with the paper's."
            if unk >= UNKNOWN_SHARE_BLIND
            else ". Its numbers are not comparable with the paper's: the model named above is not the paper's."
        )
        if m.substitute_for
        else vocabulary + "."
    )
    corpus = (
        f"{len(study.corpus):,} sentences from {p.corpus_path}"
        if p.corpus_path
        else f"{len(study.corpus):,} sentences pooled from the cMedQQ, cMedIC and cMedTC train files (labels "
        "dropped, de-duplicated, every sentence of any dev or test split removed)"
    )
    return (
        f"**Model**: `{p.model}`: {m.description}, pooler `{p.pooler}`.{sub}\n\n"
        f"**Unlabeled corpus**: {corpus}; augmenters work on characters (Latin and digit runs kept whole).\n\n"
        f"**Evaluation**: ChineseBLUE transfer probes on frozen embeddings (below; the suite section gives their "
        f"intervals and leaves out the test items that share a text with the selection data, which the table's "
        f"F1 keeps), mean ± std over the training seeds; {study.probe_text_count:,} texts encoded per model at max "
        f"length {p.probe_max_length}. Retrieval over all {len(study.retrieval_texts):,} cMedQQ test questions.\n\n"
        f"{checkpoint_policy(study)}\n\n"
        f"**Training**: {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length {p.max_length}, "
        f"temperature {p.temperature}, seeds {p.seeds}; MixCSE lambda {p.mix_lambda}, instance-weighting phi "
        f"{p.iw_phi}."
    )


def _describe_en(study: Study) -> str:
    p, m = study.p, study.model_source
    sub = f" **Substitute** for {m.substitute_for}." if m.substitute_for else ""
    corpus_note = (
        f" This is a substitute for the papers' 1M PubMed sentences, {100 * len(study.corpus) / 1e6:.3g}% of that size."
        if p.corpus_path is None
        else ""
    )
    return (
        f"**Model**: `{p.model}`: {m.description}, pooler `{p.pooler}`.{sub}\n\n"
        f"**Unlabeled corpus**: {len(study.corpus):,} PubMed sentences (seeded sample, corpus seed "
        f"{p.corpus_seed}).{corpus_note}\n\n"
        f"**Evaluation**: BIOSSES ({study.sts.source}), cosine Spearman x100 on the BLURB test split (20 pairs) "
        f"and on all 100 pairs; alignment over pairs with gold score >= 4, uniformity over all 200 sentences "
        f"(L2-normalised, alpha 2, t 2).\n\n"
        f"**Training**: {p.steps} steps, batch {p.batch_size}, lr {p.lr}, max length {p.max_length}, "
        f"temperature {p.temperature}, seeds {p.seeds}; MixCSE lambda {p.mix_lambda}, instance-weighting phi "
        f"{p.iw_phi}.\n\n{checkpoint_policy(study)}"
    )


NOISY_SELECTION = 50
"""Fewer dev pairs than this are said to select checkpoints noisily (BIOSSES dev: 16); a reading aid, not a test."""


def checkpoint_policy(study: Study) -> str:
    """The checkpoint policy in words (Markdown), from ``select_on``: what selects, and which cosine-view pairs
    share a text with the selection data (``selection_caveat``)."""
    p = study.p
    text = (
        f"**Checkpoint policy**: evaluate every {p.eval_every} steps and keep the checkpoint, other than step 0's "
        f"starting model, that scores best on {study.selected_on()}; every other number is read at that checkpoint."
    )
    if "dev" in p.select_on:
        label = "Spearman correlation of cosine with the 0/1 label" if p.language == "zh" else "cosine Spearman"
        noisy = " This selection is itself noisy." if len(study.sts.subset("dev")) < NOISY_SELECTION else ""
        text += f" The dev score is the {label}.{noisy}"
    return text + study.selection_caveat()


def fewshot_note(study: Study) -> str:
    """What the few-shot curve can show at this budget (Markdown), or that the run file asked for none."""
    p = study.p
    if not p.fewshot_percents:
        return "Not run here: the run file's `fewshot_percents` is empty."
    seen = p.steps * p.batch_size
    share = 100 * seen / len(study.corpus)
    rows = ", ".join(ROWS[name].label for name in p.fewshot_rows)
    shares = ", ".join(f"{percent:g}%" for percent in p.fewshot_percents)
    out = (
        f"This run trains {rows} on {shares} of the corpus, seed{'s' * (len(p.fewshot_seeds) > 1)} "
        f"{', '.join(map(str, p.fewshot_seeds))}. Each run sees {p.steps} x {p.batch_size} = {seen:,} sentences of "
        f"the {len(study.corpus):,}-sentence corpus ({share:.1f}%). Shares above {share:.1f}% are never read in "
        "full, so at this budget differences between those points reflect which sentences were sampled, not how "
        "much text was available."
    )
    if 100 in p.fewshot_percents and list(p.fewshot_seeds) != list(p.seeds):
        out += (
            f" The 100% point is the mean over the few-shot seeds ({', '.join(map(str, p.fewshot_seeds))}); the "
            f"main table's row averages its own seeds ({', '.join(map(str, p.seeds))}), so the two differ by the "
            "seeds they average, not by the data."
        )
    return out


def verdict(study: Study, results: pd.DataFrame, iw_effect: dict | None = None) -> str:
    """The reading of the cosine view, preceded by the per-task reading for zh."""
    lines = _verdict(study, results, iw_effect)
    return f"{chineseblue_verdict(results)}\n{lines}" if study.p.language == "zh" else lines


def _verdict(study: Study, results: pd.DataFrame, iw_effect: dict | None = None) -> str:
    """A plain-language reading of the cosine-view table, computed from it (Markdown); ``iw_effect``
    is ``instance_weighting_effect()``, reported when the table has instance-weighted rows. Whether one
    row beats another is the suite section's to say, with its intervals (``suite_report``)."""
    means = results.groupby("method", sort=False)[["spearman_test", "spearman_all", "spearman_dev"]].mean() * 100
    lines = []
    best = study.best_trained_method(results)
    lines.append(
        f"- Best trained row on the selection data ({', '.join(study.p.select_on)}): **{study.row_label(best)}** "
        f"(selection score x100 {100 * results.loc[results.method == best, 'selection'].mean():.2f}; cosine view: "
        f"{study.eval_name} dev {means.loc[best, 'spearman_dev']:.2f}, "
        f"test {means.loc[best, 'spearman_test']:.2f}, all pairs {means.loc[best, 'spearman_all']:.2f})."
    )
    if iw_effect is not None:
        lines.append(
            f"- Instance weighting (phi {iw_effect['phi']}) removed {iw_effect['removed']} of "
            f"{iw_effect['pairs']:,} in-batch "
            f"negative pairs ({iw_effect['share']:.2e}) on {iw_effect['batches']} sampled batches under the frozen "
            "starting "
            "model"
            + (
                ": none there. Where it removes none in the other batches either, each IW row is its twin without IW "
                "to the last digit (their rows in the table say whether), and their comparisons repeat each other's, "
                "still counted in the family declared before the run."
                if iw_effect["removed"] == 0
                else ": it is close to a no-op here, so each IW row matches its twin without IW."
                if iw_effect["share"] < 1e-3
                else "."
            )
        )
    lines.append(f"- {seed_spread(results, *study.headline_spearman())}")
    return "\n".join(lines)


def record_results(
    study: Study,
    record: RunRecord,
    results: pd.DataFrame,
    fewshot: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    iw_effect: dict | None,
    retrieval: pd.DataFrame | None = None,
    suite: suite_rows.SuiteReport | None = None,
) -> Path:
    """``results.json`` (metrics, headline, provenance, compute time of every run used) and
    ``results_table.txt``."""
    best = study.best_trained_method(results)
    means = results.drop(columns=["label", "seed", "best_step", "selection"]).groupby("method").mean()
    column, words = study.headline_spearman()
    return study.write_record(
        record,
        {**tables, **suite.tables()} if suite else tables,
        metrics={
            "per_seed": results.to_dict("records"),
            "mean": means.to_dict("index"),
            "fewshot": fewshot.to_dict("records"),
            "best_on_selection": best,
            "instance_weighting_effect": iw_effect,
            "retrieval": None if retrieval is None else retrieval.to_dict("records"),
            "suite": suite,
        },
        headline={
            "name": f"{study.eval_name} {words} x100 ({study.row_label(best)}, best on the selection data)",
            "value": float(means.loc[best, column] * 100),
            "comparison": suite.comparison(best, study.headline_task(suite)) if suite else None,
        },
        corpus_sentences=len(study.corpus),
    )
