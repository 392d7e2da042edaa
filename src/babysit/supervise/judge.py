"""Judging an attempt that ended: its outcome, its verdict, the node to blame, the logbook.

    j = judge(live, status, diagnose=postmortem.diagnose)   # -> Judgement (no side effects
                                                            #    but the triage it asks for)
    record(ctx, postmortem, j)                              # the store and the terminal

The outcome: babysit's own kill of a hung or rolled-back attempt is never a success nor an
outside stop. The verdict: the anomaly the attempt was stopped for (a NaN, a spike that did not
settle), unless triage finds a failure that explains both (a dead GPU); else triage of its logs
and its exit status (detect/outcome.py). The node to blame: the one triage or the stacks name.
What happens next is not decided here: policy/compose.py decides from the Judgement's record.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeGuard

from babysit.detect.outcome import TRUSTED, AttemptEvidence, signal_name
from babysit.detect.outcome import judge as judge_exit
from babysit.looks import HangVerdict, StackReport
from babysit.policy.rollback import anomaly_name
from babysit.records import (
    AttemptRecord,
    Category,
    Decision,
    DecisionKind,
    Diagnosis,
    EventKind,
    ExitStatus,
    Incident,
    IncidentKind,
    Level,
    Outcome,
    Verdict,
)
from babysit.store.writes import AddDiagnosis, UpdateAttempt
from babysit.supervise.context import RunContext
from babysit.supervise.live import Live
from babysit.supervise.postmortem import Postmortem

Diagnose = Callable[[Sequence[Path], float, bool | None], Diagnosis | None]
# An attempt that ran this long is past its set-up, even when its log shows no step babysit
# reads (a trainer of its own format): its failure is not called a configuration error.
PAST_SETUP_S = 1800.0


@dataclass(frozen=True)
class Judgement:
    number: int
    status: ExitStatus
    outcome: Outcome
    verdict: Verdict | None
    summary: str | None
    anomaly: Incident | None  # the anomaly it was ended for, when that stands as the verdict
    pending: Decision | None  # that anomaly's decision (roll back, or page), to carry out
    suspect_host: str | None
    record: AttemptRecord  # what the policies read

    @property
    def how(self) -> str:
        s = self.status
        if self.outcome == Outcome.SUCCEEDED:
            return "finished"
        if s.signal is not None:
            return f"killed by {signal_name(s.signal)}"
        if s.exit_code is None:
            return "ended (exit status unknown)"
        return f"exited with code {s.exit_code}"


def outcome_of(live: Live, status: ExitStatus) -> Outcome:
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    if live.killed:
        # babysit ended it (a hang, a rollback): never a success, never an outside stop,
        # even when the script catches SIGTERM and exits 0.
        return Outcome.KILLED
    if stop_signals & set(status.signals_received):
        # Someone (a babysit that then died, the scheduler) stopped it before it finished; a
        # hang babysit did not act on (hang.action = "alert") does not change that.
        return Outcome.STOPPED
    if status.exit_code == 0:
        return Outcome.SUCCEEDED
    if status.signal is not None:
        return Outcome.KILLED
    if status.exit_code is None:
        return Outcome.LOST
    return Outcome.FAILED


def _trusted(d: Diagnosis | None) -> TypeGuard[Diagnosis]:
    return d is not None and d.rule is not None and d.confidence >= TRUSTED


def _trained(live: Live, status: ExitStatus) -> bool | None:
    """True when the attempt trained: babysit saw its steps, or it ran past PAST_SETUP_S;
    None lets triage read it from the logs."""
    if live.last_step is not None or status.ended - live.started >= PAST_SETUP_S:
        return True
    return None


def judge(live: Live, status: ExitStatus, diagnose: Diagnose) -> Judgement:
    outcome = outcome_of(live, status)
    diagnosis = None
    ended_for_rollback = live.rollback is not None and outcome != Outcome.SUCCEEDED
    anomaly = live.anomaly if ended_for_rollback else None
    if anomaly is not None and not live.killed:
        # It died on its own right after the NaN: a dead GPU or an Xid explains both, and
        # then the node is what to act on, not the data.
        diagnosis = diagnose(live.logs(), live.started, _trained(live, status))
        if _trusted(diagnosis) and diagnosis.category != Category.NUMERICAL:
            anomaly = None
    verdict: Verdict | None
    if anomaly is not None:
        paging = live.rollback is not None and live.rollback.kind != DecisionKind.ROLLBACK
        why = "page you" if paging else "roll back"
        # The anomaly by name: its full message was said when it was found.
        what = anomaly_name(anomaly)
        if what != anomaly.message and anomaly.step is not None:
            what += f" at step {anomaly.step}"
        verdict = Verdict(
            anomaly.category if anomaly.kind != IncidentKind.NONFINITE else Category.NUMERICAL,
            True,
            f"babysit stopped it to {why}: {what}"
            if live.killed
            else f"{what}; it ended before babysit stopped it ({why})",
        )
    else:
        if diagnosis is None and (
            outcome in (Outcome.FAILED, Outcome.KILLED, Outcome.LOST) or live.hang is not None
        ):
            diagnosis = diagnose(live.logs(), live.started, _trained(live, status))
        verdict = judge_exit(
            AttemptEvidence(
                status,
                tuple(live.pipeline.errors),
                live.first_step,
                live.last_step,
                # the hang is the verdict only when babysit killed the attempt for it: one that
                # stalled, then crashed or finished on its own, is judged by how it ended
                _hang_text(live) if live.hang is not None and live.killed else None,
                diagnosis,
            )
        )
    summary = verdict.summary if verdict is not None else None
    if outcome == Outcome.STOPPED:
        names = ", ".join(dict.fromkeys(signal_name(s) for s in status.signals_received))
        summary = f"stopped by {names} before it finished"
        verdict = None
    suspect = None if outcome == Outcome.STOPPED else suspect_host(verdict, live.stacks)
    record = AttemptRecord(
        live.number,
        live.started,
        status.ended,
        outcome,
        status.exit_code,
        status.signal,
        live.first_step,
        live.last_step,
        verdict.category if verdict else None,
        verdict.transient if verdict else None,
        verdict.fingerprint if verdict else None,
        summary,
        live.resume_step,
        suspect,
        anomaly.step if anomaly is not None else None,
        anomaly.kind.value if anomaly is not None else None,
    )
    pending = live.rollback if anomaly is not None else None
    return Judgement(
        live.number, status, outcome, verdict, summary, anomaly, pending, suspect, record
    )


def suspect_host(verdict: Verdict | None, stacks: StackReport | None) -> str | None:
    """The node to blame for this attempt, when triage or the stacks name one (a failure
    without a named host is nobody's: the local node is not blamed by default)."""
    if verdict is not None and verdict.diagnosis is not None:
        s = verdict.diagnosis.suspect
        if s.host and s.kind in ("node", "network"):
            return s.host
    if stacks is not None and stacks.suspect.host and stacks.suspect.kind == "node":
        return stacks.suspect.host
    return None


def record(ctx: RunContext, postmortem: Postmortem, j: Judgement) -> None:
    """Into the store (the attempt's row, an event, the diagnosis) and to the operator."""
    status, verdict, anomaly, number = j.status, j.verdict, j.anomaly, j.number
    fields: dict[str, Any] = {
        "ended": status.ended,
        "outcome": j.outcome,
        "exit_code": status.exit_code,
        "signal": status.signal,
        "summary": j.summary,
    }
    if verdict is not None:
        fields.update(
            category=verdict.category,
            transient=verdict.transient,
            fingerprint=verdict.fingerprint,
        )
    fields.update(
        suspect_host=j.suspect_host,
        anomaly_step=anomaly.step if anomaly is not None else None,
        anomaly_kind=anomaly.kind.value if anomaly is not None else None,
        anomaly_message=anomaly.message if anomaly is not None else None,
    )
    ctx.journal.write(UpdateAttempt(ctx.name, number, fields))
    last_step = j.record.last_step
    steps = f" at step {last_step}" if last_step is not None else " before any step"
    ctx.journal.event(
        EventKind.ATTEMPT_ENDED,
        f"attempt {number} {j.how}{steps}",
        number,
        outcome=j.outcome.value,
        exit_code=status.exit_code,
        signal=status.signal,
        last_step=last_step,
        verdict=asdict(verdict) if verdict is not None else None,
    )
    if j.summary is not None:
        ctx.say(Level.WARN, f"attempt {number} {j.how}{steps}: {j.summary}")
    if verdict is not None and verdict.diagnosis is not None:
        _record_diagnosis(ctx, postmortem, number, status.ended, verdict.diagnosis)


def _record_diagnosis(
    ctx: RunContext, postmortem: Postmortem, number: int, ended: float, d: Diagnosis
) -> None:
    """Into the store (the logbook and later "seen before" lookups), and to the operator:
    what to do, and whether this failure was seen before."""
    doc, seen = postmortem.document(d, ctx.journal.store, ended)
    ctx.journal.write(AddDiagnosis(ctx.name, number, ended, doc))
    postmortem.tell(d, seen)
    if seen is not None:
        ctx.journal.event(EventKind.NOTE, f"attempt {number}: {seen}", number)


def _hang_text(live: Live) -> str:
    """The hang, and what the looks at it showed when they decided (the verdict's words)."""
    assert live.hang is not None
    ev = live.evidence
    if ev is None or ev.verdict != HangVerdict.STUCK:
        return live.hang.message
    return f"{live.hang.message}; {ev.reason}"
