"""ChineseBLUE transfer evaluation: the Chinese table of the first seed paper.

Each available task is probed on frozen sentence embeddings with ``kit.evaluation.probes.linear_probe``
(SentEval style: logistic regression, C chosen on dev; pair tasks use [u, v, |u - v|, u * v]).
cMedQA has no public train split: its dev split is divided (seeded, 80/20) into probe-train and
probe-selection parts and the probe is scored on test. cMedQNLI is not available and stays in
the table as a "not available" cell. On a CPU the splits can be capped to a seeded subsample;
every run of a study uses the same subsample, so rows differ only in the encoder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kit.data import CHINESEBLUE, LabeledTexts, STSPairs, load_chineseblue
from kit.evaluation.probes import linear_probe, pair_features
from kit.report.tables import mean_std

METRIC_LABEL = {"f1": "F1", "weighted_f1": "weighted F1", "macro_f1": "macro F1"}
NOT_AVAILABLE = "not available"


@dataclass
class ProbeTask:
    """One task's probe-train, probe-selection and test parts (already subsampled)."""

    name: str
    metric: str
    train: LabeledTexts
    dev: LabeledTexts
    test: LabeledTexts
    note: str = ""


def _take(data: LabeledTexts, idx: np.ndarray, split: str) -> LabeledTexts:
    idx = np.sort(idx)
    return LabeledTexts(
        data.task, split, tuple([col[i] for i in idx] for col in data.texts), data.labels[idx], data.source
    )


def _cap(data: LabeledTexts, size: int | None, rng: np.random.Generator) -> LabeledTexts:
    if size is None or len(data) <= size:
        return data
    return _take(data, rng.permutation(len(data))[:size], data.split)


def cmedqq_pairs(per_split: int | None = None, seed: int = 0) -> STSPairs:
    """cMedQQ dev and test as scored pairs (score = the 0/1 same-intent label), for the cosine
    view that selects checkpoints during training (Spearman of cosine vs label on dev) and for
    alignment over the paraphrase pairs; ``per_split`` caps each split to a seeded subsample."""
    rng = np.random.default_rng(seed)
    parts = [_cap(load_chineseblue("cMedQQ", split), per_split, rng) for split in ("dev", "test")]
    return STSPairs(
        [q for p in parts for q in p.texts[0]],
        [q for p in parts for q in p.texts[1]],
        np.concatenate([p.labels.astype(float) for p in parts]),
        np.concatenate([[p.split] * len(p) for p in parts]),
        parts[-1].source.replace("test.txt", "{dev,test}.txt"),
    )


class ChineseBlueEval:
    """The probe tasks of one study, fixed at construction; ``evaluate`` scores an encoder."""

    def __init__(
        self, train_size: int | None = None, eval_size: int | None = None, seed: int = 0, max_length: int = 64
    ):
        rng = np.random.default_rng(seed)
        self.max_length = max_length
        self.tasks: list[ProbeTask] = []
        for task in CHINESEBLUE.values():
            if not task.splits:
                continue
            test = load_chineseblue(task.name, "test")
            if "train" in task.splits:
                train, dev = load_chineseblue(task.name, "train"), load_chineseblue(task.name, "dev")
            else:  # cMedQA: the public dev split is the only labelled data besides test
                full = load_chineseblue(task.name, "dev")
                order = rng.permutation(len(full))
                cut = int(0.8 * len(full))
                train, dev = _take(full, order[:cut], "dev[:80%]"), _take(full, order[cut:], "dev[80%:]")
            self.tasks.append(
                ProbeTask(
                    task.name,
                    task.metric,
                    _cap(train, train_size, rng),
                    _cap(dev, eval_size, rng),
                    _cap(test, eval_size, rng),
                    task.missing_note,
                )
            )
        self.texts = list(
            dict.fromkeys(
                t for pt in self.tasks for part in (pt.train, pt.dev, pt.test) for col in part.texts for t in col
            )
        )

    def describe(self) -> pd.DataFrame:
        """What each probe is trained, selected and scored on."""
        rows = [
            {
                "task": t.name,
                "metric": METRIC_LABEL[t.metric],
                "probe train": f"{t.train.split} ({len(t.train):,})",
                "C selected on": f"{t.dev.split} ({len(t.dev):,})",
                "scored on": f"{t.test.split} ({len(t.test):,})",
                "note": t.note,
            }
            for t in self.tasks
        ]
        rows += [
            {"task": name, "metric": METRIC_LABEL[t.metric], "note": t.missing_note}
            for name, t in CHINESEBLUE.items()
            if not t.splits
        ]
        return pd.DataFrame(rows).fillna("")

    def evaluate(self, encoder, seed: int = 0) -> dict[str, float]:
        """``{task: test score, task_dev: selection score}`` for every available task."""
        emb = encoder.encode(self.texts, max_length=self.max_length, show_progress=False)
        row = {t: i for i, t in enumerate(self.texts)}

        def features(part: LabeledTexts) -> tuple[np.ndarray, np.ndarray]:
            cols = [emb[[row[t] for t in col]] for col in part.texts]
            return (pair_features(*cols) if len(cols) == 2 else cols[0]), part.labels

        out = {}
        for t in self.tasks:
            scores = linear_probe(features(t.train), features(t.dev), features(t.test), t.metric, seed=seed)
            out[t.name], out[f"{t.name}_dev"] = scores["test"], scores["dev"]
        return out


def chineseblue_table(results: pd.DataFrame) -> pd.DataFrame:
    """The paper's ChineseBLUE table: one row per method, test score x100 as mean ± std over seeds
    (a single seed shows its value), unavailable tasks as "not available"."""
    out = []
    for _, grp in results.groupby("method", sort=False):
        row = {"method": grp["label"].iloc[0], "seeds": len(grp)}
        for name, task in CHINESEBLUE.items():
            column = f"{name} ({METRIC_LABEL[task.metric]})"
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
    lines = []
    for t in tasks:
        above = trained.index[trained[t] > base[t]].tolist()
        best = trained[t].idxmax()
        lines.append(
            f"- {t}: starting model {base[t]:.2f}; {len(above)} of {len(trained)} trained rows above it; best "
            f"{best} {trained.loc[best, t]:.2f} ({trained.loc[best, t] - base[t]:+.2f}); largest seed std in this "
            "column "
            f"{spread[t]:.2f}."
        )
    return "\n".join(lines)
