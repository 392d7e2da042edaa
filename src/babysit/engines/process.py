"""Process control: start an attempt, signal it, find every process of it, kill them all.

    h = launch(["python", "train.py"], env, cwd=Path("."), grace_s=30, token=tok,
               attempt_dir=Path(".babysit/runs/x/attempt-0001"))
    h.poll()                    # -> ExitStatus | None
    signal_group(h, signal.SIGTERM)
    survivors(h)                # every pid of the attempt still alive, however it was started

The attempt runs under `launcher.py` in a session of its own, its output going straight to files
in `attempt_dir`; nothing of it passes through babysit, so killing babysit (even with SIGKILL)
leaves the training running and unblocked. Every process of the attempt carries
BABYSIT_ATTEMPT_TOKEN in its environment, which finds even the ones that started a session of
their own and were reparented away.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

from babysit.errors import LaunchError
from babysit.records import ExitStatus

LAUNCHER = Path(__file__).with_name("launcher.py")
TOKEN_VAR = "BABYSIT_ATTEMPT_TOKEN"
STDOUT_NAME = "stdout.log"
STDERR_NAME = "stderr.log"


@dataclass
class Handle:
    """A live attempt. `popen` is None when babysit re-attached to an attempt it did not start."""

    launcher_pid: int
    launcher_started: float  # the launcher's process start time: pid + this identify it
    attempt_dir: Path
    token: str
    popen: subprocess.Popen[bytes] | None = None
    _pidfd: int | None = field(default=None, repr=False)
    _pid: int | None = field(default=None, repr=False)

    @property
    def pgid(self) -> int:
        return self.launcher_pid  # the launcher leads its session and its process group

    def training_pid(self) -> int | None:
        """The command's pid, from launcher.json (read until it is there, then remembered)."""
        if self._pid is None:
            info = _read_json(self.attempt_dir / "launcher.json")
            pid = info.get("pid") if info else None
            self._pid = int(pid) if isinstance(pid, int) else None
        return self._pid

    def wait(self, timeout_s: float, sleep: Callable[[float], None] = time.sleep) -> None:
        """Block until the launcher exits or timeout_s passes, whichever comes first. Uses a
        pidfd where the kernel has them (no polling, and it works after a re-attach too)."""
        if self._pidfd is None:
            self._pidfd = -1
            if hasattr(os, "pidfd_open"):
                with contextlib.suppress(OSError):
                    self._pidfd = os.pidfd_open(self.launcher_pid)
        if self._pidfd >= 0:
            ready, _, _ = select.select([self._pidfd], [], [], timeout_s)
            if ready:
                # The launcher is gone; its pidfd stays readable for good. If the training
                # lives on, the loop goes on polling: from now on at its own pace, not in a
                # spin. (-1, not None: never re-open it on a pid that may be reused.)
                os.close(self._pidfd)
                self._pidfd = -1
        elif self.popen is not None and self.popen.returncode is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout_s)
        else:
            sleep(timeout_s)

    def close(self) -> None:
        if self._pidfd is not None and self._pidfd >= 0:
            os.close(self._pidfd)
        self._pidfd = None

    def poll(self) -> ExitStatus | None:
        """How the training command ended, or None while any process of the attempt lives.

        The launcher writes exit.json when the command ends. If the launcher itself died (a
        kill -9, the OOM killer) while the training lives on, the attempt is still running: it
        ends when the last process carrying its token is gone, with an unknown status."""
        if self.popen is not None:
            code = self.popen.poll()
            if code is None:
                return None
        elif _alive(self.launcher_pid, self.launcher_started):
            return None
        else:
            code = None
        info = _read_json(self.attempt_dir / "exit.json")
        if info is not None:
            return ExitStatus(
                info.get("exit_code"),
                info.get("signal"),
                float(info["ended"]),
                tuple(int(s) for s in info.get("signals_received") or ()),
            )
        if _token_bearers(self.token):
            return None  # the launcher is gone, the training is not: keep watching it
        if code is None or code == -signal.SIGKILL:
            # Nothing says how the command ended (its launcher was killed too).
            return ExitStatus(None, None, time.time())
        # The launcher died of something else with the command: its status is the attempt's.
        return ExitStatus(code if code >= 0 else None, -code if code < 0 else None, time.time())


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: int, started: float) -> bool:
    try:
        proc = psutil.Process(pid)
        return abs(proc.create_time() - started) < 1.0 and proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def launch(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    attempt_dir: Path,
    grace_s: float,
    token: str,
) -> Handle:
    """Start argv under the launcher, output appended to attempt_dir/{stdout,stderr}.log."""
    try:
        attempt_dir.mkdir(parents=True, exist_ok=True)
        stdout: IO[bytes] = (attempt_dir / STDOUT_NAME).open("ab")
        stderr: IO[bytes] = (attempt_dir / STDERR_NAME).open("ab")
    except OSError as exc:
        raise LaunchError(f"cannot create the attempt's log files in {attempt_dir}: {exc}") from exc
    cmd = [
        sys.executable,
        "-I",
        str(LAUNCHER),
        "--dir",
        str(attempt_dir),
        "--grace",
        str(grace_s),
        "--",
        *argv,
    ]
    try:
        popen = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env={**env, TOKEN_VAR: token},
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise LaunchError(f"cannot start the launcher for {argv[0]!r}: {exc}") from exc
    finally:
        stdout.close()
        stderr.close()
    try:
        started = psutil.Process(popen.pid).create_time()
    except psutil.Error:
        started = time.time()
    return Handle(popen.pid, started, attempt_dir, token, popen)


