import numpy as np
import pytest
import torch

from kit.core.augment import make_augmenter
from kit.core.batches import Batches
from kit.core.config import TrainConfig
from kit.core.models import Encoder
from kit.core.objectives import SimCSEObjective
from kit.core.train import train_contrastive
from kit.evaluation.sts import sts_report

CONFIG = dict(steps=4, eval_every=2, batch_size=8, max_length=24, lr=1e-3, device="cpu")


@pytest.fixture(scope="module")
def corpus(pubmed):
    return pubmed[:200]


def evaluator(biosses):
    return lambda enc: sts_report(enc, biosses)


def run(corpus, biosses, run_dir=None, evaluate=None, **overrides):
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    cfg = TrainConfig(**{**CONFIG, **overrides})
    hist = train_contrastive(enc, corpus, cfg, evaluate or evaluator(biosses), make_augmenter("crop", 0.2), run_dir)
    return enc, hist


def test_training_moves_the_model_and_records_history(corpus, biosses):
    start = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    enc, hist = run(corpus, biosses, mix_lambda=0.2, iw_phi=0.9)
    moved = [not torch.equal(a, b) for a, b in zip(start.state_dict().values(), enc.state_dict().values())]
    assert any(moved)
    assert [r["step"] for r in hist.rows] == [0, 2, 4]
    assert all(np.isfinite(r["loss"]) for r in hist.rows[1:])
    assert hist.best_step in (2, 4)
    assert {"spearman_dev", "alignment", "uniformity", "pos_cos", "neg_cos"} <= set(hist.rows[-1])


def test_same_seed_same_loss_curve_on_cpu(corpus, biosses):
    _, a = run(corpus, biosses)
    _, b = run(corpus, biosses)
    _, c = run(corpus, biosses, seed=1)
    assert [r["loss"] for r in a.rows] == [r["loss"] for r in b.rows]
    assert [r["loss"] for r in a.rows] != [r["loss"] for r in c.rows]


def test_interrupted_run_resumes_to_identical_results(tmp_path, corpus, biosses):
    full_enc, full = run(corpus, biosses, tmp_path / "full")
    calls = {"n": 0}

    def crash_at_second_eval(enc):
        calls["n"] += 1
        if calls["n"] == 3:  # evaluations at steps 0 and 2 pass, the one at step 4 "crashes"
            raise KeyboardInterrupt
        return sts_report(enc, biosses)

    with pytest.raises(KeyboardInterrupt):
        run(corpus, biosses, tmp_path / "resumed", crash_at_second_eval)
    assert (tmp_path / "resumed" / "checkpoint.pt").exists()
    resumed_enc, resumed = run(corpus, biosses, tmp_path / "resumed")
    assert resumed.rows == full.rows and resumed.best_step == full.best_step
    np.testing.assert_array_equal(resumed_enc.encode(corpus[:20]), full_enc.encode(corpus[:20]))


def test_best_checkpoint_is_kept_and_exports_to_identical_embeddings(tmp_path, corpus, biosses):
    from sentence_transformers import SentenceTransformer

    enc, hist = run(corpus, biosses, tmp_path / "run")
    best = hist.best()
    assert sts_report(enc, biosses)["spearman_dev"] == pytest.approx(best["spearman_dev"], abs=1e-9)
    st = SentenceTransformer(str(enc.save(tmp_path / "st")), device="cpu")
    np.testing.assert_allclose(st.encode(corpus[:10]), enc.encode(corpus[:10]), atol=1e-5)


def test_bad_config_fails_early():
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=1)
    with pytest.raises(ValueError, match="steps"):
        TrainConfig(steps=0)


def test_dropout_views_are_tokenized_once_and_equal_tokenizing_both_copies(corpus):
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    objective = SimCSEObjective(enc, TrainConfig(**CONFIG))
    texts = corpus[:8]
    feats = objective.view_features(enc, texts, objective.second_views(texts))
    both = enc.tokenize(texts + texts, CONFIG["max_length"])
    assert feats.keys() == both.keys()
    for k in both:
        assert torch.equal(feats[k], both[k])


