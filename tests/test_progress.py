import kit.progress as progress


def test_bars_show_unless_silenced_or_not_wanted(monkeypatch):
    monkeypatch.setattr(progress, "ENABLED", True)
    assert not progress.bar(range(3)).disable
    assert progress.bar(range(3), show=False).disable
    monkeypatch.setattr(progress, "ENABLED", False)  # KIT_PROGRESS=0, as in batch runs
    assert progress.bar(range(3)).disable
