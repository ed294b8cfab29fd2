"""Study 2's method: Augmented SBERT (Thakur et al. 2021, "Augmented SBERT: Data Augmentation Method for
Improving Bi-Encoders for Pairwise Sentence Scoring Tasks", NAACL), as applied to biomedical pairs
by the second seed paper ("Augmented Bio-SBERT").

A cross-encoder trained on the gold pairs labels new pairs (the silver set); a bi-encoder is then
trained on gold + silver. This module holds the pair samplers (random sampling and semantic-search
sampling: top-k neighbours by a bi-encoder, k = 5 in the paper), cross- and bi-encoder fine-tuning
through sentence-transformers' trainers, and ``compare``, the gold / +random / +semantic comparison.

Every sampler returns *new* unordered pairs: never a self-pair, never a gold pair in either order, never a pair
the split holds out for its test (a test sentence can also be in a training pair, so a test pair can be drawn from
the pool), never the same pair twice (in either order). sentence-transformers' example scripts
(``examples/.../augmented_sbert``) add (a, b) and (b, a) as two pairs and keep gold pairs, so their
silver sets hold duplicates and copies of gold.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from kit.core.config import TrainSettings
from kit.core.devices import resolve_device
from kit.core.models import (
    FP32_WEIGHTS,
    MIN_MAX_LENGTH,
    model_folder,
    new_weights_expected,
    token_limit,
    trained_positions,
)
from kit.core.progress import enabled as progress_enabled
from kit.core.settings import redefault, setting

Pair = tuple[str, str]


def unordered(a: str, b: str) -> Pair:
    """The canonical form of an unordered pair (used for de-duplication)."""
    return (a, b) if a <= b else (b, a)


def _sentences_and_excluded(sentences: list[str], exclude: list[Pair]) -> tuple[list[str], set[Pair]]:
    return list(dict.fromkeys(sentences)), {unordered(a, b) for a, b in exclude}


def random_pairs(sentences: list[str], n: int, exclude: list[Pair], rng: np.random.Generator) -> list[Pair]:
    """``n`` distinct pairs of distinct sentences drawn uniformly from the de-duplicated pool,
    none of them in ``exclude`` (either order). Raises ValueError when fewer than ``n`` exist."""
    pool, seen = _sentences_and_excluded(sentences, exclude)
    members = set(pool)
    available = len(pool) * (len(pool) - 1) // 2 - sum(a in members and b in members and a != b for a, b in seen)
    if n > available:
        raise ValueError(f"asked for {n} random pairs but only {available} new pairs exist among {len(pool)} sentences")
    out: list[Pair] = []
    while len(out) < n:
        i, j = rng.integers(len(pool), size=2)
        pair = unordered(pool[i], pool[j])
        if i != j and pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


def semantic_pairs(sentences: list[str], embeddings: np.ndarray, k: int, exclude: list[Pair]) -> list[Pair]:
    """For every sentence, its ``k`` most similar other sentences by cosine
    (sentence-transformers' ``semantic_search``) that form a new pair: self, gold pairs (either
    order) and pairs already emitted are skipped and the next neighbour is taken instead, so every
    sentence contributes exactly ``k`` pairs wherever the pool still has ``k`` candidates for it.
    ``embeddings[i]`` embeds ``sentences[i]``; a repeated sentence keeps its first row."""
    from sentence_transformers.util import semantic_search

    pool, seen = _sentences_and_excluded(sentences, exclude)
    first: dict[str, int] = {}
    for i, s in enumerate(sentences):
        first.setdefault(s, i)
    emb = torch.from_numpy(np.asarray(embeddings, dtype=np.float32)[[first[s] for s in pool]])
    out: list[Pair] = []

    def take(q: int, ranked: list[dict], want: int) -> int:
        taken = 0
        for hit in ranked:
            pair = unordered(pool[q], pool[hit["corpus_id"]])
            if taken == want:
                break
            if hit["corpus_id"] != q and pair not in seen:
                seen.add(pair)
                out.append((pool[q], pool[hit["corpus_id"]]))
                taken += 1
        return taken

    depth = min(len(pool), 2 * k + 2)  # enough unless many neighbours are gold or already taken
    for q, ranked in enumerate(semantic_search(emb, emb, top_k=depth)):
        taken = take(q, ranked, k)
        if taken < k and depth < len(pool):  # search this sentence's whole ranking
            take(q, semantic_search(emb[q : q + 1], emb, top_k=len(pool))[0], k - taken)
    return out


# ---- models: sentence-transformers' CrossEncoder and SentenceTransformer, trained by their trainers ----


@dataclass
class FitSettings:
    """The sentence-transformers trainer's settings of the bi-encoders, declared once (study 2's parameters
    extend them; its cross-encoder takes them with its own epochs and learning rate)."""

    epochs: int = setting(2, "bi-encoder epochs (gold + silver trains as many epochs on more pairs)", min=1)
    batch_size: int = setting(16, "pairs per batch (bi- and cross-encoder)", min=1)
    lr: float = setting(2e-5, "bi-encoder learning rate", gt=0)
    warmup: float = setting(
        0.1, "linear warm-up: a share of the steps below 1, else a number of steps (the trainer's warmup_steps)", min=0
    )
    max_length: int = setting(64, "tokens per sentence (pair, for the cross-encoder)", min=MIN_MAX_LENGTH)
    max_grad_norm: float | None = redefault(TrainSettings, "max_grad_norm", 1.0)
    device: str = redefault(TrainSettings, "device", "auto")


@dataclass
class FitConfig(FitSettings):
    """One fine-tuning run of a cross- or bi-encoder: the settings and its seed."""

    seed: int = 0


def cross_encoder(model: str, seed: int = 0, max_length: int = 128, device: str = "auto", num_labels: int = 1):
    """A ``CrossEncoder`` warm-started from ``model``; an encoder checkpoint gets a new, seeded head.
    ``num_labels`` 1: one sigmoid score in [0, 1] (STS); more: a softmax over classes (NLI)."""
    from sentence_transformers import CrossEncoder

    torch.manual_seed(seed)
    with new_weights_expected():  # the head
        ce = CrossEncoder(
            model_folder(model, seed),
            num_labels=num_labels,
            device=str(resolve_device(device)),
            model_kwargs=FP32_WEIGHTS,
        )
    ce.max_seq_length = min(token_limit(ce.tokenizer, max_length), trained_positions(ce.model.config))
    return ce


def bi_encoder(model: str, seed: int = 0, max_length: int = 128, device: str = "auto"):
    """A ``SentenceTransformer`` from ``model`` (a plain transformers checkpoint gets mean pooling)."""
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(seed)
    st = SentenceTransformer(model_folder(model, seed), device=str(resolve_device(device)), model_kwargs=FP32_WEIGHTS)
    st.max_seq_length = min(token_limit(st.tokenizer, max_length), trained_positions(st[0].auto_model.config))
    return st


def _dataset(pairs: list[Pair], labels):
    from datasets import Dataset

    labels = np.asarray(labels)
    return Dataset.from_dict(
        {
            "sentence1": [a for a, _ in pairs],
            "sentence2": [b for _, b in pairs],
            "label": labels.tolist() if labels.dtype.kind in "iu" else labels.astype(float).tolist(),
        }
    )


def _args(cls, cfg: FitConfig, device: torch.device):
    return cls(
        output_dir=str(Path(tempfile.gettempdir()) / "kit-trainer"),  # required; nothing is saved there
        num_train_epochs=cfg.epochs,
        per_device_train_batch_size=cfg.batch_size,
        learning_rate=cfg.lr,
        warmup_steps=cfg.warmup,
        max_grad_norm=cfg.max_grad_norm or 0.0,  # the trainer clips when it is above 0
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=not progress_enabled(),
        use_cpu=device.type == "cpu",
        bf16=device.type == "cuda",
    )


def _quiet(trainer_cls):
    """``trainer_cls`` without its model-card callback, the override sentence-transformers documents
    for removing it: at construction that callback samples widget examples behind a notebook
    progress bar that no setting silences, leaving residue in every report. Training settings are
    recorded in the run's results instead."""

    class Quiet(trainer_cls):
        def add_model_card_callback(self, default_args_dict) -> None:
            pass

    return Quiet


