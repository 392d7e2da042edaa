"""alerts/route.py: which events alert, how loudly, and what the message says."""

from __future__ import annotations

from babysit.alerts.message import Severity
from babysit.alerts.route import Router
from babysit.records import EventKind
from tests.unit.alerts.helpers import RUN, ended, event


def router(**kw: bool) -> Router:
    return Router(RUN, "node-a", "babysit logbook gpt", **kw)


def test_gave_up_pages_with_verdict_culprit_action_and_command() -> None:
    r = router()
    assert r.route(ended(2, 40, "user_code", transient=False, fingerprint="fp-bug")) is None
    alert = r.route(
        event(
            EventKind.GAVE_UP,
            "KeyError in collate",
            exit_code=3,
            advice="a human must fix this before the next try",
        )
    )
    assert alert is not None
    assert alert.severity == Severity.PAGE and alert.kind == "gave_up"
    assert alert.attempt == 2 and alert.step == 40
    body = alert.body()
    assert "run: gpt on host node-a, attempt 2 (step 40)" in body
    assert "what happened: attempt 2 failed (exit code 1) at step 40" in body
    assert "verdict: user_code (not transient)" in body
    assert "culprit: rank 3 on gpu-17" in body
    assert "gave up (exit code 3)" in body and "a human must fix this" in body
    assert "more: babysit logbook gpt" in body
    assert alert.title().startswith("[PAGE] gpt on node-a: babysit gave up")


def test_restart_and_rollback_warn() -> None:
    r = router()
    r.route(ended())
    restart = r.route(event(EventKind.RESTART_SCHEDULED, "transient failure: restart in 10s"))
    rollback = r.route(event(EventKind.ROLLBACK, "NaN at step 40: back to step 30"))
    assert restart is not None and restart.severity == Severity.WARN
    assert restart.kind == "restart" and "restarts it: transient" in restart.body()
    assert rollback is not None and rollback.severity == Severity.WARN
    assert rollback.kind == "rollback"


def test_ban_and_failed_preflight_warn_passed_preflight_is_quiet() -> None:
    r = router()
    ban = r.route(event(EventKind.BANNED, "banned node gpu-17", 2, host="gpu-17"))
    assert ban is not None and ban.severity == Severity.WARN and "gpu-17" in ban.headline
    assert r.route(event(EventKind.PREFLIGHT, "passed", 2, host="a", passed=True)) is None
    bad = r.route(event(EventKind.PREFLIGHT, "FAILED", 2, host="a", passed=False))
    assert bad is not None and bad.severity == Severity.WARN


def test_incidents_are_info_but_a_hang_nobody_restarts_pages() -> None:
    spike = router().route(
        event(EventKind.INCIDENT, "loss spike", 1, incident="loss_spike", step=7, metric="loss")
    )
    assert spike is not None and spike.severity == Severity.INFO and spike.step == 7
    hang = event(EventKind.INCIDENT, "no progress for 600s", 1, incident="hang", step=9)
    hung = router().route(hang)
    assert hung is not None and hung.severity == Severity.INFO
    alone = router(hang_pages=True).route(hang)
    assert alone is not None and alone.severity == Severity.PAGE and alone.kind == "hang"


def test_logbook_only_events_do_not_alert() -> None:
    r = router()
    for kind in (
        EventKind.RUN_STARTED,
        EventKind.ATTEMPT_STARTED,
        EventKind.NOTE,
        EventKind.CHECKPOINT,
        EventKind.HANG_EVIDENCE,
        EventKind.ATTEMPT_ENDED,
    ):
        assert r.route(event(kind, "x", 1)) is None
    done = r.route(event(EventKind.SUCCEEDED, "the command exited 0"))
    assert done is not None and done.severity == Severity.INFO


def test_same_failure_in_other_attempts_has_one_fingerprint() -> None:
    r = router()
    r.route(ended(1, 10, fingerprint=None))
    a = r.route(event(EventKind.RESTART_SCHEDULED, "restart 1"))
    r.route(ended(2, 20, fingerprint=None))
    b = r.route(event(EventKind.RESTART_SCHEDULED, "restart 2"))
    assert a is not None and b is not None
    assert a.fingerprint == b.fingerprint and a.group == b.group


def test_stacks_are_attached_to_the_decision(tmp_path: object) -> None:
    r = router()
    r.route(event(EventKind.STACKS, "stacks", 1, file="/x/stacks.txt"))
    r.route(ended(1))
    alert = r.route(event(EventKind.RESTART_SCHEDULED, "restart"))
    assert alert is not None and alert.attachments == ("/x/stacks.txt",)


def test_under_watch_a_triaged_failure_pages_and_an_incident_warns() -> None:
    r = Router(RUN, "gpu-3", "babysit logbook train", watching=True)
    failed = r.route(
        event(EventKind.NOTE, "triage: cuda_oom: A GPU ran out of memory", fingerprint="abc")
    )
    assert failed is not None and failed.severity == Severity.PAGE
    assert "restart it yourself" in failed.action
    spike = r.route(event(EventKind.INCIDENT, "loss spiked", incident="loss_spike", step=7))
    assert spike is not None and spike.severity == Severity.WARN and spike.step == 7
    assert r.route(event(EventKind.NOTE, "a human's note")) is None
    assert r.route(event(EventKind.RUN_STARTED, "watching")) is None
