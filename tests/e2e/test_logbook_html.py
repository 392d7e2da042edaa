"""`babysit logbook --format html` of real runs, loaded in headless Chromium: no console error, no
network request, and the DOM has the timeline, the incidents, the note and the charts.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ended by NUL on fds 3 and 4), with the standard library only. Skipped when /usr/bin/chromium is
missing, unless BABYSIT_REQUIRE_CHROMIUM=1 (CI installs it: .ci/run). The page's screenshot is
left in the test's tmp directory (logbook.png), and copied to $BABYSIT_SCREENSHOT_DIR when set.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import file_text, fixture, run_babysit, start_babysit, status_json, wait_for

pytestmark = pytest.mark.e2e
PY = sys.executable
CHROMIUM = "/usr/bin/chromium"
# Read when the module loads: conftest's autouse fixture clears BABYSIT_* before each test.
REQUIRE_CHROMIUM = os.environ.get("BABYSIT_REQUIRE_CHROMIUM") == "1"
SCREENSHOT_DIR = os.environ.get("BABYSIT_SCREENSHOT_DIR")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--mute-audio",
]  # fmt: skip
NAN_CONFIG = """
[run]
name = "nt"
[restart]
backoff_s = 0
[checkpoint]
glob = "out/ckpt_*.pt"
settle_s = 0
[rollback]
skip_before = 2
skip_after = 3
"""


@pytest.fixture
def chromium() -> str:
    if not os.access(CHROMIUM, os.X_OK):
        if REQUIRE_CHROMIUM:
            pytest.fail(f"{CHROMIUM} is missing and BABYSIT_REQUIRE_CHROMIUM=1")
        pytest.skip(f"{CHROMIUM} is missing (Debian: apt-get install chromium)")
    return CHROMIUM


class DevTools:
    """One headless Chromium and its DevTools pipe: call() a method, wait_event() for an event;
    every event that arrives meanwhile is kept in `events`."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def onto_3_and_4() -> None:  # the browser reads commands on fd 3, answers on fd 4
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(high[0], 3)  # inheritable, unlike the pipes: kept open through exec
            os.dup2(high[1], 4)

        with (profile.parent / "chromium.log").open("wb") as log:
            self.proc = subprocess.Popen(
                [binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                 "about:blank"],
                close_fds=False, preexec_fn=onto_3_and_4, stdout=subprocess.DEVNULL, stderr=log,
            )  # fmt: skip
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise AssertionError("Chromium closed its DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:  # fmt: skip
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, (method, reply["error"])
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._read(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


DOM_CHECKS = """JSON.stringify({
  title: document.title,
  sections: [...document.querySelectorAll('section')].map(s => s.id),
  attempts: document.querySelectorAll('#timeline tbody tr').length,
  timelineSvg: document.querySelectorAll('#timeline svg').length,
  incidents: [...document.querySelectorAll('#incidents article')].map(a => a.id),
  incidentSvgs: document.querySelectorAll('#incidents svg').length,
  incidentText: document.querySelector('#incidents').innerText,
  decisions: document.querySelector('#decisions').innerText,
  notes: document.querySelector('#notes').innerText,
  scripts: document.scripts.length,
  height: document.documentElement.scrollHeight,
})"""


def load_in_chromium(binary: str, page: Path, shot: Path) -> tuple[dict[str, Any], list[Any]]:
    """Load `page`; -> (what DOM_CHECKS found, [everything that went wrong: console errors,
    exceptions, error logs, requests for anything but the page itself])."""
    browser = DevTools(binary, page.parent / "profile")
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Network", "Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable", session=session)
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1200, "height": 2000, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        url = page.as_uri()
        browser.call("Page.navigate", {"url": url}, session=session)
        browser.wait_event("Page.loadEventFired")
        found = json.loads(
            browser.call(
                "Runtime.evaluate", {"expression": DOM_CHECKS, "returnByValue": True}, session
            )["result"]["value"]
        )
        png = browser.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
        shot.write_bytes(base64.b64decode(png))
    finally:
        browser.close()
    wrong: list[Any] = []
    for e in browser.events:
        method, params = e.get("method"), e.get("params") or {}
        if method == "Network.requestWillBeSent" and params["request"]["url"] != url:
            wrong.append(("request", params["request"]["url"]))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            wrong.append(("console", params.get("args")))
        elif method == "Runtime.exceptionThrown":
            wrong.append(("exception", params.get("exceptionDetails")))
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            wrong.append(("log", params["entry"]))
    return found, wrong


def _logbook_html(workdir: Path, home: Path, run: str) -> Path:
    res = run_babysit("logbook", run, "--home", str(home), "--format", "html", cwd=workdir)
    assert res.returncode == 0, res.stderr
    page = workdir / f"{run}.html"
    page.write_text(res.stdout)
    return page


def _keep(shot: Path, name: str) -> None:
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    if SCREENSHOT_DIR:
        Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(SCREENSHOT_DIR) / name)


def test_a_crash_then_success_with_a_note_renders_cleanly(workdir: Path, chromium: str) -> None:
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0.05", "--name", "flaky", "-q", "--",
        PY, fixture("flaky.py"), "--fail-times", "1", cwd=workdir,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    evil = "bad shard again <script>alert(1)</script> <img src=http://127.0.0.1:9/x.png>"
    note = run_babysit("note", "flaky", evil, "--home", str(home), cwd=workdir)
    assert note.returncode == 0, note.stderr
    found, wrong = load_in_chromium(chromium, _logbook_html(workdir, home, "flaky"),
                                    workdir / "logbook.png")  # fmt: skip
    assert wrong == []
    assert found["title"] == "Logbook: flaky" and found["scripts"] == 0
    assert found["sections"] == ["timeline", "incidents", "decisions", "notes", "events"]
    assert found["attempts"] == 2 and found["timelineSvg"] == 1
    assert found["incidents"] == ["I1"]
    assert "ConnectionError: Connection reset by peer (attempt 1)" in found["incidentText"]
    assert "Triage: network" in found["incidentText"]
    assert "restart" in found["decisions"]
    assert evil in found["notes"]  # shown as text: neither run nor fetched
    _keep(workdir / "logbook.png", "logbook-flaky.png")


def test_a_rollback_draws_the_loss_around_the_spike(workdir: Path, chromium: str) -> None:
    (workdir / "babysit.toml").write_text(NAN_CONFIG)
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "-q", "--", PY, fixture("nan_trainer.py"),
        str(workdir / "out"), "--steps", "120", "--nan-at", "-1", "--diverge-at", "70",
        cwd=workdir, timeout=60,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    note = run_babysit("note", "nt", "the spike is shard 17; rolled back fine",
                       "--home", str(home), cwd=workdir)  # fmt: skip
    assert note.returncode == 0, note.stderr
    found, wrong = load_in_chromium(chromium, _logbook_html(workdir, home, "nt"),
                                    workdir / "logbook.png")  # fmt: skip
    assert wrong == []
    assert found["incidents"] == ["I1"] and found["incidentSvgs"] >= 1  # the loss, marked
    assert "loss did not settle after its spike at step 70" in found["incidentText"]
    assert "rollback" in found["decisions"]
    assert "the spike is shard 17" in found["notes"]
    _keep(workdir / "logbook.png", "logbook-rollback.png")


# -- babysit note (no browser needed) -----------------------------------------------------------


def test_a_note_while_babysit_supervises_goes_to_the_running_attempt(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    proc = start_babysit("run", "--home", str(home), "--name", "st", "--", PY,
                         fixture("steady.py"), str(stop), cwd=workdir,
                         stderr_path=workdir / "b.err")  # fmt: skip
    try:
        log = home / "runs" / "st" / "attempt-0001" / "stdout.log"
        wait_for(lambda: "step 3" in file_text(log), what="the trainer to print steps")
        secret = "hf_" + "Zq8" * 12
        res = run_babysit("note", "st", "paused", "the", "eval;", f"HF_TOKEN={secret}",
                          "--home", str(home), cwd=workdir)  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert res.stdout == "note added to run 'st' (attempt 1): paused the eval; HF_TOKEN=***\n"
        stop.write_text("")
        assert proc.wait(timeout=30) == 0  # supervision went on, undisturbed
    finally:
        if proc.poll() is None:
            proc.kill()
    doc = status_json(home, "st", workdir)
    (note,) = [e for e in doc["events"] if e["data"].get("source") == "human"]
    assert note["kind"] == "note" and note["attempt"] == 1
    assert note["message"] == "paused the eval; HF_TOKEN=***" and "@" in note["data"]["author"]
    assert doc["events"][-1]["kind"] == "succeeded"  # babysit's own events came after it
    for kept in (home / "babysit.db", home / "events.jsonl"):
        assert secret.encode() not in kept.read_bytes()
    md = run_babysit("logbook", "st", "--home", str(home), cwd=workdir).stdout
    assert "## Notes" in md and "paused the eval; HF_TOKEN=***" in md


def test_a_note_on_a_run_that_does_not_exist_names_those_that_do(workdir: Path) -> None:
    home = workdir / "h"
    assert run_babysit("run", "--home", str(home), "--name", "real", "--", PY, "-c", "1",
                       cwd=workdir).returncode == 0  # fmt: skip
    res = run_babysit("note", "nope", "hello", "--home", str(home), cwd=workdir)
    assert res.returncode == 2
    assert res.stderr == (f"babysit: error: no run named 'nope' in {home} (known runs: real)\n")
    empty = run_babysit("note", "real", "  ", "--home", str(home), cwd=workdir)
    assert empty.returncode == 2 and "the note is empty" in empty.stderr
    nohome = run_babysit("note", "real", "x", "--home", str(workdir / "none"), cwd=workdir)
    assert nohome.returncode == 2 and "no babysit home" in nohome.stderr
    doc = status_json(home, "real", workdir)
    assert not [e for e in doc["events"] if e["kind"] == "note"]