def _train(trainer) -> None:
    """Train without the trainer's printed log dicts (reports record what matters)."""
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    trainer.train()


def fit_cross_encoder(ce, pairs: list[Pair], labels, cfg: FitConfig):
    """Fine-tune on gold pairs, as the Augmented SBERT recipe: binary cross-entropy against scores in
    [0, 1] (STS scores divided by their maximum) for one output, cross-entropy against class
    indices for several; returns ``ce``."""
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss, CrossEntropyLoss

    loss = BinaryCrossEntropyLoss(ce) if ce.num_labels == 1 else CrossEntropyLoss(ce)
    args = _args(CrossEncoderTrainingArguments, cfg, ce.device)
    _train(_quiet(CrossEncoderTrainer)(model=ce, args=args, train_dataset=_dataset(pairs, labels), loss=loss))
    return ce


def warm_up(model: str, pairs: list[Pair], labels: np.ndarray, cfg: FitConfig, out: Path) -> None:
    """A cross-encoder from ``model`` fitted on ``pairs`` with labels in [0, 1] and saved in ``out``, the start of
    a teacher that then learns its gold pairs (``compare``'s ``cross_start``): intermediate training on a larger pair
    task (Phang et al. 2018, STILTs); the paper's teacher learns its gold pairs alone."""
    ce = cross_encoder(model, cfg.seed, cfg.max_length, cfg.device)
    fit_cross_encoder(ce, pairs, labels, cfg)
    ce.save(str(out))


