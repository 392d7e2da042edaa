"""babysit.views: the JSON document's stable keys, and the renderers against a string buffer."""

from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest
from rich.console import Console

from babysit.records import Event, EventKind, RunState
from babysit.store import Store
from babysit.views.document import iso, run_document, supervisor_alive
from babysit.views.render import logbook_markdown, runs_table, status_tables

T0 = 1_750_000_000.0  # 2025-06-15T15:06:40Z

RUN: dict[str, Any] = {
    "name": "gpt-small",
    "state": "failed",
    "reason": "same error twice | a loop",
    "exit_code": 3,
    "supervisor_pid": 4242,
    "command": ["python", "train.py", "--lr", "3e-4", "--name", "a b"],
    "cwd": "/work/gpt",
    "created": T0,
    "updated": T0 + 4000.0,
}
ATTEMPTS: list[dict[str, Any]] = [
    {
        "number": 1,
        "pid": 1001,
        "host": "node1",
        "started": T0,
        "ended": T0 + 3725.0,
        "outcome": "killed",
        "exit_code": None,
        "signal": int(signal.SIGKILL),
        "first_step": 0,
        "last_step": 1200,
        "category": "unknown",
        "transient": None,
        "summary": "killed by SIGKILL (often the host's OOM killer)",
        "resume_from": None,
        "argv": ["python", "train.py"],
        "log_dir": "/home/.babysit/gpt/attempt-0001",
    },
    {
        "number": 2,
        "pid": 1002,
        "started": T0 + 3735.0,
        "ended": T0 + 3747.5,
        "outcome": "failed",
        "exit_code": 1,
        "signal": None,
        "first_step": None,
        "last_step": None,
        "category": "user_code",
        "transient": False,
        "summary": "ModuleNotFoundError: No module named 'foo' | [bold]x[/]",
    },
    {
        "number": 3,
        "pid": 1003,
        "started": T0 + 3800.0,
        "ended": None,
        "outcome": "running",
        "first_step": 1200,
        "last_step": 1300,
    },
]
EVENTS: list[dict[str, Any]] = [
    {"ts": T0, "attempt": None, "kind": "run_started", "message": "run started", "data": None},
    {
        "ts": T0 + 3725.0,
        "attempt": 1,
        "kind": "attempt_ended",
        "message": "attempt 1 killed by SIGKILL [red]",
        "data": {"signal": 9},
    },
]


def doc(alive: bool = False, **run: Any) -> dict[str, Any]:
    return run_document({**RUN, **run}, ATTEMPTS, EVENTS, alive=alive)


def render(fn: Any, *args: Any, **kwargs: Any) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    fn(*args, console, **kwargs)
    return buf.getvalue()


# -- the document --------------------------------------------------------------------------------

ATTEMPT_KEYS = {
    "resume_step",
    "skip_steps",
    "lr_scale",
    "anomaly_step",
    "suspect_host",
    "hosts",
    "number",
    "pid",
    "host",
    "started",
    "ended",
    "duration_s",
    "outcome",
    "exit_code",
    "signal",
    "first_step",
    "last_step",
    "cause",
    "transient",
    "summary",
    "resume_from",
    "argv",
    "log_dir",
}


def test_document_top_level_keys() -> None:
    d = doc()
    assert {"run", "state", "attempts", "events"} <= set(d)
    assert set(d) == {
        "stacks",
        "run",
        "state",
        "reason",
        "exit_code",
        "incidents",
        "diagnoses",
        "supervised",
        "supervisor_pid",
        "command",
        "cwd",
        "created",
        "updated",
        "attempts",
        "events",
    }
    assert d["run"] == "gpt-small"
    assert d["state"] == "failed"
    assert d["created"] == "2025-06-15T15:06:40.000+00:00"


def test_document_attempt_keys() -> None:
    d = doc()
    assert [a["number"] for a in d["attempts"]] == [1, 2, 3]
    for a in d["attempts"]:
        assert set(a) == ATTEMPT_KEYS
    first, second, third = d["attempts"]
    assert first["pid"] == 1001
    assert first["started"] == "2025-06-15T15:06:40.000+00:00"
    assert first["ended"] == "2025-06-15T16:08:45.000+00:00"
    assert first["duration_s"] == 3725.0
    assert first["signal"] == 9
    assert first["exit_code"] is None
    assert first["last_step"] == 1200
    assert first["cause"] == "unknown"  # the store's `category` is `cause` here
    assert second["exit_code"] == 1
    assert second["cause"] == "user_code"
    assert second["host"] is None  # missing keys come out as None
    assert third["ended"] is None
    assert third["duration_s"] is None


