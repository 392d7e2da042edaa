"""How a supervised run ends, in the store and in babysit's words: a decision carried out (it
succeeded, it restarts, it gives up), a job cancelled outside babysit, a job the scheduler can
never start, the one way every give-up is told, and the one way an attempt is recorded as
stopped (an operator's stop, a scancel, a preflight that found a sick node).

    code = decided(journal, say, decision)     # None: the run goes on (restart or roll back)
    code = gave_up(journal, say, "no healthy nodes left", ExitCode.BUDGET_EXHAUSTED)
    code = cancelled(journal, say, name, live, status)     # a human's scancel
    code = cannot_start(journal, say, name, live, status)  # more nodes than the partition has
    record_stopped(journal, name, number, status, summary)  # the attempt's record only

The caller (supervise/run.py) returns the exit code; what happens next is its own.
"""

from __future__ import annotations

from typing import Any

from babysit.records import (
    Decision,
    DecisionKind,
    EventKind,
    ExitCode,
    ExitStatus,
    Level,
    Outcome,
    RunState,
    Say,
)
from babysit.store.writes import UpdateAttempt
from babysit.supervise.journal import Journal
from babysit.supervise.live import Live


def gave_up(
    journal: Journal,
    say: Say,
    reason: str,
    code: ExitCode,
    number: int | None = None,
    hint: str = "",
    **fields: Any,
) -> ExitCode:
    """Babysit stops trying: said as an error with what to do (`hint`) and the exit code, a
    GAVE_UP event (with `fields`), the run FAILED."""
    told = f"{hint}; exit code {int(code)}" if hint else f"exit code {int(code)}"
    say(Level.ERROR, f"giving up: {reason} ({told})")
    journal.event(EventKind.GAVE_UP, reason, number, exit_code=int(code), **fields)
    journal.state(RunState.FAILED, reason, code)
    return code


def decided(journal: Journal, say: Say, decision: Decision) -> ExitCode | None:
    """Record and announce the decision; the exit code when the run is over (None: it restarts
    or rolls back after decision.delay_s)."""
    if decision.kind == DecisionKind.SUCCEED:
        say(Level.OK, decision.reason)
        journal.event(EventKind.SUCCEEDED, decision.reason)
        journal.state(RunState.SUCCEEDED, decision.reason, ExitCode.OK)
        return ExitCode.OK
    if decision.kind in (DecisionKind.RESTART, DecisionKind.ROLLBACK):
        say(Level.WARN, decision.reason)
        rollback = decision.kind == DecisionKind.ROLLBACK
        journal.event(
            EventKind.ROLLBACK if rollback else EventKind.RESTART_SCHEDULED,
            decision.reason,
            delay_s=decision.delay_s,
            before_step=decision.before_step,
            skip_steps=decision.skip_steps,
            lr_scale=decision.lr_scale,
            counts=decision.counts,
        )
        journal.state(RunState.BACKOFF, decision.reason)
        return None
    if decision.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN:
        code = ExitCode.NEEDS_HUMAN
        advice = "a human must fix this before the next try; do not requeue as is"
    else:
        code = ExitCode.BUDGET_EXHAUSTED
        advice = "the failures looked transient; a requeue (on other nodes?) may help"
    return gave_up(journal, say, decision.reason, code, hint=advice, advice=advice)


def record_stopped(
    journal: Journal, name: str, number: int, status: ExitStatus, summary: str
) -> None:
    """The attempt recorded as stopped (an operator's stop, a scancel, a preflight's): how it
    ended, with its exit code, its signal and `summary`; no failure of the run's."""
    fields = {
        "ended": status.ended,
        "outcome": Outcome.STOPPED,
        "exit_code": status.exit_code,
        "signal": status.signal,
        "summary": summary,
    }
    journal.write(UpdateAttempt(name, number, fields))


def cancelled(journal: Journal, say: Say, name: str, live: Live, status: ExitStatus) -> ExitCode:
    """The job was cancelled outside babysit (`scancel` by a human): an operator stop."""
    who = status.scheduler_state or "CANCELLED"
    msg = f"attempt {live.number} stopped by the operator: Slurm job {who} (scancel)"
    record_stopped(journal, name, live.number, status, msg)
    journal.event(EventKind.STOPPED, msg, live.number, scheduler_state=who)
    journal.state(RunState.STOPPED, msg, ExitCode.STOPPED)
    say(Level.INFO, msg)
    return ExitCode.STOPPED


def cannot_start(journal: Journal, say: Say, name: str, live: Live, status: ExitStatus) -> ExitCode:
    """The scheduler will never start the job as asked (more nodes than the partition has,
    ...): a human must change the request; restarting would only queue it again."""
    why = (status.scheduler_state or "").partition(":")[2].strip() or "no reason given"
    msg = f"Slurm cannot start attempt {live.number}'s job: {why}"
    fields = {"ended": status.ended, "outcome": Outcome.FAILED, "summary": msg}
    journal.write(UpdateAttempt(name, live.number, fields))
    return gave_up(journal, say, msg, ExitCode.NEEDS_HUMAN, live.number, "change the request")
