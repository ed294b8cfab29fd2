"""Data that is not here: the hub is asked only when it answers, a dataset found nowhere fails at once in one line
that names the data page, and a hub copy of BIOSSES loads (tested with a local stand-in for the hub)."""

import os
import socket
import subprocess
import sys
import time
import types

import pytest

from kit.data import BIOSSES, DATASETS, DataNotFoundError, DatasetSpec, load_biosses, resolve, resolver
from kit.paths import PARAMS, PROJECT_ROOT

PROXIES = tuple(f"{scheme}_proxy" for scheme in ("http", "https", "all", "no"))
HUB = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_ENDPOINT", *PROXIES, *(name.upper() for name in PROXIES))
"""The variables that say how the hub is reached: each test sets its own."""


@pytest.fixture
def closed_port():
    """A local port that refuses connections (bound, never listening) for the test's length."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def open_port():
    """A local port that accepts connections, as a hub or proxy that answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def hub(monkeypatch):
    """Sets the hub's endpoint (and proxy) for one test, online: the conftest's HF_HUB_OFFLINE removed."""
    for name in HUB:
        monkeypatch.delenv(name, raising=False)
    return lambda name, value: monkeypatch.setenv(name, value)


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """$KIT_DATA and the cache empty folders, ../shared/data hidden (the project seen from a folder without it)."""
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("KIT_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("KIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(resolver, "PROJECT_ROOT", tmp_path / "clone" / "project")
    return tmp_path


def test_the_hub_is_asked_only_when_it_accepts_a_connection(hub, closed_port, open_port):
    hub("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    why = resolver.hub_unreachable()
    assert why and why.startswith(
        f"no connection to http://127.0.0.1:{closed_port} within {resolver.HUB_TIMEOUT:g} s"
    ), why
    hub("HF_ENDPOINT", f"http://127.0.0.1:{open_port}")
    assert resolver.hub_unreachable() is None
    hub("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    hub("HF_HUB_OFFLINE", "1")  # the Hugging Face cache is read, without a connection
    assert resolver.hub_unreachable() is None


def test_behind_a_proxy_the_proxy_is_what_must_answer(hub, open_port, closed_port):
    hub("HF_ENDPOINT", "https://hub.invalid")  # a name no resolver knows: only the proxy is reached
    hub("HTTPS_PROXY", f"http://127.0.0.1:{open_port}")
    assert resolver.hub_unreachable() is None
    hub("HTTPS_PROXY", f"http://127.0.0.1:{closed_port}")
    assert f"through the proxy http://127.0.0.1:{closed_port}" in resolver.hub_unreachable()


def test_a_hub_that_does_not_answer_is_not_asked_and_the_error_is_one_line_naming_the_data_page(
    no_data, hub, closed_port
):
    """It was asked again and again for about 30 s, then the error spread over six lines."""
    hub("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    asked = []
    spec = DatasetSpec("on-the-hub", "hub/data.tsv", "", "", "", "", {}, hf_name="org/data", fetch=asked.append)
    start = time.monotonic()
    with pytest.raises(DataNotFoundError) as err:
        resolve(spec)
    assert time.monotonic() - start < 5 and not asked
    line = str(err.value)
    assert "\n" not in line and line.endswith(resolver.DATA_PAGE), line
    assert f"Hugging Face hub org/data: no connection to http://127.0.0.1:{closed_port}" in line, line


@pytest.mark.parametrize("name", [name for name, spec in DATASETS.items() if spec.splits])
def test_every_dataset_found_nowhere_names_the_data_page_in_one_line(name, no_data, hub, closed_port):
    hub("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(DataNotFoundError) as err:
        DATASETS[name].load(next(iter(DATASETS[name].splits)))
    line = str(err.value)
    assert "\n" not in line and line.endswith(resolver.DATA_PAGE), line


def test_the_data_page_the_errors_name_is_a_page_of_the_site():
    assert (PROJECT_ROOT / resolver.DATA_PAGE).is_file()
    assert resolver.DATA_PAGE.removeprefix("docs/") in (PROJECT_ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_demo_without_data_or_network_is_refused_at_once_in_one_line_naming_the_data_page(tmp_path, closed_port):
    """``make demo`` in a clone without ../shared/data and without network: it retried the hub for about 30 s, then
    printed six lines naming BIOSSES alone. Run as a new process (the hub's clients read their settings on import),
    with $KIT_DATA empty and ../shared/data hidden; timed from after the imports."""
    (tmp_path / "empty").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in HUB}
    env.update(KIT_DATA=str(tmp_path / "empty"), KIT_CACHE=str(tmp_path / "cache"))
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{closed_port}"
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "import kit.data.resolver as resolver\n"
        "from kit.batch import main\n"
        f"resolver.PROJECT_ROOT = Path({str(tmp_path / 'clone' / 'project')!r})\n"
        "start = time.monotonic()\n"
        f"code = main([{str(PARAMS / 'simcse_augmentations' / 'demo.yaml')!r}, '--reports', {str(tmp_path)!r}])\n"
        "print(f'{code} {time.monotonic() - start:.1f}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    code, seconds = done.stdout.split()[-2:]
    lines = done.stderr.strip().splitlines()
    assert code == "2" and len(lines) == 1, done.stderr[-3000:]
    assert "Dataset 'biosses' not found" in lines[0] and lines[0].endswith(resolver.DATA_PAGE), lines[0]
    assert float(seconds) < 10, seconds


def test_a_hub_copy_of_biosses_is_written_to_the_cache_and_loads(no_data, hub, open_port, monkeypatch):
    """The hub's copy (``mteb/biosses-sts``: mean scores, no BLURB split) was written with every pair in split 'all',
    which the loader then refused. ``datasets`` is stood in for by the rows it would give."""
    hub("HF_ENDPOINT", f"http://127.0.0.1:{open_port}")
    rows = [{"sentence1": f"first {i}", "sentence2": f"second {i}", "score": i / 2} for i in range(5)]
    asked = []
    fake = types.ModuleType("datasets")
    fake.load_dataset = lambda name, split: asked.append((name, split)) or rows
    monkeypatch.setitem(sys.modules, "datasets", fake)
    pairs = load_biosses()
    assert asked == [("mteb/biosses-sts", "test")]
    assert len(pairs) == 5 and list(pairs.scores) == [0, 0.5, 1, 1.5, 2] and set(pairs.split) == {"all"}
    assert len(pairs.subset("all")) == 5 and pairs.sentence2[4] == "second 4"
    cached = no_data / "cache" / "data" / BIOSSES.relpath
    assert resolve(BIOSSES) == cached  # found in the cache from now on: the hub is not asked again
