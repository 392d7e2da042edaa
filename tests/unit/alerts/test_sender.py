"""alerts/sender.py, settings.py, hook.py, deadman.py, attach.py: the seams and the small parts."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from babysit.alerts.attach import loss_svg
from babysit.alerts.deadman import Deadman
from babysit.alerts.hook import HookSender
from babysit.alerts.message import Alert, Severity
from babysit.alerts.sender import AppriseSender, SendFailed, check_urls, mask_url
from babysit.alerts.settings import Destination, destinations
from babysit.errors import ConfigError
from tests.conftest import wait_for
from tests.fakes import Said

ALERT = Alert(
    Severity.PAGE,
    "gave_up",
    "gpt",
    "node-a",
    "babysit gave up",
    what="a bug",
    fingerprint="f",
    group="g",
    ts=1.0,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("json://127.0.0.1:8080/hook?token=abc", "json://127.0.0.1"),
        ("ntfy://ntfy.sh/secret-topic", "ntfy://ntfy.sh"),
        ("mailto://user:hunter2@gmail.com", "mailto://gmail.com"),
        ("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ", "slack://***"),
        ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV", "discord://***"),
        ("tgram://123456789:AAHfoo/12345", "tgram://***"),
        ("pagerduty://integrationkey@apikey", "pagerduty://***"),
        ("jsons://localhost/x", "jsons://localhost"),
        ("json://[::1]:9/x", "json://[::1]"),
    ],
)
def test_mask_url_keeps_scheme_and_host_only(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_check_urls_refuses_what_apprise_refuses_naming_it_masked() -> None:
    check_urls(["json://127.0.0.1:9/", "ntfy://ntfy.sh/t"])
    with pytest.raises(ConfigError, match=r"notify URL #2 \(bogus://\*\*\*\) is not a URL apprise"):
        check_urls(["json://127.0.0.1:9/", "bogus://secret-token"])
    with pytest.raises(ConfigError, match="json://"):
        check_urls(["json://"])


def test_apprise_sender_to_a_closed_port_fails_fast() -> None:
    sender = AppriseSender("json://127.0.0.1:9/")
    assert sender.name == "json://127.0.0.1" and sender.attachments
    began = time.monotonic()
    with pytest.raises(SendFailed, match="did not accept it"):
        sender.send(ALERT)
    assert time.monotonic() - began < 5


def test_destinations_from_strings_and_tables() -> None:
    got = destinations("alerts.notify", ["json://a/", {"url": "pd://x", "min_severity": "page"}])
    assert got == (Destination("json://a/"), Destination("pd://x", Severity.PAGE))
    assert destinations("alerts.notify", "json://a/") == (Destination("json://a/"),)
    assert Destination("x://", Severity.WARN).takes(Severity.PAGE)
    assert not Destination("x://", Severity.WARN).takes(Severity.INFO)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["not a url"], r"alerts.notify\[0\] must be an apprise URL"),
        ([{"url": "x://", "min_severity": "loud"}], r"min_severity must be one of page, warn"),
        ([{"urll": "x://"}], r"unknown key 'urll' \(did you mean 'url'\?\)"),
        ([{"min_severity": "page"}], "a destination needs a url"),
        (3, "must be a list of URLs"),
        ([3], r"alerts.notify\[0\] must be a URL or a table"),
    ],
)
def test_destinations_refused_with_a_clear_message(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        destinations("alerts.notify", value)


def test_hook_gets_the_alert_as_json_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.json"
    hook = HookSender(f"cat > {out}", timeout_s=10)
    hook.send(ALERT)
    text = out.read_text()
    assert '"severity": "page"' in text and '"kind": "gave_up"' in text


def test_hook_that_fails_or_hangs_is_said_clearly() -> None:
    with pytest.raises(SendFailed, match="it exited 3: nope"):
        HookSender("echo nope >&2; exit 3", timeout_s=10).send(ALERT)
    began = time.monotonic()
    with pytest.raises(SendFailed, match=r"did not finish within on_event_timeout_s \(0.3s\)"):
        HookSender(f"{sys.executable} -c 'import time; time.sleep(60)'", 0.3).send(ALERT)
    assert time.monotonic() - began < 5


def test_deadman_pings_and_says_a_failure_once_masked() -> None:
    said, calls = Said(), []

    def get(url: str) -> None:
        calls.append(url)
        if len(calls) in (2, 3):
            raise OSError("down")

    d = Deadman("https://hc-ping.com/secret-uuid", 0.01, said, get)
    d.start()
    wait_for(lambda: len(calls) >= 5, 5, "five pings")
    d.close()
    assert said.text.count("cannot be reached") == 1 and "is reached again" in said.text
    assert "secret-uuid" not in said.text and "https://hc-ping.com" in said.text


def test_loss_svg_marks_the_step_and_the_nans() -> None:
    svg = loss_svg([(0, 2.0), (10, 1.5), (20, float("nan")), (30, 1.2)], mark_step=20)
    assert svg.startswith("<svg") and "step 20" in svg and 'stroke="red"' in svg
    assert "nan" not in svg.lower()
