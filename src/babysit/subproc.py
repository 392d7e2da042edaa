"""Ending a helper command that ran out of time: its whole session, with a bounded wait.

    proc = subprocess.Popen(argv, start_new_session=True, stdout=PIPE, stderr=PIPE)
    try:
        out, err = proc.communicate(timeout=t)
    except subprocess.TimeoutExpired:
        kill_session(proc)   # never waits more than a second, whatever the process does

Used by the checks babysit runs itself (the matmul self-test, --validate-checkpoint, a command
an engine runs on each node): a check stuck in the kernel (a hung filesystem or GPU driver) must
not hang babysit with it. Standard library only: sources and engines both use it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def kill_session(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    # A process stuck in the kernel (D state) may never go: leave it after a second.
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
