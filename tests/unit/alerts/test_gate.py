"""alerts/gate.py: dedupe with a cooldown, burst digests, escalation, `recovered`."""

from __future__ import annotations

import dataclasses

from babysit.alerts.gate import Gate
from babysit.alerts.message import Alert, Severity
from babysit.alerts.settings import AlertRule


def alert(
    fp: str = "f1",
    severity: Severity = Severity.WARN,
    kind: str = "restart",
    attempt: int | None = 1,
    step: int | None = 40,
) -> Alert:
    return Alert(
        severity,
        kind,
        "gpt",
        "node-a",
        f"{kind} {fp}",
        what=f"what {fp}",
        fingerprint=fp,
        group=f"gpt|{severity.value}|{kind}",
        attempt=attempt,
        step=step,
    )


def gate(**kw: float) -> Gate:
    return Gate(AlertRule(**{"cooldown_s": 600, "burst_s": 60, "escalate_after": 0, **kw}))


def test_first_goes_out_a_repeat_within_the_cooldown_is_folded() -> None:
    g = gate(burst_s=0)
    assert g.offer(alert(), 0.0) == [alert()]
    assert g.offer(alert(), 10.0) == []
    assert g.offer(alert(), 599.0) == []
    again = g.offer(alert(), 700.0)
    assert len(again) == 1 and again[0].count == 3  # itself and the two folded
    assert "2 more like it since the last alert" in again[0].body()


def test_a_louder_one_passes_the_cooldown() -> None:
    g = gate(burst_s=0)
    g.offer(alert(severity=Severity.INFO, kind="x"), 0.0)
    loud = alert(severity=Severity.PAGE, kind="x")
    assert g.offer(loud, 1.0) == [loud]


def test_a_burst_of_one_thousand_is_two_messages() -> None:
    g = gate()
    out = []
    for i in range(1000):  # 1,000 different incidents of one kind within a second
        out += g.offer(alert(fp=f"rank{i}", severity=Severity.INFO, kind="incident"), i / 1000)
    assert len(out) == 1
    assert g.tick(30.0) == []
    assert g.next_tick(30.0) == 30.0
    digest = g.tick(61.0)
    assert len(digest) == 1 and digest[0].kind == "digest" and digest[0].count == 999
    assert "999 more like the last alert" in digest[0].headline
    assert "rank1" in digest[0].what  # samples quoted
    assert g.tick(200.0) == []


def test_bursts_of_different_kinds_are_apart() -> None:
    g = gate()
    a = g.offer(alert(kind="restart"), 0.0)
    b = g.offer(alert(fp="f2", kind="banned"), 0.1)
    assert len(a) == 1 and len(b) == 1


def test_escalation_the_third_time_is_a_page() -> None:
    g = gate(escalate_after=3, burst_s=0)
    assert g.offer(alert(), 0.0)[0].severity == Severity.WARN
    assert g.offer(alert(), 1.0) == []
    third = g.offer(alert(), 2.0)
    assert len(third) == 1 and third[0].severity == Severity.PAGE and third[0].escalated
    assert "escalated: the same incident 3 times" in third[0].body()
    assert g.offer(alert(), 3.0) == []  # the page itself is deduplicated


def test_escalation_window_forgets_old_occurrences() -> None:
    g = gate(escalate_after=2, escalate_window_s=100, cooldown_s=0, burst_s=0)
    g.offer(alert(), 0.0)
    assert g.offer(alert(), 500.0)[0].severity == Severity.WARN


def test_recovered_after_progress_of_a_later_attempt_once() -> None:
    g = gate()
    g.offer(alert(attempt=1, step=40), 0.0)
    assert g.progress(1, 40, 1.0) == []  # the failed attempt's own last step
    rec = g.progress(2, 41, 2.0)
    assert len(rec) == 1 and rec[0].kind == "recovered" and rec[0].severity == Severity.WARN
    assert rec[0].title().startswith("[RECOVERED]")
    assert "step 41" in rec[0].headline
    assert g.progress(2, 50, 3.0) == []


def test_recovered_within_the_same_attempt_past_the_step() -> None:
    g = gate()
    g.offer(alert(kind="hang", severity=Severity.PAGE, attempt=3, step=9), 0.0)
    assert g.progress(3, 9, 1.0) == []
    assert len(g.progress(3, 10, 2.0)) == 1


def test_no_recovered_after_info_only() -> None:
    g = gate()
    g.offer(alert(severity=Severity.INFO, kind="incident"), 0.0)
    assert g.progress(5, 100, 1.0) == []


def test_folded_alert_does_not_ask_for_a_second_recovered() -> None:
    g = gate(burst_s=0)
    g.offer(alert(attempt=1), 0.0)
    assert len(g.progress(2, 1, 1.0)) == 1
    g.offer(dataclasses.replace(alert(), attempt=2), 2.0)  # folded by the cooldown
    assert g.progress(3, 1, 3.0) == []
