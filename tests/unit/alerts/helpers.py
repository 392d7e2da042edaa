"""Shared bits of the alerts' unit tests: events as the supervisor writes them, a fake sender."""

from __future__ import annotations

import threading
from typing import Any

from babysit.alerts.message import Alert
from babysit.alerts.sender import SendFailed
from babysit.records import Event, EventKind

RUN = "gpt"


def event(kind: EventKind, message: str = "", attempt: int | None = None, **data: Any) -> Event:
    return Event(RUN, kind, message, 1000.0, attempt, data)


def ended(attempt: int = 1, step: int = 40, category: str = "network", **verdict: Any) -> Event:
    v = {
        "category": category,
        "transient": True,
        "summary": "ConnectionError: Connection reset by peer",
        "fingerprint": "fp-net",
        "diagnosis": {"suspect": {"kind": "node", "host": "gpu-17", "rank": 3, "gpu": None}},
        **verdict,
    }
    return event(
        EventKind.ATTEMPT_ENDED,
        f"attempt {attempt} failed (exit code 1) at step {step}",
        attempt,
        outcome="failed",
        exit_code=1,
        last_step=step,
        verdict=v,
    )


class FakeSender:
    """Keeps what it was given; fails the first `fail` sends; blocks while `gate` is clear."""

    def __init__(self, name: str = "json://127.0.0.1", fail: int = 0, attachments: bool = False):
        self.name, self.fail, self.attachments = name, fail, attachments
        self.got: list[Alert] = []
        self.tries = 0
        self.gate = threading.Event()
        self.gate.set()
        self.done = threading.Event()

    def send(self, alert: Alert) -> None:
        self.gate.wait()
        self.tries += 1
        if self.tries <= self.fail:
            raise SendFailed("connection refused")
        self.got.append(alert)
        self.done.set()
