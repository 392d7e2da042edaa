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


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _clean_up(grace_s: float) -> None:
    """SIGTERM what is left of the attempt, SIGKILL it after the grace period."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        _reap()
        left = _leftovers()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            _reap()
            if not _leftovers():
                return
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: launcher.py --dir DIR --grace S -- CMD ...", file=sys.stderr)
        return 2
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1 :]
    attempt_dir = opts[opts.index("--dir") + 1]
    grace_s = float(opts[opts.index("--grace") + 1])
    exit_path = os.path.join(attempt_dir, "exit.json")

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)  # a handler, not SIG_IGN: the child gets defaults
    _become_subreaper()
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
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
        {"launcher_pid": os.getpid(), "pid": child.pid, "started": time.time()},
    )
    status = child.wait()
    ended = time.time()
    _clean_up(grace_s)
    _write_json(
        exit_path,
        {
            "pid": child.pid,
            "exit_code": status if status >= 0 else None,
            "signal": -status if status < 0 else None,
            "ended": ended,
        },
    )
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
