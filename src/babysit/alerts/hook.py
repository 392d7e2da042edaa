"""`on_event`: the operator's own command, with each alert as JSON on its stdin.

    hook = HookSender("python annotate.py", timeout_s=30)
    hook.send(alert)     # runs `sh -c CMD` in the working directory; raises SendFailed

For everything apprise does not do: a W&B annotation, a ticket, a Slurm drain request. It runs
in its own outbox thread (never on the supervisor's path), in a session of its own so that a
command that hangs is killed whole at the timeout. Its stdin: Alert.document() (redacted),
one JSON object, then EOF. Its output is discarded but for the end of stderr, quoted on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess

from babysit.alerts.message import Alert
from babysit.alerts.sender import SendFailed
from babysit.redact import redact_text
from babysit.strictjson import finite


class HookSender:
    attachments = False

    def __init__(self, command: str, timeout_s: float) -> None:
        self.command, self.timeout_s = command, timeout_s
        self.name = "on_event command"

    def send(self, alert: Alert) -> None:
        doc = json.dumps(finite(alert.document()), allow_nan=False)
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", self.command],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise SendFailed(f"cannot start it: {exc}") from exc
        try:
            _, err = proc.communicate(doc.encode(), timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise SendFailed(
                f"it did not finish within on_event_timeout_s ({self.timeout_s:g}s): killed"
            ) from None
        if proc.returncode != 0:
            tail = redact_text(err.decode(errors="replace").strip()[-300:])
            raise SendFailed(f"it exited {proc.returncode}" + (f": {tail}" if tail else ""))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=5)
