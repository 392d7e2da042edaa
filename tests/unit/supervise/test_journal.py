"""Journal: writes retried in order while the store refuses them; what is dropped is told."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import babysit.supervise.journal as journal_module
from babysit.errors import StoreCorrupt, StoreWriteError
from babysit.records import EventKind, Level, RunState
from babysit.store import Store
from babysit.store.writes import AddAttempt, ReleaseRun, UpdateAttempt
from babysit.supervise.journal import Journal
from babysit.supervise.ledger import Ledger


class RefusingStore:
    """Refuses every write while `full`."""

    def __init__(self) -> None:
        self.full = True
        self.rows: list[str] = []

    def check(self) -> str | None:
        return None  # the database file is where it was

    def apply(self, w: ReleaseRun) -> None:
        if self.full:
            raise StoreWriteError("disk full")
        self.rows.append(w.run)


def test_kept_writes_survive_and_dropped_samples_are_told(monkeypatch: Any) -> None:
    monkeypatch.setattr(journal_module, "MAX_PENDING", 3)
    store = RefusingStore()
    said: list[tuple[str, str]] = []
    j = Journal(store, "r", lambda level, msg: said.append((level, msg)), lambda: 0.0)  # type: ignore[arg-type]
    for i in range(3):
        j.write(ReleaseRun(f"event {i}"))
    for i in range(2):
        j.write(ReleaseRun(f"sample {i}"), droppable=True)
    assert said[0][0] == "warn" and "Supervision goes on" in said[0][1]
    store.full = False
    j.flush()
    assert store.rows == ["event 0", "event 1", "event 2"]
    assert said[-1] == (
        "info",
        "the store accepts writes again; attempts, events and incidents were all kept, but 2 "
        "metrics sample(s) were dropped meanwhile (the run's own logs still hold them)",
    )


def test_an_outage_without_drops_lost_nothing() -> None:
    store = RefusingStore()
    said: list[str] = []
    j = Journal(store, "r", lambda level, msg: said.append(msg), lambda: 0.0)  # type: ignore[arg-type]
    j.write(ReleaseRun("event"))
    store.full = False
    j.flush()
    assert store.rows == ["event"] and said[-1].endswith("nothing was lost")


# -- the database deleted, emptied or damaged under the live run ---------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def live_journal(home: Path) -> tuple[Journal, Clock, list[tuple[Level, str]]]:
    """A journal on a real store, with the run "r" started and attempt 1 running."""
    store = Store.open(home)
    clock, said = Clock(), list[tuple[Level, str]]()
    ledger = Ledger("r", ["python", "train.py"], Path("/work"), {})
    ledger.seed(store)
    j = Journal(
        store, "r", lambda lv, m: said.append((lv, m)), lambda: 1e9 + clock.now, clock, ledger
    )
    store.start_run("r", ["python", "train.py"], "/work", {})
    j.run_state = RunState.STARTING
    j.event(EventKind.RUN_STARTED, "babysit supervises", command=["python", "train.py"])
    j.write(AddAttempt("r", 1, {"started": 1e9, "log_dir": str(home / "runs/r/attempt-0001")}))
    j.write(UpdateAttempt("r", 1, {"launcher_pid": 4242, "last_step": 10}))
    j.state(RunState.RUNNING)
    j.event(EventKind.ATTEMPT_STARTED, "attempt 1 started", 1, launcher_pid=4242)
    return j, clock, said


def read_back(home: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    with Store.open(home, create=False) as store:
        run = store.run("r")
        return run, store.attempts("r"), [e["kind"] for e in store.events("r")]


def test_a_deleted_database_is_noticed_and_rebuilt_from_the_mirror(tmp_path: Path) -> None:
    home = tmp_path / "home"
    j, clock, said = live_journal(home)
    for name in ("babysit.db", "babysit.db-wal", "babysit.db-shm"):
        (home / name).unlink(missing_ok=True)
    j.write(UpdateAttempt("r", 1, {"last_step": 20}))  # before the check: into the lost file
    clock.now += journal_module.CHECK_S
    j.event(EventKind.NOTE, "after the check", 1)
    assert said[0][0] == "error" and f"{home / 'babysit.db'} was deleted" in said[0][1]
    assert "the run goes on" in said[0][1]
    assert said[1][0] == "warn" and "written from events.jsonl" in said[1][1]
    run, (attempt,), kinds = read_back(home)
    assert run["state"] == "running" and run["command"] == ["python", "train.py"]
    assert (attempt["launcher_pid"], attempt["last_step"]) == (4242, 20)  # from memory
    assert kinds == ["run_started", "attempt_started", "note"]  # each once
    j.close()


def test_a_deleted_home_is_written_again_from_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    j, clock, said = live_journal(home)
    shutil.rmtree(home)
    clock.now += journal_module.CHECK_S
    j.flush()
    assert f"the babysit home {home} was deleted" in said[0][1]
    assert "what this babysit kept in memory" in said[1][1]
    assert "events.jsonl was gone too" in said[1][1]
    run, (attempt,), kinds = read_back(home)
    assert run["state"] == "running" and attempt["launcher_pid"] == 4242
    assert kinds == ["run_started", "attempt_started"]
    lines = (home / "events.jsonl").read_text().splitlines()  # the mirror is whole again
    assert [json.loads(x)["kind"] for x in lines] == ["run_started", "attempt_started"]
    assert (home / "runs/r/supervisor.lock").exists()  # taken again
    j.close()


def test_an_emptied_database_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    j, clock, said = live_journal(home)
    os.truncate(home / "babysit.db", 0)
    clock.now += journal_module.CHECK_S
    j.flush()
    assert "was emptied (0 bytes)" in said[0][1]
    assert "kept as babysit.db.bad-" in said[1][1]
    assert list(home.glob("babysit.db.bad-*"))
    _, (attempt,), _ = read_back(home)
    assert attempt["launcher_pid"] == 4242
    j.close()


def test_a_damaged_database_is_rebuilt_not_called_a_bug(tmp_path: Path) -> None:
    home = tmp_path / "home"
    j, _, said = live_journal(home)
    real = j.store.apply
    calls: list[Any] = []

    def damaged(w: Any) -> None:
        if not calls:
            calls.append(w)
            raise StoreCorrupt(
                f"{home / 'babysit.db'} is damaged (database disk image is malformed)"
            )
        real(w)

    j.store.apply = damaged  # type: ignore[method-assign]
    j.event(EventKind.NOTE, "written after all", 1)
    assert not any("babysit bug" in m for _, m in said)
    assert "is damaged" in said[0][1] and "written from events.jsonl" in said[1][1]
    _, _, kinds = read_back(home)
    assert kinds == ["run_started", "attempt_started", "note"]
    j.close()


def test_when_the_store_cannot_be_written_again_it_is_tried_later(tmp_path: Path) -> None:
    home = tmp_path / "home"
    j, clock, said = live_journal(home)
    shutil.rmtree(home)
    home.write_text("a file where the home was")
    clock.now += journal_module.CHECK_S
    j.event(EventKind.NOTE, "kept in memory", 1)
    assert j.lost is not None and "cannot write the store again" in said[1][1]
    assert len(j.pending) == 2  # the note's row and line, queued
    home.unlink()
    clock.now += journal_module.CHECK_S
    j.flush()
    assert j.lost is None and not j.pending
    _, _, kinds = read_back(home)
    assert kinds == ["run_started", "attempt_started", "note"]
    j.close()
