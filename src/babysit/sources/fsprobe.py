"""Filesystem probes: how long a write takes where checkpoints and data go.

    check_fs_latency(Path("/nfs/ckpt"), warn_ms=500, fail_ms=5000)   # -> CheckResult (doctor)
    write_probe(Path("/nfs/ckpt"))                                   # 4 KiB + fsync (telemetry)
    nearest_existing(Path("out/run1"))   # the directory a not-yet-created one would live in

The doctor's probe writes 1 MiB, fsyncs it, reads it back (and compares) and deletes it, each
step timed; a directory that refuses writes fails (checkpoints cannot be saved there) unless it
is a data directory, which may well be read-only: then listing it is timed instead. Both probes
block for as long as the filesystem does: callers run them in threads with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

from babysit.records import CheckResult, CheckStatus

_PROBE_BYTES = 1 << 20


def write_probe(directory: Path) -> None:
    """4 KiB write + fsync + delete in `directory`; raises OSError when it cannot write."""
    path = directory / f".babysit-telemetry-{os.getpid()}-{threading.get_ident()}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, b"\0" * 4096)
        os.fsync(fd)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)


def where(path: Path) -> str:
    """A directory as results name it: absolute, so `.` says which directory it was."""
    return str(path.expanduser().absolute())


def nearest_existing(path: Path) -> Path:
    p = path.expanduser().absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_fs_latency(
    d: Path, warn_ms: float, fail_ms: float, read_only_ok: bool = False
) -> CheckResult:
    """1 MiB write + fsync + read back + delete in `d` (or its nearest existing parent). A data
    directory (`read_only_ok`) that refuses writes is timed by listing it instead."""
    real = nearest_existing(d)
    note = "" if real == d.expanduser().absolute() else f" (not created yet: checked {real})"
    probe = real / f".babysit-probe-{os.getpid()}-{threading.get_ident()}"
    if not real.is_dir():
        msg = f"{real} is a file, not a directory: checkpoints cannot be saved under it"
        return CheckResult("fs_latency", CheckStatus.FAIL, msg, where(d))
    payload = os.urandom(_PROBE_BYTES)
    t0 = time.monotonic()
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        if read_only_ok:
            return _list_latency(d, real, warn_ms, fail_ms, note, f"read-only ({exc.strerror})")
        msg = f"cannot write in {real}: {exc.strerror}; checkpoints cannot be saved there{note}"
        return CheckResult("fs_latency", CheckStatus.FAIL, msg, where(d))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            t_write = time.monotonic()
            os.fsync(fh.fileno())
        t_sync = time.monotonic()
        same = probe.read_bytes() == payload
        t_read = time.monotonic()
    except OSError as exc:  # a full disk, a quota, EIO, a stale NFS handle: what this is for
        msg = (
            f"writing a 1 MiB probe in {real} failed: {exc.strerror or exc}; nothing can be "
            f"saved there until it is fixed{note}"
        )
        return CheckResult("fs_latency", CheckStatus.FAIL, msg, where(d))
    finally:
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)
    t_end = time.monotonic()
    ms = {
        "write_ms": (t_write - t0) * 1e3,
        "fsync_ms": (t_sync - t_write) * 1e3,
        "read_ms": (t_read - t_sync) * 1e3,
        "delete_ms": (t_end - t_read) * 1e3,
    }
    total = (t_end - t0) * 1e3
    details: dict[str, Any] = {"total_ms": total, **ms, "checked": str(real)}
    if not same:
        msg = f"{real} returned different bytes than were written: a broken filesystem or disk"
        return CheckResult("fs_latency", CheckStatus.FAIL, msg, where(d), 0.0, details)
    summary = f"1 MiB write+fsync+read+delete in {total:.0f} ms{note}"
    return _judge_fs(d, total, warn_ms, fail_ms, summary, details)


def _list_latency(
    d: Path, real: Path, warn_ms: float, fail_ms: float, note: str, why: str
) -> CheckResult:
    t0 = time.monotonic()
    try:
        with os.scandir(real) as it:
            for n, entry in enumerate(it):
                entry.stat()
                if n >= 100:
                    break
    except OSError as exc:
        msg = f"cannot list {real}: {exc.strerror or exc}; the training cannot read from it{note}"
        return CheckResult("fs_latency", CheckStatus.FAIL, msg, where(d))
    total = (time.monotonic() - t0) * 1e3
    details = {"list_ms": total, "checked": str(real)}
    summary = f"{why}: listing took {total:.0f} ms{note}"
    return _judge_fs(d, total, warn_ms, fail_ms, summary, details)


def _judge_fs(
    d: Path, total_ms: float, warn_ms: float, fail_ms: float, summary: str, details: dict[str, Any]
) -> CheckResult:
    if total_ms >= fail_ms:
        status, summary = (
            CheckStatus.FAIL,
            summary + ": slow or hung filesystem (the slow-NFS case)",
        )
    elif total_ms >= warn_ms:
        status, summary = CheckStatus.WARN, summary + ": slow filesystem; saves will take long"
    else:
        status = CheckStatus.PASS
    return CheckResult("fs_latency", status, summary, where(d), 0.0, details)
