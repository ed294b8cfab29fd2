"""The CUDA path (bf16 autocast, SDPA, device-side metrics, CUDA RNG in checkpoints).

These run only where torch sees a GPU (CI has none; they were run on a lent H100 and H200, see
docs/gpu.md); on a CPU the same code paths are covered by test_train.py.
"""

import numpy as np
import pytest
import torch

from kit.core.config import TrainConfig
from kit.core.devices import autocast
from kit.core.models import Encoder
from kit.core.train import train_contrastive
from kit.evaluation.sts import sts_report

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
CONFIG = dict(steps=6, eval_every=3, batch_size=16, max_length=32, lr=1e-3, device="cuda", mix_lambda=0.2, iw_phi=0.9)


def test_bf16_autocast_on_cuda_and_fp32_when_asked():
    x = torch.ones(4, 4, device="cuda")
    with autocast(torch.device("cuda")):
        assert (x @ x).dtype == torch.bfloat16
    with autocast(torch.device("cuda"), "fp32"):
        assert (x @ x).dtype == torch.float32


def test_training_on_cuda_moves_the_model_and_keeps_fp32_master_weights(pubmed, biosses):
    enc = Encoder.from_pretrained("minilm", "mean", seed=0)
    start = sts_report(enc, biosses)["spearman_all"]
    hist = train_contrastive(enc, pubmed[:2000], TrainConfig(**CONFIG), lambda e: sts_report(e, biosses))
    assert enc.device.type == "cuda" and {p.dtype for p in enc.parameters()} == {torch.float32}
    assert all(np.isfinite(r["loss"]) for r in hist.rows[1:]) and len(hist.rows) == 3
    assert hist.rows[-1]["spearman_all"] != start


def test_cuda_encode_matches_cpu(pubmed):
    enc = Encoder.from_pretrained("minilm", "mean")
    cpu = enc.encode(pubmed[:300])
    gpu = enc.to("cuda").encode(pubmed[:300])
    np.testing.assert_allclose(gpu, cpu, atol=1e-4)


def test_resume_on_cuda_restores_the_cuda_rng(tmp_path, pubmed, biosses):
    def run(run_dir, evaluate):
        enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
        return enc, train_contrastive(enc, pubmed[:400], TrainConfig(**CONFIG), evaluate, run_dir=run_dir)

    _, full = run(tmp_path / "full", lambda e: sts_report(e, biosses))
    calls = []

    def crash_at_second_eval(e):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return sts_report(e, biosses)

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "resumed", crash_at_second_eval)
    _, resumed = run(tmp_path / "resumed", lambda e: sts_report(e, biosses))
    assert [r["loss"] for r in resumed.rows[1:]] == pytest.approx([r["loss"] for r in full.rows[1:]], rel=1e-3)


def test_pinned_non_blocking_copy_delivers_the_batch():
    from kit.core.devices import to_device

    host = {"input_ids": torch.randint(0, 100, (8, 16)), "attention_mask": torch.ones(8, 16, dtype=torch.long)}
    moved = to_device(host, torch.device("cuda"))
    torch.cuda.synchronize()
    assert all(moved[k].is_cuda and torch.equal(moved[k].cpu(), host[k]) for k in host)


def _no_dropout(enc):
    for m in enc.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return enc


def test_compiled_graphed_and_length_grouped_training_on_cuda(pubmed):
    """Compiled and graphed training give eager's embeddings at every evaluation, within 1% of how far training
    moved them (a skipped optimizer step or stale weights move them by more), and its losses. The embeddings carry
    the test: the tiny random model's are nearly collapsed, so its InfoNCE losses stay within 1e-3 of ln(batch).
    Not its dev Spearman: its BIOSSES dev cosines lie within 2e-5 of each other, so a 1e-6 relative change of the
    weights moves that Spearman by 0.01 (an H200 failed on it)."""

    def train(**options):
        enc = _no_dropout(Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0))
        cfg = TrainConfig(**{**CONFIG, "mix_lambda": None, "iw_phi": None, "precision": "fp32", **options})
        seen = []

        def embeddings(e):  # a rising score keeps the last step, whatever the embeddings
            seen.append(e.encode(pubmed[:64]))
            return {"spearman_dev": float(len(seen))}

        return train_contrastive(enc, pubmed[:400], cfg, embeddings), np.stack(seen)

    eager, eager_emb = train()
    moved = np.abs(eager_emb[-1] - eager_emb[0]).max()
    for options in ({"compile": True}, {"cuda_graphs": True}):  # graphed: static padding, replayed as CUDA graphs
        hist, emb = train(**options)
        assert [r["loss"] for r in hist.rows[1:]] == pytest.approx([r["loss"] for r in eager.rows[1:]], rel=1e-3)
        off = np.abs(emb - eager_emb).max() / moved
        assert off < 0.01, f"{options}: embeddings off by {off:.2%} of how far training moved them"
    grouped, _ = train(length_grouped=True)
    assert all(np.isfinite(r["loss"]) for r in grouped.rows[1:])


def test_gradcache_on_cuda_gives_the_full_batch_gradients(pubmed):
    from kit.core.gradcache import CachedSimCSEObjective
    from kit.core.train import SimCSEObjective

    cfg = TrainConfig(**{**CONFIG, "mix_lambda": None, "iw_phi": None, "precision": "fp32"})
    grads = []
    for make in (lambda e: SimCSEObjective(e, cfg), lambda e: CachedSimCSEObjective(e, cfg, mini_batch_size=5)):
        enc = _no_dropout(Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)).to("cuda").train()
        objective = make(enc).to("cuda")
        loss, _ = objective(enc, pubmed[:16], np.arange(16))
        loss.backward()
        grads.append(torch.cat([p.grad.flatten() for p in enc.parameters() if p.grad is not None]))
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-6)
