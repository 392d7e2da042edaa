"""`babysit stop`: the operator's request, written as a file the supervising loop polls.

    write_stop_request(run_dir, StopRequest.now("night shift: loss diverged"))  # the CLI
    stops = OperatorStops(run_dir / STOP_REQUEST, monotonic, wall, say)          # the loop
    ctx.stop_signals = stops   # `if ctx.stop_signals:` now also sees a request (as SIGTERM)
    stops.describe(0)          # "`babysit stop` from alice@gpu-login (night shift: ...)"

The request is one small JSON file under the run's directory in the home
(`runs/NAME/stop-request.json`: who, where, when, why, an id), written atomically. The loops of
supervise already ask `if ctx.stop_signals:` on every pulse and carry out an operator stop (the
SIGTERM path: pass it to the attempt, SIGKILL after the grace, record it, exit 5);
OperatorStops is that list of signals, and when asked, it also looks for the file (one stat,
at most every `every_s`): a new request joins the list as a SIGTERM. A second request (a new
id) is a second signal: what is left of the attempt is killed at once. A request older than the
babysit that finds it (written while no babysit ran) is stale: it is set aside, not obeyed.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import signal
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from babysit.records import Level, Say

__all__ = [
    "STOP_REQUEST",
    "OperatorStops",
    "StopRequest",
    "read_stop_request",
    "write_stop_request",
]

STOP_REQUEST = "stop-request.json"
MAX_BYTES = 64 * 1024  # a request is a few hundred bytes; anything bigger is not one


@dataclass(frozen=True)
class StopRequest:
    user: str
    host: str
    pid: int
    ts: float  # wall time of the request
    reason: str = ""
    id: str = ""

    @classmethod
    def now(cls, reason: str = "") -> StopRequest:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no passwd entry (a container)
            user = f"uid {os.getuid()}"
        return cls(user, socket.gethostname(), os.getpid(), time.time(), reason, uuid.uuid4().hex)

    @property
    def who(self) -> str:
        return f"{self.user}@{self.host}"

    def describe(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"`babysit stop` from {self.who}{why}"


def write_stop_request(run_dir: Path, request: StopRequest) -> Path:
    """Write the request atomically (a reader never sees half of it); returns its path.
    Raises OSError."""
    path = run_dir / STOP_REQUEST
    tmp = run_dir / f".{STOP_REQUEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(asdict(request)) + "\n")
    os.replace(tmp, path)
    return path


def read_stop_request(path: Path) -> StopRequest | None:
    """The request at `path`; None when there is none. A file that is not a request (garbage,
    too big) is still one: someone asked to stop; who is unknown."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable now: looked at again on the next pulse
    fallback = StopRequest("someone", "?", 0, st.st_mtime, "unreadable request file", "")
    if len(raw) > MAX_BYTES:
        return fallback
    try:
        data: Any = json.loads(raw)
        return StopRequest(
            user=str(data["user"])[:100],
            host=str(data["host"])[:100],
            pid=int(data.get("pid", 0)),
            ts=float(data["ts"]),
            reason=str(data.get("reason", ""))[:500],
            id=str(data.get("id", ""))[:100],
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return fallback


class OperatorStops(list[int]):
    """The operator's stop signals (appended by babysit's signal handlers), which also carry
    out `babysit stop`: asking how many there are (`if stops:`, `len(stops)`) first looks for
    a new request file, at most every `every_s`, and counts it as a SIGTERM."""

    def __init__(
        self,
        path: Path,
        monotonic: Callable[[], float],
        wall: Callable[[], float],
        say: Say,
        every_s: float = 0.5,
    ) -> None:
        super().__init__()
        self.path = path
        self.monotonic, self.wall, self.say = monotonic, wall, say
        self.every_s = every_s
        self.requests: dict[int, StopRequest] = {}  # index in the list -> the request behind it
        self._looked_at: float | None = None
        self._seen: set[tuple[str, float]] = set()
        self._armed = False

    def arm(self, started: float) -> None:
        """Start obeying requests; one written before `started` (wall time, when this babysit
        began) is stale, set aside with a word."""
        old = read_stop_request(self.path)
        if old is not None and old.ts < started:
            self.say(
                Level.WARN,
                f"ignored a stop request from {old.who} made before this babysit started "
                f"(at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(old.ts))}); run "
                "`babysit stop` again to stop this run",
            )
            self._seen.add((old.id, old.ts))  # set aside even where it cannot be renamed
            self._discard()
        self._armed = True

    def close(self) -> None:
        """The run is over for this babysit: a request it carried out is done with."""
        if self.requests:
            self._discard()
        self._armed = False

    def describe(self, index: int) -> str | None:
        """Who asked for stop number `index`, when it came from `babysit stop`; else None."""
        request = self.requests.get(index)
        return request.describe() if request is not None else None

    def __len__(self) -> int:
        self._poll()
        return super().__len__()

    def _poll(self) -> None:
        if not self._armed:
            return
        now = self.monotonic()
        if self._looked_at is not None and now - self._looked_at < self.every_s:
            return
        self._looked_at = now
        request = read_stop_request(self.path)
        if request is None or (request.id, request.ts) in self._seen:
            return
        self._seen.add((request.id, request.ts))
        self.requests[super().__len__()] = request
        self.append(signal.SIGTERM)
        self.say(Level.INFO, f"stop requested by {request.describe()}")

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rename(self.path.with_name(STOP_REQUEST + ".done"))
