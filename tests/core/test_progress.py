from kit.core import progress


def test_bars_show_unless_silenced_or_not_wanted(monkeypatch):
    monkeypatch.setenv("KIT_PROGRESS", "1")
    assert not progress.bar(range(3)).disable
    assert progress.bar(range(3), show=False).disable
    monkeypatch.setenv("KIT_PROGRESS", "0")  # as in batch runs
    assert progress.bar(range(3)).disable


def test_importing_the_kit_changes_no_global_state():
    """Plot styles, library logging and bars change only through an explicit call (``kit.report.notebook.start``)."""
    import subprocess
    import sys

    probe = (
        "import matplotlib as mpl, transformers.utils.logging as hl, os\n"
        "import torch, scipy.stats, sklearn.linear_model, seaborn, sentence_transformers, datasets, spacy  # libraries'"
        " own import-time filters are theirs\n"
        "os.environ['KIT_PROGRESS'] = '0'\n"
        "before = (dict(mpl.rcParams), hl.is_progress_bar_enabled(), __import__('warnings').filters[:])\n"
        "import kit.batch, kit.report.plots, kit.studies.qfcl_summarization, kit.studies.simcse_augmentations\n"
        "import kit.studies.augmented_sbert, kit.studies.medse_entity_definitions, kit.studies.explore_augmentations\n"
        "after = (dict(mpl.rcParams), hl.is_progress_bar_enabled(), __import__('warnings').filters[:])\n"
        "assert before[0] == after[0], 'plot style'\n"
        "assert before[1] == after[1], 'library progress bars'\n"
        "assert before[2] == after[2], 'warning filters'\n"
        "from kit.report.notebook import start\n"
        "from kit.studies.explore_augmentations import Params\n"
        "start('explore_augmentations', Params(), '/tmp/kit-probe')\n"
        "assert dict(mpl.rcParams) != before[0] and not hl.is_progress_bar_enabled()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_silenced_bar_inside_a_heartbeat_says_where_it_is_in_plain_lines(monkeypatch):
    """Inside ``heartbeat``, a bar silenced by ``KIT_PROGRESS=0`` that knows its total tells the sink its count, share
    and time left at most every ``every`` seconds; without a total, unwanted (``show=False``) or outside, it says
    nothing."""
    monkeypatch.setenv("KIT_PROGRESS", "0")
    said = []
    with progress.heartbeat(said.append, every=0):
        counted = progress.bar(total=4, initial=1, desc="simcse seed 0")
        counted.update(1)
        counted.set_postfix(loss="0.1")
        counted.close()
        assert list(progress.bar(range(2), desc="epochs")) == [0, 1]
        assert progress.bar(range(2), show=False).disable and progress.bar(iter(range(2))).disable
    assert said[0].startswith("simcse seed 0: 2/4 (50%) in 0s; about ") and said[0].endswith(" more")
    assert [line.split(" in ")[0] for line in said[1:]] == ["epochs: 1/2 (50%)", "epochs: 2/2 (100%)"]
    with progress.heartbeat(said.append, every=3600):
        quiet = progress.bar(total=4)
        quiet.update(5)  # past its total: never a negative time left
        assert isinstance(quiet, progress.Heartbeat)
    assert len(said) == 3 and progress.bar(total=4).disable  # not yet due; and outside, a silenced tqdm again


def test_a_training_in_a_heartbeat_reports_its_steps(pubmed, biosses, monkeypatch):
    """The training loop's bar is what ``kit.batch`` turns into heartbeat lines (``python -m kit.batch`` sets
    ``KIT_PROGRESS=0``)."""
    from kit.core.augment import make_augmenter
    from kit.core.config import TrainConfig
    from kit.core.models import Encoder
    from kit.core.train import train_contrastive
    from kit.evaluation.sts import sts_report

    monkeypatch.setenv("KIT_PROGRESS", "0")
    said = []
    encoder = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler", seed=0)
    config = TrainConfig(steps=3, eval_every=3, batch_size=8, max_length=24, device="cpu")
    with progress.heartbeat(said.append, every=0):
        train_contrastive(
            encoder, pubmed[:64], config, lambda enc: sts_report(enc, biosses), make_augmenter("crop", 0.2)
        )
    assert [line.split(" in ")[0] for line in said] == ["train: 1/3 (33%)", "train: 2/3 (67%)", "train: 3/3 (100%)"]
