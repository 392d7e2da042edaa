"""The kernel's log since an attempt started: where Xid errors, ECC errors and the OOM killer
speak (they never reach the training's own output).

    lines = kernel_lines(since=attempt_started)   # [] when dmesg is missing or not allowed

Reads `dmesg --time-format=iso` (util-linux) with a short timeout; most clusters allow it,
containers and hardened hosts often do not (`dmesg: read kernel buffer failed: Operation not
permitted`), and then there is simply nothing to add. The OOM killer's lines about other users'
processes are left out: on a shared node they are not this run's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from datetime import datetime

MAX_LINES = 5000
_SLACK_S = 60.0  # kernel messages a little before the attempt's start still count


# The OOM killer's report runs from `python3 invoked oom-killer: ...` to `Killed process 42
# (python) ... UID:1000` (or `oom-kill:...,uid=1000`). On a shared node another user's report is
# not this run's: the whole block goes.
_UID = re.compile(r"\b(?:uid=|UID:)(\d+)")
_OOM_START = "invoked oom-killer"
_OOM_END = ("Killed process", "oom_reaper:")


def _stamp(line: str) -> float | None:
    try:
        return datetime.fromisoformat(line.split(" ", 1)[0].replace(",", ".")).timestamp()
    except ValueError:
        return None


def _drop_other_users(lines: list[str], uid: int) -> list[str]:
    out: list[str] = []
    block: list[str] = []
    for line in lines:
        if _OOM_START in line:
            out += block
            block = [line]
            continue
        if block:
            block.append(line)
            if not any(e in line for e in _OOM_END):
                continue
            owner = next((int(m[1]) for b in block if (m := _UID.search(b))), None)
            if owner is None or owner == uid:
                out += block
            block = []
            continue
        m = _UID.search(line)
        if m is None or int(m[1]) == uid:
            out.append(line)
    return out + block


def parse_iso_dmesg(lines: Sequence[str], since: float, uid: int | None = None) -> list[str]:
    """The lines stamped at or after since - slack (`2026-11-30T03:04:05,123456+00:00 msg`);
    unstamped lines go with the stamped line before them. With `uid`, the OOM killer's reports
    about another user's processes are left out."""
    out: list[str] = []
    keep = False
    for line in lines:
        ts = _stamp(line)
        if ts is None:
            if keep:
                out.append(line)
            continue
        keep = ts >= since - _SLACK_S
        if keep:
            out.append(line)
    if uid is not None:
        out = _drop_other_users(out, uid)
    return out[-MAX_LINES:]


def kernel_lines(since: float, timeout_s: float = 3.0) -> list[str]:
    dmesg = shutil.which("dmesg")
    if dmesg is None:
        return []
    try:
        proc = subprocess.run(
            [dmesg, "--time-format=iso"],
            capture_output=True,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    text = proc.stdout.decode("utf-8", "replace")
    return parse_iso_dmesg(text.splitlines(), since, os.getuid())
