"""`babysit stop`: the request file, and the loop carrying it out as an operator stop."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from babysit.records import ExitCode, Level
from babysit.supervise.requests import (
    STOP_REQUEST,
    OperatorStops,
    StopRequest,
    read_stop_request,
    write_stop_request,
)
from tests.fakes import Script, steps
from tests.unit.supervise.harness import NAME, NETWORK_ERROR, Run, backoff


def request(ts: float, reason: str = "loss diverged", id: str = "a") -> StopRequest:
    return StopRequest("alice", "login-1", 4242, ts, reason, id)


def test_a_request_round_trips_and_garbage_still_means_stop(tmp_path: Path) -> None:
    path = write_stop_request(tmp_path, request(5.0))
    assert path.name == STOP_REQUEST and read_stop_request(path) == request(5.0)
    path.write_bytes(b"\x00{not json")
    odd = read_stop_request(path)
    assert odd is not None and odd.user == "someone"
    assert read_stop_request(tmp_path / "none.json") is None
    assert StopRequest.now("why").id  # each request its own id


def test_operator_stops_count_a_new_request_once_and_a_second_one_again(tmp_path: Path) -> None:
    now = [0.0]
    said: list[str] = []
    stops = OperatorStops(
        tmp_path / STOP_REQUEST, lambda: now[0], lambda: 100.0, lambda _l, m: said.append(m)
    )
    stops.arm(started=100.0)
    assert not stops
    write_stop_request(tmp_path, request(101.0))
    assert not stops  # looked at less than every_s ago
    now[0] = 1.0
    assert stops and list(stops) == [signal.SIGTERM]
    assert stops.describe(0) == "`babysit stop` from alice@login-1 (loss diverged)"
    now[0] = 2.0
    assert len(stops) == 1  # the same request is not a second stop
    write_stop_request(tmp_path, request(102.0, id="b"))
    now[0] = 3.0
    assert len(stops) == 2  # a second request: kill now
    assert said[0] == "stop requested by `babysit stop` from alice@login-1 (loss diverged)"
    stops.close()
    assert not (tmp_path / STOP_REQUEST).exists()


def test_a_request_older_than_the_babysit_is_set_aside(tmp_path: Path) -> None:
    said: list[tuple[Level, str]] = []
    write_stop_request(tmp_path, request(50.0))
    stops = OperatorStops(
        tmp_path / STOP_REQUEST, lambda: 10.0, lambda: 100.0, lambda lv, m: said.append((lv, m))
    )
    stops.arm(started=100.0)
    assert not stops and not (tmp_path / STOP_REQUEST).exists()
    assert said[0][0] == Level.WARN and "made before this babysit started" in said[0][1]


def test_a_stale_request_that_cannot_be_set_aside_is_still_not_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_stop_request(tmp_path, request(50.0))
    stops = OperatorStops(tmp_path / STOP_REQUEST, lambda: 10.0, lambda: 100.0, lambda *_: None)
    monkeypatch.setattr(OperatorStops, "_discard", lambda self: None)  # a read-only run dir
    stops.arm(started=100.0)
    assert (tmp_path / STOP_REQUEST).exists() and not stops


def test_babysit_stop_stops_the_attempt_as_an_operator_stop(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 100), ends_at=None)])
    run_dir = r.home / "runs" / NAME
    r.clock.at(3.0, lambda: write_stop_request(run_dir, request(r.clock.wall())))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)] and r.engine.kills == []
    (row,) = r.attempts()
    assert row["outcome"] == "stopped"
    assert "alice@login-1" in row["summary"] or any(
        "alice@login-1" in e["message"] for e in r.events() if e["kind"] == "stopped"
    )
    stop = next(e for e in r.events() if e["kind"] == "stop_requested")
    assert "`babysit stop` from alice@login-1 (loss diverged)" in stop["message"]
    assert r.state() == "stopped"
    assert not (run_dir / STOP_REQUEST).exists()  # carried out: not obeyed again next time
    done = json.loads((run_dir / (STOP_REQUEST + ".done")).read_text())
    assert done["user"] == "alice"


def test_a_second_request_kills_what_is_left_at_once(tmp_path: Path) -> None:
    stubborn = Script(steps(1, 100), ends_at=None, obeys=False)
    r = Run(tmp_path, [stubborn], **{"stop.grace_s": 600})
    run_dir = r.home / "runs" / NAME
    r.clock.at(3.0, lambda: write_stop_request(run_dir, request(r.clock.wall())))
    r.clock.at(6.0, lambda: write_stop_request(run_dir, request(r.clock.wall(), id="b")))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.kills and r.clock.monotonic() < 100
    assert "second signal" in r.said.text


def test_a_request_between_attempts_launches_nothing_more(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR)], **backoff(60))
    run_dir = r.home / "runs" / NAME
    r.clock.at(10.0, lambda: write_stop_request(run_dir, request(r.clock.wall())))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert len(r.engine.launches) == 1
    assert "stopped by `babysit stop` from alice@login-1" in r.said.text
