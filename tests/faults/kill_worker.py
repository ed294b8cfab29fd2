"""Run by tests/faults/test_kills.py: one study-1 training run (``Study.run``) into the report folder
argv[1]; prints "training" when the run starts, so the test can kill it at a chosen point of the run."""

import sys

from kit.studies.simcse_augmentations import Params, Study

PARAMS = {"model": "tiny-random-bert", "corpus_size": 64, "map_sentences": 8, "batch_size": 8}

if __name__ == "__main__":
    study = Study(Params.from_dict({**PARAMS, "steps": 40, "eval_every": 2, "rows": ["simcse"]}), sys.argv[1])
    print("training", flush=True)
    study.run("crop_10", 0)
    print("done", flush=True)
