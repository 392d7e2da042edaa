"""Shared helpers: run babysit as a real process, wait on events with deadlines (never sleep)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]
TINYGPT = REPO / "examples" / "tinygpt" / "train.py"


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def babysit_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "babysit", *args]


def run_babysit(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        babysit_argv(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout,
        errors="replace",
    )


def start_babysit(*args: str, cwd: Path, stderr_path: Path) -> subprocess.Popen[bytes]:
    with stderr_path.open("wb") as err, (stderr_path.with_suffix(".out")).open("wb") as out:
        return subprocess.Popen(babysit_argv(*args), cwd=cwd, stdout=out, stderr=err)


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def free_port() -> int:
    """A TCP port free on localhost now (torchrun's --master-port)."""
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status_json(home: Path, run: str, cwd: Path) -> dict[str, Any]:
    res = run_babysit("status", run, "--home", str(home), "--json", cwd=cwd)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] != b"Z"


def file_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _procs_under(root: str) -> list[int]:
    """Processes whose command line or BABYSIT_HOME points under `root` (a test's tmp_path)."""
    found = []
    me = os.getpid()
    needle_env = f"BABYSIT_HOME={root}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        if root.encode() in cmdline or any(
            e.startswith(needle_env) for e in environ.split(b"\0")
        ):
            found.append(int(name))
    return found


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A working directory; every process a test left running under it is killed afterwards,
    so a failing test cannot leave babysits or trainers behind."""
    d = tmp_path / "work"
    d.mkdir()
    yield d
    for pid in _procs_under(str(tmp_path)):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def _no_babysit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("BABYSIT_"):
            monkeypatch.delenv(key)
