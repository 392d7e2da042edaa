"""Opening a home's database: the switch to WAL when several babysits open a new home at once,
and what a writer told `database is locked` past its retries says to do."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from babysit.errors import HomeNotWritable
from babysit.store import dbfile
from babysit.store import sqlite as store_sqlite
from babysit.store.dbfile import connect


class _Locked:
    """A connection whose WAL switch SQLite refuses `times` times (`database is locked`, the
    deadlock it breaks at once, without waiting out busy_timeout), then grants."""

    def __init__(self, times: int, message: str = "database is locked") -> None:
        self.times = times
        self.message = message
        self.calls = 0

    def execute(self, sql: str) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            raise sqlite3.OperationalError(self.message)
        return None


def test_the_wal_switch_is_retried_while_the_database_is_locked() -> None:
    conn = _Locked(times=3)
    dbfile._wal(conn, within_s=5.0)  # type: ignore[arg-type]
    assert conn.calls == 4


def test_the_wal_switch_gives_up_past_its_time_and_on_other_errors() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        dbfile._wal(_Locked(times=10**6), within_s=0.05)  # type: ignore[arg-type]
    other = _Locked(times=1, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        dbfile._wal(other, within_s=5.0)  # type: ignore[arg-type]
    assert other.calls == 1


def _open(db: str) -> str | None:
    try:
        connect(Path(db), writable=True).close()
    except sqlite3.Error as exc:
        return repr(exc)
    return None


def test_several_writers_open_a_new_database_at_once(tmp_path: Path) -> None:
    # Before the retry, about one round in seventy lost a writer to `database is locked`.
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(6) as pool:
        for i in range(40):
            db = str(tmp_path / f"{i}.db")
            assert pool.map(_open, [db] * 6) == [None] * 6


def _refused_while_locked(
    home: Path, monkeypatch: pytest.MonkeyPatch, act: Callable[[], object]
) -> str:
    """The HomeNotWritable message of `act` while another connection holds the write lock of
    `home` (a stuck babysit; SQLite's busy timeout shortened)."""
    holder = sqlite3.connect(home / dbfile.DB_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(dbfile, "BUSY_TIMEOUT_S", 0.2)
    try:
        with pytest.raises(HomeNotWritable) as info:
            act()
    finally:
        holder.close()
    return str(info.value)


def test_a_home_another_process_keeps_locked_says_how_to_find_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real lock: another connection holds the write lock of an existing home (a stuck
    # babysit), so the new writer's set-up (_migrate's BEGIN IMMEDIATE) gives up.
    home = tmp_path / "my home"
    store_sqlite.Store.open(home).close()
    message = _refused_while_locked(home, monkeypatch, lambda: store_sqlite.Store.open(home))
    assert "database is locked" in message
    assert f"`fuser -v '{home / dbfile.DB_NAME}'` lists the processes" in message
    assert "stop the stuck one and retry" in message
    assert "writable local disk" not in message  # the disk is not what is wrong


def _reader_must_write_while_locked(home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a reader of `home` that must write says while another connection holds the write
    lock."""
    reader = store_sqlite.Store.open(home, create=False)
    try:
        return _refused_while_locked(home, monkeypatch, reader._writable)
    finally:
        reader.close()


def test_a_reader_whose_set_up_meets_a_locked_home_says_how_to_find_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    store_sqlite.Store.open(home).close()
    message = _reader_must_write_while_locked(home, monkeypatch)
    # In WAL mode the writer's connect does not wait on the lock; the set-up's transaction does
    assert message.startswith(f"cannot initialise the store in {home}: database is locked")
    assert "`fuser -v" in message


def test_a_reader_whose_writer_connection_cannot_switch_to_wal_says_how_to_find_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A database left in rollback mode (copied from elsewhere, or by an old SQLite): the
    # writer's connection must switch it to WAL, which waits on the holder's lock and fails in
    # the connect itself, not in the set-up after it.
    home = tmp_path / "home"
    store_sqlite.Store.open(home).close()
    plain = sqlite3.connect(home / dbfile.DB_NAME, isolation_level=None)
    assert plain.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    plain.close()
    message = _reader_must_write_while_locked(home, monkeypatch)
    assert message.startswith(f"cannot write to {home / dbfile.DB_NAME}: database is locked")
    assert "`fuser -v" in message and "read-only home" not in message


def test_advice_for_an_error_other_than_a_lock_is_the_callers_own_when_given(
    tmp_path: Path,
) -> None:
    error = sqlite3.OperationalError("attempt to write a readonly database")
    own = " (ask its owner)"
    assert dbfile.unusable_advice(tmp_path, error, otherwise=own) == own
    locked = sqlite3.OperationalError("database is locked")
    assert "`fuser -v" in dbfile.unusable_advice(tmp_path, locked, otherwise=own)


def test_a_locked_home_on_a_network_filesystem_blames_its_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dbfile, "fs_type", lambda path: "nfs4")
    advice = dbfile.unusable_advice(tmp_path, sqlite3.OperationalError("database is locked"))
    assert "on nfs4, whose file locks SQLite cannot rely on" in advice
    assert advice.endswith("pass --home DIR on a local disk")
    other = dbfile.unusable_advice(tmp_path, sqlite3.OperationalError("disk I/O error"))
    assert other == "; pass --home DIR on a writable local disk"
