"""The k-fold benchmark's held-out task: all of BIOSSES' pairs, each scored by the model of the fold that held it
out (k-fold cross-validation predictions, Stone 1974), so that a row trained on BIOSSES pairs is still scored on
100 pairs it never saw, gold or silver (``method.compare`` keeps a split's test pairs out of its silver sets), where
the BLURB split's test holds 20. A sentence of a held-out pair can be in a training pair too: BIOSSES reuses
sentences across pairs, so the models know some held-out sentences, never a held-out pair or its score.

For each training seed s, pair i of fold f(i) gets the output of fold f(i)'s model at seed s on the all-pairs task:
its score's rank among that model's scores of all N pairs, r_{f(i),s}(i) / N (``within_ranks``). Each fold's scores
are thus read through the same per-model monotone map before they are pooled, so a fold whose model scores every
pair higher is not ranked above the others for it; Spearman's rho of the pooled outputs against the gold scores is
the task's metric, as on every STS task. A seed's runs over all folds make one run of a k-fold row on this task.
The folds are the task's item clusters (``kit.evaluation.task.Task.clusters``): one model scores a fold's pairs, and
a report shows each fold's contribution to a difference there (``kit.evaluation.rows.cluster_spread``), how evenly
the folds' models carry it; its intervals are conditional on these folds' training pairs
(``kit.evaluation.inference``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from kit.evaluation.rows import RunOutputs
from kit.evaluation.task import Task

ALL_PAIRS = "biosses-all"
"""The suite task whose outputs the folds' models give on every pair: a run file needs it in ``suite``."""
HELD_OUT = "biosses-cv"
"""The held-out task's name (``held_out_task``)."""
KFOLD = "biosses_kfold"
"""The benchmark whose folds it is made of."""


def held_out_task(all_pairs: Task, held_out: Sequence[np.ndarray]) -> Task:
    """``all_pairs`` (BIOSSES' all-pairs task) as the held-out task of the folds that hold out ``held_out`` (each
    fold's items: indices into ``all_pairs``): the same items, statistic and data, not declared as study 2's training
    data, since each item is scored by a model that did not train on it, nested in no task (``Task.nests``): its
    outputs are other models' than on ``all_pairs``, and clustered by fold (``Task.clusters``)."""
    folds = len(held_out)
    return dataclasses.replace(
        all_pairs,
        name=HELD_OUT,
        description=f"BIOSSES, all 100 pairs, each scored by the {folds}-fold model that held it out (study 2)",
        split=f"all 100 pairs, {folds}-fold cross-validation predictions",
        seen_by=(),
        nests=False,
        clusters=tuple(fold_of(held_out, all_pairs.items).tolist()),
    )


def fold_of(held_out: Sequence[np.ndarray], items: int) -> np.ndarray:
    """The fold that holds out each of ``items`` (``held_out[f]``: fold f's indices). ValueError unless the folds hold
    out each item exactly once."""
    counts = np.bincount(np.concatenate(held_out), minlength=items) if len(held_out) else np.zeros(items, int)
    if len(counts) != items or not (counts == 1).all():
        raise ValueError(f"the folds hold out {int((counts == 1).sum())} of {items} pairs exactly once, not all")
    out = np.empty(items, dtype=np.int64)
    for f, idx in enumerate(held_out):
        out[idx] = f
    return out


def cross_fitted(fold_runs: Sequence[RunOutputs], held_out: Sequence[np.ndarray], items: int) -> RunOutputs:
    """One seed's outputs on the held-out task: fold f's model's all-pairs outputs (``fold_runs[f]``) on the
    items it held out (``held_out[f]``: indices into the all-pairs task). ValueError unless the folds hold out each
    of the ``items`` exactly once."""
    fold_of(held_out, items)
    metrics = fold_runs[0][ALL_PAIRS].keys()
    out = {metric: np.empty(items) for metric in metrics}
    for run, idx in zip(fold_runs, held_out):
        for metric in metrics:
            out[metric][idx] = np.asarray(run[ALL_PAIRS][metric])[idx]
    return {HELD_OUT: out}
