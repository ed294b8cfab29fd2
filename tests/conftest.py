import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the hub is unreachable here: fail fast, never hang
os.environ.setdefault("KIT_PROGRESS", "0")


def pytest_configure(config):
    from kit.core.progress import quiet_libraries

    quiet_libraries()  # KIT_PROGRESS=0 also silences the bars of transformers and huggingface_hub


@pytest.fixture(scope="session")
def biosses():
    from kit.data import load_biosses

    return load_biosses()


@pytest.fixture(scope="session")
def pubmed():
    from kit.data import load_pubmed_sentences

    return load_pubmed_sentences()


@pytest.fixture(scope="session")
def tiny_encoder():
    from kit.core.models import Encoder

    return Encoder.from_pretrained("tiny-random-bert", "mean")
