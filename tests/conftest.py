import os
import signal

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the hub is unreachable here: fail fast, never hang
os.environ.setdefault("KIT_PROGRESS", "0")
# pytest -n N: each worker's torch (and its notebook kernels') gets its share of the CPUs
if os.environ.get("PYTEST_XDIST_WORKER"):
    _share = str(max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, _share)
# A shell without job control starts background jobs (`make test &`, some CI runners) with SIGINT ignored, and
# children inherit an ignored signal: the Ctrl-C tests' subprocesses would never raise KeyboardInterrupt. Python's
# own handler here is reset to the default in every child the tests start.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    from kit.core.progress import quiet_libraries

    quiet_libraries()  # KIT_PROGRESS=0 also silences the bars of transformers and huggingface_hub


LONG = ("tests/test_cluster.py", "tests/faults/", "tests/evaluation/test_mteb.py", "tests/test_benchmarks.py")
"""Where make test's duration table puts the longest tests outside the smoke runs' group."""


def _module_fixture_user(item) -> bool:
    """Whether ``item`` uses a module-scoped fixture defined in its own module."""
    module = item.nodeid.split("::")[0]
    return any(
        defs[-1].scope == "module" and defs[-1].baseid == module
        for name, defs in item._fixtureinfo.name2fixturedefs.items()
        if name in item.fixturenames
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook, which reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n N --dist loadgroup``, the tests of a module that share a module-scoped fixture of it stay on
    one worker (a group named for the module), so that the fixture is made once, not once per worker; a test
    already in a group keeps only that one. Then longest first, so that no worker is left with a long test at the end
    while the others idle: the tests of the session's smoke runs (one unit of work), then those in ``LONG``, then
    the rest, each in collection order."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _module_fixture_user(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))

    def late(item) -> tuple[bool, bool]:
        group = item.get_closest_marker("xdist_group")
        return group is None or group.args[:1] != ("smoke",), not item.nodeid.startswith(LONG)

    items.sort(key=late)


@pytest.fixture(scope="session")
def biosses():
    from kit.data import load_biosses

    return load_biosses()


@pytest.fixture(scope="session")
def biosses_file():
    """The BIOSSES file ``biosses`` reads (its ``source`` is the display form, ``$KIT_DATA/...`` when that is set)."""
    from kit.data.biosses import BIOSSES
    from kit.data.resolver import resolve

    return resolve(BIOSSES)


@pytest.fixture(scope="session")
def pubmed():
    from kit.data import load_pubmed_sentences

    return load_pubmed_sentences()


@pytest.fixture(scope="session")
def smoke_reports(tmp_path_factory):
    """Every smoke run file (``params/*/smoke*.yaml``: each notebook, and study 1's Chinese half) through kit.batch
    into one reports folder, once per session. Under ``pytest -n N`` a session is a worker's: the tests that read
    it carry ``pytest.mark.xdist_group("smoke")``, so ``--dist loadgroup`` gives them all to one worker."""
    from kit.batch import main as batch_main
    from kit.paths import PARAMS

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # the first worker to make them marks it in the session's shared temporary folder
        mark = tmp_path_factory.getbasetemp().parent / "smoke_reports.worker"
        try:
            fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, worker.encode())
            os.close(fd)
        except FileExistsError:
            pytest.fail(
                f"the smoke runs are made a second time, in {worker} after {mark.read_text()}: --dist loadgroup did "
                "not keep the tests marked xdist_group('smoke') on one worker (pytest and pytest-xdist versions?)"
            )
    out = tmp_path_factory.mktemp("reports")
    assert batch_main([*sorted(str(p) for p in PARAMS.glob("*/smoke*.yaml")), "--reports", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def failing_run_file():
    """``make(folder)``: a valid MED-SE run file, ``folder/medse_entity_definitions/broken.yaml`` (a small one: two
    rows, two steps), whose data fail only inside the notebook: an ontology none of whose entities occurs in
    BIOSSES, so the study has no entity-centric evaluation pairs (found after linking the corpus)."""

    def make(folder):
        ontology = folder / "ontology.tsv"
        ontology.write_text("id\tname\tdefinition\nDOID:0\txyzzyitis\tAn illness that no sentence mentions.\n")
        run_file = folder / "medse_entity_definitions" / "broken.yaml"
        run_file.parent.mkdir(parents=True)
        run_file.write_text(
            "model: tiny-random-bert\npooler: cls_before_pooler\nrows: [cls, simcse]\nseeds: [0]\nsteps: 2\n"
            "eval_every: 2\nbatch_size: 8\ntrain_size: 100\nwhitening_sentences: 100\nnone_share_sweep: []\n"
            f"lambda_sweep: []\ndedup_sweep: []\nexamples: 1\nsuite: [biosses-all]\nontology_path: {ontology}\n"
        )
        return run_file

    return make


@pytest.fixture(scope="session")
def tiny_encoder():
    from kit.core.models import Encoder

    return Encoder.from_pretrained("tiny-random-bert", "mean")


@pytest.fixture(scope="session")
def fp16_bert(tmp_path_factory):
    """A folder holding the tiny random BERT stored in fp16, as the kit's pretrained mini-BERTs are: whatever loads it
    to train or to score must hold fp32 weights (``kit.core.models.FP32_WEIGHTS``)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from kit.core.models import model_folder

    folder, out = model_folder("tiny-random-bert", seed=0), tmp_path_factory.mktemp("fp16-bert")
    AutoModel.from_pretrained(folder).half().save_pretrained(out)
    AutoTokenizer.from_pretrained(folder).save_pretrained(out)
    assert AutoModel.from_pretrained(out).dtype == torch.float16  # the checkpoint's own dtype, loaded as stored
    return out


@pytest.fixture
def selected_on_rqe_validation():
    """A check for a study run with ``suite: [biosses-all, rqe-validation]`` and ``select_on: [rqe-validation]``:
    the run's history chose its checkpoint by that task's main metric, and the study's suite report keeps
    the task apart from the headline. Returns the report."""

    def check(study, history: dict):
        assert history["selection_metric"] == "selection"
        for row in history["rows"]:
            assert row["selection"] == row["dev rqe-validation"]
        best = max((r for r in history["rows"] if r["step"] > 0), key=lambda r: r["selection"])
        assert history["best_step"] == best["step"]
        report = study.suite_report()
        groups = {title.split(" (")[0]: [t.name for t in tasks] for title, tasks in report.groups().items()}
        assert groups == {
            "headline tasks": ["biosses-all"],
            "tasks whose every item shares texts with the checkpoint-selection data": ["rqe-validation"],
        }
        return report

    return check
