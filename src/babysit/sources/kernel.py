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


# The OOM killer names the victim's user: `oom-kill:...,uid=1000` and `Killed process 42
# (python) ... UID:1000`. On a shared node, another user's OOM kill is not our run's.
_UID = re.compile(r"\b(?:uid=|UID:)(\d+)")


def parse_iso_dmesg(lines: Sequence[str], since: float, uid: int | None = None) -> list[str]:
    """The lines stamped at or after since - slack (`2026-11-30T03:04:05,123456+00:00 msg`);
    unstamped lines go with the stamped line before them. With `uid`, lines about another
    user's processes are left out."""
    out: list[str] = []
    keep = False
    for line in lines:
        head = line.split(" ", 1)[0]
        try:
            ts = datetime.fromisoformat(head.replace(",", ".")).timestamp()
        except ValueError:
            if keep:
                out.append(line)
            continue
        keep = ts >= since - _SLACK_S
        if keep and uid is not None:
            m = _UID.search(line)
            if m is not None and int(m[1]) != uid:
                continue
        if keep:
            out.append(line)
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
