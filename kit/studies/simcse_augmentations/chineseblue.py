"""ChineseBLUE in study 1: the cMedQQ cosine view that selects checkpoints, and the paper's Chinese table.

The probes themselves are suite tasks (``kit.evaluation.probes.chineseblue_probes``: SentEval-style logistic
regressions on frozen embeddings, C chosen on dev, F1 on test, with intervals in the report's suite section);
the study fits each run's probes once and reads both the table's F1 and the suite's outputs from them. cMedQNLI
is not available and stays in the table as a "not available" cell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kit.data import CHINESEBLUE, STSPairs, load_chineseblue
from kit.evaluation.probes import F1_LABELS, ProbeTask
from kit.report.tables import mean_std

NOT_AVAILABLE = "not available"


def source_task(task: ProbeTask) -> str:
    """The ChineseBLUE task a probe task reads (``cMedQQ`` for ``cmedqq-probe``): the results' column."""
    return task.dataset.name.split("/")[1]


def cmedqq_pairs(per_split: int | None = None, seed: int = 0) -> STSPairs:
    """cMedQQ dev and test as scored pairs (score = the 0/1 same-intent label), for the cosine
    view that selects checkpoints during training (Spearman of cosine vs label on dev) and for
    alignment over the paraphrase pairs; ``per_split`` caps each split to a seeded subsample."""
    rng = np.random.default_rng(seed)
    parts = [load_chineseblue("cMedQQ", split).capped(per_split, rng) for split in ("dev", "test")]
    return STSPairs(
        [q for p in parts for q in p.texts[0]],
        [q for p in parts for q in p.texts[1]],
        np.concatenate([p.labels.astype(float) for p in parts]),
        np.concatenate([[p.split] * len(p) for p in parts]),
        parts[-1].source.replace("test.txt", "{dev,test}.txt"),
    )


def probe_setup(tasks: list[ProbeTask]) -> pd.DataFrame:
    """What each probe is trained, selected and scored on; the tasks that are not available, and why."""
    rows = []
    for task in tasks:
        parts, name = task.parts, source_task(task)
        rows.append(
            {
                "task": name,
                "metric": F1_LABELS[task.f1],
                "probe train": f"{parts.train.split} ({len(parts.train):,})",
                "C selected on": f"{parts.dev.split} ({len(parts.dev):,})",
                "scored on": f"{parts.test.split} ({len(parts.test):,})",
                "note": CHINESEBLUE[name].missing_note,
            }
        )
    rows += [
        {"task": name, "metric": F1_LABELS[t.metric], "note": t.missing_note}
        for name, t in CHINESEBLUE.items()
        if not t.splits
    ]
    return pd.DataFrame(rows).fillna("")


def chineseblue_table(results: pd.DataFrame) -> pd.DataFrame:
    """The paper's ChineseBLUE table: one row per method, test score x100 as mean ± std over seeds
    (a single seed shows its value), unavailable tasks as "not available"."""
    out = []
    for _, grp in results.groupby("method", sort=False):
        row = {"method": grp["label"].iloc[0], "seeds": len(grp)}
        for name, task in CHINESEBLUE.items():
            column = f"{name} ({F1_LABELS[task.metric]})"
            if not task.splits or name not in grp:
                row[column] = NOT_AVAILABLE
                continue
            row[column] = mean_std(grp[name].to_numpy() * 100)
        out.append(row)
    return pd.DataFrame(out)


def chineseblue_verdict(results: pd.DataFrame) -> str:
    """Per task, how the trained rows compare with the starting model (Markdown, from the table)."""
    tasks = [t for t in CHINESEBLUE if t in results]
    if "zero_shot" not in set(results.method) or not tasks:
        return ""
    means = results.groupby("method", sort=False)[tasks].mean() * 100
    spread = results.groupby("method")[tasks].std().max() * 100
    base, trained = means.loc["zero_shot"], means.drop(index="zero_shot")
    labels = results.groupby("method").label.first()
    lines = []
    for t in tasks:
        above = trained.index[trained[t] > base[t]].tolist()
        best = trained[t].idxmax()
        lines.append(
            f"- {t}: starting model {base[t]:.2f}; {len(above)} of {len(trained)} trained rows above it; best "
            f"{labels[best]} {trained.loc[best, t]:.2f} ({trained.loc[best, t] - base[t]:+.2f}); largest seed std "
            f"in this column {spread[t]:.2f}."
        )
    return "\n".join(lines)
