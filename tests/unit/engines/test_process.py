"""Handle.wait once the launcher is gone: it must pace the loop, not spin (a dead launcher's
pidfd stays readable for good)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from babysit.engines.process import Handle
from tests.conftest import wait_for


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "gone"
    return stat[stat.rfind(b")") + 2 :].split()[0].decode()


def test_wait_after_the_launcher_died_sleeps_instead_of_returning_at_once(tmp_path: Path) -> None:
    proc = subprocess.Popen(["true"])
    wait_for(lambda: _state(proc.pid) in ("Z", "gone"), what="the process to exit")
    h = Handle(proc.pid, 0.0, tmp_path, "token", popen=proc)
    slept: list[float] = []
    for _ in range(4):
        h.wait(5.0, sleep=slept.append)
    # The first calls see the exit (pidfd readable, then the reap); after that, only sleeps.
    assert slept and all(t == 5.0 for t in slept) and len(slept) >= 2
    h.close()
