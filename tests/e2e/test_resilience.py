"""babysit itself failing in the worst places: killed mid-stop, its launcher killed, its store
refusing writes, two of them at once. The training must go on, and only one copy of it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    babysit_argv,
    file_text,
    fixture,
    pid_alive,
    run_babysit,
    start_babysit,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.e2e
PY = sys.executable


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) == pid:
            out.append((int(name), fields[0].decode()))
    return out


def test_launcher_killed_training_goes_on_and_is_not_doubled(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    args = ("run", "--home", str(home), "--backoff", "0", "--name", "s", "--", PY,
            fixture("steady.py"), str(stop))
    proc = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b.err")
    attempt = home / "runs/s/attempt-0001"
    wait_for(lambda: "step 3" in file_text(attempt / "stdout.log"), what="progress")
    info = json.loads((attempt / "launcher.json").read_text())
    os.kill(info["launcher_pid"], signal.SIGKILL)
    size = len(file_text(attempt / "stdout.log"))
    wait_for(lambda: len(file_text(attempt / "stdout.log")) > size + 40,
             what="training to go on without its launcher")
    assert pid_alive(info["pid"])
    assert not (home / "runs/s/attempt-0002").exists()  # no second copy while the first lives
    stop.write_text("")
    wait_for(lambda: not pid_alive(info["pid"]), what="the trainer to finish")
    assert proc.wait(timeout=30) == 0, file_text(workdir / "b.err")
    doc = status_json(home, "s", workdir)
    assert doc["attempts"][0]["outcome"] == "lost"  # how it ended is unknown: no launcher
    pids = (workdir / "stop.pid").read_text().split()
    assert len(pids) == 2  # attempt 2 started only after attempt 1 was gone, and finished


def test_babysit_killed_mid_stop_launcher_finishes_the_stop(workdir: Path) -> None:
    home = workdir / "h"
    err = workdir / "b.err"
    proc = start_babysit("run", "--home", str(home), "--grace", "1", "--name", "stub", "--", PY,
                         fixture("stubborn.py"), cwd=workdir, stderr_path=err)
    log = home / "runs/stub/attempt-0001/stdout.log"
    wait_for(lambda: "step 3" in file_text(log), what="progress")
    trainer = json.loads((log.parent / "launcher.json").read_text())["pid"]
    proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "SIGTERM received" in file_text(err), what="the stop to begin")
    proc.kill()
    proc.wait(timeout=10)
    # The launcher started its own grace timer when it got SIGTERM: it ends the stop alone.
    wait_for(lambda: not pid_alive(trainer), timeout=20, what="the launcher to SIGKILL the child")


def test_requeue_after_a_stop_is_not_a_success(workdir: Path) -> None:
    home, stop, saved = workdir / "h", workdir / "stop", workdir / "saved"
    args = ("run", "--home", str(home), "--backoff", "0", "--name", "p", "--", PY,
            fixture("polite.py"), str(stop), str(saved))
    proc = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    attempt = home / "runs/p/attempt-0001"
    wait_for(lambda: "step 3" in file_text(attempt / "stdout.log"), what="progress")
    proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "SIGTERM received" in file_text(workdir / "b1.err"), what="the stop")
    # babysit dies mid-stop: the trainer's save lasts until `saved` exists, so that babysit cannot
    # record the stop itself first, however fast the machine; then the trainer exits 0
    proc.kill()
    proc.wait(timeout=10)
    saved.write_text("")
    wait_for((attempt / "exit.json").exists, what="the trainer to exit")
    stop.write_text("")  # the requeued attempt will finish
    res = run_babysit(*args, cwd=workdir)
    assert res.returncode == 0, res.stderr
    doc = status_json(home, "p", workdir)
    assert [a["outcome"] for a in doc["attempts"]] == ["stopped", "succeeded"]
    assert "stopped by SIGTERM before it finished" in doc["attempts"][0]["summary"]


def test_orphans_are_reaped_not_left_as_zombies(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    proc = start_babysit("run", "--home", str(home), "--name", "o", "--", PY,
                         fixture("orphans.py"), str(stop), cwd=workdir,
                         stderr_path=workdir / "b.err")
    attempt = home / "runs/o/attempt-0001"
    wait_for(lambda: "orphans made" in file_text(attempt / "stdout.log"), what="orphans")
    launcher = json.loads((attempt / "launcher.json").read_text())["launcher_pid"]
    wait_for(lambda: not [c for c in _children(launcher) if c[1] == "Z"], timeout=10,
             what="the launcher to reap the orphans")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 5


def test_store_refusing_writes_keeps_the_budget(workdir: Path) -> None:
    home = workdir / "h"
    home.mkdir()
    (home / "events.jsonl").mkdir()  # every append to the JSONL mirror fails from now on
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--max-restarts", "2",
                      "--name", "f", "--", PY, fixture("flaky.py"), "--fail-times", "99",
                      "--no-advance", cwd=workdir, timeout=60)
    assert res.returncode == 4, res.stderr
    assert res.stderr.count("attempt 3 started") == 1 and "attempt 4" not in res.stderr
    assert "Supervision goes on" in res.stderr and "could not be written" in res.stderr


def test_two_babysits_open_a_new_home_at_once(workdir: Path) -> None:
    home = workdir / "h"
    procs = [
        subprocess.Popen(babysit_argv("run", "--home", str(home), "--name", f"r{i}", "--", PY,
                                      fixture("flaky.py")), cwd=workdir,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err


def test_unrecorded_attempt_is_adopted_not_doubled(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    args = ("run", "--home", str(home), "--name", "s", "--", PY, fixture("steady.py"),
            str(stop))
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    attempt = home / "runs/s/attempt-0001"
    wait_for(lambda: "step 3" in file_text(attempt / "stdout.log"), what="progress")
    first.kill()
    first.wait(timeout=10)
    with sqlite3.connect(home / "babysit.db") as db:  # as if babysit died before recording it
        db.execute("DELETE FROM attempts")
    second = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b2.err")
    wait_for(lambda: "adopting it" in file_text(workdir / "b2.err"), what="adoption")
    stop.write_text("")
    assert second.wait(timeout=30) == 0, file_text(workdir / "b2.err")
    assert len((workdir / "stop.pid").read_text().split()) == 1


def test_attempt_running_on_another_host_is_not_touched(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    args = ("run", "--home", str(home), "--name", "s", "--", PY, fixture("steady.py"),
            str(stop))
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    wait_for(lambda: "step 3" in file_text(home / "runs/s/attempt-0001/stdout.log"),
             what="progress")
    first.kill()
    first.wait(timeout=10)
    with sqlite3.connect(home / "babysit.db") as db:
        db.execute("UPDATE attempts SET host='gpu-node-17'")
    res = run_babysit(*args, cwd=workdir)
    assert res.returncode == 2
    assert "started on host gpu-node-17" in res.stderr
    stop.write_text("")


def test_sighup_does_not_end_supervision(workdir: Path) -> None:
    home, stop = workdir / "h", workdir / "stop"
    proc = start_babysit("run", "--home", str(home), "--name", "s", "--", PY,
                         fixture("steady.py"), str(stop), cwd=workdir,
                         stderr_path=workdir / "b.err")
    wait_for(lambda: "step 3" in file_text(home / "runs/s/attempt-0001/stdout.log"),
             what="progress")
    proc.send_signal(signal.SIGHUP)
    stop.write_text("")
    assert proc.wait(timeout=30) == 0


def test_killed_during_the_backoff_the_rerun_relaunches_when_it_was_due(workdir: Path) -> None:
    """kill -9 of babysit in a 6 s backoff: the rerun comes back to the stored decision and
    relaunches when it was due, not at once."""
    home = workdir / "h"
    args = ("run", "--home", str(home), "--backoff", "6", "--name", "b", "--", PY,
            fixture("flaky.py"), "--fail-times", "1")
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    wait_for(lambda: "restarting in" in file_text(workdir / "b1.err"), what="the backoff")
    first.kill()
    first.wait(timeout=10)
    with sqlite3.connect(home / "babysit.db") as db:
        ts, data = db.execute(
            "SELECT ts, data FROM events WHERE kind='restart_scheduled'").fetchone()
    due = ts + json.loads(data)["delay_s"]
    res = run_babysit(*args, cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "babysit was away during the backoff before attempt 2" in res.stderr
    doc = status_json(home, "b", workdir)
    assert [a["outcome"] for a in doc["attempts"]] == ["failed", "succeeded"]
    started = os.stat(home / "runs/b/attempt-0002").st_mtime
    assert started >= due - 0.5, f"relaunched {due - started:.1f}s before it was due"
