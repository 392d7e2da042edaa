"""The run loop (supervise/run.py) in-process on fakes: attempts one after another, each decision
carried out, the operator's stop, re-attach after babysit was killed. Milliseconds each.

The behaviours of tests/e2e/test_run.py, test_recovery.py and test_resilience.py, without a
process; the attempt-level ones (NaN, hang, terminate) are in test_attempt.py.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest

from babysit.engines import LaunchSpec
from babysit.engines.process import Handle
from babysit.records import ExitCode
from babysit.store import Store
from tests.fakes import FakeEngine, Script, steps
from tests.unit.supervise.harness import NAME, NETWORK_ERROR, Run, backoff


def test_a_run_that_succeeds(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 5), ends_at=1.0)])
    assert r.run() == ExitCode.OK, r.said.text
    (row,) = r.attempts()
    assert row["outcome"] == "succeeded" and row["exit_code"] == 0
    assert (row["first_step"], row["last_step"]) == (1, 5)
    assert row["launcher_pid"] == r.engine.attempts[0].handle.launcher_pid
    assert r.engine.signals == [] and len(r.engine.launches) == 1
    spec = r.engine.launches[0]
    assert spec.env["BABYSIT_ATTEMPT"] == "1" and "BABYSIT_RESUME_FROM" not in spec.env
    assert spec.attempt_dir == (r.home / "runs" / NAME / "attempt-0001").resolve()
    assert r.kinds() == ["run_started", "attempt_started", "attempt_ended", "succeeded"]
    assert r.state() == "succeeded"


def test_a_crash_then_success_restarts_after_the_backoff(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR), Script(steps(4, 6), ends_at=1)])
    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert (first["outcome"], first["exit_code"], first["category"]) == ("failed", 1, "network")
    # a peer's reset connection alone: restart or not unclear (null), restarted within the budget
    assert first["transient"] is None and NETWORK_ERROR in first["summary"]
    assert second["outcome"] == "succeeded"
    (scheduled,) = [e for e in r.events() if e["kind"] == "restart_scheduled"]
    assert scheduled["data"]["delay_s"] == pytest.approx(1.0)  # backoff_s, jitter centred
    # The backoff was slept on the fake clock: the relaunch came 1 s after the end (and no
    # later than one poll after that).
    a1, a2 = r.engine.attempts
    assert a1.ended_at is not None
    gap = a2.launched_at - a1.ended_at
    assert 1.0 - 1e-9 <= gap <= 1.0 + r.cfg.run.poll_s + 1e-9
    assert r.engine.launches[1].env["BABYSIT_ATTEMPT"] == "2"


def test_an_attempt_killed_by_a_signal_of_its_own_is_restarted(tmp_path: Path) -> None:
    oom_killed = Script(steps(1, 3), ends_at=0.5, killed_by=signal.SIGKILL)  # the OOM killer
    r = Run(tmp_path, [oom_killed, Script(steps(4, 6), ends_at=1)])
    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert (first["outcome"], first["signal"], first["exit_code"]) == ("killed", 9, None)
    assert "killed by SIGKILL" in first["summary"] and second["outcome"] == "succeeded"
    assert r.engine.signals == []  # nobody but the kernel touched it


def test_gives_up_when_the_restart_budget_is_spent(tmp_path: Path) -> None:
    # The same steps each time: no progress, so each failure counts against max_restarts.
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR)], **{"restart.max_restarts": 2})
    assert r.run() == ExitCode.BUDGET_EXHAUSTED, r.said.text
    assert [a["outcome"] for a in r.attempts()] == ["failed"] * 3
    assert len(r.engine.launches) == 3
    assert r.kinds().count("restart_scheduled") == 2 and r.kinds()[-1] == "gave_up"
    assert "restart budget" in r.said.text and r.state() == "failed"


@pytest.mark.parametrize(
    "error",
    [
        "SyntaxError: invalid syntax",
        "ModuleNotFoundError: No module named 'babysit_no_such_module_xyz'",
    ],
)
def test_a_user_code_error_does_not_loop(tmp_path: Path, error: str) -> None:
    r = Run(tmp_path, [Script.crash([], error, at=0.3)])
    assert r.run() == ExitCode.NEEDS_HUMAN, r.said.text
    (row,) = r.attempts()
    assert (row["category"], row["transient"]) == ("user_code", 0)
    assert len(r.engine.launches) == 1
    assert "a human must fix this" in r.said.text and error in r.said.text


def test_the_same_error_twice_without_progress_stops(tmp_path: Path) -> None:
    boom = "RuntimeError: the widget refused frame 7"  # an error no rule knows
    r = Run(tmp_path, [Script.crash([(0.1, "step 5")], boom)])
    assert r.run() == ExitCode.NEEDS_HUMAN, r.said.text
    assert len(r.attempts()) == 2 and "same error as attempt 1" in r.said.text


def test_an_operator_stop_is_passed_to_the_attempt(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 100), ends_at=None)])
    r.clock.at(3.0, lambda: r.sup.request_stop(signal.SIGTERM))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)] and r.engine.kills == []
    (row,) = r.attempts()
    assert row["outcome"] == "stopped" and row["signal"] == signal.SIGTERM
    assert r.state() == "stopped" and "stop_requested" in r.kinds()


def test_a_stop_during_the_backoff_launches_nothing_more(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR)], **backoff(60))
    r.clock.at(10.0, lambda: r.sup.request_stop(signal.SIGINT))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert len(r.engine.launches) == 1 and r.engine.signals == []
    assert "stopped by SIGINT between attempts" in r.said.text and r.state() == "stopped"


def test_reattaches_to_the_attempt_a_killed_babysit_left_running(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 20, every_s=1.0), ends_at=20)])
    r.killed_at(5.0)
    assert [a["outcome"] for a in r.attempts()] == ["running"]
    assert r.engine.attempts[0].alive

    assert r.run() == ExitCode.OK, r.said.text
    assert len(r.engine.launches) == 1  # followed, not launched again
    (row,) = r.attempts()
    assert (row["outcome"], row["first_step"], row["last_step"]) == ("succeeded", 1, 20)
    assert "reattached" in r.kinds()
    assert "re-attached to attempt 1 (launcher pid 5000000), still running" in r.said.text


def test_an_attempt_that_ended_while_babysit_was_away_is_judged(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 5, every_s=1.0), NETWORK_ERROR), Script(ends_at=1)])
    r.killed_at(2.0)
    r.clock.advance(60)  # nobody watching: attempt 1 crashes meanwhile
    assert not r.engine.attempts[0].alive

    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert (first["outcome"], first["category"], first["last_step"]) == ("failed", "network", 5)
    assert second["outcome"] == "succeeded"
    assert "attempt 1 ended while babysit was away" in r.said.text


def test_an_attempt_stopped_from_outside_while_babysit_was_away_is_not_a_success(
    tmp_path: Path,
) -> None:
    """A scheduler's SIGTERM, the script saves and exits 0: started again, uncharged."""
    polite = Script(steps(1, 100, every_s=1.0), ends_at=None, exit_on_stop=0)
    r = Run(tmp_path, [polite, Script(ends_at=1)])
    r.killed_at(3.0)
    r.engine.signal(r.engine.attempts[0].handle, signal.SIGTERM)  # e.g. scancel
    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert first["outcome"] == "stopped" and first["exit_code"] == 0
    assert "stopped by SIGTERM before it finished" in first["summary"]
    assert second["outcome"] == "succeeded"


