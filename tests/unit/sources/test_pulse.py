"""babysit.sources.pulse.DirectoryPulse: writes in the checkpoint directory are seen, and a big
directory is not stat-ed whole at every pulse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from babysit.sources import pulse as pulse_mod
from babysit.sources.pulse import DirectoryPulse


def touch(path: Path, data: bytes = b"x", mtime_ns: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def bump_dir_mtime(directory: Path) -> None:
    """Make sure a change in a directory moves its mtime (coarse clocks: tests must not sleep)."""
    st = directory.stat()
    os.utime(directory, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def rare_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Full scans only at the first look: every later one is a quick look."""
    monkeypatch.setattr(DirectoryPulse, "_due", lambda self: self._next_full is None)


def test_first_look_is_no_change_then_new_file_is(tmp_path: Path) -> None:
    pulse = DirectoryPulse(str(tmp_path / "ckpt_*.pt"))
    assert not pulse.changed()
    assert not pulse.changed()
    touch(tmp_path / "ckpt_1.pt")
    bump_dir_mtime(tmp_path)
    assert pulse.changed()
    assert not pulse.changed()


@pytest.mark.usefixtures("rare_full")
def test_quick_looks_see_a_new_file_its_growth_and_its_removal(tmp_path: Path) -> None:
    for i in range(200):
        touch(tmp_path / f"old_{i}.pt", mtime_ns=1_000_000_000 * (i + 1))
    pulse = DirectoryPulse(str(tmp_path / "ckpt_*.pt"))
    assert not pulse.changed()
    new = tmp_path / "ckpt_9.pt.tmp"
    touch(new, b"a")
    bump_dir_mtime(tmp_path)
    assert pulse.changed()  # added
    assert not pulse.changed()
    with new.open("ab") as fh:  # a save under way: the directory's mtime does not move
        fh.write(b"more")
    assert pulse.changed()  # grew
    assert not pulse.changed()
    new.unlink()
    bump_dir_mtime(tmp_path)
    assert pulse.changed()  # removed
    assert not pulse.changed()
    assert pulse.full_scans == 1


@pytest.mark.usefixtures("rare_full")
def test_quick_looks_see_files_in_subdirectories(tmp_path: Path) -> None:
    (tmp_path / "checkpoint-100").mkdir()
    pulse = DirectoryPulse(str(tmp_path / "checkpoint-*"))
    assert not pulse.changed()
    sub = tmp_path / "checkpoint-200"
    touch(sub / "model.safetensors", b"a")
    bump_dir_mtime(tmp_path)
    assert pulse.changed()  # a new subdirectory
    with (sub / "model.safetensors").open("ab") as fh:
        fh.write(b"b")
    assert pulse.changed()  # its file grows
    touch(tmp_path / "checkpoint-100" / "optimizer.pt")
    bump_dir_mtime(tmp_path / "checkpoint-100")
    assert pulse.changed()  # a file added to an old subdirectory
    assert not pulse.changed()


@pytest.mark.usefixtures("rare_full")
def test_a_quick_look_stats_the_directories_and_the_newest_files_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 files cost 7.7 s of CPU against 0.3 s: every pulse stat-ed every file."""
    for i in range(2000):
        touch(tmp_path / f"f{i}.bin")
    pulse = DirectoryPulse(str(tmp_path / "ckpt_*.pt"))
    pulse.changed()
    calls = []
    real_stat = os.stat
    monkeypatch.setattr(
        pulse_mod.os, "stat", lambda *a, **k: calls.append(a[0]) or real_stat(*a, **k)
    )
    for _ in range(10):
        assert not pulse.changed()
    assert len(calls) <= 10 * (1 + pulse_mod.HOT_FILES)


def test_full_scans_are_spaced_by_their_cost(tmp_path: Path) -> None:
    touch(tmp_path / "ckpt_1.pt")
    clock = [0.0]

    def timer() -> float:
        clock[0] += 0.1  # each reading: a full scan looks like it took 0.1 s
        return clock[0]

    pulse = DirectoryPulse(str(tmp_path / "ckpt_*.pt"), timer=timer, budget=0.01)
    pulse.changed()
    assert pulse.full_scans == 1
    clock[0] += 5.0  # < 0.1 s / 0.01 = 10 s later: a quick look
    pulse.changed()
    assert pulse.full_scans == 1
    clock[0] += 10.0
    pulse.changed()
    assert pulse.full_scans == 2


def test_a_missing_directory_then_created(tmp_path: Path) -> None:
    base = tmp_path / "out"
    pulse = DirectoryPulse(str(base / "ckpt_*.pt"))
    assert not pulse.changed()
    touch(base / "ckpt_1.pt")
    assert pulse.changed()


@pytest.mark.parametrize("full", [True, False], ids=["full-scan", "quick-look"])
def test_babysits_own_home_in_the_checkpoint_directory_is_no_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full: bool
) -> None:
    # `--checkpoint 'ckpt_*.pt'` with the default home `.babysit` next to it: babysit appends to
    # .babysit/events.jsonl every few seconds, which used to count as a save and hid every hang.
    if not full:
        monkeypatch.setattr(DirectoryPulse, "_due", lambda self: self._next_full is None)
    else:
        monkeypatch.setattr(DirectoryPulse, "_due", lambda self: True)
    home = tmp_path / ".babysit"
    touch(home / "events.jsonl", b"{}\n")
    pulse = DirectoryPulse(str(tmp_path / "ckpt_*.pt"), skip=str(home))
    assert not pulse.changed()
    touch(home / "events.jsonl", b"{}\n{}\n")
    touch(home / "babysit.db-wal", b"w" * 100)
    bump_dir_mtime(home)
    assert not pulse.changed()
    touch(tmp_path / "ckpt_1.pt")
    bump_dir_mtime(tmp_path)
    assert pulse.changed()
