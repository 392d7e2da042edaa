"""What one alert says: its severity, its plain words, and how it reads on a phone.

    alert = Alert(Severity.PAGE, "gave_up", "gpt", "gpu-3", "babysit gave up: a human must act",
                  what="attempt 4 failed at step 1200: ...", action="...", more="babysit ...",
                  fingerprint="gpt|gave_up|user_code|...", group="gpt|page|gave_up", ts=now)
    alert.title()      # "[PAGE] gpt on gpu-3: babysit gave up: a human must act"
    alert.body()       # the lines a person reads: run, what happened, verdict, what babysit did
    alert.document()   # the same as JSON-able data (the on_event hook's stdin)

Severities, loudest first: `page` (a human must act), `warn` (babysit recovered by itself),
`info`. A `recovered` alert keeps the severity of the alert it follows, so that it reaches the
same destinations. Every text here is redacted again when it leaves (dispatch.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Severity(str, Enum):
    INFO = "info"
    WARN = "warn"
    PAGE = "page"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def up(self) -> Severity:
        """One notch louder (escalation); a page stays a page."""
        return Severity.WARN if self == Severity.INFO else Severity.PAGE


_RANK = {Severity.INFO: 0, Severity.WARN: 1, Severity.PAGE: 2}
SEVERITIES = ("page", "warn", "info")  # loudest first, as error messages list them


@dataclass(frozen=True)
class Alert:
    """One message to the humans. `count` is the occurrences it stands for (a digest, or
    repeats folded in by the cooldown); `attachments` are file paths (a loss plot, stacks)."""

    severity: Severity
    kind: str  # gave_up, restart, rollback, banned, preflight, incident, hang, succeeded,
    #            stopped, recovered, digest, test
    run: str
    host: str
    headline: str
    what: str = ""  # what happened, in plain words
    verdict: str | None = None  # triage's verdict, with the culprit rank and host when known
    action: str = ""  # what babysit did, or wants the human to do
    more: str = ""  # the command that shows more
    fingerprint: str = ""
    group: str = ""
    ts: float = 0.0
    attempt: int | None = None
    step: int | None = None
    count: int = 1
    escalated: bool = False
    attachments: tuple[str, ...] = ()

    def title(self) -> str:
        tag = "RECOVERED" if self.kind == "recovered" else self.severity.value.upper()
        return f"[{tag}] {self.run} on {self.host}: {self.headline}"

    def body(self) -> str:
        lines = [f"run: {self.run} on host {self.host}" + _attempt(self.attempt, self.step)]
        if self.what:
            lines.append(f"what happened: {self.what}")
        if self.verdict:
            lines.append(f"verdict: {self.verdict}")
        if self.action:
            lines.append(f"babysit: {self.action}")
        if self.escalated:
            lines.append(f"escalated: the same incident {self.count} times; it keeps coming back")
        elif self.count > 1 and self.kind != "digest":
            lines.append(f"repeats: {self.count - 1} more like it since the last alert")
        if self.more:
            lines.append(f"more: {self.more}")
        return "\n".join(lines)

    def document(self) -> dict[str, Any]:
        doc = dataclasses.asdict(self)
        doc["severity"] = self.severity.value
        doc["attachments"] = list(self.attachments)
        doc["title"], doc["body"] = self.title(), self.body()
        return doc


def _attempt(attempt: int | None, step: int | None) -> str:
    if attempt is None:
        return ""
    return f", attempt {attempt}" + (f" (step {step})" if step is not None else "")