def test_length_grouped_batches_sort_each_mega_batch_and_cover_the_epoch():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 100, 1000)
    batches = Batches(1000, 4, np.random.default_rng(1), lengths)
    size = Batches.GROUP * 4
    epoch = np.concatenate([batches.next() for _ in range(250)])
    assert sorted(epoch) == list(range(1000))
    for start in range(0, 1000, size):
        mega = lengths[epoch[start : start + size]]
        assert np.all(np.diff(mega) <= 0)
    plain = np.concatenate([Batches(1000, 4, np.random.default_rng(1)).next() for _ in range(50)])
    assert np.any(np.diff(lengths[plain]) > 0)  # without lengths the order is not sorted: the check can fail


def test_length_grouped_training_pads_less(corpus, biosses):
    seen = []

    class Spy(SimCSEObjective):
        def view_features(self, encoder, texts, view2):
            feats = super().view_features(encoder, texts, view2)
            seen.append(feats["attention_mask"].float().mean().item())  # share of real tokens in the padded batch
            return feats

    for grouped in (False, True):
        enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
        cfg = TrainConfig(**{**CONFIG, "steps": 12, "eval_every": 12, "max_length": 128, "length_grouped": grouped})
        train_contrastive(enc, corpus, cfg, lambda e: {"spearman_dev": 0.0}, objective=Spy(enc, cfg))
    plain, grouped = np.mean(seen[:12]), np.mean(seen[12:])
    assert grouped > plain + 0.1, (plain, grouped)


def test_compiled_backbone_trains_to_the_eager_losses(corpus, biosses):
    """Without dropout (inductor draws dropout masks from its own RNG stream, so with dropout
    compiled and eager runs differ by design) the compiled backbone follows the eager one."""

    def train(compile):
        enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
        for m in enc.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        cfg = TrainConfig(**{**CONFIG, "compile": compile})
        return enc, train_contrastive(enc, corpus, cfg, evaluator(biosses), make_augmenter("crop", 0.2))

    eager_enc, eager = train(False)
    compiled_enc, compiled = train(True)
    assert [r["loss"] for r in compiled.rows[1:]] == pytest.approx([r["loss"] for r in eager.rows[1:]], rel=1e-4)
    assert compiled_enc.state_dict().keys() == eager_enc.state_dict().keys()  # compiled in place: checkpoints unchanged


def test_requeued_rows_come_first_and_pop_starts_a_new_epoch_when_the_queue_is_empty():
    batches = Batches(6, 2, np.random.default_rng(0))
    first = [batches.pop() for _ in range(6)]
    assert sorted(first) == list(range(6))
    batches.requeue([first[4], first[1]])
    assert [batches.pop(), batches.pop()] == [first[4], first[1]]
    assert sorted(batches.pop() for _ in range(6)) == list(range(6))  # the queue was empty: a new shuffled epoch


def test_cuda_graphs_are_refused_off_cuda_and_with_compile(corpus):
    with pytest.raises(ValueError, match="parameters .compile. and .cuda_graphs.: choose one"):
        TrainConfig(compile=True, cuda_graphs=True)
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    with pytest.raises(ValueError, match="cuda_graphs needs a CUDA device"):
        train_contrastive(enc, corpus, TrainConfig(**{**CONFIG, "device": "cpu", "cuda_graphs": True}), dict)


def test_static_padding_pads_every_batch_to_max_length():
    enc = Encoder.from_pretrained("tiny-random-bert", seed=0)
    assert enc.tokenize(["a b", "c"], 16, static=True)["input_ids"].shape == (2, 16)
    assert enc.tokenize(["a b", "c"], 16)["input_ids"].shape == (2, 4)


def test_gradients_are_clipped_to_max_grad_norm_and_the_history_says_how_often(corpus, biosses):
    """A tiny max_grad_norm clips every step (the recorded norm is the one before clipping, above the bound) and
    changes the weights; None leaves the gradients alone."""
    clipped, a = run(corpus, biosses, max_grad_norm=1e-3)
    free, b = run(corpus, biosses, max_grad_norm=None)
    assert all(r["clipped"] == 1.0 and r["grad_norm"] > 1e-3 for r in a.rows[1:])
    assert all(r["clipped"] == 0.0 for r in b.rows[1:])
    assert any(not torch.equal(x, y) for x, y in zip(clipped.state_dict().values(), free.state_dict().values()))
    assert TrainConfig().max_grad_norm == 1.0
    with pytest.raises(ValueError, match="max_grad_norm"):
        TrainConfig(max_grad_norm=0)


