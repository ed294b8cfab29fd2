"""Run by tests/test_distributed.py under ``accelerate launch --cpu --num_processes 2``: trains with
DistributedSimCSEObjective and writes the main process's losses and head weights to argv[1]."""

import sys

from kit.distributed import DistributedSimCSEObjective, make_accelerator

from test_distributed import CONFIG, run

if __name__ == "__main__":
    accelerator = make_accelerator(cpu=True)
    run(lambda enc: DistributedSimCSEObjective(enc, CONFIG, accelerator), sys.argv[1], accelerator)
