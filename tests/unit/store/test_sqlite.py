"""babysit.store.Store on tmp_path: opening, migrations, runs, attempts, events, failures."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from babysit.errors import (
    HomeNotWritable,
    RunNotFound,
    StoreError,
    StoreWriteError,
    UsageError,
)
from babysit.records import AttemptRecord, Category, Event, EventKind, Outcome, RunState
from babysit.store import Store
from babysit.store.schema import MIGRATIONS
from babysit.store.sqlite import DB_NAME, JSONL_NAME


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "home")
    yield s
    s.close()


def started(store: Store, name: str = "gpt") -> None:
    store.start_run(name, ["python", "train.py", "--lr", "3e-4"], "/work", {"restart": {"x": 1}})


# -- opening -------------------------------------------------------------------------------------


def test_open_creates_home_and_db_in_wal_mode(tmp_path: Path) -> None:
    home = tmp_path / "a" / "b" / "home"
    store = Store.open(home)
    try:
        assert (home / DB_NAME).is_file()
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store.jsonl_path == home / JSONL_NAME
    finally:
        store.close()


def test_migrations_set_user_version(store: Store) -> None:
    assert store._conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    tables = {r[0] for r in store._conn.execute("SELECT name FROM sqlite_master")}
    assert {"runs", "attempts", "events"} <= tables


def test_reopen_is_idempotent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = Store.open(home)
    started(first)
    first.close()
    for _ in range(2):
        again = Store.open(home)
        try:
            assert [r["name"] for r in again.runs()] == ["gpt"]
            assert again._conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        finally:
            again.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    conn = sqlite3.connect(home / DB_NAME)
    conn.execute(f"PRAGMA user_version={len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer babysit") as info:
        Store.open(home)
    assert str(len(MIGRATIONS) + 5) in str(info.value)


def test_open_without_create_on_missing_home(tmp_path: Path) -> None:
    home = tmp_path / "nothing-here"
    with pytest.raises(RunNotFound, match="no babysit home"):
        Store.open(home, create=False)
    assert not home.exists()  # looking does not create it


def test_open_without_create_on_existing_home(tmp_path: Path) -> None:
    Store.open(tmp_path / "home").close()
    Store.open(tmp_path / "home", create=False).close()


def test_unwritable_home(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    home = tmp_path / "file" / "home"
    with pytest.raises(HomeNotWritable) as info:
        Store.open(home)
    assert str(home) in str(info.value)
    assert "--home" in str(info.value)
    assert isinstance(info.value.__cause__, OSError)
    assert isinstance(info.value, UsageError)  # exit 2


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = Store.open(Path("~/bs"))
    try:
        assert (tmp_path / "bs" / DB_NAME).is_file()
    finally:
        store.close()


# -- runs ----------------------------------------------------------------------------------------


def test_start_run_and_read_it(store: Store) -> None:
    started(store)
    run = store.run("gpt")
    assert run["name"] == "gpt"
    assert run["state"] == RunState.STARTING.value
    assert run["command"] == ["python", "train.py", "--lr", "3e-4"]
    assert run["cwd"] == "/work"
    assert run["config"] == {"restart": {"x": 1}}
    assert run["supervisor_pid"] == os.getpid()
    assert run["supervisor_host"] == os.uname().nodename
    assert run["created"] <= run["updated"]


def test_start_run_again_starts_over_and_keeps_created(store: Store) -> None:
    started(store)
    store.set_run_state("gpt", RunState.FAILED, "gave up", 3)
    created = store.run("gpt")["created"]
    store.start_run("gpt", ["python", "other.py"], "/elsewhere", {})
    run = store.run("gpt")
    assert (run["state"], run["reason"], run["exit_code"]) == ("starting", None, None)
    assert run["created"] == created
    assert run["command"] == ["python", "other.py"]
    assert run["cwd"] == "/elsewhere"


def test_config_with_paths_is_stored(store: Store) -> None:
    store.start_run("p", ["x"], "/", {"home": Path("/a/b"), "obj": object()})
    cfg = store.run("p")["config"]
    assert cfg["home"] == "/a/b"
    assert isinstance(cfg["obj"], str)


def test_set_run_state(store: Store) -> None:
    started(store)
    store.set_run_state("gpt", RunState.FAILED, reason="gave up", exit_code=3)
    run = store.run("gpt")
    assert (run["state"], run["reason"], run["exit_code"]) == ("failed", "gave up", 3)
    store.set_run_state("gpt", RunState.STARTING)  # no reason given: none (no stale reason)
    run = store.run("gpt")
    assert (run["state"], run["reason"], run["exit_code"]) == ("starting", None, None)


def test_release_and_budget(store: Store) -> None:
    started(store)
    assert store.run("gpt")["budget_from"] == 1
    store.set_budget_from("gpt", 4)
    store.release_run("gpt")
    run = store.run("gpt")
    assert run["budget_from"] == 4
    assert run["supervisor_pid"] is None


def test_runs_newest_first(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = itertools.count(1000.0)  # strictly increasing, whatever the wall clock does
    monkeypatch.setattr("babysit.store.sqlite.time.time", lambda: next(clock))
    assert store.runs() == []
    started(store, "a")
    started(store, "b")
    store.set_run_state("a", RunState.RUNNING)  # a updated last
    assert [r["name"] for r in store.runs()] == ["a", "b"]


def test_unknown_run_lists_known_runs(store: Store) -> None:
    with pytest.raises(RunNotFound, match=r"known runs: none"):
        store.run("gpt")
    started(store, "alpha")
    started(store, "beta")
    with pytest.raises(RunNotFound) as info:
        store.run("gamma")
    msg = str(info.value)
    assert "'gamma'" in msg
    assert "alpha" in msg
    assert "beta" in msg


# -- attempts ------------------------------------------------------------------------------------


def test_attempt_round_trip(store: Store) -> None:
    started(store)
    store.add_attempt(
        "gpt",
        1,
        {"started": 100.0, "pid": 4242, "argv": ["python", "train.py"], "log_dir": Path("/l/1")},
    )
    (a,) = store.attempts("gpt")
    assert a["number"] == 1
    assert a["outcome"] == "running"
    assert a["pid"] == 4242
    assert a["argv"] == ["python", "train.py"]
    assert a["log_dir"] == "/l/1"
    assert a["transient"] is None
    assert a["stdout_offset"] == 0

    store.update_attempt(
        "gpt",
        1,
        {
            "ended": 160.0,
            "outcome": Outcome.FAILED,
            "exit_code": 1,
            "first_step": 0,
            "last_step": 50,
            "category": Category.USER_CODE,
            "transient": False,
            "fingerprint": "abc",
            "summary": "boom",
            "stdout_offset": 1234,
        },
    )
    (a,) = store.attempts("gpt")
    assert a["outcome"] == "failed"  # enums stored as their values
    assert a["category"] == "user_code"
    assert a["transient"] is False
    assert a["stdout_offset"] == 1234

    (rec,) = store.history("gpt")
    assert rec == AttemptRecord(
        number=1,
        started=100.0,
        ended=160.0,
        outcome=Outcome.FAILED,
        exit_code=1,
        signal=None,
        first_step=0,
        last_step=50,
        category=Category.USER_CODE,
        transient=False,
        fingerprint="abc",
        summary="boom",
    )


def test_transient_true_round_trips(store: Store) -> None:
    started(store)
    store.add_attempt("gpt", 1, {"started": 1.0, "transient": True})
    assert store.attempts("gpt")[0]["transient"] is True
    assert store.history("gpt")[0].transient is True


def test_attempts_ordered_and_per_run(store: Store) -> None:
    started(store, "a")
    started(store, "b")
    for n in (3, 1, 2):
        store.add_attempt("a", n, {"started": float(n)})
    store.add_attempt("b", 1, {"started": 9.0})
    assert [a["number"] for a in store.attempts("a")] == [1, 2, 3]
    assert [a["number"] for a in store.attempts("b")] == [1]
    assert store.attempts("nobody") == []
    assert store.history("nobody") == []


def test_update_attempt_rejects_unknown_fields(store: Store) -> None:
    started(store)
    store.add_attempt("gpt", 1, {"started": 1.0})
    with pytest.raises(StoreError, match="unknown attempt fields") as info:
        store.update_attempt("gpt", 1, {"exit_code": 1, "bogus": 2, "also; DROP": 3})
    assert "bogus" in str(info.value)
    assert store.attempts("gpt")[0]["exit_code"] is None  # nothing written


def test_duplicate_attempt_is_refused_for_good(store: Store) -> None:
    """A constraint violation is a bug, not a full disk: StoreError, not the retriable
    StoreWriteError (a retried write could never succeed and would block the rest)."""
    started(store)
    store.add_attempt("gpt", 1, {"started": 1.0, "launcher_pid": 42})
    with pytest.raises(StoreError) as info:
        store.add_attempt("gpt", 1, {"started": 2.0})
    assert not isinstance(info.value, StoreWriteError)
    assert "already recorded" in str(info.value)
    assert store.attempts("gpt")[0]["started"] == 1.0


def test_an_attempt_recorded_but_never_launched_is_replaced_by_its_launch(store: Store) -> None:
    """babysit died between the row and the launch: the next babysit launches that number."""
    started(store)
    store.add_attempt("gpt", 1, {"started": 1.0, "argv": ["old"]})
    store.add_attempt("gpt", 1, {"started": 2.0, "argv": ["new"]})
    (row,) = store.attempts("gpt")
    assert (row["started"], row["argv"]) == (2.0, ["new"])


# -- events --------------------------------------------------------------------------------------


def test_events_go_to_sqlite_and_jsonl(store: Store) -> None:
    started(store)
    e1 = Event("gpt", EventKind.RUN_STARTED, "started", 10.0)
    e2 = Event(
        "gpt", EventKind.ATTEMPT_ENDED, "died", 20.5, attempt=1, data={"path": Path("/x"), "n": 3}
    )
    store.add_event(e1)
    store.add_event(e2)
    assert store.events("gpt") == [
        {"ts": 10.0, "attempt": None, "kind": "run_started", "message": "started", "data": {}},
        {
            "ts": 20.5,
            "attempt": 1,
            "kind": "attempt_ended",
            "message": "died",
            "data": {"path": "/x", "n": 3},
        },
    ]
    lines = store.jsonl_path.read_text().splitlines()
    assert len(lines) == 2
    docs = [json.loads(line) for line in lines]
    assert docs[0] == {
        "run": "gpt",
        "attempt": None,
        "ts": 10.0,
        "kind": "run_started",
        "message": "started",
        "data": {},
    }
    assert docs[1]["data"] == {"path": "/x", "n": 3}


def test_events_are_per_run_and_in_order(store: Store) -> None:
    for i in range(5):
        store.add_event(Event("a" if i % 2 else "b", EventKind.NOTE, f"m{i}", 100.0 - i))
    assert [e["message"] for e in store.events("b")] == ["m0", "m2", "m4"]
    assert [e["message"] for e in store.events("a")] == ["m1", "m3"]


def test_event_message_with_newline_is_one_jsonl_line(store: Store) -> None:
    store.add_event(Event("gpt", EventKind.NOTE, "two\nlines", 1.0))
    assert len(store.jsonl_path.read_text().splitlines()) == 1


def test_jsonl_append_failure_is_a_write_error(store: Store) -> None:
    store.jsonl_path.mkdir()  # appending to a directory fails
    with pytest.raises(StoreWriteError, match=JSONL_NAME):
        store.add_event(Event("gpt", EventKind.NOTE, "x", 1.0))
    assert [e["message"] for e in store.events("gpt")] == ["x"]  # SQLite committed first


# -- write and read failures ---------------------------------------------------------------------


def test_write_after_connection_closed_is_a_store_error(store: Store) -> None:
    store._conn.close()
    with pytest.raises(StoreError) as info:
        store.add_event(Event("gpt", EventKind.NOTE, "x", 1.0))
    assert isinstance(info.value.__cause__, sqlite3.Error)
    with pytest.raises(StoreError):
        started(store)


def test_read_after_connection_closed_is_a_store_error(store: Store) -> None:
    store._conn.close()
    with pytest.raises(StoreError):
        store.runs()


class _FailingCommit:
    """Wraps the real connection; the first COMMIT fails like a full disk would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.fail = True

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self.fail:
            self.fail = False
            raise sqlite3.OperationalError("database or disk is full")
        return self.conn.execute(sql, *args)