def cross_scores(ce, pairs: list[Pair], batch_size: int = 64) -> np.ndarray:
    """The cross-encoder's scores, in the order of ``pairs``: sigmoid scores in [0, 1], shape (n,),
    for one output; class probabilities, shape (n, classes), for several."""
    if not pairs:
        return np.zeros((0,) if ce.num_labels == 1 else (0, ce.num_labels), dtype=np.float32)
    return np.asarray(
        ce.predict(pairs, batch_size=batch_size, show_progress_bar=False, apply_softmax=ce.num_labels > 1),
        dtype=np.float32,
    )


def pair_scores(ce, pairs: list[Pair], positive: int = 1, batch_size: int = 64) -> np.ndarray:
    """The cross-encoder's similarity of each pair, one number per pair, in the order of ``pairs``: its sigmoid
    score (one output, STS), else the probability of class ``positive`` (NLI: the entailment class, which a
    positive pair of a pair task stands for). What takes the place of a bi-encoder's cosine on the suite's pair
    tasks."""
    scores = cross_scores(ce, pairs, batch_size)
    return scores if scores.ndim == 1 else scores[:, positive]


def silver_labels(scores: np.ndarray) -> np.ndarray:
    """Silver labels from ``cross_scores``: the score itself (STS) or the most probable class (NLI)."""
    return scores if scores.ndim == 1 else scores.argmax(1)


