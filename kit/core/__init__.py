"""Shared machinery, no study-specific code: encoders and poolers (``models``), the contrastive
losses (``losses``), the ``Objective`` protocol and the general objectives (``objectives``), the
training loop (``train``, ``batches``), GradCache and data parallelism (``gradcache``,
``distributed``), metrics, whitening, the augmenters, devices and progress bars."""