def test_failed_commit_is_a_store_write_error(store: Store) -> None:
    real = store._conn
    store._conn = _FailingCommit(real)  # type: ignore[assignment]
    try:
        with pytest.raises(StoreWriteError, match="disk is full"):
            store.add_event(Event("gpt", EventKind.NOTE, "lost", 1.0))
    finally:
        store._conn = real


def test_store_recovers_after_a_failed_commit(store: Store) -> None:
    real = store._conn
    store._conn = _FailingCommit(real)  # type: ignore[assignment]
    try:
        with pytest.raises(StoreWriteError):
            store.add_event(Event("gpt", EventKind.NOTE, "lost", 1.0))
        store.add_event(Event("gpt", EventKind.NOTE, "kept", 2.0))  # the disk has room again
    finally:
        store._conn = real
    assert [e["message"] for e in store.events("gpt")] == ["kept"]


def test_a_write_record_the_store_does_not_know_is_refused_loudly(tmp_path: Path) -> None:
    import pytest

    from babysit.errors import StoreError
    from babysit.store import Store

    with Store.open(tmp_path / "home") as store, pytest.raises(StoreError, match="a babysit bug"):
        store.apply("not a write")  # type: ignore[arg-type]


# -- readers -------------------------------------------------------------------------------------


def test_readers_open_the_store_read_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Store.open(home) as writer:
        started(writer)
    with Store.open(home, create=False) as reader:
        assert reader.readonly
        assert [r["name"] for r in reader.runs()] == ["gpt"]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader._conn.execute("DELETE FROM runs")


def test_a_reader_that_writes_becomes_a_writer(tmp_path: Path) -> None:
    """`nodes unban` reads the bans, then writes: the same store object."""
    home = tmp_path / "home"
    Store.open(home).close()
    with Store.open(home, create=False) as store:
        started(store)
        assert not store.readonly
    with Store.open(home, create=False) as store:
        assert store.run("gpt")["cwd"] == "/work"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes whatever the modes say")
def test_readers_work_on_a_read_only_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Store.open(home) as writer:
        started(writer)
    for name in ("babysit.db-wal", "babysit.db-shm"):
        (home / name).unlink(missing_ok=True)
    home.chmod(0o555)
    try:
        with Store.open(home, create=False) as reader:
            assert [r["name"] for r in reader.runs()] == ["gpt"]
    finally:
        home.chmod(0o755)
