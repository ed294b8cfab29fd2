"""Evaluation shared by every study: confidence intervals for the differences between methods."""
