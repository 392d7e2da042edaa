"""store/home.py: the home private by default, shared with a group on request, left alone on
`keep`; an old world-readable home tightened once, with a notice."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from babysit.errors import ConfigError
from babysit.records import Event, EventKind
from babysit.store import Store
from babysit.store.home import (
    ENV,
    HomeMode,
    home_mode,
    restore_umask,
    secure_home,
    set_umask,
    user_umask,
)
from babysit.store.sqlite import DB_NAME, JSONL_NAME


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common login umask, whatever the test runner's is."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_mode_comes_from_the_environment() -> None:
    assert home_mode({}) is HomeMode.PRIVATE
    assert home_mode({ENV: "group"}) is HomeMode.GROUP
    assert home_mode({ENV: " Keep "}) is HomeMode.KEEP
    with pytest.raises(ConfigError, match=f"{ENV}='world': expected private"):
        home_mode({ENV: "world"})


def test_a_new_home_is_private(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "a" / "home"
    assert secure_home(home, HomeMode.PRIVATE) == []
    assert mode_of(home) == 0o700
    assert mode_of(tmp_path / "a") == 0o755  # parents are not babysit's to close


def test_a_group_home_is_setgid_and_group_readable(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    secure_home(home, HomeMode.GROUP)
    assert mode_of(home) == 0o2750


def test_an_old_world_readable_home_is_tightened_with_one_notice(
    tmp_path: Path, umask_022: None
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    (notice,) = secure_home(home, HomeMode.PRIVATE)
    assert mode_of(home) == 0o700
    assert "was 0755" in notice and "private (0700)" in notice and f"{ENV}=group" in notice
    assert secure_home(home, HomeMode.PRIVATE) == []  # once


def test_keep_leaves_a_home_as_it_was_set(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    assert secure_home(home, HomeMode.KEEP) == []
    assert mode_of(home) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_someone_elses_home_is_not_touched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chown(home, 65534, 65534)  # a teammate's shared home
    assert secure_home(home, HomeMode.PRIVATE) == []
    assert mode_of(home) == 0o755


def test_the_store_files_are_private(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    with Store.open(home, mode=HomeMode.PRIVATE) as store:
        store.add_event(Event("r", EventKind.NOTE, "hello", 1.0))
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", JSONL_NAME):
            assert mode_of(home / name) == 0o600, name
    assert mode_of(home) == 0o700


def test_the_store_files_of_a_group_home(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    with Store.open(home, mode=HomeMode.GROUP) as store:
        store.add_event(Event("r", EventKind.NOTE, "hello", 1.0))
        for name in (DB_NAME, f"{DB_NAME}-wal", JSONL_NAME):
            assert mode_of(home / name) == 0o640, name


def test_old_world_readable_store_files_are_tightened(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    with Store.open(home, mode=HomeMode.KEEP) as store:
        store.add_event(Event("r", EventKind.NOTE, "hello", 1.0))
    assert mode_of(home / DB_NAME) == 0o644 and mode_of(home / JSONL_NAME) == 0o644
    with Store.open(home, mode=HomeMode.PRIVATE) as store:
        assert any("made it private" in w for w in store.warnings)
    assert mode_of(home / DB_NAME) == 0o600 and mode_of(home / JSONL_NAME) == 0o600


def test_the_umask_is_set_and_given_back(umask_022: None) -> None:
    previous = set_umask(HomeMode.PRIVATE)
    try:
        assert previous == 0o022 and user_umask() == 0o022
        assert os.umask(0o077) == 0o077
    finally:
        restore_umask(previous)
    assert user_umask() is None and os.umask(0o022) == 0o022
    assert set_umask(HomeMode.KEEP) is None and user_umask() is None


def test_a_pseudo_filesystem_is_not_called_a_full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    # `--home /proc/nope` said "the disk is full: 0 MiB free": /proc has no disk at all.
    from babysit.store import dbfile

    monkeypatch.setattr(dbfile.shutil, "disk_usage", lambda p: Usage(0, 0, 0))
    assert dbfile.free_space_hint(Path("/proc/nope")) == ""
    monkeypatch.setattr(dbfile.shutil, "disk_usage", lambda p: Usage(1 << 40, 1 << 40, 0))
    assert "the disk is full: 0 MiB free" in dbfile.free_space_hint(Path("/data/home"))


class Usage(NamedTuple):
    total: int
    used: int
    free: int