def test_bf16_cpu_precision_autocasts_the_cpu_step_and_bf16_leaves_it_in_fp32(corpus):
    """``bf16`` keeps CPU runs in fp32 (their results equal ``fp32``'s); ``bf16-cpu`` runs the CPU step under bf16
    autocast: a finite loss that differs from fp32's."""
    from kit.core.devices import autocast

    x = torch.ones(2, 2)
    with autocast(torch.device("cpu"), "bf16"):
        assert (x @ x).dtype == torch.float32
    with autocast(torch.device("cpu"), "bf16-cpu"):
        assert (x @ x).dtype == torch.bfloat16

    def losses(precision):
        enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
        cfg = TrainConfig(**{**CONFIG, "precision": precision})
        rows = train_contrastive(enc, corpus, cfg, lambda e: {"spearman_dev": 0.0}).rows
        return [r["loss"] for r in rows if r["loss"] is not None]

    fp32, bf16, bf16_cpu = losses("fp32"), losses("bf16"), losses("bf16-cpu")
    assert len(fp32) == 2 and fp32 == bf16 and np.isfinite(bf16_cpu).all() and bf16_cpu != fp32


def test_the_schedule_warms_up_then_decays_and_is_unchanged_without_warm_up():
    from kit.core.train import schedule

    plain = schedule(10, 0.0)
    assert [plain(s) for s in range(11)] == [max(0.0, 1.0 - s / 10) for s in range(11)]
    warm = schedule(10, 0.2)  # 2 warm-up steps
    assert [round(warm(s), 6) for s in range(11)] == [0.5, 1.0, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125, 0.0]


def test_dropout_sets_simcses_noise_in_training(corpus):
    """With dropout 0 the two views of a sentence are the same vector (SimCSE's positive is then trivial); with
    SimCSE's p they differ, and more at a higher p."""
    from kit.core.train import set_dropout

    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0).train()
    feats = enc.tokenize(corpus[:8], 24)

    def gap(p):
        set_dropout(enc, p)
        torch.manual_seed(0)
        with torch.no_grad():
            return float((enc(feats) - enc(feats)).abs().mean())

    assert gap(0.0) == 0.0 and 0 < gap(0.1) < gap(0.3)
    assert enc.backbone.config.hidden_dropout_prob == 0.3


def test_warm_up_and_dropout_enter_a_run_key_only_when_set():
    base = TrainConfig(**CONFIG)
    assert "warmup" not in base.keyed() and "dropout" not in base.keyed()
    assert TrainConfig(**CONFIG, warmup=0.1).keyed()["warmup"] == 0.1
    assert TrainConfig(**CONFIG, dropout=0.15).keyed()["dropout"] == 0.15
    with pytest.raises(Exception, match="dropout"):
        TrainConfig(**CONFIG, dropout=1.5)


def test_a_run_with_warm_up_and_dropout_trains_and_differs_from_the_default(corpus, biosses):
    _, plain = run(corpus, biosses)
    _, knobs = run(corpus, biosses, warmup=0.5, dropout=0.2)
    assert all(np.isfinite(r["loss"]) for r in knobs.rows[1:])
    assert [r["loss"] for r in knobs.rows[1:]] != [r["loss"] for r in plain.rows[1:]]


def test_dropout_reaches_every_tower_of_the_objective(corpus, biosses):
    """Contrastive tension trains a second copy of the start inside its objective: SimCSE's rate reaches it too."""
    from kit.core.objectives import ContrastiveTensionObjective

    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    cfg = TrainConfig(**{**CONFIG, "steps": 2, "dropout": 0.25})
    objective = ContrastiveTensionObjective(enc, cfg)
    train_contrastive(enc, corpus, cfg, evaluator(biosses), objective=objective)
    rates = {m.p for m in [*enc.modules(), *objective.partner.modules()] if isinstance(m, torch.nn.Dropout)}
    assert rates == {0.25}
