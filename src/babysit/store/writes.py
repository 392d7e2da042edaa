"""What supervise asks the store to keep, as records: the Journal queues them, in order, and
retries them while the store refuses writes; the store carries them out.

    journal.write(UpdateAttempt("train", 3, {"last_step": 1200}))
    store.apply(w)          # -> apply_write(store, w): the Store method that writes it

Records, not callables: the queue can be read, compared in tests and counted; and a write
type the store does not know is refused loudly instead of being dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from babysit.errors import StoreError
from babysit.records import Ban, Event, Incident, RunState

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


def apply_write(store: Store, w: StoreWrite) -> None:
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
