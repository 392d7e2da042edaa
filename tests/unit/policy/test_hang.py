"""policy.hang: wait on a hang, or kill the attempt, from the stall's length and the rule."""

from __future__ import annotations

from babysit.looks import Evidence, HangVerdict
from babysit.policy.hang import HangAction, backoff_left, on_hang
from babysit.records import DecisionKind, Incident, IncidentKind


def hang(flagged_at: float, stalled_for: float) -> Incident:
    return Incident(IncidentKind.HANG, "no progress", flagged_at, 10, None, stalled_for)


def test_waits_until_the_stall_lasts_kill_after_s_then_kills() -> None:
    rule = HangAction(kill_after_s=300.0)
    inc = hang(flagged_at=1000.0, stalled_for=20.0)  # progress stopped at t=980
    assert on_hang(inc, 1279.0, rule).kind == DecisionKind.KEEP_WATCHING
    d = on_hang(inc, 1280.0, rule)
    assert d.kind == DecisionKind.RESTART and "hang.kill_after_s = 300" in d.reason


def test_zero_kills_at_detection() -> None:
    assert on_hang(hang(50.0, 5.0), 50.0, HangAction(kill_after_s=0)).kind == DecisionKind.RESTART


def test_alert_never_kills() -> None:
    d = on_hang(hang(50.0, 5.0), 1e9, HangAction(action="alert"))
    assert d.kind == DecisionKind.KEEP_WATCHING and "alert" in d.reason


def evidence(verdict: HangVerdict, reason: str = "it said so") -> Evidence:
    return Evidence(verdict, "sign", reason, 5.0)


def test_stuck_evidence_kills_at_once() -> None:
    d = on_hang(hang(50.0, 5.0), 56.0, HangAction(), evidence(HangVerdict.STUCK, "rank 0 stopped"))
    assert d.kind == DecisionKind.RESTART and "rank 0 stopped" in d.reason


def test_working_evidence_waits_past_kill_after_s_up_to_the_busy_limit() -> None:
    rule = HangAction(kill_after_s=300.0, busy_limit_s=1800.0)
    busy = evidence(HangVerdict.WORKING, "a file grew")
    inc = hang(flagged_at=1000.0, stalled_for=20.0)  # progress stopped at t=980
    assert on_hang(inc, 980.0 + 1000, rule, busy).kind == DecisionKind.KEEP_WATCHING
    d = on_hang(inc, 980.0 + 1800, rule, busy)
    assert d.kind == DecisionKind.RESTART and "hang.busy_limit_s = 1800" in d.reason


def test_unsure_evidence_leaves_it_to_kill_after_s() -> None:
    rule = HangAction(kill_after_s=300.0)
    unsure = evidence(HangVerdict.UNSURE, "no evidence either way")
    inc = hang(flagged_at=1000.0, stalled_for=20.0)
    assert on_hang(inc, 1279.0, rule, unsure).kind == DecisionKind.KEEP_WATCHING
    d = on_hang(inc, 1280.0, rule, unsure)
    assert d.kind == DecisionKind.RESTART and "no evidence either way" in d.reason


def test_alert_never_kills_even_when_stuck() -> None:
    d = on_hang(hang(50.0, 5.0), 60.0, HangAction(action="alert"), evidence(HangVerdict.STUCK))
    assert d.kind == DecisionKind.KEEP_WATCHING


def test_the_time_spent_hung_counts_toward_the_backoff() -> None:
    assert backoff_left(10.0, 8.0) == 2.0
    assert backoff_left(10.0, 30.0) == 0.0
    assert backoff_left(10.0, -1.0) == 10.0
