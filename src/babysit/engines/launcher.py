"""The launcher: a tiny parent that stays with the training command when babysit itself dies.

    python -I launcher.py --dir ATTEMPT_DIR --grace 30 -- CMD ARGS...

babysit starts this script (by path, standard library only, in a new session) instead of the
command itself. It starts CMD in the same process group, becomes the child subreaper so that
orphaned grandchildren come back to it, and when CMD ends it writes `exit.json` (exit code or
signal, time) into ATTEMPT_DIR. That file is how a re-attached babysit, which is not the parent
of anything, learns how the attempt ended. It then cleans up what CMD left behind (SIGTERM, then
SIGKILL after the grace period) so no process of the attempt outlives it.

SIGINT, SIGTERM and SIGHUP reach CMD through the process group; this script only notes them.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _write_json(path: str, data: dict[str, object]) -> bool:
    """Write atomically; False when the disk refuses (babysit then reads our own exit status)."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def _child_umask() -> int:
    """The umask babysit found (it runs with a private one for its home): the command gets it
    back. -1 (leave it) when babysit did not change it."""
    value = os.environ.pop("BABYSIT_CHILD_UMASK", "")
    try:
        return int(value, 8) if value else -1
    except ValueError:
        return -1


def _become_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init, babysit's environment sweep still finds them


def _leftovers() -> list[int]:
    """Processes of the attempt still around: our children (reparented orphans included) and
    members of our process group, read from /proc; never ourselves."""
    me, group = os.getpid(), os.getpgid(0)
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if (
            len(fields) > 2
            and fields[0] != b"Z"
            and (int(fields[1]) == me or int(fields[2]) == group)
        ):
            out.append(int(name))
    return out


def _kill_all(sig: int) -> list[int]:
    """Send sig to every leftover process of the attempt; return whom it was sent to."""
    left = _leftovers()
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    return left


def _reap_any() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _clean_up(grace_s: float) -> None:
    """SIGTERM what is left of the attempt, then SIGKILL, again and again, until nothing is left
    (orphans keep arriving while their parents die)."""
    _reap_any()
    if not _kill_all(signal.SIGTERM):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap_any()
        if not _leftovers():
            return
        time.sleep(0.05)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        _reap_any()
        if not _kill_all(signal.SIGKILL):
            return
        time.sleep(0.05)


class _Stop:
    """The operator's stop, owned here too: if babysit dies mid-stop, the grace period still
    ends in a SIGKILL of the whole attempt."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.signals: list[int] = []

    def handler(self, sig: int, _frame: object) -> None:
        self.signals.append(sig)
        if len(self.signals) == 1 and sig in (signal.SIGTERM, signal.SIGINT):
            signal.setitimer(signal.ITIMER_REAL, max(self.grace_s, 0.001))

    def expired(self, _sig: int, _frame: object) -> None:
        _kill_all(signal.SIGKILL)


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: launcher.py --dir DIR --grace S -- CMD ...", file=sys.stderr)
        return 2
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1 :]
    attempt_dir = opts[opts.index("--dir") + 1]
    grace_s = float(opts[opts.index("--grace") + 1])
    exit_path = os.path.join(attempt_dir, "exit.json")

    stop = _Stop(grace_s)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop.handler)  # a handler, not SIG_IGN: the child gets defaults
    signal.signal(signal.SIGALRM, stop.expired)
    _become_subreaper()
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, umask=_child_umask())
    except OSError as exc:
        print(f"babysit: cannot start {cmd[0]!r}: {exc.strerror or exc}", file=sys.stderr)
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        _write_json(
            exit_path,
            {
                "pid": None,
                "exit_code": code,
                "signal": None,
                "ended": time.time(),
                "error": str(exc),
            },
        )
        return code
    _write_json(
        os.path.join(attempt_dir, "launcher.json"),
        {
            "launcher_pid": os.getpid(),
            "pid": child.pid,
            "started": time.time(),
            "token": os.environ.get("BABYSIT_ATTEMPT_TOKEN"),
        },
    )
    # Reap every child as it ends (orphans come to us as the subreaper), until the command ends.
    while True:
        pid, wstatus = os.wait()
        if pid == child.pid:
            status = os.waitstatus_to_exitcode(wstatus)
            break
    child.returncode = status  # we reaped it ourselves; keep Popen from trying again
    ended = time.time()
    signal.setitimer(signal.ITIMER_REAL, 0)
    _clean_up(grace_s)
    _write_json(
        exit_path,
        {
            "pid": child.pid,
            "exit_code": status if status >= 0 else None,
            "signal": -status if status < 0 else None,
            "ended": ended,
            "signals_received": stop.signals,
        },
    )
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
