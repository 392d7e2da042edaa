"""A babysit coming back to what an earlier one stored (supervise/reattach.py), in-process on
fakes: the rest of a backoff it was killed during, an attempt it recorded but never launched, and
a start that fails without leaving a run `starting` under no babysit."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from babysit.engines import LaunchSpec
from babysit.engines.process import Handle
from babysit.errors import CommandNotFound
from babysit.records import ExitCode
from babysit.store import Store
from babysit.supervise.reattach import unlaunched
from babysit.supervise.run import Supervisor
from tests.fakes import FakeEngine, Script, steps
from tests.unit.supervise.harness import NAME, NETWORK_ERROR, Run, backoff


def crash_then_success() -> list[Script]:
    return [Script.crash(steps(1, 3), NETWORK_ERROR), Script(steps(4, 6), ends_at=1)]


# -- killed during the backoff -------------------------------------------------------------------


def test_killed_during_the_backoff_the_relaunch_comes_when_it_was_due(tmp_path: Path) -> None:
    r = Run(tmp_path, crash_then_success(), **backoff(60))
    r.killed_at(10.0)  # attempt 1 crashed at ~0.4 s: 50 s of the backoff were still to go
    assert len(r.engine.launches) == 1
    assert r.run() == ExitCode.OK, r.said.text
    a1, a2 = r.engine.attempts
    assert a1.ended_at is not None
    assert a2.launched_at - a1.ended_at == pytest.approx(60.0, abs=r.cfg.run.poll_s + 1e-6)
    assert "babysit was away during the backoff before attempt 2" in r.said.text
    assert "relaunching it when it was due, in 50.4s (decided before: restarting in" in r.said.text


def test_a_backoff_already_over_relaunches_at_once(tmp_path: Path) -> None:
    r = Run(tmp_path, crash_then_success(), **backoff(5))
    r.killed_at(3.0)
    r.clock.advance(100)  # babysit came back long after the relaunch was due
    assert r.run() == ExitCode.OK, r.said.text
    a2 = r.engine.attempts[1]
    assert a2.launched_at == pytest.approx(103.0)
    assert "away during the backoff" not in r.said.text


def test_a_stop_during_the_stored_backoff_launches_nothing(tmp_path: Path) -> None:
    r = Run(tmp_path, crash_then_success(), **backoff(60))
    r.killed_at(10.0)
    r.clock.at(20.0, lambda: r.sup.request_stop(signal.SIGTERM))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert len(r.engine.launches) == 1 and r.state() == "stopped"


def test_a_run_started_again_after_it_ended_does_not_wait(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1)])
    assert r.run() == ExitCode.OK
    r.sup = r.supervisor()
    assert r.run() == ExitCode.OK
    assert r.engine.attempts[1].launched_at == pytest.approx(r.engine.attempts[0].ended_at or 0)


# -- recorded, never launched --------------------------------------------------------------------


class BabysitKilledAtLaunch(BaseException):
    pass


class DiesAtLaunch(FakeEngine):
    def launch(self, spec: LaunchSpec) -> Handle:
        raise BabysitKilledAtLaunch


def test_a_phantom_attempt_does_not_spend_the_budget(tmp_path: Path) -> None:
    """max_restarts=1: attempt 1 failed, babysit died between recording attempt 2 and launching
    it. Counted as a failure, the phantom spent the budget and attempt 2 never ran."""
    r = Run(tmp_path, crash_then_success(), **{"restart.max_restarts": 1})
    engine = r.engine
    r.clock.at(1.0, lambda: setattr(r.sup.ctx, "engine", DiesAtLaunch(r.clock)))
    with pytest.raises(BabysitKilledAtLaunch):
        r.sup.run()
    assert [a["outcome"] for a in r.attempts()] == ["failed", "running"]
    r.sup = r.supervisor()  # the same fake engine: attempt 1 is its first
    assert r.sup.ctx.engine is engine
    assert r.run() == ExitCode.OK, r.said.text
    assert [(a["number"], a["outcome"]) for a in r.attempts()] == [(1, "failed"), (2, "succeeded")]
    assert len(engine.launches) == 2 and engine.launches[1].env["BABYSIT_ATTEMPT"] == "2"
    assert "attempt 2 was recorded but never launched" in r.said.text


def test_unlaunched_tells_a_phantom_from_a_launched_attempt(tmp_path: Path) -> None:
    engine = FakeEngine(r_clock := Run(tmp_path, []).clock)
    assert r_clock is engine.clock
    attempt_dir = tmp_path / "attempt-0003"
    row = {
        "number": 3,
        "outcome": "running",
        "launcher_pid": None,
        "host": engine.host,
        "log_dir": str(attempt_dir),
        "token": "t",
    }
    assert unlaunched([row], engine) == 3
    assert unlaunched([{**row, "launcher_pid": 77}], engine) is None  # launched, then lost
    assert unlaunched([{**row, "outcome": "failed"}], engine) is None
    assert unlaunched([{**row, "host": "gpu-9"}], engine) is None  # not this host's to judge
    attempt_dir.mkdir()
    (attempt_dir / "launcher.json").write_text("{}")  # the launcher started
    assert unlaunched([row], engine) is None
    assert unlaunched([], engine) is None


# -- a start that fails --------------------------------------------------------------------------


def supervisor(r: Run, command: list[str]) -> Supervisor:
    sup = r.supervisor()
    sup.ctx.command = command
    return sup


def test_a_failed_start_is_marked_failed_not_left_starting(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(ends_at=1)])
    with pytest.raises(CommandNotFound, match="pythn"):
        supervisor(r, ["pythn", "train.py"]).run()
    with Store.open(r.home, create=False) as store:
        run = store.run(NAME)
        events = store.events(NAME)
    assert (run["state"], run["exit_code"], run["supervisor_pid"]) == ("failed", 2, None)
    assert run["reason"].startswith("failed to start: command not found: 'pythn'")
    assert events[-1]["kind"] == "gave_up" and "failed to start" in events[-1]["message"]
    assert r.engine.launches == []


def test_a_failed_start_on_an_unfinished_run_gives_its_state_back(tmp_path: Path) -> None:
    r = Run(tmp_path, crash_then_success(), **backoff(60))
    r.killed_at(10.0)  # in the backoff
    assert r.state() == "backoff"
    with pytest.raises(CommandNotFound):
        supervisor(r, ["pythn", "train.py"]).run()
    assert r.state() == "backoff"  # `babysit run` again (right environment) re-attaches
    assert r.kinds()[-1] == "note"
    assert r.run() == ExitCode.OK, r.said.text