def fit_bi_encoder(st, pairs: list[Pair], labels, cfg: FitConfig, num_labels: int | None = None):
    """Fine-tune a bi-encoder as SBERT does: CosineSimilarityLoss (MSE between cosine and a label
    in [0, 1]) for STS; SoftmaxLoss (softmax over W[u; v; |u - v|]) for ``num_labels`` NLI classes.
    Returns the trained loss module (the SoftmaxLoss keeps its classifier); ``st`` is trained in place."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss, SoftmaxLoss

    if num_labels is None:
        loss = CosineSimilarityLoss(st)
    else:
        torch.manual_seed(cfg.seed)  # the classifier head's initialisation
        loss = SoftmaxLoss(st, st.get_embedding_dimension(), num_labels).to(st.device)
    args = _args(SentenceTransformerTrainingArguments, cfg, st.device)
    _train(_quiet(SentenceTransformerTrainer)(model=st, args=args, train_dataset=_dataset(pairs, labels), loss=loss))
    return loss


def cosine_scores(st, pairs: list[Pair], batch_size: int = 64) -> np.ndarray:
    """Cosine similarity of each pair under a bi-encoder."""
    a = st.encode([p[0] for p in pairs], batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True)
    b = st.encode([p[1] for p in pairs], batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True)
    return (a * b).sum(1)


@torch.no_grad()
def softmax_predictions(st, loss, pairs: list[Pair], batch_size: int = 64) -> np.ndarray:
    """Classes predicted by a SoftmaxLoss classifier from independently encoded sentences
    (u, v, |u - v|), i.e. still a bi-encoder: each sentence is embedded alone."""
    u, v = (st.encode([p[i] for p in pairs], batch_size=batch_size, convert_to_tensor=True) for i in (0, 1))
    return loss.classifier(torch.cat([u, v, (u - v).abs()], 1).to(loss.classifier.weight.dtype)).argmax(1).cpu().numpy()


# ---- one comparison: gold vs gold + random silver vs gold + semantic silver ----

CONDITIONS = ("gold", "gold + random silver", "gold + semantic silver")


def model_folder_name(condition: str) -> str:
    """A condition as a folder or file name: ``gold``, ``gold+random_silver``, ``gold+semantic_silver``."""
    return condition.replace(" + ", "+").replace(" ", "_")


@dataclass
class Comparison:
    """Scores of the three bi-encoders (``CONDITIONS``) and of the labelling cross-encoder on one
    split and seed, and the silver sets behind them."""

    scores: dict[str, float]  # condition -> evaluation score; "cross-encoder" -> the labeller's own score
    silver: dict[str, tuple[list[Pair], np.ndarray]]  # "random" / "semantic" -> (pairs, cross-encoder scores)


def compare(
    model: str,
    gold: list[Pair],
    gold_labels: np.ndarray,
    pool: list[str],
    k: int,
    evaluate,
    cfg: FitConfig,
    cross_cfg: FitConfig | None = None,
    num_labels: int | None = None,
    save_to: Path | None = None,
    each_bi_encoder: Callable[[str, object], None] | None = None,
    each_cross_encoder: Callable[[object], None] | None = None,
    held_out: list[Pair] = (),
    cross_start: str | None = None,
    cross_model: str | None = None,
) -> Comparison:
    """The Augmented SBERT comparison for one split and seed (Thakur et al. 2021, Alg. 1):

    1. bi-encoder on gold; 2. cross-encoder on gold; 3. semantic silver: each pool sentence's k
    nearest new neighbours under the gold bi-encoder; random silver: as many random new pairs;
    both labelled by the cross-encoder; 4. a bi-encoder from the same start on gold + each silver
    set, with the same settings, epochs and seed (so more steps: the paper's setting).

    STS (``num_labels`` None): labels in [0, 1]; NLI: class indices. ``evaluate(predict) -> float``
    scores a predictor ``predict(pairs) -> array``: cosines (STS) or classes (NLI); the
    cross-encoder is scored the same way. ``save_to``: each bi-encoder is saved there in
    sentence-transformers format, in a folder named after its condition (``model_folder_name``).
    ``each_bi_encoder(condition, st)`` is called with each trained bi-encoder, the final model of its
    training (a study scores it on the evaluation suite there); ``each_cross_encoder(ce)`` with the trained
    cross-encoder, before it labels the silver pairs (a study scores it on the suite's pair tasks there).
    ``held_out``: the split's test pairs, which no silver set may hold either. ``cross_start`` (STS): the
    cross-encoder's starting checkpoint, a warmed-up one (``warm_up``); else ``cross_model``, another model for the
    teacher than the student's (a stronger one); None: ``model``, as the paper.
    """
    if cross_start is not None and num_labels is not None:
        raise ValueError("a warmed-up cross-encoder is for STS benchmarks (one output), not NLI ones")

    def fit_and_score(pairs, labels, condition):
        st = bi_encoder(model, cfg.seed, cfg.max_length, cfg.device)
        loss = fit_bi_encoder(st, pairs, labels, cfg, num_labels)
        if save_to is not None:
            st.save(str(Path(save_to) / model_folder_name(condition)))
        if each_bi_encoder is not None:
            each_bi_encoder(condition, st)
        predict = (
            (lambda p: cosine_scores(st, p)) if num_labels is None else (lambda p: softmax_predictions(st, loss, p))
        )
        scores[condition] = evaluate(predict)
        return st

    scores: dict[str, float] = {}
    gold_st = fit_and_score(gold, gold_labels, CONDITIONS[0])
    teacher = cross_start or cross_model or model
    ce = cross_encoder(teacher, cfg.seed, cfg.max_length, cfg.device, num_labels or 1)
    fit_cross_encoder(ce, gold, gold_labels, cross_cfg or cfg)
    if each_cross_encoder is not None:
        each_cross_encoder(ce)
    scores["cross-encoder"] = evaluate(lambda p: silver_labels(cross_scores(ce, p)))
    emb = gold_st.encode(pool, convert_to_numpy=True, normalize_embeddings=True)
    exclude = [*gold, *held_out]
    semantic = semantic_pairs(pool, emb, k, exclude)
    rand = random_pairs(pool, len(semantic), exclude, np.random.default_rng(cfg.seed))
    silver = {name: (pairs, cross_scores(ce, pairs)) for name, pairs in (("random", rand), ("semantic", semantic))}
    if not all(np.isfinite(s).all() for _, s in silver.values()):
        raise FloatingPointError(
            f"the cross-encoder trained from {teacher} labels silver pairs NaN or inf: it diverged"
        )
    for condition, (pairs, ce_scores) in zip(CONDITIONS[1:], silver.values()):
        fit_and_score(list(gold) + pairs, np.concatenate([gold_labels, silver_labels(ce_scores)]), condition)
    return Comparison({c: scores[c] for c in (*CONDITIONS, "cross-encoder")}, silver)
