"""When to act on a hang: wait, or kill the attempt and restart it. Pure: values in.

    d = on_hang(hang_incident, now=t, rule=HangAction(action="restart", kill_after_s=300))
    d.kind   # KEEP_WATCHING (wait) or RESTART (kill it now; the run loop then restarts it)

The hang detector (detect/hang.py) says when progress stopped for longer than the run's cadence
allows; this says when to act on it. With `action = "alert"` babysit only reports. With
`"restart"` it waits until the stall has lasted `kill_after_s` (a first eval nobody announced
must not cost a restart; NCCL's own watchdog waits 10 minutes), then kills it; 0 acts at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from babysit.records import Decision, DecisionKind, Incident


@dataclass(frozen=True)
class HangAction:
    """The acting half of the [hang] section of babysit.toml (the detector's half is
    detect.hang.HangRule)."""

    action: str = "restart"  # "restart": kill the hung attempt and restart; "alert": only report
    kill_after_s: float = 300.0  # act (restart) once the stall lasts this long; 0: at detection


def on_hang(hang: Incident, now: float, rule: HangAction) -> Decision:
    """`hang`: the detector's incident (its value is how long progress had stopped when it was
    flagged, its ts when); still flagged, or the caller would not ask."""
    if rule.action != "restart":
        return Decision(
            DecisionKind.KEEP_WATCHING, "hang.action is 'alert': reported, not acted on"
        )
    stalled_since = hang.ts - (hang.value or 0.0)
    stalled_s = now - stalled_since
    if stalled_s >= rule.kill_after_s:
        return Decision(
            DecisionKind.RESTART,
            f"no progress for {stalled_s:.0f}s (hang.kill_after_s = {rule.kill_after_s:g}): "
            "killing the attempt to restart it",
        )
    return Decision(
        DecisionKind.KEEP_WATCHING,
        f"no progress for {stalled_s:.0f}s; waiting up to hang.kill_after_s = "
        f"{rule.kill_after_s:g}s before killing it",
    )
