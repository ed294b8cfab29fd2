"""The summarizer of study 3: a Hugging Face seq2seq model (or a BERT2BERT encoder-decoder warm-started
from an encoder), beam-search generation, the dev similarity probe of QFCL's
Figure 4 and the summarizer's encoder as a sentence encoder for the evaluation suite (``CHQEncoder``)."""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from kit.core.models import Encoder, masked_mean, token_limit, trained_positions
from kit.studies.qfcl_summarization.focus import QFCLPair


@contextlib.contextmanager
def labelled_forward():
    """Silence, for the duration, the FutureWarning that ``EncoderDecoderModel`` gives on every forward
    with labels (it concerns checkpoints trained before transformers 4.12; the kit's are new)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Version v4.12.0 introduces a better way", category=FutureWarning)
        yield


@dataclass
class Summarizer:
    """A seq2seq model, its tokenizer, a description for reports and the names of its parameters that no
    checkpoint gave (``new``: a BERT2BERT's cross-attention and LM-head transform), which train at their own rate."""

    model: nn.Module
    tokenizer: object
    description: str
    new: frozenset[str] = frozenset()

    @property
    def encoder(self) -> nn.Module:
        return self.model.get_encoder()


def summarizer(name: str, seed: int = 0) -> Summarizer:
    """A Hugging Face seq2seq model by name (``facebook/bart-base``, ...), or for an encoder-only
    checkpoint (``minilm``, the random aliases, any BERT) a BERT2BERT ``EncoderDecoderModel`` whose
    encoder and decoder are both warm-started from it; the decoder's cross-attention is new (seeded)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, EncoderDecoderModel

    from kit.core.models import FP32_WEIGHTS, model_folder, new_weights_expected, resolve_model

    folder = model_folder(name, seed)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    positions = trained_positions(AutoConfig.from_pretrained(folder))
    tokenizer.model_max_length = min(tokenizer.model_max_length, positions)  # every call below stays within them
    torch.manual_seed(seed)
    if AutoConfig.from_pretrained(folder).is_encoder_decoder:
        model, info = AutoModelForSeq2SeqLM.from_pretrained(folder, output_loading_info=True, **FP32_WEIGHTS)
        new = {n for n, _ in model.named_parameters() if n in set(info["missing_keys"])}
        return Summarizer(model, tokenizer, f"{name} (seq2seq)", frozenset(new))
    with new_weights_expected():  # cross-attention and the LM-head transform
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(
            folder, folder, encoder_dtype=torch.float32, decoder_dtype=torch.float32
        )
    model.config.decoder_start_token_id = tokenizer.cls_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.eos_token_id = tokenizer.sep_token_id
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    return Summarizer(
        model,
        tokenizer,
        f"BERT2BERT from `{name}`: {resolve_model(name).description} (cross-attention newly initialised)",
        new_parameters(model),
    )


def new_parameters(model: nn.Module) -> frozenset[str]:
    """Names of the parameters of a BERT2BERT ``model`` that its checkpoint did not give: the decoder's whose name, less
    its side (``decoder.``) and base-model prefix (``bert.``), names no parameter of the encoder, which is the
    checkpoint's model whole (its cross-attention and LM-head transform; an MLM head in the checkpoint would be counted
    new too). Works for a hub name as for a folder: no file is read."""
    given = {n.split(".", 1)[1] for n, _ in model.named_parameters() if n.startswith("encoder.")}
    return frozenset(
        n
        for n, _ in model.named_parameters()
        if n.startswith("decoder.") and n.split(".", 1)[1].removeprefix("bert.") not in given
    )


@torch.inference_mode()
def generate(
    s: Summarizer, chqs: list[str], max_source: int, max_target: int, num_beams: int = 4, batch_size: int = 16
) -> list[str]:
    """Summaries by beam search, at most ``max_target`` new tokens each."""
    s.model.eval()
    device = next(s.model.parameters()).device
    out = []
    for i in range(0, len(chqs), batch_size):
        enc = s.tokenizer(
            chqs[i : i + batch_size],
            padding=True,
            truncation=True,
            max_length=token_limit(s.tokenizer, max_source),
            return_tensors="pt",
        ).to(device)
        ids = s.model.generate(  # ids and mask only: a WordPiece tokenizer's token_type_ids are no BART input
            input_ids=enc["input_ids"],
            attention_mask=enc["attention_mask"],
            num_beams=num_beams,
            max_new_tokens=min(max_target, s.tokenizer.model_max_length - 1),  # [CLS] + new tokens fit
            early_stopping=num_beams > 1,
        )
        out += s.tokenizer.batch_decode(ids, skip_special_tokens=True)
    return [t.strip() for t in out]


class CHQEncoder(Encoder):
    """The summarizer's encoder as a sentence encoder (``kit.core.models.Encoder``, so the evaluation suite
    scores it like any model): a text's vector is the mean of the encoder's last-layer token states over its
    tokens, padding excluded, the representation of a CHQ that QFCL's encoder-side loss trains (anchor C,
    ``QFCLObjective``). Only token ids and the padding mask reach the encoder (a WordPiece tokenizer's
    token_type_ids are no BART input). Shares its weights with the summarizer."""

    def __init__(self, s: Summarizer):
        super().__init__(s.encoder, s.tokenizer, "mean")

    def backbone_states(self, features: dict[str, torch.Tensor], hidden_states: bool = False):
        return self.backbone(
            input_ids=features["input_ids"],
            attention_mask=features["attention_mask"],
            output_hidden_states=hidden_states,
        )


@torch.inference_mode()
def similarity_probe(
    s: Summarizer, pairs: list[QFCLPair], summaries: list[str], max_source: int, max_target: int, batch_size: int = 16
) -> dict[str, float]:
    """Mean cosines on dev (the paper's Figure 4): the CHQ's encoder representation vs its FAQ, vs
    the other pairs' FAQs (simple negatives) and vs its hard negatives; and the same three for the
    generated summary's decoder representation (teacher-forcing the generated tokens). FAQs and
    negatives are represented by the (query) encoder."""
    s.model.eval()
    device = next(s.model.parameters()).device

    def enc(texts, n):
        reps = []
        for i in range(0, len(texts), batch_size):
            t = s.tokenizer(
                texts[i : i + batch_size],
                padding=True,
                truncation=True,
                max_length=token_limit(s.tokenizer, n),
                return_tensors="pt",
            ).to(device)
            reps.append(
                masked_mean(
                    s.encoder(input_ids=t["input_ids"], attention_mask=t["attention_mask"]).last_hidden_state,
                    t["attention_mask"],
                )
            )
        return F.normalize(torch.cat(reps), dim=-1)

    chq, faq = enc([p.chq for p in pairs], max_source), enc([p.faq for p in pairs], max_target)
    gen = []
    for i in range(0, len(pairs), batch_size):
        src = s.tokenizer(
            [p.chq for p in pairs[i : i + batch_size]],
            padding=True,
            truncation=True,
            max_length=token_limit(s.tokenizer, max_source),
            return_tensors="pt",
        ).to(device)
        tgt = s.tokenizer(
            summaries[i : i + batch_size],
            padding=True,
            truncation=True,
            max_length=token_limit(s.tokenizer, max_target),
            return_tensors="pt",
        ).to(device)
        labels = tgt["input_ids"].masked_fill(tgt["attention_mask"] == 0, -100)
        with labelled_forward():
            out = s.model(
                input_ids=src["input_ids"],
                attention_mask=src["attention_mask"],
                labels=labels,
                output_hidden_states=True,
            )
        gen.append(masked_mean(out.decoder_hidden_states[-1], tgt["attention_mask"]))
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
