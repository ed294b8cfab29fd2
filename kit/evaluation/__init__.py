"""Evaluation shared by every study and by ``python -m kit.evaluate``: the suite's declared tasks, bootstrap
intervals for every score and paired intervals for the differences between methods."""
