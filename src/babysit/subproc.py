"""The checks babysit runs itself: bounded in time, stopped with babysit, nothing left behind.

    res = run_check(argv, cwd, timeout_s=300, stopping=lambda: bool(stop_signals))
    res.returncode, res.stdout, res.stderr    # returncode None: timed out, or stopped
    res.timed_out, res.stopped

    proc = subprocess.Popen(argv, start_new_session=True, stdout=PIPE, stderr=PIPE)
    try:
        out, err = proc.communicate(timeout=t)
    except subprocess.TimeoutExpired:
        kill_session(proc)   # never waits more than a second, whatever the process does

Used by the checks babysit runs itself (the matmul self-test, --validate-checkpoint, a command
an engine runs on each node): a check stuck in the kernel (a hung filesystem or GPU driver) must
not hang babysit with it. Standard library only: sources and engines both use it.

What "the check's processes" are. A check runs in a session of its own, so killing its process
group ends a `sh -c` and what it started. A `setsid` (or a daemonizing double fork) in the check
leaves that group and session, and once its parent is gone it is reparented to init, so the
process tree loses it too. run_check therefore marks the check: its environment carries
BABYSIT_CHECK_ID=<a fresh id>, which every descendant inherits (whatever its session) unless it
clears its whole environment. kill_session(proc, marker) kills, with SIGKILL, in rounds until
none is left: the session and process group, every process whose /proc/PID/environ carries the
marker, and the descendants of any of those. (cgroups would be exact but need privileges or
systemd; the environment needs neither.) A process in uninterruptible sleep (state D) is killed
but its environment not read: reading it can block while the process holds its memory lock.
Without /proc (not Linux) only the session is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

MARKER_ENV = "BABYSIT_CHECK_ID"
TAIL_BYTES = 64 * 1024  # of each of stdout and stderr: what a verdict quotes
KILL_ROUNDS = 10  # scans for processes still alive (a check that forks while being killed)
POLL_S = 0.05  # how often a running check is looked at (and babysit's stop with it)
_ENVIRON_MAX = 1 << 20


@dataclass(frozen=True)
class CheckResult:
    returncode: int | None  # None: it did not finish (timed out or stopped)
    stdout: bytes  # the last TAIL_BYTES of it
    stderr: bytes
    timed_out: bool = False
    stopped: bool = False  # babysit was told to stop meanwhile


def run_check(
    argv: Sequence[str],
    cwd: Path,
    timeout_s: float,
    stopping: Callable[[], bool] = lambda: False,
    env: dict[str, str] | None = None,
    poll_s: float = POLL_S,
) -> CheckResult:
    """Run `argv` in its own session, at most `timeout_s`, and no longer than babysit is not
    told to stop (`stopping()` is asked every `poll_s`; a signal handler that sets it is run
    meanwhile). Whatever the check started is killed when it ends, however it ends.
    Raises OSError when it cannot be started."""
    marker = f"{os.getpid()}-{uuid.uuid4().hex}"
    child_env = dict(os.environ if env is None else env)
    child_env[MARKER_ENV] = marker
    # Files, not pipes: nothing to drain while waiting, and a check that writes gigabytes
    # cannot fill babysit's memory (only the tails are read back).
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        timed_out = stopped = False
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(min(poll_s, deadline - time.monotonic()), 0.001))
                break
            if stopping():
                stopped = True
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
        # Also when it ended on its own: what it left running in the background goes with it.
        kill_session(proc, marker)
        code = None if stopped or timed_out else proc.returncode
        return CheckResult(code, _tail(out), _tail(err), timed_out, stopped)


def kill_session(proc: subprocess.Popen[bytes], marker: str | None = None) -> list[int]:
    """SIGKILL the session `proc` leads (it was started with start_new_session=True), and with
    `marker` every process carrying it in its environment and their descendants. Waits at
    most a second for `proc` (a process stuck in the kernel may never go). Returns the pids
    found and killed one by one (none without a marker: only the group is)."""
    killed: set[int] = set()
    # The first look before any kill: a child whose parent dies is reparented to init, and
    # the tree no longer leads to it.
    fresh = _members(proc.pid, marker) if marker is not None else []
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    for _ in range(KILL_ROUNDS):
        for pid in fresh:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed.update(fresh)
        if marker is None or not fresh:
            break
        fresh = [p for p in _members(proc.pid, marker) if p not in killed]
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    return sorted(killed)


@dataclass(frozen=True)
class _Proc:
    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int


def _members(leader: int, marker: str) -> list[int]:
    """The live processes of the check led by `leader` (see the module docstring)."""
    procs = _processes()
    me = os.getpid()
    needle = f"{MARKER_ENV}={marker}".encode()
    uid = os.getuid()
    ours = set()
    for p in procs.values():
        if p.pid == me or p.state in "ZX":
            continue
        if leader in (p.session, p.pgrp) or (p.state != "D" and _carries(p.pid, needle, uid)):
            ours.add(p.pid)
    grew = True
    while grew:  # and their descendants (a child that cleared its environment)
        grew = False
        for p in procs.values():
            if p.pid not in ours and p.ppid in ours and p.state not in "ZX" and p.pid != me:
                ours.add(p.pid)
                grew = True
    return sorted(ours)


def _processes() -> dict[int, _Proc]:
    out: dict[int, _Proc] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read(4096)
        except OSError:
            continue  # gone meanwhile
        # `pid (comm) state ppid pgrp session ...`: comm may hold spaces and parentheses
        fields = raw[raw.rfind(b")") + 2 :].split()
        try:
            state = fields[0].decode()
            ppid, pgrp, session = int(fields[1]), int(fields[2]), int(fields[3])
        except (IndexError, ValueError, UnicodeDecodeError):
            continue
        out[int(name)] = _Proc(int(name), state, ppid, pgrp, session)
    return out


def _carries(pid: int, needle: bytes, uid: int) -> bool:
    try:
        if os.stat(f"/proc/{pid}").st_uid != uid:
            return False  # not ours to read (nor started by our check)
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read(_ENVIRON_MAX)
    except OSError:
        return False
    return needle + b"\0" in environ or environ.endswith(needle)


def _tail(fh: IO[bytes]) -> bytes:
    """The last TAIL_BYTES of what the check wrote to `fh`."""
    try:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(size - TAIL_BYTES, 0))
        return fh.read(TAIL_BYTES)
    except (OSError, ValueError):
        return b""