def test_document_events() -> None:
    events = doc()["events"]
    assert [set(e) for e in events] == [{"ts", "attempt", "kind", "message", "data"}] * 2
    assert events[0]["data"] == {}  # None becomes {}
    assert events[1] == {
        "ts": "2025-06-15T16:08:45.000+00:00",
        "attempt": 1,
        "kind": "attempt_ended",
        "message": "attempt 1 killed by SIGKILL [red]",
        "data": {"signal": 9},
    }


def test_document_supervisor_pid_only_when_alive() -> None:
    assert doc(alive=False)["supervisor_pid"] is None
    assert doc(alive=False)["supervised"] is False
    assert doc(alive=True)["supervisor_pid"] == 4242
    assert doc(alive=True)["supervised"] is True


def test_document_is_json() -> None:
    assert json.loads(json.dumps(doc())) == doc()


def test_iso() -> None:
    assert iso(None) is None
    assert iso(0.0) == "1970-01-01T00:00:00.000+00:00"
    assert iso(1.2345) == "1970-01-01T00:00:01.234+00:00"


def test_document_from_a_real_store(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    try:
        store.start_run("gpt", ["python", "train.py"], "/w", {})
        store.add_attempt("gpt", 1, {"started": T0, "pid": 7, "argv": ["python", "train.py"]})
        store.update_attempt("gpt", 1, {"ended": T0 + 1, "outcome": "failed", "exit_code": 2})
        store.set_run_state("gpt", RunState.FAILED, "gave up", 3)
        store.add_event(Event("gpt", EventKind.GAVE_UP, "gave up", T0 + 2, attempt=1))
        d = run_document(store.run("gpt"), store.attempts("gpt"), store.events("gpt"), False)
    finally:
        store.close()
    assert d["command"] == ["python", "train.py"]
    assert d["state"] == "failed"
    assert d["exit_code"] == 3
    (a,) = d["attempts"]
    assert (a["number"], a["pid"], a["exit_code"], a["duration_s"]) == (1, 7, 2, 1.0)
    assert d["events"][0]["kind"] == "gave_up"
    assert json.dumps(d)


# -- supervisor_alive ----------------------------------------------------------------------------


def me(**over: Any) -> dict[str, Any]:
    p = psutil.Process()
    return {
        "supervisor_pid": p.pid,
        "supervisor_started": p.create_time(),
        "supervisor_host": "hostA",
        **over,
    }


def test_supervisor_alive_for_this_process() -> None:
    assert supervisor_alive(me(), "hostA")


@pytest.mark.parametrize(
    "over",
    [
        {"supervisor_host": "hostB"},
        {"supervisor_pid": None},
        {"supervisor_started": None},
        {"supervisor_started": 1.0},  # pid reused by another process
        {"supervisor_pid": 2**22 + 12345},  # no such process
    ],
)
def test_supervisor_not_alive(over: dict[str, Any]) -> None:
    assert not supervisor_alive(me(**over), "hostA")


def test_supervisor_alive_needs_the_keys() -> None:
    assert not supervisor_alive({}, os.uname().nodename)


# -- the Markdown logbook ------------------------------------------------------------------------


def test_logbook_markdown() -> None:
    md = logbook_markdown(doc())
    lines = md.splitlines()
    assert lines[0] == "# Logbook: gpt-small"
    assert "- command: `python train.py --lr 3e-4 --name 'a b'`" in lines
    assert "- working directory: `/work/gpt`" in lines
    assert "- state: **failed** — same error twice | a loop" in lines
    assert "- attempts: 3" in lines
    assert "| # | started (UTC) | duration | outcome | steps | cause | summary |" in lines
    row1 = next(ln for ln in lines if ln.startswith("| 1 |"))
    assert row1 == (
        "| 1 | 2025-06-15 15:06:40Z | 1h02m | killed (SIGKILL) | 0–1200 | unknown | "
        "killed by SIGKILL (often the host's OOM killer) |"
    )
    row2 = next(ln for ln in lines if ln.startswith("| 2 |"))
    assert "| 12.5s | failed (exit 1) | - | user_code |" in row2
    assert "No module named 'foo' \\| [bold]x[/] |" in row2  # pipes escaped in cells
    row3 = next(ln for ln in lines if ln.startswith("| 3 |"))
    assert "| - | running | 1200–1300 |" in row3
    assert "## Events" in lines
    assert "- 2025-06-15 15:06:40Z **run_started**: run started" in lines
    assert (
        "- 2025-06-15 16:08:45Z (attempt 1) **attempt_ended**: attempt 1 killed by SIGKILL [red]"
        in lines
    )
    assert md.endswith("\n")


def test_logbook_markdown_empty_run() -> None:
    d = run_document({**RUN, "reason": None, "command": None}, [], [], alive=False)
    md = logbook_markdown(d)
    assert "- state: **failed**\n" in md
    assert "- command: ``" in md
    assert "- attempts: 0" in md
    assert md.rstrip().endswith("## Events")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.0, "0.0s"),
        (59.9, "59.9s"),
        (60.0, "1m00s"),
        (125.0, "2m05s"),
        (3600.0, "1h00m"),
        (90061.0, "25h01m"),
    ],
)
def test_durations_in_logbook(seconds: float, shown: str) -> None:
    att = {**ATTEMPTS[1], "ended": T0 + 3735.0 + seconds}
    d = run_document(RUN, [att], [], alive=False)
    assert f"| {shown} |" in logbook_markdown(d)


