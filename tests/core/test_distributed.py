"""Data-parallel training through accelerate: two CPU processes (gloo) give the loss and the
update of one process on the same global batch, with dropout views and with augmented views,
MixCSE and instance weighting."""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from torch import nn

from kit.core.augment import make_augmenter
from kit.core.config import TrainConfig
from kit.core.models import Encoder
from kit.core.objectives import SimCSEObjective
from kit.core.train import train_contrastive
from kit.data import load_pubmed_sentences
from kit.paths import PROJECT_ROOT

CONFIG = TrainConfig(batch_size=8, max_length=24, steps=3, eval_every=1, lr=1e-3, device="cpu")
# variant -> (config, augmenter); iw_phi 0.5 removes some negatives of the tiny random model
VARIANTS = {
    "dropout": (CONFIG, None),
    "crop_mixcse_iw": (replace(CONFIG, mix_lambda=0.2, iw_phi=0.5), ("crop", 0.2)),
}


def objective_args(variant: str):
    config, augmenter = VARIANTS[variant]
    return config, make_augmenter(*augmenter) if augmenter else None


def _encoder() -> Encoder:
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    for m in enc.modules():  # no dropout: one process and two must see identical views
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    return enc


def run(objective_factory, config=CONFIG, out_file=None, accelerator=None):
    enc = _encoder()
    corpus = load_pubmed_sentences(limit=64)
    history = train_contrastive(
        enc, corpus, config, lambda e: {"spearman_dev": 0.0}, objective=objective_factory(enc), accelerator=accelerator
    )
    weights = enc.mlp[0].weight.detach().numpy().tolist()  # the training head: it gets gradient at every step
    result = {"losses": [r["loss"] for r in history.rows[1:]], "weights": weights}
    if out_file and (accelerator is None or accelerator.is_main_process):
        with open(out_file, "w") as f:
            json.dump(result, f)
    return result


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_two_processes_match_one_process_on_the_global_batch(tmp_path, variant):
    config, augmenter = objective_args(variant)
    single = run(lambda enc: SimCSEObjective(enc, config, augmenter), config)
    out = tmp_path / "ddp.json"
    launch = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--cpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        "29517",
        str(Path(__file__).with_name("distributed_worker.py")),
        str(out),
        variant,
    ]
    done = subprocess.run(
        launch,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parent,
        env={**os.environ, "GLOO_SOCKET_IFNAME": "lo", "PYTHONPATH": str(PROJECT_ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ddp = json.loads(out.read_text())
    np.testing.assert_allclose(ddp["losses"], single["losses"], rtol=1e-4)
    np.testing.assert_allclose(ddp["weights"], single["weights"], atol=1e-5)
    assert not np.allclose(single["weights"], _encoder().mlp[0].weight.detach().numpy(), atol=1e-4)  # it trained


def test_an_accelerator_needs_the_distributed_objective():
    with pytest.raises(ValueError, match="DistributedSimCSEObjective"):  # checked before the accelerator is used
        train_contrastive(_encoder(), ["a b"] * 16, CONFIG, lambda e: {"spearman_dev": 0.0}, accelerator=object())
