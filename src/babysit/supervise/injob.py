"""The preflight that a job runs on its own nodes before the training (engines/jobcheck.py): what
it said of them, and what comes next when it ended the job for a sick node.

    check = InJobPreflight(ctx, nodes)
    sick, gated = check.results(live)       # {host: why}, whether the check ended the job
    if sick and gated and status.exit_code == EXIT_SICK:
        decision, record = check.stopped(live, status, sick, history)

The sick nodes are banned (Nodes.checked); a job that its preflight ended goes again without them,
at once and charged to no budget, until MAX_PREFLIGHT_STOPS jobs in a row have ended so (then a
human is paged: a check that fails on every node is more likely the check's fault).
"""

from __future__ import annotations

from collections.abc import Mapping

from babysit.records import (
    AttemptRecord,
    Decision,
    DecisionKind,
    EventKind,
    ExitStatus,
    Level,
    Outcome,
)
from babysit.supervise.context import RunContext
from babysit.supervise.endings import record_stopped
from babysit.supervise.live import Live
from babysit.supervise.nodes import Nodes

MAX_PREFLIGHT_STOPS = 3  # jobs in a row ended by their own preflight before a human is paged
PREFLIGHT_STOP = "stopped before the training: the preflight failed on"  # such an attempt's summary


class InJobPreflight:
    def __init__(self, ctx: RunContext, nodes: Nodes) -> None:
        self.ctx = ctx
        self.nodes = nodes

    def results(self, live: Live) -> tuple[dict[str, str], bool]:
        """What the attempt's own preflight said of its nodes (a job per attempt), recorded,
        the sick nodes banned (Nodes.checked): the sick ones, and whether the preflight ended
        the job for them."""
        try:
            found = self.ctx.engine.preflight_results(live.handle)
            if found is None:
                return {}, False
            return self.nodes.checked(live.number, found.answers), found.stopped
        except Exception as exc:  # preflight must never stop the run
            self.ctx.say(Level.WARN, f"could not read attempt {live.number}'s preflight ({exc})")
            return {}, False

    def stopped(
        self,
        live: Live,
        status: ExitStatus,
        sick: Mapping[str, str],
        history: list[AttemptRecord],
    ) -> tuple[Decision, AttemptRecord]:
        """The job's preflight found a node that is sick and ended the job before the
        training: no failure of the run's. The attempt is recorded as stopped (its record
        returned for the history); the job goes again without the node, at once and charged to
        no budget (NodesExhausted, exit 4, at the next launch when too few nodes are left)."""
        ctx = self.ctx
        ctx.engine.sweep(live.handle)
        names = ", ".join(sick)
        what = "; ".join(f"{host}: {why}" for host, why in sick.items())
        summary = f"{PREFLIGHT_STOP} {what}"
        record_stopped(ctx.journal, ctx.name, live.number, status, summary)
        ctx.journal.event(
            EventKind.ATTEMPT_ENDED,
            f"attempt {live.number} {summary}",
            live.number,
            outcome=Outcome.STOPPED.value,
            exit_code=status.exit_code,
            signal=status.signal,
            last_step=None,
        )
        record = AttemptRecord(
            live.number, live.started, status.ended, Outcome.STOPPED, status.exit_code,
            status.signal, summary=summary,
        )  # fmt: skip
        history = [a for a in history if a.number != live.number] + [record]
        stops = trailing_preflight_stops(history)  # from the logbook: survives a restart
        if stops >= MAX_PREFLIGHT_STOPS:
            # Free restarts must end: a check that fails on every node is more likely the
            # check's or the environment's fault, and a ban that does not reach the scheduler
            # (a partition babysit does not know) would give the same node again.
            return Decision(
                DecisionKind.GIVE_UP_NEEDS_HUMAN,
                f"{stops} jobs in a row ended at their preflight (last: "
                f"{what}): run `babysit doctor` on one of those nodes, and check that the "
                "banned nodes are left out (`babysit nodes list`; the partition)",
            ), record
        return Decision(
            DecisionKind.RESTART,
            f"attempt {live.number}'s job {summary}; submitting it again without {names} "
            "(not counted against any restart budget)",
            counts=False,
        ), record


def trailing_preflight_stops(history: list[AttemptRecord]) -> int:
    """The jobs in a row, at the end of the stored history, that their own preflight ended
    (the count survives a babysit that was killed and started again)."""
    n = 0
    for a in reversed(history):
        if a.outcome == Outcome.RUNNING:
            continue  # the attempt being re-attached to: not ended yet
        if a.outcome != Outcome.STOPPED or not (a.summary or "").startswith(PREFLIGHT_STOP):
            break
        n += 1
    return n
