"""One package per study, named after its notebook: ``kit.studies.<notebook>`` exports ``Params`` (the
notebook's parameter declaration) and, for studies that train, ``Study`` (``kit.study.Study``).
``kit.batch`` finds them by that name. No study imports another; what two share lives in ``kit.core``."""
