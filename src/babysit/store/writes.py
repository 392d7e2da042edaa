"""What supervise asks the store to keep, as records: the Journal queues them, in order, and
retries them while the store refuses writes; the store carries them out.

    journal.write(UpdateAttempt("train", 3, {"last_step": 1200}))
    store.apply(w)          # -> apply_write(store, w): the Store method that writes it

Records, not callables: the queue can be read, compared in tests and counted; and a write
type the store does not know is refused loudly instead of being dropped.

Secrets never reach the store: apply_write() carries out redacted(w), the same write with the
text it keeps (messages, reasons, summaries, the argv, triage evidence, event details) passed
through babysit.redact; an event's two writes (its row and its events.jsonl line) both go
through here. Event details are also made strict JSON (a non-finite float as "inf").
Identifiers (the attempt's token, its log directory, checkpoint paths, fingerprints) are kept
as they are: babysit finds processes and files by them. Relaunching never reads what is kept
here: the run loop relaunches from the command line it was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NoReturn

from babysit.errors import StoreError
from babysit.records import Ban, Event, Incident, RunState
from babysit.redact import redact_argv, redact_text, redact_tree
from babysit.strictjson import finite

if TYPE_CHECKING:
    from babysit.store.sqlite import Store


@dataclass(frozen=True)
class AddAttempt:
    run: str
    number: int
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class UpdateAttempt:
    run: str
    number: int
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class SetRunState:
    run: str
    state: RunState
    reason: str | None = None
    exit_code: int | None = None


@dataclass(frozen=True)
class SetBudgetFrom:
    run: str
    attempt: int


@dataclass(frozen=True)
class ReleaseRun:
    run: str


@dataclass(frozen=True)
class AddEventRow:
    event: Event


@dataclass(frozen=True)
class MirrorEvent:
    """The event's line in events.jsonl (a write of its own: its failure must not repeat the
    SQLite row)."""

    event: Event


@dataclass(frozen=True)
class AddIncident:
    run: str
    attempt: int | None
    incident: Incident


@dataclass(frozen=True)
class AddMetrics:
    run: str
    attempt: int | None
    ts: float
    step: int | None
    values: Mapping[str, float]


@dataclass(frozen=True)
class AddNodeEvent:
    ts: float
    host: str
    kind: str  # failure, health_pass, health_warn, health_fail, incident
    reason: str
    run: str | None = None
    attempt: int | None = None
    gpu: str | None = None
    category: str | None = None


@dataclass(frozen=True)
class AddBan:
    ban: Ban


@dataclass(frozen=True)
class AddDiagnosis:
    run: str
    attempt: int | None
    ts: float
    document: Mapping[str, Any]  # documents.diagnosis_document


@dataclass(frozen=True)
class AddStacks:
    run: str
    attempt: int | None
    ts: float
    summary: str
    report: Mapping[str, Any]  # documents.stacks_document


StoreWrite = (
    AddAttempt
    | UpdateAttempt
    | SetRunState
    | SetBudgetFrom
    | ReleaseRun
    | AddEventRow
    | MirrorEvent
    | AddIncident
    | AddMetrics
    | AddNodeEvent
    | AddBan
    | AddDiagnosis
    | AddStacks
)


# Attempt fields that hold the run's text; every other field is an identifier or a figure.
_ATTEMPT_TEXT = ("summary", "anomaly_message")
# Keys of a stored document that are identifiers, kept as they are.
_DOCUMENT_IDS = frozenset({"fingerprint", "rule", "category", "kind"})


def _text(value: str | None) -> str | None:
    return None if value is None else redact_text(value)


def _fields(fields: Mapping[str, Any]) -> Mapping[str, Any]:
    out = dict(fields)
    for key in _ATTEMPT_TEXT:
        if isinstance(out.get(key), str):
            out[key] = redact_text(out[key])
    if isinstance(out.get("argv"), (list, tuple)):
        out["argv"] = redact_argv([str(a) for a in out["argv"]])
    return out


def _document(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if k in _DOCUMENT_IDS else redact_tree(v, k)) for k, v in doc.items()}


def _event(e: Event) -> Event:
    return replace(e, message=redact_text(e.message), data=finite(redact_tree(dict(e.data))))


def redacted(w: StoreWrite) -> StoreWrite:
    """The same write with the secrets in its text hidden (babysit.redact); pure."""
    match w:
        case AddAttempt() | UpdateAttempt():
            if "argv" not in w.fields and not any(k in w.fields for k in _ATTEMPT_TEXT):
                return w  # a progress update (last_step, offsets): nothing to redact
            return replace(w, fields=_fields(w.fields))
        case SetRunState():
            return replace(w, reason=_text(w.reason))
        case AddEventRow() | MirrorEvent():
            return replace(w, event=_event(w.event))
        case AddIncident():
            return replace(w, incident=replace(w.incident, message=redact_text(w.incident.message)))
        case AddNodeEvent():
            return replace(w, reason=redact_text(w.reason))
        case AddBan():
            return replace(w, ban=replace(w.ban, reason=redact_text(w.ban.reason)))
        case AddDiagnosis():
            return replace(w, document=_document(w.document))
        case AddStacks():
            return replace(w, summary=redact_text(w.summary), report=_document(w.report))
    return w


def apply_write(store: Store, w: StoreWrite) -> None:
    w = redacted(w)
    match w:
        case AddAttempt():
            store.add_attempt(w.run, w.number, w.fields)
        case UpdateAttempt():
            store.update_attempt(w.run, w.number, w.fields)
        case SetRunState():
            store.set_run_state(w.run, w.state, w.reason, w.exit_code)
        case SetBudgetFrom():
            store.set_budget_from(w.run, w.attempt)
        case ReleaseRun():
            store.release_run(w.run)
        case AddEventRow():
            store.add_event_row(w.event)
        case MirrorEvent():
            store.mirror_event(w.event)
        case AddIncident():
            store.add_incident(w.run, w.attempt, w.incident)
        case AddMetrics():
            store.add_metrics(w.run, w.attempt, w.ts, w.step, w.values)
        case AddNodeEvent():
            store.add_node_event(
                w.ts, w.host, w.kind, w.reason, w.run, w.attempt, w.gpu, w.category
            )
        case AddBan():
            store.add_ban(w.ban)
        case AddDiagnosis():
            store.add_diagnosis(w.run, w.attempt, w.ts, w.document)
        case AddStacks():
            store.add_stacks(w.run, w.attempt, w.ts, w.summary, w.report)
        case _:
            _unknown(w)


def _unknown(w: NoReturn) -> NoReturn:
    raise StoreError(f"unknown store write {w!r} (a babysit bug)")
