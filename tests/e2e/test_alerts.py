"""Alerts end to end: `babysit run` with real apprise (`json://127.0.0.1:PORT/`) to a local
HTTP receiver, and the dispatcher with real apprise for bursts."""

from __future__ import annotations

import http.server
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from babysit.alerts.dispatch import Alerts
from babysit.alerts.route import Router
from babysit.alerts.sender import AppriseSender
from babysit.alerts.settings import AlertRule, Destination
from babysit.records import Event, EventKind
from tests.conftest import fixture, run_babysit, wait_for
from tests.fakes import Said

pytestmark = pytest.mark.e2e
PY = sys.executable
SECRET = "hf_PlantedSecretToken0123456789abcdef"  # tests/fixtures/secret_bug.py's


class Receiver:
    """A webhook on 127.0.0.1: keeps every JSON body apprise POSTs, with its arrival time."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []
        self.at: list[float] = []
        self.pings: list[str] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.got.append(json.loads(body))
                receiver.at.append(time.time())
                self.send_response(200)
                self.end_headers()

            def do_GET(self) -> None:  # the dead-man ping
                receiver.pings.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def titles(self) -> list[str]:
        return [m["title"] for m in self.got]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def test_one_page_after_babysit_gives_up_secret_redacted(workdir: Path, receiver: Receiver) -> None:
    res = run_babysit(
        "run",
        "--home",
        "h",
        "--notify",
        receiver.url,
        "--",
        PY,
        fixture("secret_bug.py"),
        cwd=workdir,
    )
    assert res.returncode == 3, res.stderr
    # Delivered before babysit exited (the drain at the end): no waiting here.
    assert len(receiver.got) == 1, receiver.titles()
    page = receiver.got[0]
    assert page["type"] == "failure"
    assert page["title"].startswith("[PAGE] secret_bug on ") and "gave up" in page["title"]
    body = page["message"]
    assert "what happened: attempt 1 exited with code 1 at step 2" in body
    assert "verdict: user_code (not transient)" in body and "KeyError: 'input_ids'" in body
    assert "gave up (exit code 3)" in body and "a human must fix this" in body
    assert "more: babysit logbook secret_bug --home h" in body
    assert SECRET not in json.dumps(receiver.got) and "HF_TOKEN=***" in body


def test_one_warn_per_recovery_then_recovered(workdir: Path, receiver: Receiver) -> None:
    res = run_babysit(
        "run",
        "--home",
        "h",
        "--backoff",
        "0.05",
        "--notify",
        receiver.url,
        "--",
        PY,
        fixture("flaky.py"),
        "--fail-times",
        "1",
        "--steps",
        "5",
        cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    types = [(m["type"], m["title"].split("]")[0] + "]") for m in receiver.got]
    assert types == [("warning", "[WARN]"), ("success", "[RECOVERED]"), ("info", "[INFO]")]
    warn, recovered, done = receiver.got
    assert "restarted after a failure" in warn["title"]
    assert "verdict: network (unsure)" in warn["message"]  # a peer's reset, nothing more
    assert "restarts it:" in warn["message"]
    assert "making progress again (step 9)" in recovered["title"]
    assert "the run finished" in done["title"]


def test_dedupe_cooldown_and_escalation(workdir: Path, receiver: Receiver) -> None:
    (workdir / "babysit.toml").write_text(
        f'[alerts]\nnotify = ["{receiver.url}"]\ncooldown_s = 600\nescalate_after = 3\n'
    )
    res = run_babysit(
        "run",
        "--home",
        "h",
        "--backoff",
        "0.05",
        "--",
        PY,
        fixture("flaky.py"),
        "--fail-times",
        "3",
        "--steps",
        "3",
        cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    titles = receiver.titles()
    # Three failures alike: the first warns, the second is folded by the cooldown, the third
    # is the same incident again: escalated to a page. Each is followed by `recovered`.
    assert [t.split("]")[0] + "]" for t in titles] == [
        "[WARN]",
        "[RECOVERED]",
        "[PAGE]",
        "[RECOVERED]",
        "[INFO]",
    ], titles
    page = receiver.got[2]["message"]
    assert "escalated: the same incident 3 times" in page


def test_bursts_are_aggregated_through_real_apprise(receiver: Receiver) -> None:
    rule = AlertRule(burst_s=3600, escalate_after=0)
    dest = Destination(receiver.url)
    alerts = Alerts(
        rule,
        Router("big", "node-a", "babysit logbook big"),
        [(dest, AppriseSender(dest.url))],
        Said(),
    )
    alerts.start()
    for rank in range(64):  # 64 ranks' nodes failing at once
        alerts.event(
            Event(
                "big",
                EventKind.BANNED,
                f"banned node gpu-{rank}",
                time.time(),
                1,
                {"host": f"gpu-{rank}"},
            )
        )
    alerts.close()
    assert len(receiver.got) == 2, receiver.titles()
    assert "node gpu-0 banned" in receiver.got[0]["title"]
    assert "63 more like the last alert" in receiver.got[1]["title"]


def test_a_destination_that_is_down_does_not_slow_supervision(workdir: Path) -> None:
    # A black hole: the connection is taken (the listen backlog) and never answered.
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(16)
    url = f"json://127.0.0.1:{hole.getsockname()[1]}/"
    argv = ["--backoff", "0.05", "--", PY, fixture("flaky.py"), "--fail-times", "1"]
    try:
        began = time.monotonic()
        base = run_babysit("run", "--home", "h0", *argv, cwd=workdir)
        base_s = time.monotonic() - began
        (workdir / "babysit.toml").write_text(f'[alerts]\nnotify = ["{url}"]\ndrain_s = 1\n')
        began = time.monotonic()
        down = run_babysit("run", "--home", "h1", *argv, cwd=workdir)
        down_s = time.monotonic() - began
    finally:
        hole.close()
    assert base.returncode == 0 and down.returncode == 0, down.stderr
    # Supervision did not wait on the destination: only the drain at exit (drain_s) is added.
    assert down_s - base_s < 1.0 + 2.0, (base_s, down_s)
    assert "could not be sent before babysit exited" in down.stderr
    assert f"127.0.0.1:{url.rsplit(':', 1)[1]}" not in down.stderr.replace(url, "")


def test_an_invalid_url_is_refused_at_start(workdir: Path) -> None:
    res = run_babysit(
        "run",
        "--home",
        "h",
        "--notify",
        "bogus://sekrit-token",
        "--",
        PY,
        fixture("flaky.py"),
        cwd=workdir,
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert lines == [
        "babysit: error: notify URL #1 (bogus://***) is not a URL apprise can send to: check "
        "its scheme and parts (https://github.com/caronc/apprise/wiki lists them)"
    ]
    assert not (workdir / "h" / "runs").exists() or not list((workdir / "h").rglob("attempt-*"))


def test_notify_test_reports_each_destination(workdir: Path, receiver: Receiver) -> None:
    res = run_babysit(
        "notify",
        "--test",
        "--notify",
        receiver.url,
        "--notify",
        "json://127.0.0.1:9/",
        "--json",
        cwd=workdir,
    )
    assert res.returncode == 1, res.stderr
    results = json.loads(res.stdout)["results"]
    assert [(r["destination"], r["ok"]) for r in results] == [
        ("json://127.0.0.1", True),
        ("json://127.0.0.1", False),
    ]
    assert len(receiver.got) == 1 and "test message" in receiver.got[0]["title"]
    ok = run_babysit("notify", "--test", "--notify", receiver.url, cwd=workdir)
    assert ok.returncode == 0 and ok.stdout.startswith("ok")


def test_on_event_hook_gets_json_and_a_hanging_one_is_killed(workdir: Path) -> None:
    out = workdir / "events.jsonl"
    (workdir / "babysit.toml").write_text(
        f'[alerts]\non_event = "cat >> {out}; sleep 60"\non_event_timeout_s = 0.5\n'
    )
    began = time.monotonic()
    res = run_babysit("run", "--home", "h", "--", PY, fixture("secret_bug.py"), cwd=workdir)
    assert res.returncode == 3, res.stderr
    assert time.monotonic() - began < 30
    doc = json.loads(wait_for(lambda: out.exists() and out.read_text(), 5, "the hook's stdin"))
    assert doc["severity"] == "page" and doc["kind"] == "gave_up"
    assert SECRET not in out.read_text()
    assert "did not finish within on_event_timeout_s (0.5s): killed" in res.stderr


def test_deadman_url_is_pinged_while_babysit_lives(workdir: Path, receiver: Receiver) -> None:
    port = receiver.url.split(":")[2].rstrip("/")
    (workdir / "babysit.toml").write_text(
        f'[alerts]\ndeadman_url = "http://127.0.0.1:{port}/ping/uuid"\ndeadman_every_s = 1\n'
    )
    res = run_babysit("run", "--home", "h", "--", PY, fixture("flaky.py"), cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert receiver.pings[:1] == ["/ping/uuid"]
    assert receiver.got == []  # no notify URL: nothing else was sent


def test_watch_follow_pages_on_the_failure_and_warns_on_an_incident(
    workdir: Path, receiver: Receiver
) -> None:
    # babysit watch restarts nothing: a failure in the watched log is a page, an incident a warn.
    import signal

    from tests.conftest import file_text, start_babysit

    log = workdir / "slurm-88.out"
    log.write_text("".join(f"iter {s}: loss 2.0{s % 3}, time 5ms\n" for s in range(40)))
    err = workdir / "w.err"
    proc = start_babysit(
        "watch", "--follow", str(log), "--home", "h", "--notify", receiver.url,
        cwd=workdir, stderr_path=err,
    )
    try:
        wait_for(lambda: "watching" in file_text(err), what="the watcher to start")
        with log.open("a") as fh:
            fh.write("iter 40: loss nan, time 5ms\n")
        wait_for(lambda: receiver.got, what="the incident's warning")
        with log.open("a") as fh:
            fh.write(
                "Traceback (most recent call last):\n"
                '  File "/w/train.py", line 88, in train_step\n'
                f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB {SECRET}\n"
            )
        wait_for(lambda: len(receiver.got) >= 2, timeout=60, what="the failure's page")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0, file_text(err)
    warn, page = receiver.got[:2]
    assert warn["type"] == "warning" and "watched run" in warn["title"], warn
    assert page["type"] == "failure" and "a human must act" in page["title"], page
    assert "cuda_oom" in page["message"], page
    assert SECRET not in json.dumps(receiver.got)


def test_watch_refuses_an_invalid_notify_url_at_start(workdir: Path) -> None:
    log = workdir / "x.log"
    log.write_text("iter 1: loss 2.0\n")
    res = run_babysit("watch", "--follow", str(log), "--notify", "nope://x", cwd=workdir)
    assert res.returncode == 2 and "notify URL" in res.stderr, res.stderr