def test_unknown_signal_number_is_shown() -> None:
    att = {**ATTEMPTS[0], "signal": 200}
    d = run_document(RUN, [att], [], alive=False)
    assert "killed (signal 200)" in logbook_markdown(d)


def test_outcome_without_code_or_signal() -> None:
    att = {**ATTEMPTS[1], "outcome": "lost", "exit_code": None}
    d = run_document(RUN, [att], [], alive=False)
    assert "| lost |" in logbook_markdown(d)


# -- the status tables ---------------------------------------------------------------------------


def test_status_tables() -> None:
    out = render(status_tables, doc())
    assert "gpt-small: failed — no babysit attached" in out
    assert "reason: same error twice | a loop" in out
    assert "command: python train.py --lr 3e-4 --name 'a b'" in out
    assert "attempts" in out
    for header in ("#", "started", "duration", "outcome", "steps", "cause", "summary"):
        assert header in out
    assert "2025-06-15 15:06:40Z" in out
    assert "1h02m" in out
    assert "killed (SIGKILL)" in out
    assert "0→1200" in out
    assert "1200→1300" in out
    assert "failed (exit 1)" in out
    assert "[bold]x[/]" in out  # summaries are not read as markup
    assert "last 2 events:" in out
    assert "attempt 1 killed by SIGKILL [red]" in out  # messages are not read as markup


def test_status_tables_supervised() -> None:
    out = render(status_tables, doc(alive=True, state="running"))
    assert "gpt-small: running — supervised by babysit pid 4242" in out
    assert "re-attach" not in out


@pytest.mark.parametrize("state", ["running", "backoff", "starting"])
def test_status_tables_orphaned_active_run_says_how_to_reattach(state: str) -> None:
    out = render(status_tables, doc(alive=False, state=state))
    assert "babysit died?" in out
    assert "re-attach" in out


def test_status_tables_limits_events() -> None:
    out = render(status_tables, doc(), events=1)
    assert "last 1 events:" in out
    assert "run started" not in out
    assert "attempt 1 killed" in out
    none = render(status_tables, doc(), events=0)
    assert "events:" not in none


def test_status_tables_no_reason() -> None:
    assert "reason:" not in render(status_tables, doc(reason=None))


def test_runs_table() -> None:
    docs = [doc(), doc(alive=True, name="other", state="running")]
    out = render(runs_table, docs)
    assert "gpt-small" in out
    assert "other" in out
    assert "pid 4242" in out
    assert "none" in out
    assert "1300" in out  # the last known step
    assert "2025-06-15 16:13:20Z" in out  # updated
