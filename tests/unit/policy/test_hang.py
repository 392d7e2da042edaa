"""policy.hang: wait on a hang, or kill the attempt, from the stall's length and the rule."""

from __future__ import annotations

from babysit.policy.hang import HangAction, on_hang
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
