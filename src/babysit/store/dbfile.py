"""The database file of a home: opened for a writer or a reader, and told apart when it is
empty, missing or damaged, with what to do about it. A part of store/sqlite.py's Store.

    conn = connect(db, writable=False)      # read-only; immutable when no -shm can be made
    refuse_lost_history(home)               # StoreCorrupt: emptied or deleted, history in JSONL
    raise corrupt_error(home, exc)          # StoreCorrupt naming `babysit rebuild --home H`
"""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import time
from pathlib import Path

import psutil

from babysit.errors import StoreCorrupt, StoreError
from babysit.store.schema import MIGRATIONS

DB_NAME = "babysit.db"
JSONL_NAME = "events.jsonl"
NETWORK_FS = {"nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "fuse.sshfs", "beegfs", "ceph"}
# How long a connection waits for another's lock before SQLite says `database is locked` (and
# how long a writer retries the switch to WAL): a babysit opening a home another is writing to.
BUSY_TIMEOUT_S = 10.0


def connect(db: Path, writable: bool) -> sqlite3.Connection:
    """A writer's connection (WAL, synchronous=FULL), or a reader's: read-only, so that status
    and logbook never need to write to the home; immutable when not even SQLite's shared-memory
    file can be made (a read-only directory and no writer around)."""
    if writable:
        conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.row_factory = sqlite3.Row
        # first: two babysits may open at once
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        _wal(conn, BUSY_TIMEOUT_S)
        conn.execute("PRAGMA synchronous=FULL")
        return conn
    uri = db.absolute().as_uri()
    try:
        conn = sqlite3.connect(
            f"{uri}?mode=ro", timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=True
        )
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        # WAL mode needs the -shm file; a read-only directory without one cannot have it.
        conn = sqlite3.connect(f"{uri}?immutable=1", isolation_level=None, uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _wal(conn: sqlite3.Connection, within_s: float) -> None:
    """Switch a writer's connection to WAL. On a new database that several babysits open at
    once, SQLite may answer `database is locked` at once, without waiting out busy_timeout (one
    connection holds its read lock while another asks for the lock the switch needs: a deadlock
    that SQLite breaks by refusing); so retry, backing off, until `within_s` has passed."""
    deadline = time.monotonic() + within_s
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def sibling(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


def corrupt(exc: sqlite3.DatabaseError) -> bool:
    """SQLite says the file is not a database, or a damaged one."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def rebuild_hint(home: Path) -> str:
    if history_lines(home):
        return (
            f"Rebuild it from {JSONL_NAME} with `babysit rebuild --home {home}` (the old file is "
            "moved aside, not deleted)."
        )
    return (
        f"There is no {JSONL_NAME} to rebuild it from: move {home / DB_NAME} aside (keep it for a "
        "look later) and babysit starts a new store."
    )


def lost_hint(home: Path) -> str:
    return (
        f"Rebuild it from {JSONL_NAME} with `babysit rebuild --home {home}`; or, to start a new "
        f"logbook on purpose, move {home / JSONL_NAME} aside first."
    )


def corrupt_error(home: Path, exc: sqlite3.Error) -> StoreCorrupt:
    return StoreCorrupt(
        f"{home / DB_NAME} is damaged ({exc}): babysit cannot use it. This is not a babysit "
        f"bug, but the file was overwritten or its disk failed. {rebuild_hint(home)}"
    )


def newer_error(db: Path, version: int) -> StoreError:
    return StoreError(
        f"{db} was written by a newer babysit (schema {version}, this one knows "
        f"{len(MIGRATIONS)}): upgrade babysit, or pass --home DIR for a new store"
    )


def history_lines(home: Path) -> int:
    """Non-empty lines of the home's events.jsonl (0 when missing or unreadable)."""
    try:
        with (home / JSONL_NAME).open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def refuse_lost_history(home: Path) -> None:
    """A database emptied (0 bytes) or missing while events.jsonl holds history: say so, rather
    than carry on with a blank logbook (and write new history over the old)."""
    db = home / DB_NAME
    try:
        size = db.stat().st_size
    except FileNotFoundError:
        size = None
    except OSError:
        return
    if size:
        return
    wal = sibling(db, "-wal")
    if size == 0 and wal.exists() and wal.stat().st_size > 0:
        return  # a new database whose pages are still in its WAL
    lines = history_lines(home)
    if not lines:
        return
    what = "is empty (0 bytes)" if size == 0 else "is missing"
    raise StoreCorrupt(
        f"{db} {what}, but {home / JSONL_NAME} holds {lines} logbook events: the database was "
        f"{'emptied' if size == 0 else 'deleted'}, and babysit will not start over on a blank "
        f"logbook. {lost_hint(home)}"
    )


def unusable_advice(home: Path, exc: BaseException, otherwise: str | None = None) -> str:
    """What to do about a home whose database a writer could not open or set up, to follow the
    error: when SQLite says `database is locked` (the busy timeout and the WAL switch's retries
    have run out), the processes that hold the file open, or the network filesystem whose locks
    SQLite cannot rely on; else `otherwise` when given (the caller's own advice), else a full
    disk, if it is one, and a writable local disk."""
    if "locked" not in str(exc):
        if otherwise is not None:
            return otherwise
        return f"{free_space_hint(home)}; pass --home DIR on a writable local disk"
    fs = fs_type(home)
    if fs in NETWORK_FS:
        return (
            f" (the home is on {fs}, whose file locks SQLite cannot rely on); pass --home DIR "
            "on a local disk"
        )
    db = shlex.quote(str(home / DB_NAME))
    return (
        f" (another process has held it locked for over {BUSY_TIMEOUT_S:.0f} s; `fuser -v {db}` "
        "lists the processes that have it open): stop the stuck one and retry, or pass "
        "--home DIR for a separate home"
    )


def free_space_hint(path: Path) -> str:
    """' (the disk is full: 0 MiB free)' when that is the likely reason, else ''."""
    for candidate in (path, *path.parents):
        try:
            usage = shutil.disk_usage(candidate)
        except OSError:
            continue
        if usage.total == 0:  # /proc, /sys: no disk at all, nothing to be full
            return ""
        free = usage.free
        return f" (the disk is full: {free / 2**20:.0f} MiB free)" if free < 16 << 20 else ""
    return ""


def fs_type(path: Path) -> str | None:
    """The filesystem type holding `path` (longest matching mount point)."""
    try:
        target = str(path.resolve())
        best: tuple[int, str] | None = None
        for part in psutil.disk_partitions(all=True):
            mp = part.mountpoint
            if (target == mp or target.startswith(mp.rstrip("/") + "/")) and (
                best is None or len(mp) > best[0]
            ):
                best = (len(mp), part.fstype)
        return best[1] if best else None
    except (OSError, RuntimeError):
        return None
