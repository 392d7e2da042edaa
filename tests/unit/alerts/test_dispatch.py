"""alerts/dispatch.py and outbox.py: off the supervisor's path, retried, redacted, routed."""

from __future__ import annotations

import time
from pathlib import Path

from babysit.alerts.dispatch import INBOX_MAX, Alerts
from babysit.alerts.message import Severity
from babysit.alerts.route import Router
from babysit.alerts.settings import AlertRule, Destination
from babysit.records import EventKind
from tests.conftest import wait_for
from tests.fakes import Said
from tests.unit.alerts.helpers import RUN, FakeSender, ended, event

NO_WAIT = (0.0,)


def alerts(
    *senders: tuple[Destination, FakeSender],
    workdir: Path | None = None,
    start: bool = True,
    **rule: float,
) -> tuple[Alerts, Said]:
    said = Said()
    a = Alerts(
        AlertRule(**{"burst_s": 0, "drain_s": 5, **rule}),
        Router(RUN, "node-a", "babysit logbook gpt"),
        list(senders),
        said,
        workdir,
        backoff_s=NO_WAIT,
    )
    if start:
        a.start()
    return a, said


def gave_up(message: str = "bug") -> list:  # type: ignore[type-arg]
    return [
        ended(1, 40, "user_code", transient=False),
        event(EventKind.GAVE_UP, message, exit_code=3),
    ]


def test_a_page_reaches_the_sender() -> None:
    s = FakeSender()
    a, _ = alerts((Destination("json://x"), s))
    for ev in gave_up():
        a.event(ev)
    wait_for(lambda: s.got, 5, "the page")
    a.close()
    assert [x.severity for x in s.got] == [Severity.PAGE]


def test_the_queue_never_blocks_the_supervisor() -> None:
    s = FakeSender()
    s.gate.clear()  # the destination hangs
    # The alerts thread not yet taking from the inbox (on a fast machine it keeps up with any
    # burst the test can make): past the inbox's bound, events are dropped, never waited for.
    a, said = alerts((Destination("json://x"), s), drain_s=0.2, start=False)
    began = time.monotonic()
    for i in range(INBOX_MAX + 10):
        a.event(event(EventKind.INCIDENT, f"spike {i}", 1, incident="loss_spike", step=i))
    a.progress(1, 5)
    took = time.monotonic() - began
    assert took < 2.0, took
    assert a.dropped == 11 and "alerts fall behind" in said.text
    a.start()  # the thread takes them on to the sender, which hangs
    wait_for(lambda: a.inbox.empty(), 10, "the inbox taken")
    began = time.monotonic()
    a.close()  # bounded by drain_s, even though the sender still hangs
    assert time.monotonic() - began < 3.0
    assert "could not be sent before babysit exited" in said.text
    s.gate.set()


def test_retries_then_success() -> None:
    s = FakeSender(fail=2)
    a, said = alerts((Destination("json://x"), s), retries=3)
    for ev in gave_up():
        a.event(ev)
    wait_for(lambda: s.got, 5, "the page after two failures")
    a.close()
    assert s.tries == 3 and "could not be sent" not in said.text


def test_a_destination_down_is_said_with_its_masked_name_only() -> None:
    s = FakeSender(name="slack://***", fail=99)
    a, said = alerts((Destination("slack://T000/B000/XXXXSECRET"), s), retries=2)
    for ev in gave_up():
        a.event(ev)
    wait_for(
        lambda: "could not be sent to slack://*** after 2 tries" in said.text, 5, "the failure said"
    )
    a.close()
    assert "XXXXSECRET" not in said.text and s.tries == 2


def test_a_down_destination_does_not_hold_up_another() -> None:
    down, up = FakeSender("json://down"), FakeSender("json://up")
    down.gate.clear()
    a, _ = alerts((Destination("json://down"), down), (Destination("json://up"), up), drain_s=0.2)
    for ev in gave_up():
        a.event(ev)
    wait_for(lambda: up.got, 5, "the page at the destination that is up")
    a.close()
    down.gate.set()


def test_min_severity_routes_pages_only() -> None:
    pager, chat = FakeSender("pd"), FakeSender("chat")
    a, _ = alerts((Destination("pd://", Severity.PAGE), pager), (Destination("c://"), chat))
    a.event(event(EventKind.INCIDENT, "loss spike", 1, incident="loss_spike", step=3))
    for ev in gave_up():
        a.event(ev)
    wait_for(lambda: len(chat.got) == 2 and pager.got, 5, "both")
    a.close()
    assert [x.kind for x in pager.got] == ["gave_up"]
    assert [x.kind for x in chat.got] == ["incident", "gave_up"]


def test_secrets_are_redacted_from_every_body() -> None:
    s = FakeSender()
    a, _ = alerts((Destination("json://x"), s))
    secret = "hf_abcdefghijklmnopqrstuvwxyz012345"
    for ev in gave_up(f"401 Unauthorized with HF_TOKEN={secret}"):
        a.event(ev)
    wait_for(lambda: s.got, 5, "the page")
    a.close()
    assert secret not in s.got[0].body() and secret not in s.got[0].title()
    assert "HF_TOKEN=***" in s.got[0].body()


def test_recovered_follows_a_warn_once_progress_resumes() -> None:
    s = FakeSender()
    a, _ = alerts((Destination("json://x"), s))
    a.event(ended(1, 40))
    a.event(event(EventKind.RESTART_SCHEDULED, "restart in 1s"))
    a.progress(1, 40)
    a.event(event(EventKind.ATTEMPT_STARTED, "attempt 2 started", 2))
    a.progress(2, 41)
    wait_for(lambda: len(s.got) == 2, 5, "the warn and the recovered")
    a.close()
    assert [x.kind for x in s.got] == ["restart", "recovered"]


def test_digest_is_sent_at_close() -> None:
    s = FakeSender()
    a, _ = alerts((Destination("json://x"), s), burst_s=3600)
    for i in range(64):
        a.event(event(EventKind.BANNED, f"banned node gpu-{i}", 1, host=f"gpu-{i}"))
    a.close()
    assert [x.kind for x in s.got] == ["banned", "digest"]
    assert s.got[1].count == 63


def test_loss_chart_attached_where_the_destination_takes_files(tmp_path: Path) -> None:
    s = FakeSender(attachments=True)
    a, _ = alerts((Destination("json://x"), s), workdir=tmp_path)
    for step in range(0, 50):
        a.metrics(step, {"loss": 2.0 - step / 100, "lr": 1e-4})
    a.event(event(EventKind.INCIDENT, "NaN loss", 1, incident="nonfinite", step=45))
    wait_for(lambda: s.got, 5, "the incident")
    a.close()
    (chart,) = s.got[0].attachments
    assert chart.endswith(".svg") and "<polyline" in Path(chart).read_text()
