"""Roll back past a NaN or a loss spike that does not settle. Pure.

    decision = on_incident(incident, RollbackRule(), earlier_anomalies=(1830,),
                           windows=((1780, 1980),))
    decision.kind        # ROLLBACK, KEEP_WATCHING or GIVE_UP_NEEDS_HUMAN
    decision.before_step, decision.skip_steps, decision.lr_scale

What a good human does (PaLM, section 5.1: "restart from a checkpoint roughly 100 steps before
the spike, and skip roughly 200-500 data batches"):
- a loss spike that settles back is logged, not acted on (most do): KEEP_WATCHING;
- a non-finite loss (`rollback.on_nan`), or a spike that does not settle (LOSS_DIVERGED,
  `rollback.on_divergence`) at step X: resume from the newest valid checkpoint whose step is
  < X - margin_steps, and skip the data of steps [X - skip_before, X + skip_after];
- a second anomaly inside a window already skipped: the same, with the window twice as wide
  (and the learning-rate scale applied once more); the max_at_same_place-th pages a human:
  the data is not the (only) problem.
The windows accumulate over the run: an attempt that resumes from an early checkpoint still
skips every bad window seen so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from babysit.records import Decision, DecisionKind, Incident, IncidentKind

Window = tuple[int, int]


@dataclass(frozen=True)
class RollbackRule:
    """The [rollback] section of babysit.toml."""

    on_nan: bool = True  # a non-finite loss: stop, roll back past it, skip its data
    on_divergence: bool = True  # a loss spike that does not settle: the same
    margin_steps: int = 0  # resume from a checkpoint at least this many steps before the anomaly
    skip_before: int = 50  # the data of steps [anomaly - skip_before, anomaly + skip_after] ...
    skip_after: int = 150  # ... is skipped (PaLM skipped 200-500 batches around a spike)
    lr_scale: float = 1.0  # handed to the script as BABYSIT_LR_SCALE after a rollback
    max_at_same_place: int = 3  # the third anomaly inside a skipped window pages a human


def is_loss(metric: str | None) -> bool:
    """A loss, not a loss scale or a grad norm (fp16 runs see inf grad norms by design)."""
    name = (metric or "").lower()
    return "loss" in name and "scale" not in name


def wants_rollback(inc: Incident, rule: RollbackRule) -> bool:
    if inc.kind == IncidentKind.NONFINITE:
        return rule.on_nan and is_loss(inc.metric)
    return inc.kind == IncidentKind.LOSS_DIVERGED and rule.on_divergence


def merge(windows: Sequence[Window]) -> tuple[Window, ...]:
    """Sorted, overlapping or touching windows joined."""
    out: list[Window] = []
    for lo, hi in sorted(windows):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def format_windows(windows: Sequence[Window]) -> str:
    """BABYSIT_SKIP_STEPS: `150-350,900-1100` (inclusive ranges)."""
    return ",".join(f"{lo}-{hi}" for lo, hi in windows)


def anomaly_name(inc: Incident) -> str:
    """The anomaly in a few words, without its step (`loss is nan`, `loss did not settle after
    its spike`): the detector's full message is said once, when it is found; the decision and
    the attempt's verdict only name it."""
    if inc.kind == IncidentKind.NONFINITE and inc.value is not None:
        return f"{inc.metric} is {inc.value}"
    if inc.kind == IncidentKind.LOSS_DIVERGED and inc.metric:
        return f"{inc.metric} did not settle after its spike"
    # (an incident rebuilt from the store after a babysit restart has no value: its message)
    return inc.message


def on_incident(
    inc: Incident,
    rule: RollbackRule,
    earlier_anomalies: Sequence[int] = (),
    windows: Sequence[Window] = (),
    checkpoints: bool = True,
) -> Decision:
    """`earlier_anomalies`: the steps of the anomalies earlier rollbacks of this run were for;
    `windows`: the step windows skipped so far; `checkpoints`: the run has a checkpoint glob
    (without one there is nothing to roll back to)."""
    if not wants_rollback(inc, rule):
        return Decision(DecisionKind.KEEP_WATCHING, f"logged: {inc.message}")
    if not checkpoints:
        return Decision(
            DecisionKind.KEEP_WATCHING,
            f"{inc.message}: no --checkpoint glob is set, so babysit cannot roll back past "
            "it (set one, or [rollback] on_nan / on_divergence = false to silence this)",
        )
    what = anomaly_name(inc)
    if inc.step is None:
        return Decision(
            DecisionKind.KEEP_WATCHING,
            f"{what}, but no step counter was printed with it: babysit cannot tell which "
            "checkpoint is from before it; not rolling back",
        )
    x = inc.step
    # Earlier anomalies at this place: inside a window skipped for them.
    same = [
        a for a in earlier_anomalies if any(lo <= x <= hi and lo <= a <= hi for lo, hi in windows)
    ]
    times = len(same) + 1
    if times >= rule.max_at_same_place:
        return Decision(
            DecisionKind.GIVE_UP_NEEDS_HUMAN,
            f"{what} at step {x}: anomaly number {times} at the same place (earlier at steps "
            f"{', '.join(map(str, same))}) even though the data around it was skipped; "
            "rolling back again will not help: look at the optimizer state, the learning-rate "
            "schedule and the data around it",
        )
    widen = 2 ** (times - 1)
    window = (max(0, x - rule.skip_before * widen), x + rule.skip_after * widen)
    skip = merge([*windows, window])
    lr = rule.lr_scale**times if rule.lr_scale != 1.0 else None
    before = x - rule.margin_steps - 1
    again = f" (anomaly {times} here: the skip window is {widen}x wider)" if times > 1 else ""
    return Decision(
        DecisionKind.ROLLBACK,
        f"{what} at step {x}: rolling back to the newest valid checkpoint at or before step "
        f"{max(before, 0)} and skipping the data of steps {window[0]}-{window[1]}{again}"
        + (f", learning rate x{lr:g}" if lr is not None else ""),
        before_step=max(before, 0),
        skip_steps=skip,
        lr_scale=lr,
    )
