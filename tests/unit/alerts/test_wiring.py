"""The supervisor hands the journal's writes to the alerts (supervise/context.py's listener):
one babysit run on fakes, the alerts' sender faked, in milliseconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.alerts.dispatch import Alerts
from babysit.alerts.route import Router
from babysit.alerts.settings import AlertRule, Destination
from babysit.errors import ConfigError
from babysit.records import ExitCode
from tests.fakes import Script, steps
from tests.unit.alerts.helpers import FakeSender
from tests.unit.supervise.harness import NETWORK_ERROR, Run


def faked(run: Run) -> FakeSender:
    sender = FakeSender()
    rule = AlertRule(burst_s=0)
    router = Router("train", "node-a", "babysit logbook train")
    run.sup.ctx.alerts = Alerts(rule, router, [(Destination("json://x"), sender)], run.said)
    return sender


def test_a_restart_warns_and_the_next_attempts_progress_recovers(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR), Script(steps(4, 6), ends_at=1.0)])
    sender = faked(r)
    assert r.run() == ExitCode.OK
    assert [a.kind for a in sender.got] == ["restart", "recovered", "succeeded"]
    warn = sender.got[0]
    assert warn.attempt == 1 and warn.step == 3 and "network" in (warn.verdict or "")
    assert sender.got[1].attempt == 2


def test_giving_up_pages_before_run_returns(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 2), "SyntaxError: invalid syntax")])
    sender = faked(r)
    assert r.run() == ExitCode.NEEDS_HUMAN
    assert [a.kind for a in sender.got] == ["gave_up"]  # delivered when run() returned


def test_an_invalid_notify_url_stops_babysit_before_anything(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"notify URL #1 \(bogus://\*\*\*\)"):
        Run(tmp_path, [], **{"alerts.notify": ["bogus://token"]})
    assert not (tmp_path / ".babysit").exists()


def test_the_stored_config_has_the_urls_masked(tmp_path: Path) -> None:
    url = "json://127.0.0.1:9/hook?secret=sekrit-value"
    r = Run(
        tmp_path,
        [Script(steps(1, 2), ends_at=1.0)],
        **{"alerts.notify": [url], "alerts.drain_s": 0},
    )
    assert r.run() == ExitCode.OK
    stored = (tmp_path / ".babysit" / "babysit.db").read_bytes()
    assert b"sekrit-value" not in stored and b"json://127.0.0.1" in stored
