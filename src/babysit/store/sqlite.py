"""The logbook's storage: SQLite in WAL mode under the run's home, plus an append-only JSONL mirror.

    store = Store.open(Path(".babysit"))
    store.add_event(Event(run="gpt", kind=EventKind.NOTE, message="hi", ts=time.time()))
    store.attempts("gpt")  # -> [{"number": 1, "pid": ..., ...}]

Every write is one committed transaction before the caller acts on it (synchronous=FULL).
Failures to write (disk full, I/O error) raise StoreWriteError; what was committed before stays.
Views only read through this class.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from babysit.errors import HomeNotWritable, RunNotFound, StoreError, StoreWriteError
from babysit.records import AttemptRecord, Category, Event, Incident, Outcome, RunState
from babysit.store.nodes import NodeRegistry
from babysit.store.schema import MIGRATIONS
from babysit.store.writes import StoreWrite, apply_write

DB_NAME = "babysit.db"
JSONL_NAME = "events.jsonl"
_NETWORK_FS = {"nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "fuse.sshfs", "beegfs", "ceph"}

ATTEMPT_COLUMNS = (
    "run",
    "number",
    "started",
    "ended",
    "host",
    "pid",
    "launcher_pid",
    "launcher_started",
    "argv",
    "resume_from",
    "log_dir",
    "token",
    "outcome",
    "exit_code",
    "signal",
    "first_step",
    "last_step",
    "category",
    "transient",
    "fingerprint",
    "summary",
    "stdout_offset",
    "stderr_offset",
    "resume_step",
    "suspect_host",
    "anomaly_step",
    "anomaly_kind",
    "anomaly_message",
    "skip_steps",
    "lr_scale",
    "hosts",
)


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    return repr(value)


class Store(NodeRegistry):
    """One SQLite database for every run under one home directory."""

    def __init__(self, home: Path, conn: sqlite3.Connection) -> None:
        self.home = home
        self._conn = conn
        self.jsonl_path = home / JSONL_NAME
        self.warnings: list[str] = []

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, home: Path, create: bool = True) -> Store:
        home = home.expanduser()
        db = home / DB_NAME
        if not create and not db.exists():
            raise RunNotFound(f"no babysit home at {home} (no {DB_NAME}); pass --home DIR")
        try:
            home.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(db, timeout=10.0, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout=10000")  # first: two babysits may open at once
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
        except (OSError, sqlite3.Error) as exc:
            raise HomeNotWritable(
                f"cannot use babysit home {home}: {exc}{_free_space_hint(home)}; pass --home DIR "
                "on a writable local disk"
            ) from exc
        store = cls(home, conn)
        try:
            store._migrate()
        except BaseException:
            conn.close()
            raise
        # Only writers are warned (status/logbook never show warnings): skip the mount scan.
        fstype = _fs_type(home) if create else None
        if fstype in _NETWORK_FS:
            store.warnings.append(
                f"babysit home {home} is on {fstype}: SQLite WAL is unsafe on network filesystems; "
                f"{JSONL_NAME} is the record to trust there. Prefer --home on a local disk."
            )
        return store

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        try:
            # One transaction, the version read inside it: two babysits opening a new home at
            # the same moment must not both create the tables.
            with self._tx() as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > len(MIGRATIONS):
                    raise StoreError(
                        f"{self.home / DB_NAME} was written by a newer babysit (schema "
                        f"{version}, this one knows {len(MIGRATIONS)}): upgrade babysit, or "
                        "pass --home DIR for a new store"
                    )
                for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                    for statement in script:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={number}")
        except sqlite3.Error as exc:
            raise HomeNotWritable(
                f"cannot initialise the store in {self.home}: {exc}; pass --home DIR on a "
                "writable local disk"
            ) from exc

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
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

    def _write(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...]) -> None:
        try:
            with self._tx() as conn:
                conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            # Disk full, I/O error, locked: worth retrying later.
            raise StoreWriteError(f"cannot write to {self.home / DB_NAME}: {exc}") from exc
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
                "config": json.dumps(config, default=_json_default),
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

    # -- attempts ------------------------------------------------------------------------------

    def add_attempt(self, run: str, number: int, fields: Mapping[str, Any]) -> None:
        row = {"run": run, "number": number, "outcome": Outcome.RUNNING.value, **fields}
        row = {k: _encode(v) for k, v in row.items()}
        cols = ", ".join(row)
        marks = ", ".join(f":{k}" for k in row)
        self._write(f"INSERT INTO attempts ({cols}) VALUES ({marks})", row)

    def update_attempt(self, run: str, number: int, fields: Mapping[str, Any]) -> None:
        unknown = set(fields) - set(ATTEMPT_COLUMNS)
        if unknown:
            raise StoreError(f"unknown attempt fields: {sorted(unknown)}")
        sets = ", ".join(f"{k}=:{k}" for k in fields)
        params = {k: _encode(v) for k, v in fields.items()} | {"_run": run, "_num": number}
        self._write(f"UPDATE attempts SET {sets} WHERE run=:_run AND number=:_num", params)

    def attempts(self, run: str) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM attempts WHERE run=? ORDER BY number", (run,))
        return [_decode_attempt(r) for r in rows]

    def history(self, run: str) -> list[AttemptRecord]:
        """The attempts as records, for the policy."""
        out = []
        for a in self.attempts(run):
            out.append(
                AttemptRecord(
                    number=a["number"],
                    started=a["started"],
                    ended=a["ended"],
                    outcome=Outcome(a["outcome"]),
                    exit_code=a["exit_code"],
                    signal=a["signal"],
                    first_step=a["first_step"],
                    last_step=a["last_step"],
                    category=Category(a["category"]) if a["category"] else None,
                    transient=a["transient"],
                    fingerprint=a["fingerprint"],
                    summary=a["summary"],
                    resume_step=a["resume_step"],
                    suspect_host=a["suspect_host"],
                    anomaly_step=a["anomaly_step"],
                    anomaly_kind=a["anomaly_kind"],
                )
            )
        return out

    # -- events --------------------------------------------------------------------------------

    def add_event(self, event: Event) -> None:
        """Commit the event, then append it to the JSONL mirror (two steps: a caller retrying
        after a failure retries the one that failed, see add_event_row and mirror_event)."""
        self.add_event_row(event)
        self.mirror_event(event)

    def add_event_row(self, event: Event) -> None:
        data = json.dumps(dict(event.data), default=_json_default)
        self._write(
            "INSERT INTO events (run, attempt, ts, kind, message, data) VALUES (?, ?, ?, ?, ?, ?)",
            (event.run, event.attempt, event.ts, event.kind.value, event.message, data),
        )

    def mirror_event(self, event: Event) -> None:
        line = json.dumps(
            {
                "run": event.run,
                "attempt": event.attempt,
                "ts": event.ts,
                "kind": event.kind.value,
                "message": event.message,
                "data": dict(event.data),
            },
            default=_json_default,
        )
        try:
            with self.jsonl_path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            raise StoreWriteError(f"cannot append to {self.jsonl_path}: {exc}") from exc

    def events(self, run: str) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM events WHERE run=? ORDER BY id", (run,))
        return [
            {
                "ts": r["ts"],
                "attempt": r["attempt"],
                "kind": r["kind"],
                "message": r["message"],
                "data": json.loads(r["data"] or "{}"),
            }
            for r in rows
        ]

    # -- vital signs ---------------------------------------------------------------------------

    def add_incident(self, run: str, attempt: int | None, inc: Incident) -> None:
        self._write(
            "INSERT INTO incidents (run, attempt, ts, kind, category, step, metric, value, "
            "baseline, line, message, window) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                attempt,
                inc.ts,
                inc.kind.value,
                inc.category.value,
                inc.step,
                inc.metric,
                _finite(inc.value),
                _finite(inc.baseline),
                inc.line,
                inc.message,
                json.dumps([[s, _json_number(v)] for s, v in inc.window]),
            ),
        )

    def incidents(self, run: str) -> list[dict[str, Any]]:
        return self._run_rows("incidents", run, "window", "[]")

    def _run_rows(self, table: str, run: str, column: str, empty: str) -> list[dict[str, Any]]:
        """A run's rows of `table` in order, with the JSON `column` decoded."""
        out = []
        for r in self._read(f"SELECT * FROM {table} WHERE run=? ORDER BY id", (run,)):
            d = dict(r)
            d[column] = json.loads(d[column] or empty)
            out.append(d)
        return out

    def add_diagnosis(
        self, run: str, attempt: int | None, ts: float, document: Mapping[str, Any]
    ) -> None:
        """A triage verdict: the JSON document of `babysit triage --json` (its seen_before,
        derived from this very table, is not stored)."""
        document = {k: v for k, v in document.items() if k != "seen_before"}
        suspect = document.get("suspect") or {}
        transient = document.get("transient")
        self._write(
            "INSERT INTO diagnoses (run, attempt, ts, category, transient, suspect, host, rank, "
            "gpu, fingerprint, confidence, summary, document) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                attempt,
                ts,
                document["category"],
                None if transient is None else int(bool(transient)),
                suspect.get("kind"),
                suspect.get("host"),
                suspect.get("rank"),
                suspect.get("gpu"),
                document.get("fingerprint"),
                document.get("confidence"),
                document["summary"],
                json.dumps(document, default=_json_default),
            ),
        )

    def diagnoses(self, run: str) -> list[dict[str, Any]]:
        return self._run_rows("diagnoses", run, "document", "{}")

    def seen_before(
        self, fingerprint: str, before: float | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Earlier verdicts with this fingerprint, newest first (any run)."""
        rows = self._read(
            "SELECT run, attempt, ts, category, host, rank, gpu, summary FROM diagnoses "
            "WHERE fingerprint=? AND ts<? ORDER BY ts DESC LIMIT ?",
            (fingerprint, before if before is not None else float("inf"), limit),
        )
        return [dict(r) for r in rows]

    def add_metrics(
        self,
        run: str,
        attempt: int | None,
        ts: float,
        step: int | None,
        values: Mapping[str, float],
    ) -> None:
        """The latest value of each metric, sampled (the caller decides how often)."""
        vals = json.dumps({k: _json_number(v) for k, v in values.items()})
        self._write(
            "INSERT INTO metrics (run, attempt, ts, step, vals) VALUES (?, ?, ?, ?, ?)",
            (run, attempt, ts, step, vals),
        )

    def metrics(self, run: str, limit: int = 10_000) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT * FROM (SELECT * FROM metrics WHERE run=? ORDER BY ts DESC LIMIT ?) "
            "ORDER BY ts",
            (run, limit),
        )
        return [dict(r) | {"vals": json.loads(r["vals"])} for r in rows]

    # -- reading -------------------------------------------------------------------------------

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        try:
            return list(self._conn.execute(sql, params))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {self.home / DB_NAME}: {exc}") from exc

    def _read_one(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
        rows = self._read(sql, params)
        return rows[0] if rows else None


def _free_space_hint(path: Path) -> str:
    """' (the disk is full: 0 MiB free)' when that is the likely reason, else ''."""
    for candidate in (path, *path.parents):
        try:
            free = shutil.disk_usage(candidate).free
        except OSError:
            continue
        return f" (the disk is full: {free / 2**20:.0f} MiB free)" if free < 16 << 20 else ""
    return ""


def _finite(value: float | None) -> float | None:
    """SQLite stores NaN as NULL; keep +-inf, which it can store."""
    return None if value is None or value != value else value


def _json_number(value: float) -> float | str:
    """JSON has no NaN or inf: those travel as the strings "nan", "inf", "-inf"."""
    return value if math.isfinite(value) else str(value)


def _encode(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=_json_default)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bool):
        return int(value)
    if hasattr(value, "value") and isinstance(getattr(value, "value", None), str):
        return value.value  # enums
    return value


def _decode_run(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["command"] = json.loads(out["command"] or "[]")
    out["config"] = json.loads(out["config"] or "{}")
    return out


def _decode_attempt(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["argv"] = json.loads(out["argv"] or "[]")
    out["skip_steps"] = [tuple(w) for w in json.loads(out["skip_steps"] or "[]")]
    out["hosts"] = json.loads(out["hosts"]) if out["hosts"] else None
    if out["transient"] is not None:
        out["transient"] = bool(out["transient"])
    return out


def _fs_type(path: Path) -> str | None:
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
