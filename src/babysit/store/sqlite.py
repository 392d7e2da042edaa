"""The logbook's storage: SQLite in WAL mode under the run's home, plus an append-only JSONL mirror.

    store = Store.open(Path(".babysit"))
    store.add_event(Event(run="gpt", kind=EventKind.NOTE, message="hi", ts=time.time()))
    store.attempts("gpt")  # -> [{"number": 1, "pid": ..., ...}]

Every write is one committed transaction before the caller acts on it (synchronous=FULL).
Failures to write (disk full, I/O error) raise StoreWriteError; what was committed before stays.
Views only read through this class.

Writers create the home private (store/home.py). Readers (`Store.open(home, create=False)`)
open the database read-only; their first write, if any, reopens it for writing. A database that
is emptied, missing or damaged while events.jsonl holds history is a StoreCorrupt naming
`babysit rebuild` (store/rebuild.py); `store.check()` tells a live babysit when its database was
deleted, emptied or replaced under it (supervise/journal.py then writes it again).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from babysit.errors import (
    HomeNotWritable,
    RunNotFound,
    StoreCorrupt,
    StoreError,
    StoreWriteError,
)
from babysit.records import RunState
from babysit.store.attempts import ATTEMPT_COLUMNS, AttemptLog
from babysit.store.dbfile import (
    DB_NAME,
    JSONL_NAME,
    NETWORK_FS,
    connect,
    corrupt,
    corrupt_error,
    fs_type,
    history_lines,
    identity,
    lost_hint,
    newer_error,
    refuse_lost_history,
    sibling,
    unusable_advice,
)
from babysit.store.events import EventLog
from babysit.store.home import HomeMode, home_mode, secure_file, secure_home
from babysit.store.nodes import NodeRegistry
from babysit.store.rows import encode, upsert
from babysit.store.schema import MIGRATIONS
from babysit.store.signs import VitalSigns, json_default
from babysit.store.writes import StoreWrite, apply_write

if TYPE_CHECKING:
    from babysit.store.rebuild import Folded

__all__ = ["ATTEMPT_COLUMNS", "DB_NAME", "JSONL_NAME", "Store"]


class Store(AttemptLog, EventLog, NodeRegistry, VitalSigns):
    """One SQLite database for every run under one home directory."""

    def __init__(
        self, home: Path, conn: sqlite3.Connection, mode: HomeMode = HomeMode.KEEP
    ) -> None:
        self.home = home
        self._conn = conn
        self.db_path = home / DB_NAME
        self.jsonl_path = home / JSONL_NAME
        self.mode = mode
        self.warnings: list[str] = []
        self.readonly = False  # a reader's connection: reopened for writing on the first write
        self._ident = identity(self.db_path)

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        home: Path,
        create: bool = True,
        mode: HomeMode | None = None,
        replace_lost: bool = False,
    ) -> Store:
        """The home's store. Writers (create=True) create the home, private by default (see
        store/home.py; `mode` defaults to BABYSIT_HOME_MODE). Readers (create=False) open the
        database read-only, so status and logbook work on a home they cannot write. A database
        that is missing, empty or damaged while events.jsonl holds history is a StoreCorrupt
        naming `babysit rebuild`, unless `replace_lost` (a rebuild under way) says to start
        a fresh one."""
        home = home.expanduser()
        db = home / DB_NAME
        if not create:
            return cls._open_reader(home)
        mode = mode if mode is not None else home_mode(os.environ)
        if not replace_lost:
            refuse_lost_history(home)
        try:
            notices = secure_home(home, mode)
            if mode.file_mode is not None and not db.exists():
                os.close(os.open(db, os.O_WRONLY | os.O_CREAT, mode.file_mode))
            conn = connect(db, writable=True)
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and corrupt(exc):
                raise corrupt_error(home, exc) from exc
            raise HomeNotWritable(
                f"cannot use babysit home {home}: {exc}{unusable_advice(home, exc)}"
            ) from exc
        store = cls(home, conn, mode)
        store.warnings.extend(notices)
        try:
            store._migrate()
        except BaseException:
            conn.close()
            raise
        store._secure_files()
        fstype = fs_type(home)
        if fstype in NETWORK_FS:
            store.warnings.append(
                f"babysit home {home} is on {fstype}: SQLite WAL is unsafe on network filesystems; "
                f"{JSONL_NAME} is the record to trust there. Prefer --home on a local disk."
            )
        return store

    @classmethod
    def _open_reader(cls, home: Path) -> Store:
        db = home / DB_NAME
        try:
            exists = db.exists()
        except OSError as exc:  # a home under a directory this user may not enter
            raise StoreError(f"cannot read {db}: {exc.strerror or exc}; pass --home DIR") from exc
        if not exists:
            lines = history_lines(home)
            if lines:
                raise StoreCorrupt(
                    f"{db} is missing, but {home / JSONL_NAME} holds {lines} logbook events: "
                    f"the database was deleted. {lost_hint(home)}"
                )
            raise RunNotFound(f"no babysit home at {home} (no {DB_NAME}); pass --home DIR")
        refuse_lost_history(home)
        try:
            conn = connect(db, writable=False)
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.DatabaseError) and corrupt(exc):
                raise corrupt_error(home, exc) from exc
            raise StoreError(f"cannot read {db}: {exc}") from exc
        store = cls(home, conn)
        store.readonly = True
        if version > len(MIGRATIONS):
            conn.close()
            raise newer_error(db, version)
        if version < len(MIGRATIONS):
            store._writable()  # an older schema: brought up to date by the first reader that can
        return store

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _writable(self) -> None:
        """A reader's connection becomes a writer's (a command that reads, then writes)."""
        if not self.readonly:
            return
        try:
            conn = connect(self.db_path, writable=True)
        except sqlite3.Error as exc:
            why = unusable_advice(
                self.home, exc, otherwise=" (a read-only home? ask its owner, or pass --home DIR)"
            )
            raise HomeNotWritable(f"cannot write to {self.db_path}: {exc}{why}") from exc
        self._conn.close()
        self._conn, self.readonly = conn, False
        self._migrate()

    def _secure_files(self) -> None:
        for path in (self.db_path, sibling(self.db_path, "-wal"), sibling(self.db_path, "-shm")):
            secure_file(path, self.mode)
        secure_file(self.jsonl_path, self.mode)

    def check(self) -> str | None:
        """None while the database under the home is the file this store has open; else what
        happened to it, in words (a babysit deleted, emptied or replaced under a live run).
        One stat: cheap enough for every few seconds."""
        try:
            st = os.stat(self.db_path)
        except (FileNotFoundError, NotADirectoryError):
            if not self.home.is_dir():
                return f"the babysit home {self.home} was deleted"
            return f"{self.db_path} was deleted"
        except OSError:
            return None  # cannot tell (a hung filesystem): the writes will say
        if (st.st_dev, st.st_ino) != self._ident:
            return f"{self.db_path} was replaced by another file"
        if st.st_size == 0:
            return f"{self.db_path} was emptied (0 bytes)"
        return None

    def _migrate(self) -> None:
        try:
            # One transaction, the version read inside it: two babysits opening a new home at
            # the same moment must not both create the tables.
            with self._tx() as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > len(MIGRATIONS):
                    raise newer_error(self.db_path, version)
                for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                    for statement in script:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={number}")
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.DatabaseError) and corrupt(exc):
                raise corrupt_error(self.home, exc) from exc
            raise HomeNotWritable(
                f"cannot initialise the store in {self.home}: "
                f"{exc}{unusable_advice(self.home, exc)}"
            ) from exc

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        if self._batch:
            yield self._conn  # inside batch(): its one transaction
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            # Also when COMMIT itself failed (disk full): leave no transaction open, or every
            # later write would fail with "cannot start a transaction within a transaction".
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    _batch = False

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The writes inside are one transaction (a rebuild: thousands of rows, one fsync)."""
        self._writable()
        with self._tx():
            self._batch = True
            try:
                yield
            finally:
                self._batch = False

    def _write(
        self, sql: str, params: Mapping[str, Any] | tuple[Any, ...], refused: str = ""
    ) -> None:
        """One statement, one commit. With `refused`: a statement that changed no row is
        refused for that reason (an upsert whose condition did not hold)."""
        self._writable()
        try:
            with self._tx() as conn:
                cursor = conn.execute(sql, params)
                if refused and cursor.rowcount == 0:
                    raise sqlite3.IntegrityError(refused)
        except sqlite3.OperationalError as exc:
            # Disk full, I/O error, locked: worth retrying later.
            raise StoreWriteError(f"cannot write to {self.home / DB_NAME}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            if corrupt(exc):
                raise corrupt_error(self.home, exc) from exc
            raise StoreError(f"store write refused by {self.home / DB_NAME}: {exc}") from exc
        except sqlite3.Error as exc:
            # A constraint or a closed connection: retrying cannot help.
            raise StoreError(f"store write refused by {self.home / DB_NAME}: {exc}") from exc

    def apply(self, w: StoreWrite) -> None:
        """Carry out one write record (store/writes.py). Raises StoreWriteError for a refusal
        that may pass (disk full, locked), StoreError for one that will not."""
        apply_write(self, w)

    # -- runs ----------------------------------------------------------------------------------

    def start_run(self, name: str, command: list[str], cwd: str, config: Mapping[str, Any]) -> None:
        """Create the run, or mark an existing one as being supervised by this process."""
        now = time.time()
        me = psutil.Process()
        self._write(
            "INSERT INTO runs (name, created, updated, state, command, cwd, config, "
            "supervisor_pid, supervisor_started, supervisor_host) "
            "VALUES (:name, :now, :now, :state, :command, :cwd, :config, :pid, :pst, :host) "
            "ON CONFLICT(name) DO UPDATE SET updated=:now, command=:command, cwd=:cwd, "
            "config=:config, supervisor_pid=:pid, supervisor_started=:pst, supervisor_host=:host, "
            "state=:state, reason=NULL, exit_code=NULL",
            {
                "name": name,
                "now": now,
                "state": RunState.STARTING.value,
                "command": json.dumps(command),
                "cwd": cwd,
                "config": json.dumps(config, default=json_default),
                "pid": me.pid,
                "pst": me.create_time(),
                "host": os.uname().nodename,
            },
        )

    def set_run_state(
        self, name: str, state: RunState, reason: str | None = None, exit_code: int | None = None
    ) -> None:
        self._write(
            "UPDATE runs SET state=?, reason=?, exit_code=?, updated=? WHERE name=?",
            (state.value, reason, exit_code, time.time(), name),
        )

    def set_budget_from(self, name: str, attempt: int) -> None:
        """Restart budgets count attempts from this number on (a run started again after it
        gave up or finished gets a fresh budget; one re-attached or requeued after a stop does
        not)."""
        self._write("UPDATE runs SET budget_from=? WHERE name=?", (attempt, name))

    def release_run(self, name: str) -> None:
        """This supervisor is done with the run (it exits)."""
        self._write("UPDATE runs SET supervisor_pid=NULL WHERE name=?", (name,))

    def run(self, name: str) -> dict[str, Any]:
        row = self._read_one("SELECT * FROM runs WHERE name=?", (name,))
        if row is None:
            known = ", ".join(r["name"] for r in self.runs()) or "none"
            raise RunNotFound(f"no run named {name!r} in {self.home} (known runs: {known})")
        return _decode_run(row)

    def runs(self) -> list[dict[str, Any]]:
        return [_decode_run(r) for r in self._read("SELECT * FROM runs ORDER BY updated DESC", ())]

    def restore(self, folded: Folded) -> None:
        """Write what store/rebuild.py folded from events: runs and attempts are upserted (a
        row that exists takes the folded fields), events and incidents appended. One commit."""
        with self.batch():
            conn = self._conn
            for r in folded.runs.values():
                row = {k: encode(v) for k, v in r.items()}
                conn.execute(upsert("runs", row, ("name",)), row)
            for a in folded.attempts.values():
                row = {k: encode(v) for k, v in a.items() if k in ATTEMPT_COLUMNS}
                conn.execute(upsert("attempts", row, ("run", "number")), row)
            conn.executemany(
                "INSERT INTO events (run, attempt, ts, kind, message, data) "
                "VALUES (:run, :attempt, :ts, :kind, :message, :data)",
                folded.events,
            )
            conn.executemany(
                "INSERT INTO incidents (run, attempt, ts, kind, category, step, metric, message) "
                "VALUES (:run, :attempt, :ts, :kind, :category, :step, :metric, :message)",
                folded.incidents,
            )

    # -- reading -------------------------------------------------------------------------------

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        try:
            return list(self._conn.execute(sql, params))
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.DatabaseError) and corrupt(exc):
                raise corrupt_error(self.home, exc) from exc
            raise StoreError(f"cannot read {self.home / DB_NAME}: {exc}") from exc

    def _read_one(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
        rows = self._read(sql, params)
        return rows[0] if rows else None


def _decode_run(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["command"] = json.loads(out["command"] or "[]")
    out["config"] = json.loads(out["config"] or "{}")
    return out
