"""When to act on a hang: wait, or kill the attempt and restart it. Pure: values in.

    d = on_hang(hang_incident, now=t, rule=HangAction(), evidence=ev)
    d.kind   # KEEP_WATCHING (wait) or RESTART (kill it now; the run loop then restarts it)

The hang detector (detect/hang.py) says when progress stopped for longer than the run's cadence
allows; babysit then looks at the attempt twice, `look_again_s` apart, and weighs what it saw
(detect/evidence.py). This decides on that evidence, as a person would:
- stuck (a stopped process, stacks parked in the same frame, every rank waiting for one) ->
  kill now;
- working (a checkpoint file growing, CPU spent in the training's own frames, busy GPUs) ->
  wait, looking again every `relook_s`, up to `busy_limit_s` of silence;
- no evidence either way, or none taken (`evidence = false`) -> kill once the stall has lasted
  `kill_after_s` (a first eval nobody announced must not cost a restart; NCCL's own watchdog
  waits 10 minutes); 0 kills at detection without looking.
With `action = "alert"` babysit only reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from babysit.looks import Evidence, HangVerdict
from babysit.records import Decision, DecisionKind, Incident


@dataclass(frozen=True)
class HangAction:
    """The acting half of the [hang] section of babysit.toml (the detector's half is
    detect.hang.HangRule)."""

    action: str = "restart"  # "restart": kill the hung attempt and restart; "alert": only report
    kill_after_s: float = 300.0  # kill once the stall lasts this long when evidence says nothing
    evidence: bool = True  # look at the stalled attempt (processes, stacks, files) before acting
    look_again_s: float = 5.0  # the second look, this long after the first
    relook_s: float = 15.0  # while it looks busy, look again this often
    busy_limit_s: float = 1800.0  # silent but busy for this long: kill it all the same
    kill_grace_s: float = 10.0  # SIGTERM to SIGKILL for a hung attempt (at most stop.grace_s)


def on_hang(
    hang: Incident, now: float, rule: HangAction, evidence: Evidence | None = None
) -> Decision:
    """`hang`: the detector's incident (its value is how long progress had stopped when it was
    flagged, its ts when); still flagged, or the caller would not ask. `evidence`: what the
    latest two looks said (None: none taken yet)."""
    if rule.action != "restart":
        return Decision(
            DecisionKind.KEEP_WATCHING, "hang.action is 'alert': reported, not acted on"
        )
    stalled_s = now - (hang.ts - (hang.value or 0.0))
    if evidence is not None and evidence.verdict == HangVerdict.STUCK:
        return Decision(
            DecisionKind.RESTART,
            f"no progress for {stalled_s:.0f}s and {evidence.reason}: killing the attempt to "
            "restart it",
        )
    if evidence is not None and evidence.verdict == HangVerdict.WORKING:
        if stalled_s >= rule.busy_limit_s:
            return Decision(
                DecisionKind.RESTART,
                f"no progress for {stalled_s:.0f}s although it looks busy ({evidence.reason}; "
                f"hang.busy_limit_s = {rule.busy_limit_s:g}): killing the attempt to restart it",
            )
        return Decision(
            DecisionKind.KEEP_WATCHING,
            f"no progress for {stalled_s:.0f}s, but {evidence.reason}: waiting (up to "
            f"hang.busy_limit_s = {rule.busy_limit_s:g}s)",
        )
    if stalled_s >= rule.kill_after_s:
        why = f" ({evidence.reason})" if evidence is not None else ""
        return Decision(
            DecisionKind.RESTART,
            f"no progress for {stalled_s:.0f}s{why} (hang.kill_after_s = "
            f"{rule.kill_after_s:g}): killing the attempt to restart it",
        )
    return Decision(
        DecisionKind.KEEP_WATCHING,
        f"no progress for {stalled_s:.0f}s; waiting up to hang.kill_after_s = "
        f"{rule.kill_after_s:g}s before killing it",
    )


def backoff_left(delay_s: float, idle_s: float) -> float:
    """A restart's backoff after a hang: the time the job already sat idle while it hung
    counts toward it (the backoff gives a transient cause time to clear; the hang gave it)."""
    return max(0.0, delay_s - max(idle_s, 0.0))
