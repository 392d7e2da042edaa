"""A database deleted, emptied or damaged: said as such (naming `babysit rebuild`), noticed under
a live store (Store.check), and rebuilt from events.jsonl (store/rebuild.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from babysit.errors import RunNotFound, StoreCorrupt, StoreError
from babysit.records import Event, EventKind
from babysit.store import Store
from babysit.store.rebuild import fold, read_events, rebuild
from babysit.store.sqlite import DB_NAME, JSONL_NAME

T0 = 1_700_000_000.0


def write_history(home: Path) -> None:
    """Run "gpt": attempt 1 crashed, a restart, attempt 2 still running; run "old" finished."""
    with Store.open(home) as store:
        store.start_run("gpt", ["python", "train.py"], "/work", {})
        history: list[tuple[str, str, int | None, dict[str, Any]]] = [
            (
                "run_started",
                "babysit 1 supervises",
                None,
                {"command": ["python", "train.py"], "cwd": "/work"},
            ),
            (
                "attempt_started",
                "attempt 1 started",
                1,
                {"argv": ["python", "train.py"], "launcher_pid": 11},
            ),
            (
                "incident",
                "loss spike",
                1,
                {"incident": "loss_spike", "category": "loss_spike", "step": 40},
            ),
            (
                "attempt_ended",
                "attempt 1 exited with code 1 at step 50",
                1,
                {
                    "outcome": "failed",
                    "exit_code": 1,
                    "signal": None,
                    "last_step": 50,
                    "verdict": {
                        "category": "network",
                        "transient": True,
                        "fingerprint": "ab12",
                        "summary": "ConnectionError: reset by peer",
                    },
                },
            ),
            ("restart_scheduled", "restarting in 10s", None, {"delay_s": 10.0}),
            (
                "attempt_started",
                "attempt 2 started",
                2,
                {"argv": ["python", "train.py"], "launcher_pid": 22, "resume_from": "ckpt_40.pt"},
            ),
        ]
        for kind, message, attempt, data in history:
            store.add_event(
                Event("gpt", EventKind(kind), message, T0 + len(message), attempt, data)
            )
        store.add_event(
            Event(
                "old", EventKind.RUN_STARTED, "babysit 2", T0, None, {"command": ["x"], "cwd": "/"}
            )
        )
        store.add_event(Event("old", EventKind.SUCCEEDED, "done", T0 + 5))


def test_fold_draws_the_runs_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    folded = fold(read_events(home / JSONL_NAME), home)
    gpt, old = folded.runs["gpt"], folded.runs["old"]
    assert (gpt["state"], gpt["command"], gpt["cwd"]) == (
        "running",
        ["python", "train.py"],
        "/work",
    )
    assert (old["state"], old["exit_code"]) == ("succeeded", 0)
    first, second = folded.attempts[("gpt", 1)], folded.attempts[("gpt", 2)]
    assert (first["outcome"], first["exit_code"], first["last_step"]) == ("failed", 1, 50)
    assert (first["category"], first["transient"], first["fingerprint"]) == (
        "network",
        True,
        "ab12",
    )
    assert first["summary"] == "ConnectionError: reset by peer"
    assert (second["outcome"], second["launcher_pid"], second["resume_from"]) == (
        "running",
        22,
        "ckpt_40.pt",
    )
    assert second["log_dir"] == str(home.absolute() / "runs" / "gpt" / "attempt-0002")
    assert len(folded.events) == 8
    (inc,) = folded.incidents
    assert (inc["kind"], inc["step"], inc["attempt"]) == ("loss_spike", 40, 1)


def test_a_run_started_again_after_it_ended_gets_a_fresh_budget(tmp_path: Path) -> None:
    lines = [
        {"run": "r", "kind": "run_started", "ts": 1.0, "attempt": None, "data": {}},
        {"run": "r", "kind": "attempt_started", "ts": 2.0, "attempt": 1, "data": {}},
        {
            "run": "r",
            "kind": "attempt_ended",
            "ts": 3.0,
            "attempt": 1,
            "data": {"outcome": "failed"},
        },
        {"run": "r", "kind": "gave_up", "ts": 4.0, "attempt": None, "data": {"exit_code": 4}},
        {"run": "r", "kind": "run_started", "ts": 5.0, "attempt": None, "data": {}},
    ]
    folded = fold(lines[:4], tmp_path)
    assert (folded.runs["r"]["state"], folded.runs["r"]["exit_code"]) == ("failed", 4)
    assert fold(lines, tmp_path).runs["r"]["budget_from"] == 2


def test_unreadable_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / JSONL_NAME
    good = {"run": "r", "kind": "note", "ts": 1.0, "attempt": None, "message": "hi", "data": {}}
    path.write_text(json.dumps(good) + "\n\x00garbage\n[1, 2]\n\n" + json.dumps(good)[:20])
    skipped = [0]
    assert len(list(read_events(path, skipped))) == 1 and skipped == [3]


def test_rebuild_moves_the_bad_database_aside_and_replays(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    (home / DB_NAME).write_bytes(os.urandom(8192))  # damaged
    done = rebuild(home)
    assert (done.runs, done.attempts, done.events, done.skipped) == (2, 2, 8, 0)
    assert done.moved_aside and done.moved_aside[0].name.startswith(f"{DB_NAME}.bad-")
    assert done.moved_aside[0].stat().st_size == 8192  # kept, never deleted
    with Store.open(home, create=False) as store:
        assert {r["name"]: r["state"] for r in store.runs()} == {
            "gpt": "running",
            "old": "succeeded",
        }
        assert [a["outcome"] for a in store.attempts("gpt")] == ["failed", "running"]
        assert [i["step"] for i in store.incidents("gpt")] == [40]
        assert store.events("gpt")[-1]["message"] == "attempt 2 started"


def test_rebuild_without_events_jsonl_says_so(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    with pytest.raises(StoreError, match="nothing to rebuild from"):
        rebuild(tmp_path / "home")


# -- said as such ----------------------------------------------------------------------------------


def test_an_emptied_database_names_the_rebuild(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        if (home / name).exists():
            (home / name).write_bytes(b"")
    for create in (False, True):  # status and run both refuse to show or start on a blank one
        with pytest.raises(StoreCorrupt) as info:
            Store.open(home, create=create)
        msg = str(info.value)
        assert "is empty (0 bytes)" in msg and "holds 8 logbook events" in msg
        assert f"babysit rebuild --home {home}" in msg


def test_a_deleted_database_names_the_rebuild(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        (home / name).unlink(missing_ok=True)
    with pytest.raises(StoreCorrupt, match=r"is missing.*babysit rebuild"):
        Store.open(home, create=False)
    with pytest.raises(StoreCorrupt, match="deleted"):
        Store.open(home)


def test_a_new_home_is_no_lost_history(tmp_path: Path) -> None:
    with pytest.raises(RunNotFound, match="no babysit home"):
        Store.open(tmp_path / "home", create=False)
    Store.open(tmp_path / "home").close()


def test_a_damaged_database_is_not_called_a_babysit_bug(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    data = bytearray((home / DB_NAME).read_bytes())
    data[100:] = os.urandom(len(data) - 100)  # the header kept, the pages garbage
    (home / DB_NAME).write_bytes(bytes(data))
    for name in (f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        (home / name).unlink(missing_ok=True)
    with pytest.raises(StoreCorrupt) as info, Store.open(home, create=False) as store:
        store.runs()
    msg = str(info.value)
    assert "is damaged" in msg and "not a babysit bug" in msg
    assert f"babysit rebuild --home {home}" in msg


def test_garbage_instead_of_a_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    (home / DB_NAME).write_bytes(b"this is not sqlite" * 300)
    (home / f"{DB_NAME}-wal").unlink(missing_ok=True)
    with pytest.raises(StoreCorrupt, match=r"file is not a database.*babysit rebuild"):
        Store.open(home)


# -- noticed under a live store --------------------------------------------------------------------


def test_check_sees_the_database_deleted_replaced_or_emptied(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = Store.open(home)
    try:
        assert store.check() is None
        db = home / DB_NAME
        db.rename(home / "moved")
        assert store.check() == f"{db} was deleted"
        (home / "moved").rename(db)
        assert store.check() is None
        os.truncate(db, 0)
        assert store.check() == f"{db} was emptied (0 bytes)"
        db.unlink()
        db.write_bytes(b"x")
        assert store.check() == f"{db} was replaced by another file"
        for p in home.iterdir():
            p.unlink()
        home.rmdir()
        assert store.check() == f"the babysit home {home} was deleted"
    finally:
        store.close()


def test_last_event_and_restore(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home)
    with Store.open(home) as store:
        last = store.last_event("gpt", ("restart_scheduled", "rollback"))
        assert last is not None and last["data"] == {"delay_s": 10.0}
        assert store.last_event("gpt", ("succeeded",)) is None