def test_the_budget_survives_babysit_being_killed(tmp_path: Path) -> None:
    def attempt(n: int) -> Script:  # new steps every time: only the category budget counts
        return Script.crash(steps(10 * n, 10 * n + 2, every_s=1.0), NETWORK_ERROR)

    r = Run(tmp_path, [attempt(1), attempt(2), attempt(3), attempt(4)], **{"budget.network": 2})
    first_end = 3.1 + 1.0  # attempt 1's crash, plus the backoff
    r.killed_at(first_end + 1.5)  # during attempt 2
    assert [a["outcome"] for a in r.attempts()] == ["failed", "running"]
    assert r.run() == ExitCode.BUDGET_EXHAUSTED, r.said.text
    assert [a["number"] for a in r.attempts()] == [1, 2, 3]  # attempt 1 counted from the store
    spent = "3 attempts ended with network within 24h (budget.network = 2 restarts)"
    assert spent in r.said.text


def test_an_intent_without_a_launch_is_launched_not_counted_as_lost(tmp_path: Path) -> None:
    """babysit died between writing the attempt's row and launching it: the next babysit
    launches that attempt (same number), and no phantom failure counts against the budget."""

    class DiesAtLaunch(FakeEngine):
        def launch(self, spec: LaunchSpec) -> Handle:
            raise BabysitKilledAtLaunch

    r = Run(tmp_path, [Script(ends_at=1)])
    engine, r.engine = r.engine, DiesAtLaunch(r.clock)
    r.sup = r.supervisor()
    with pytest.raises(BabysitKilledAtLaunch):
        r.sup.run()
    r.engine = engine
    r.sup = r.supervisor()
    assert r.run() == ExitCode.OK, r.said.text
    (only,) = r.attempts()
    assert (only["number"], only["outcome"]) == (1, "succeeded")
    assert len(engine.launches) == 1 and engine.launches[0].env["BABYSIT_ATTEMPT"] == "1"
    assert "attempt 1 was recorded but never launched" in r.said.text


class BabysitKilledAtLaunch(BaseException):
    pass


def test_an_attempt_without_a_row_is_adopted_not_doubled(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 10, every_s=1.0), ends_at=10)])
    r.killed_at(3.0)
    with sqlite3.connect(r.home / "babysit.db") as db:  # as if babysit died before the row
        db.execute("DELETE FROM attempts")
    assert r.run() == ExitCode.OK, r.said.text
    assert len(r.engine.launches) == 1 and "adopting it" in r.said.text
    (row,) = r.attempts()
    assert row["outcome"] == "succeeded" and row["last_step"] == 10


def test_a_store_that_refuses_writes_keeps_the_budget(tmp_path: Path) -> None:
    (tmp_path / ".babysit").mkdir()
    (tmp_path / ".babysit" / "events.jsonl").mkdir()  # every append to the mirror fails
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR)], **{"restart.max_restarts": 2})
    assert r.run() == ExitCode.BUDGET_EXHAUSTED, r.said.text
    assert len(r.engine.launches) == 3
    assert "Supervision goes on" in r.said.text and "could not be written" in r.said.text


def test_a_new_attempt_records_no_metrics_sample_of_the_attempt_before(tmp_path: Path) -> None:
    # Its first sample is its own first step: not the last step of the attempt before, stamped
    # with the new attempt's time (the goodput report read a step going backwards from it).
    r = Run(
        tmp_path,
        [Script.crash(steps(1, 3), NETWORK_ERROR), Script(steps(4, 6, start_s=2.0), ends_at=3.0)],
    )
    assert r.run() == ExitCode.OK, r.said.text
    with Store.open(r.home, create=False) as store:
        samples = store.progress_samples(NAME)
    second = [step for attempt, _, step in samples if attempt == 2]
    assert second and min(second) >= 4, samples
