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
