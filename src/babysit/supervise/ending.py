"""How an attempt ended, and what comes next: the supervisor's half that judges an attempt.

    class Supervisor(Ending): ...
    decision = self._ended(live, status)   # outcome, verdict, logbook, node blame, policy

A mixin of the Supervisor (kept apart to keep files small): the outcome (babysit's own kill of
a hung or rolled-back attempt is never a success nor an outside stop), the verdict (triage, or
the anomaly the attempt was stopped for), what goes to the store and the terminal, the node to
blame, and the decision of the restart and rollback policies.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from babysit.act import process
from babysit.detect.outcome import AttemptEvidence, judge, signal_name
from babysit.policy.restart import RestartPolicy, decide
from babysit.records import (
    AttemptRecord,
    Category,
    Decision,
    DecisionKind,
    Diagnosis,
    EventKind,
    ExitStatus,
    IncidentKind,
    Outcome,
    StackReport,
    Verdict,
)
from babysit.supervise.journal import Journal
from babysit.supervise.live import Live, Seams
from babysit.supervise.postmortem import Postmortem
from babysit.supervise.recovery import Recovery


class Ending:
    # Set by the Supervisor.
    name: str
    say: Callable[[str, str], None]
    seams: Seams
    policy: RestartPolicy
    postmortem: Postmortem
    recovery: Recovery
    history: list[AttemptRecord]
    checkpoint_pattern: str | None

    @property
    def journal(self) -> Journal:
        raise NotImplementedError

    def _outcome(self, live: Live, status: ExitStatus) -> Outcome:
        stop_signals = {signal.SIGTERM, signal.SIGINT}
        if live.killed:
            # babysit ended it (a hang, a rollback): never a success, never an outside stop,
            # even when the script catches SIGTERM and exits 0.
            return Outcome.KILLED
        if live.hang is None and stop_signals & set(status.signals_received):
            # Someone (a babysit that then died, the scheduler) stopped it before it finished.
            return Outcome.STOPPED
        if status.exit_code == 0:
            return Outcome.SUCCEEDED
        if status.signal is not None:
            return Outcome.KILLED
        if status.exit_code is None:
            return Outcome.LOST
        return Outcome.FAILED

    def _ended(self, live: Live, status: ExitStatus) -> Decision:
        left = process.sweep(live.handle)
        if left:
            self.say(
                "warn",
                f"killed {len(left)} process(es) of attempt {live.number} left "
                f"behind after it ended: {left}",
            )
        outcome = self._outcome(live, status)
        diagnosis = None
        ended_for_rollback = live.rollback is not None and outcome != Outcome.SUCCEEDED
        anomaly = live.anomaly if ended_for_rollback else None
        if anomaly is not None and not live.killed:
            # It died on its own right after the NaN: a dead GPU or an Xid explains both, and
            # then the node is what to act on, not the data.
            logs = [f.path for f in live.followers if f.stream in ("stdout", "stderr")]
            diagnosis = self.postmortem.diagnose(logs, live.started)
            d = diagnosis
            trusted = d is not None and d.rule is not None and d.confidence >= 0.5
            if trusted and d is not None and d.category != Category.NUMERICAL:
                anomaly = None
        if anomaly is not None:
            paging = live.rollback is not None and live.rollback.kind != DecisionKind.ROLLBACK
            why = "page you" if paging else "roll back"
            verdict: Verdict | None = Verdict(
                anomaly.category if anomaly.kind != IncidentKind.NONFINITE else Category.NUMERICAL,
                True,
                f"babysit stopped it to {why}: {anomaly.message}"
                if live.killed
                else f"{anomaly.message}; it ended before babysit stopped it ({why})",
            )
        else:
            live.rollback = None
            if diagnosis is None and (
                outcome in (Outcome.FAILED, Outcome.KILLED, Outcome.LOST) or live.hang is not None
            ):
                logs = [f.path for f in live.followers if f.stream in ("stdout", "stderr")]
                diagnosis = self.postmortem.diagnose(logs, live.started)
            verdict = judge(
                AttemptEvidence(
                    status,
                    tuple(live.pipeline.errors),
                    live.first_step,
                    live.last_step,
                    live.hang.message if live.hang else None,
                    diagnosis,
                )
            )
        summary = verdict.summary if verdict is not None else None
        if outcome == Outcome.STOPPED:
            names = ", ".join(dict.fromkeys(signal_name(s) for s in status.signals_received))
            summary = f"stopped by {names} before it finished"
            verdict = None
        fields: dict[str, Any] = {
            "ended": status.ended,
            "outcome": outcome,
            "exit_code": status.exit_code,
            "signal": status.signal,
            "summary": summary,
        }
        if verdict is not None:
            fields.update(
                category=verdict.category,
                transient=verdict.transient,
                fingerprint=verdict.fingerprint,
            )
        stopped = outcome == Outcome.STOPPED
        suspect_host = None if stopped else self._suspect_host(verdict, live.stacks)
        anomaly_step = anomaly.step if anomaly is not None else None
        fields.update(
            suspect_host=suspect_host,
            anomaly_step=anomaly_step,
            anomaly_kind=anomaly.kind.value if anomaly is not None else None,
            anomaly_message=anomaly.message if anomaly is not None else None,
        )
        number = live.number
        self.journal.write(lambda s: s.update_attempt(self.name, number, fields))
        how = (
            "finished"
            if outcome == Outcome.SUCCEEDED
            else f"killed by {signal_name(status.signal)}"
            if status.signal is not None
            else "ended (exit status unknown)"
            if status.exit_code is None
            else f"exited with code {status.exit_code}"
        )
        steps = f" at step {live.last_step}" if live.last_step is not None else " before any step"
        self.journal.event(
            EventKind.ATTEMPT_ENDED,
            f"attempt {number} {how}{steps}",
            number,
            outcome=outcome.value,
            exit_code=status.exit_code,
            signal=status.signal,
            last_step=live.last_step,
            verdict=asdict(verdict) if verdict is not None else None,
        )
        if summary is not None:
            self.say("warn", f"attempt {number} {how}{steps}: {summary}")
        if verdict is not None and verdict.diagnosis is not None:
            self._record_diagnosis(number, status.ended, verdict.diagnosis)
        current = AttemptRecord(
            number,
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
            suspect_host,
            anomaly_step,
            anomaly.kind.value if anomaly is not None else None,
        )
        self.history = [a for a in self.history if a.number != number] + [current]
        if suspect_host is not None and verdict is not None:
            gpu = verdict.diagnosis.suspect.gpu if verdict.diagnosis is not None else None
            self.recovery.blame(number, suspect_host, verdict.summary, verdict.category.value, gpu)
        rollback = live.rollback if anomaly is not None else None
        if rollback is not None and rollback.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN:
            return rollback
        if anomaly_step is not None:
            self.recovery.ended_for_anomaly(anomaly_step, status.ended, number)
        newest = self.recovery.newest()
        # Progress is judged by steps: checkpoints without one in their name (`ckpt.pt`) can't.
        judged = self.checkpoint_pattern is not None and (newest is None or newest.step is not None)
        decision = decide(
            self.history,
            self.policy,
            self.seams.uniform(),
            newest.step if newest is not None else None,
            judged and rollback is None,
        )
        if rollback is not None and decision.kind == DecisionKind.RESTART:
            self.recovery.rolled_back(rollback, anomaly_step)
            return rollback
        return decision

    def _suspect_host(self, verdict: Verdict | None, stacks: StackReport | None) -> str | None:
        """The node to blame for this attempt, when triage or the stacks name one (a failure
        without a named host is nobody's: the local node is not blamed by default)."""
        if verdict is not None and verdict.diagnosis is not None:
            s = verdict.diagnosis.suspect
            if s.host and s.kind in ("node", "network"):
                return s.host
        if stacks is not None and stacks.suspect.host and stacks.suspect.kind == "node":
            return stacks.suspect.host
        return None

    def _record_diagnosis(self, number: int, ended: float, d: Diagnosis) -> None:
        """Into the store (the logbook and later "seen before" lookups), and to the operator:
        what to do, and whether this failure was seen before."""
        doc, seen = self.postmortem.document(d, self.journal.store, ended)
        self.journal.write(lambda s: s.add_diagnosis(self.name, number, ended, doc))
        self.postmortem.tell(d, seen)
        if seen is not None:
            self.journal.event(EventKind.NOTE, f"attempt {number}: {seen}", number)
