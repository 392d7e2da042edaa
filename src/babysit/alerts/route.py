"""Which events are worth telling a human, how loudly, and in what words. Pure.

    router = Router(run="gpt", host="gpu-3", more="babysit logbook gpt")
    alert = router.route(event)       # an Alert, or None (most events are only for the logbook)

    event               severity  why
    gave_up             page      babysit stopped: a human must act (a bug, the budget spent)
    hang (action=alert) page      nobody will kill it: a human must look
    restart_scheduled   warn      babysit recovered by itself: a restart
    rollback            warn      ... a rollback past an anomaly
    banned              warn      ... a node banned
    preflight (failed)  warn      a node failed its health checks before an attempt
    incident            info      a spike, a NaN, a slowdown, a hang (acted on separately)
    succeeded, stopped  info      the run is over
A warn becomes a page when the same incident keeps coming back (gate.py escalates).
Under `babysit watch --follow` (watching=True) babysit acts on nothing, so a human must: the
triage of a failure in the watched log pages, and an incident (a spike, a NaN, a hang) warns.

The router remembers what the events before said (the verdict of the attempt that just ended,
the file of its grouped stacks), so that the decision that follows carries them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum
from typing import Any

from babysit.alerts.message import Alert, Severity
from babysit.records import Event, EventKind

_DIGITS = re.compile(r"\d+")
_QUIET = frozenset(
    {
        EventKind.RUN_STARTED,
        EventKind.ATTEMPT_STARTED,
        EventKind.REATTACHED,
        EventKind.CHECKPOINT,
        EventKind.STOP_REQUESTED,
        EventKind.FORCE_KILLED,
        EventKind.WARNING,
        EventKind.NOTE,
        EventKind.HANG_EVIDENCE,
        EventKind.UNBANNED,
    }
)


class Router:
    def __init__(
        self, run: str, host: str, more: str, hang_pages: bool = False, watching: bool = False
    ) -> None:
        self.run, self.host, self.more = run, host, more
        self.hang_pages = hang_pages  # [hang] action = "alert": nobody restarts a hung run
        self.watching = watching  # babysit watch: nothing is restarted, a human must act
        self.ended: Mapping[str, Any] | None = None  # the ATTEMPT_ENDED event's data
        self.ended_attempt: int | None = None
        self.ended_message = ""
        self.stacks: dict[int | None, str] = {}  # attempt -> its grouped stacks' file

    def route(self, ev: Event) -> Alert | None:
        if ev.kind == EventKind.ATTEMPT_ENDED:
            self.ended, self.ended_attempt, self.ended_message = ev.data, ev.attempt, ev.message
            return None
        if ev.kind == EventKind.STACKS:
            if isinstance(ev.data.get("file"), str):
                self.stacks[ev.attempt] = ev.data["file"]
            return None
        if self.watching:
            return _watched(ev, self)
        if ev.kind in _QUIET:
            return None
        return route(ev, self)


def _watched(ev: Event, memo: Router) -> Alert | None:
    """An event of `babysit watch --follow`: its triage verdicts and its incidents."""
    data = ev.data
    if ev.kind == EventKind.NOTE and isinstance(data.get("fingerprint"), str):
        return _alert(
            memo,
            ev,
            Severity.PAGE,
            "failed",
            "the watched run failed: a human must act",
            what=ev.message,
            action="only watches this run (babysit watch): restart it yourself, or run it "
            "under `babysit run` next time",
            key=data["fingerprint"],
        )
    if ev.kind == EventKind.INCIDENT:
        incident = str(data.get("incident", "incident"))
        return _alert(
            memo,
            ev,
            Severity.WARN,
            "incident",
            f"{incident.replace('_', ' ')} in the watched run",
            what=ev.message,
            action="only watches this run (babysit watch): look at it",
            key=f"{incident}|{data.get('metric')}",
            step=data.get("step") if isinstance(data.get("step"), int) else None,
        )
    return None


def route(ev: Event, memo: Router) -> Alert | None:
    """The alert for one event, given what the router remembers."""
    data, attempt = ev.data, ev.attempt
    verdict, category, vfp = _verdict(memo.ended)
    summary = _summary(memo.ended)
    # The verdict line carries the summary; without one, what happened says it.
    ended_words = memo.ended_message + (f": {summary}" if summary and verdict is None else "")
    if ev.kind == EventKind.GAVE_UP:
        code = data.get("exit_code")
        advice = data.get("advice") or "look at the logbook before the next try"
        # The decision's reason, unless it only repeats the verdict ("attempt 1: <summary>").
        reason = "" if summary and summary in ev.message else f"{ev.message}; "
        return _alert(
            memo,
            ev,
            Severity.PAGE,
            "gave_up",
            "babysit gave up: a human must act",
            what=ended_words or ev.message,
            verdict=verdict,
            action=f"gave up (exit code {code}): {reason}{advice}",
            key=f"{category}|{vfp or _norm(ev.message)}",
            attempt=attempt if attempt is not None else memo.ended_attempt,
        )
    if ev.kind in (EventKind.RESTART_SCHEDULED, EventKind.ROLLBACK):
        rollback = ev.kind == EventKind.ROLLBACK
        kind = "rollback" if rollback else "restart"
        return _alert(
            memo,
            ev,
            Severity.WARN,
            kind,
            "rolled back past an anomaly" if rollback else "restarted after a failure",
            what=ended_words or ev.message,
            verdict=verdict,
            action=("rolls back: " if rollback else "restarts it: ") + ev.message,
            key=f"{category}|{vfp or _norm(memo.ended_message or ev.message)}",
            attempt=memo.ended_attempt,
        )
    if ev.kind == EventKind.BANNED:
        host = str(data.get("host", "?"))
        return _alert(
            memo,
            ev,
            Severity.WARN,
            "banned",
            f"node {host} banned",
            what=ev.message,
            verdict=verdict,
            action=f"stopped using node {host}; the next attempt runs without it",
            key=host,
        )
    if ev.kind == EventKind.PREFLIGHT:
        if data.get("passed", True):
            return None
        host = str(data.get("host", "?"))
        return _alert(
            memo,
            ev,
            Severity.WARN,
            "preflight",
            f"node {host} failed its health checks",
            what=ev.message,
            action="keeps the node out of the next attempt",
            key=host,
        )
    if ev.kind == EventKind.INCIDENT:
        incident = str(data.get("incident", "incident"))
        hang = incident == "hang"
        page = hang and memo.hang_pages
        return _alert(
            memo,
            ev,
            Severity.PAGE if page else Severity.INFO,
            "hang" if hang else "incident",
            f"{incident.replace('_', ' ')} in attempt {attempt}",
            what=ev.message,
            action=(
                "does not restart hung runs here ([hang] action = alert): look at it"
                if page
                else "watches it (a spike that settles is only logged; a NaN or a spike that "
                "stays rolls back)"
            ),
            key=f"{incident}|{data.get('metric')}",
            step=data.get("step") if isinstance(data.get("step"), int) else None,
        )
    if ev.kind in (EventKind.SUCCEEDED, EventKind.STOPPED):
        done = ev.kind == EventKind.SUCCEEDED
        return _alert(
            memo,
            ev,
            Severity.INFO,
            ev.kind.value,
            "the run finished" if done else "the run was stopped",
            what=ev.message,
            action="nothing more to do" if done else "stopped, as asked",
            key="",
        )
    return None


def _alert(
    memo: Router,
    ev: Event,
    severity: Severity,
    kind: str,
    headline: str,
    *,
    what: str,
    action: str,
    key: str,
    verdict: str | None = None,
    attempt: int | None = None,
    step: int | None = None,
) -> Alert:
    attempt = ev.attempt if attempt is None else attempt
    stacks = memo.stacks.get(attempt)
    return Alert(
        severity,
        kind,
        memo.run,
        memo.host,
        headline,
        what=what,
        verdict=verdict,
        action=action,
        more=memo.more,
        fingerprint=f"{memo.run}|{kind}|{key[:300]}",
        group=f"{memo.run}|{severity.value}|{kind}",
        ts=ev.ts,
        attempt=attempt,
        step=step if step is not None else _int(memo.ended, "last_step"),
        attachments=(stacks,) if stacks and kind != "incident" else (),
    )


def _verdict(ended: Mapping[str, Any] | None) -> tuple[str | None, str, str | None]:
    """(the verdict in words with the culprit, its category, its fingerprint)."""
    v = ended.get("verdict") if ended else None
    if not isinstance(v, Mapping):
        return None, "none", None
    category = _text(v.get("category", "unknown"))
    t = v.get("transient")
    transient = "transient" if t is True else "not transient" if t is False else "unsure"
    words = f"{category} ({transient}): {v.get('summary', '')}"
    culprit = _culprit(v.get("diagnosis"))
    if culprit:
        words += f"; culprit: {culprit}"
    fp = v.get("fingerprint")
    return words, category, fp if isinstance(fp, str) else None


def _culprit(diagnosis: Any) -> str:
    if not isinstance(diagnosis, Mapping) or not isinstance(diagnosis.get("suspect"), Mapping):
        return ""
    s = diagnosis["suspect"]
    parts = []
    if s.get("rank") is not None:
        parts.append(f"rank {s['rank']}")
    if s.get("host"):
        parts.append(f"on {s['host']}" if parts else f"host {s['host']}")
    if s.get("gpu") is not None:
        parts.append(f"GPU {s['gpu']}")
    if not parts and s.get("kind") not in (None, "unknown"):
        parts.append(f"the {s['kind']}")
    return " ".join(parts)


def _text(value: Any) -> str:
    """A record's enum as its value (`user_code`), as the JSONL mirror has it."""
    return str(value.value) if isinstance(value, Enum) else str(value)


def _summary(ended: Mapping[str, Any] | None) -> str:
    v = ended.get("verdict") if ended else None
    return str(v.get("summary") or "") if isinstance(v, Mapping) else ""


def _int(data: Mapping[str, Any] | None, key: str) -> int | None:
    value = data.get(key) if data else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _norm(text: str) -> str:
    """Digits out (attempt numbers, steps, pids): the same failure has one fingerprint."""
    return _DIGITS.sub("#", text)[:200]