def reattach(
    launcher_pid: int | None, launcher_started: float | None, attempt_dir: Path, token: str
) -> Handle | None:
    """A handle on an attempt started by an earlier babysit, if its launcher is still alive."""
    if launcher_pid is None or launcher_started is None:
        return None
    if not _alive(launcher_pid, launcher_started):
        return None
    return Handle(launcher_pid, launcher_started, attempt_dir, token)


def adopt(attempt_dir: Path, token: str | None = None) -> Handle | None:
    """A handle on the attempt in attempt_dir from what its launcher wrote (launcher.json), for
    an attempt the store does not fully know (babysit died around its launch). None when the
    launcher never started. Identity is the attempt's token in the launcher's environment."""
    info = _read_json(attempt_dir / "launcher.json")
    if info is None or not isinstance(info.get("launcher_pid"), int):
        return None
    token = token or info.get("token")
    if not isinstance(token, str) or not token:
        return None
    pid = int(info["launcher_pid"])
    started = 0.0  # a start time that matches nothing: "not alive", unless proven below
    with contextlib.suppress(psutil.Error, OSError):
        proc = psutil.Process(pid)
        if proc.environ().get(TOKEN_VAR) == token:
            started = proc.create_time()
    return Handle(pid, started, attempt_dir, token)


def sweep(handle: Handle) -> list[int]:
    """SIGKILL any process still carrying the ended attempt's token; return their pids."""
    left = _token_bearers(handle.token)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return left


def signal_group(handle: Handle, sig: int) -> None:
    """Send sig to the attempt's process group, and to any process of it that left the group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(handle.pgid, sig)
    for pid in _token_bearers(handle.token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) != handle.pgid:  # the group got it already
                os.kill(pid, sig)


def survivors(handle: Handle) -> list[int]:
    """Every live (non-zombie) process of the attempt: the group, the launcher's descendants and
    every process that carries the attempt's token."""
    if handle.popen is not None:
        handle.popen.poll()  # reap the launcher if it ended, so it does not count as alive
    pids: set[int] = set(_token_bearers(handle.token))
    if _alive(handle.launcher_pid, handle.launcher_started):
        pids.add(handle.launcher_pid)
        with contextlib.suppress(psutil.Error):
            pids.update(c.pid for c in psutil.Process(handle.launcher_pid).children(True))
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) == handle.pgid:
                pids.add(proc.pid)
    return sorted(p for p in pids if _running(p))


def kill_all(handle: Handle, spare_launcher: bool = False) -> None:
    """SIGKILL every process of the attempt. With spare_launcher, not the launcher: it then
    reaps the command and writes down how it ended (SIGKILL) before it exits by itself."""
    for pid in survivors(handle):
        if spare_launcher and pid == handle.launcher_pid:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _token_bearers(token: str) -> list[int]:
    me = os.getpid()
    found = []
    needle = f"{TOKEN_VAR}={token}".encode()
    for name in _proc_pids():
        if name == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(name)
        except OSError:
            continue
    return found


def _proc_pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
