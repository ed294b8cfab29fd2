"""Run by tests/test_distributed.py under ``accelerate launch --cpu --num_processes 2``: trains the
variant argv[2] with DistributedSimCSEObjective and writes the main process's losses and head
weights to argv[1]."""

import sys

from test_distributed import objective_args, run

from kit.core.distributed import DistributedSimCSEObjective, make_accelerator

if __name__ == "__main__":
    accelerator = make_accelerator(cpu=True)
    config, augmenter = objective_args(sys.argv[2])
    run(lambda enc: DistributedSimCSEObjective(enc, config, accelerator, augmenter), config, sys.argv[1], accelerator)
