"""babysit.subproc: a check runs bounded, stops with babysit, and leaves nothing behind (even
what it started with setsid or a double fork)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from babysit.subproc import MARKER_ENV, kill_session, run_check
from tests.conftest import pid_alive, wait_for

# Starts a daemon the way servers do: fork, setsid, fork again, the middle one exits, so the
# daemon is reparented to init, in a session of its own. Writes the daemon's pid to argv[1].
DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".tmp", "w") as fh:
            fh.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(1000)
    os._exit(0)
os.wait()
"""


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test started; whatever is still alive at the end is killed (and the test
    fails on its own asserts, not by leaving sleepers behind)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def read_pid(path: Path, leftovers: list[int]) -> int:
    pid = int(wait_for(lambda: path.exists() and path.read_text(), 20, f"a pid in {path}"))
    leftovers.append(pid)
    return pid


def gone(pid: int) -> bool:
    return wait_for(lambda: not pid_alive(pid), 10, f"process {pid} to be killed")


def test_exit_code_and_the_tails_of_its_output(tmp_path: Path) -> None:
    res = run_check(["sh", "-c", "echo out; echo err >&2; exit 3"], tmp_path, timeout_s=30)
    assert (res.returncode, res.stdout, res.stderr) == (3, b"out\n", b"err\n")
    assert not res.timed_out and not res.stopped


def test_a_huge_output_is_kept_to_its_tail(tmp_path: Path) -> None:
    res = run_check(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 3_000_000 + 'END')"],
        tmp_path,
        timeout_s=30,
    )
    assert res.returncode == 0 and res.stdout.endswith(b"END") and len(res.stdout) <= 64 * 1024


def test_the_check_carries_a_marker_in_its_environment(tmp_path: Path) -> None:
    res = run_check(
        [sys.executable, "-c", f"import os; print(os.environ['{MARKER_ENV}'])"],
        tmp_path,
        timeout_s=30,
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert res.returncode == 0 and res.stdout.strip().startswith(f"{os.getpid()}-".encode())


def test_a_timeout_kills_a_daemon_it_started(tmp_path: Path, leftovers: list[int]) -> None:
    pidfile = tmp_path / "daemon.pid"
    script = f"{sys.executable} -c '{DAEMON}' {pidfile}; sleep 1000"
    t0 = time.monotonic()
    res = run_check(["sh", "-c", script], tmp_path, timeout_s=3)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - t0 < 20
    assert gone(read_pid(pidfile, leftovers))


def test_a_stop_kills_the_check_at_once_with_its_setsid_child(
    tmp_path: Path, leftovers: list[int]
) -> None:
    pidfile = tmp_path / "child.pid"
    child = f"echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 1000"
    script = f"setsid sh -c '{child}' & sleep 1000"
    asked = []

    def stopping() -> bool:  # babysit is told to stop once the child is up
        asked.append(1)
        return pidfile.exists()

    t0 = time.monotonic()
    res = run_check(["sh", "-c", script], tmp_path, timeout_s=600, stopping=stopping)
    assert res.stopped and res.returncode is None and not res.timed_out
    assert time.monotonic() - t0 < 30  # not the 600 s timeout
    assert gone(read_pid(pidfile, leftovers))


def test_what_a_finished_check_left_running_is_killed(tmp_path: Path, leftovers: list[int]) -> None:
    pidfile = tmp_path / "daemon.pid"
    res = run_check([sys.executable, "-c", DAEMON, str(pidfile)], tmp_path, timeout_s=60)
    assert res.returncode == 0
    pid = read_pid(pidfile, leftovers)
    assert gone(pid)


def test_a_child_that_cleared_its_environment_goes_with_its_parent(
    tmp_path: Path, leftovers: list[int]
) -> None:
    """No marker in its environment, another session: found as a descendant of the check."""
    pidfile = tmp_path / "bare.pid"
    script = f"setsid env -i sh -c 'echo $$ > {pidfile}; exec sleep 1000' & wait"
    res = run_check(["sh", "-c", script], tmp_path, timeout_s=600, stopping=pidfile.exists)
    assert res.stopped
    assert gone(read_pid(pidfile, leftovers))


def test_kill_session_without_a_marker_kills_the_group(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        ["sh", "-c", "sleep 1000 & sleep 1000"],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert kill_session(proc) == []
    assert proc.returncode is not None
    wait_for(lambda: not group_alive(proc.pid), 10, "the group to die")


def group_alive(pgid: int) -> bool:
    """Any live (not zombie) process in the group: a killed child reparented to an init that
    does not reap stays a zombie, and killpg(pgid, 0) still finds it."""
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except (OSError, NotADirectoryError):
            continue
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
