"""The chaos suite's pure half: the seeded fault schedules and the figures measured from what a
run left behind (the trainer's --events-log, babysit's events.jsonl, the driver's own marks).

    sched = schedules(steps=400, seed=7)["mixed"]     # Schedule: faults at seeded steps
    figures = measure(trainer_events, marks, sched, fault_free, babysit_events)

No process is started here and no clock is read: every time comes from the records, so the
measurement is unit-tested on hand-made records (tests/unit/test_chaos_schedule.py).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# What a fault is, the trainer flag that injects it, and what babysit should call it in the
# logbook (None: nothing to call, e.g. a slow save must not be an incident at all).
FAULTS: dict[str, tuple[str, str | None]] = {
    "crash": ("a crash with NCCL's message (DistBackendError) on one rank", "nccl_error"),
    "kill": ("one rank SIGKILLed", None),  # triage: a signal death, any transient category
    "hang_collective": ("one rank hung inside an all_reduce the others never join", "hang"),
    "hang_data": ("one rank hung reading its shard (no collective)", "hang"),
    "nan": ("a batch that turns the loss NaN, every time it is trained on", "numerical"),
    "spike_data": ("a data window that makes the loss spike and stay up, every time", "loss_spike"),
    "slow_ckpt": ("one checkpoint write stalled (I/O, not a hang)", None),
    "babysit_kill": ("babysit itself SIGKILLed and started again", None),
    "bad_node": ("a node whose GPU fails every attempt it is part of", "gpu_hardware"),
    "bug": ("a user bug (KeyError) at a step, on every attempt", "user_code"),
}
# Faults that must not raise any incident: one there is a false alarm.
QUIET = {"slow_ckpt", "babysit_kill"}
MIXED = ["crash", "kill", "hang_collective", "hang_data", "nan", "spike_data", "slow_ckpt",
         "babysit_kill"]  # fmt: skip
QUICK_MIXED = ["crash", "hang_data", "nan", "babysit_kill"]


@dataclass(frozen=True)
class Fault:
    name: str
    step: int


@dataclass(frozen=True)
class Schedule:
    """One training run to `steps` under `faults`; `finish` says whether the right outcome is
    the final step (False for a user bug: the right outcome is to stop)."""

    name: str
    steps: int
    faults: tuple[Fault, ...]
    finish: bool = True
    hosts: tuple[str, ...] = ()
    bad_host: str | None = None


def schedules(steps: int, seed: int, ckpt_every: int, quick: bool = False) -> dict[str, Schedule]:
    """The fixed schedules for a seed. `mixed` spreads its event faults over [10%, 60%] of the
    steps, one per slot, in a seeded order and at a seeded step of each slot; then the data
    faults, the spike at 64-70% and the NaN at 86-90%: a rollback skips the data of 50 steps
    before the anomaly to 150 after (babysit's default), and a fault inside a skipped window
    never fires. No fault falls on a checkpoint step (it would race the save). The other
    schedules hold one fault each."""
    rng = random.Random(seed)
    names = list(QUICK_MIXED if quick else MIXED)
    data = [n for n in names if n in ("spike_data", "nan")]
    events = [n for n in names if n not in data]
    rng.shuffle(events)
    lo, hi = int(0.10 * steps), int(0.60 * steps)
    width = (hi - lo) / len(events)
    picks = []
    for i, name in enumerate(events):
        a, b = lo + int(i * width), lo + int((i + 1) * width) - 1
        picks.append((name, rng.randint(a + 1, max(a + 1, b - 1))))
    spans = {"spike_data": (0.64, 0.70), "nan": (0.86, 0.90)}
    for name in ("spike_data", "nan"):
        if name in data:
            lo_f, hi_f = spans[name]
            picks.append((name, rng.randint(int(lo_f * steps), int(hi_f * steps))))
    faults = [Fault(n, at + 1 if at % ckpt_every == 0 else at) for n, at in picks]
    bug_at = rng.randint(int(0.3 * steps), int(0.6 * steps))
    if bug_at % ckpt_every == 0:
        bug_at += 1
    return {
        "mixed": Schedule("mixed", steps, tuple(faults)),
        "bad_node": Schedule("bad_node", steps, (Fault("bad_node", 0),),
                             hosts=("node-a", "node-b", "node-c"), bad_host="node-b"),
        "bug": Schedule("bug", steps, (Fault("bug", bug_at),), finish=False),
    }  # fmt: skip


SPARSE = ["crash", "kill", "hang_collective"]  # the faults that cost a restart each


def sparse(spacing: int, names: list[str], seed: int, ckpt_every: int) -> Schedule:
    """`names` one at a time, one every `spacing` steps (give or take a tenth, seeded), in a
    seeded order, then one more spacing to the final step: faults at a rate that a long run
    meets, for the progress rate against the fault-free run's (chaos.py --sparse)."""
    rng = random.Random(seed)
    order = list(names)
    rng.shuffle(order)
    faults = []
    for i, name in enumerate(order):
        at = (i + 1) * spacing + rng.randint(-(spacing // 10), spacing // 10)
        faults.append(Fault(name, at + 1 if at % ckpt_every == 0 else at))
    return Schedule("sparse", (len(order) + 1) * spacing, tuple(faults))


def trainer_flags(s: Schedule, hang_rank: int, slow_ckpt_s: float) -> list[str]:
    """The tiny GPT's flags that inject the schedule (babysit_kill is the driver's job)."""
    flags = {
        "crash": "--crash-at",
        "kill": "--kill-at",
        "hang_collective": "--hang-in-collective-at",
        "hang_data": "--hang-in-data-at",
        "nan": "--nan-at",
        "spike_data": "--spike-data-at",
        "slow_ckpt": "--slow-ckpt-at",
        "bug": "--bug-at",
    }
    out: list[str] = []
    for f in s.faults:
        if f.name in flags:
            out += [flags[f.name], str(f.step)]
    if any(f.name in ("crash", "kill", "bug") for f in s.faults):
        out += ["--fault-rank", str(hang_rank)]
    if any(f.name.startswith("hang_") for f in s.faults):
        out += ["--hang-rank", str(hang_rank)]
    if any(f.name == "slow_ckpt" for f in s.faults):
        out += ["--slow-ckpt-s", f"{slow_ckpt_s:g}"]
    if s.bad_host is not None:
        out += ["--bad-host", s.bad_host]
    return out


@dataclass
class Marks:
    """What the driver saw of one way's run: when it started and ended (wall clock), how, and
    when it killed babysit (the babysit_kill fault)."""

    t0: float
    t_end: float
    exit_code: int | None
    capped: bool
    babysit_killed_at: list[float] = field(default_factory=list)
    babysit_restarted_at: list[float] = field(default_factory=list)


def ev_ts(ts: Any) -> float:
    """An event's time: events.jsonl holds epoch seconds; ISO 8601 is read too."""
    if isinstance(ts, (int, float)):
        return float(ts)
    return datetime.fromisoformat(str(ts)).timestamp()


def _first(xs: list[float], after: float) -> float | None:
    later = [x for x in xs if x >= after]
    return min(later) if later else None


def fault_times(events: list[dict[str, Any]], marks: Marks) -> dict[str, float]:
    """When each fault was injected: the first `fault` record the trainer wrote for it (the
    driver's kill time for babysit_kill)."""
    out: dict[str, float] = {}
    for e in events:
        if e.get("kind") == "fault" and e["fault"] not in out:
            out[e["fault"]] = float(e["t"])
    if marks.babysit_killed_at:
        out["babysit_kill"] = marks.babysit_killed_at[0]
    return out


def babysit_notices(bevents: list[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """babysit's events that notice trouble, with their times: incidents, the evidence of a
    stalled attempt, and attempts that ended other than by succeeding (or an operator's stop)."""
    out = []
    for e in bevents:
        kind = e.get("kind", "")
        data = e.get("data") or {}
        if kind in ("incident", "hang_evidence") or (
            kind == "attempt_ended" and data.get("outcome") in ("failed", "killed", "lost")
        ):
            out.append((ev_ts(e["ts"]), e))
    return sorted(out, key=lambda p: p[0])


def category_of(e: dict[str, Any]) -> str | None:
    """What babysit called it: an incident's kind, a failed attempt's triage category."""
    data = e.get("data") or {}
    verdict = data.get("verdict")
    verdict = verdict if isinstance(verdict, dict) else {}
    for c in (data.get("category"), verdict.get("category"), data.get("kind"),
              data.get("incident")):  # fmt: skip
        if isinstance(c, str) and c:
            return c
    return None


def starts_of(events: list[dict[str, Any]]) -> list[float]:
    """When the trainer (rank 0) started: one per attempt or torchrun restart."""
    return sorted(float(e["t"]) for e in events if e.get("kind") == "start" and e["rank"] == 0)


def steps_of(events: list[dict[str, Any]]) -> list[tuple[float, int, float]]:
    return sorted(
        (float(e["t"]), int(e["step"]), float(e["loss"])) for e in events if e.get("kind") == "step"
    )


def productive_s(steps: list[tuple[float, int, float]], step_s: float) -> tuple[float, int]:
    """Productive time: each step that raised the high-water mark counts for the time it took
    (since the step before it, in the same attempt: capped at 4x the fault-free step time, so
    a restart's gap is not counted as work). Also returns the steps recomputed: step records
    at or below the high-water mark."""
    high, prod, redone = -1, 0.0, 0
    prev_t: float | None = None
    prev_step: int | None = None
    for t, step, _ in steps:
        dt = t - prev_t if prev_t is not None and prev_step == step - 1 else step_s
        if step > high:
            prod += min(dt, 4 * step_s)
            high = step
        else:
            redone += 1
        prev_t, prev_step = t, step
    return prod, redone


def final_loss(events: list[dict[str, Any]], n: int) -> float | None:
    """The validation loss of the eval at the final step (the trainer runs one there), or None
    when the run never got there."""
    vals = [float(e["val_loss"]) for e in events if e.get("kind") == "eval" and e["step"] == n]
    return vals[-1] if vals else None


def measure(
    events: list[dict[str, Any]],
    marks: Marks,
    sched: Schedule,
    step_s: float,
    way: str,
    bevents: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The figures of one way on one schedule (see chaos.py's docstring for each)."""
    steps = steps_of(events)
    wall = marks.t_end - marks.t0
    done = [float(e["t"]) for e in events if e.get("kind") == "done"]
    reached = bool(done)
    prod, redone = productive_s(steps, step_s)
    injected = fault_times(events, marks)
    starts = starts_of(events)
    notices = babysit_notices(bevents or []) if way == "babysit" else []
    per_fault: dict[str, dict[str, Any]] = {}
    faults = list(sched.faults)
    for i, f in enumerate(faults):
        at = injected.get(f.name)
        nxt = [injected[g.name] for g in faults[i + 1 :] if g.name in injected]
        until = min([x for x in nxt if at is not None and x > at] or [math.inf])
        per_fault[f.name] = fault_figures(
            f.name, at, until, way, notices, starts, steps, marks, events
        )
    # A false alarm: babysit raised an incident or ended an attempt where no fault called for
    # it (before the first fault, or in the wake of a quiet one: a slow save, its own restart).
    noticed = {
        round(t, 3)
        for name, r in per_fault.items()
        for t in r.pop("_noticed", [])
        if name not in QUIET
    }
    false_alarms = [
        e for t, e in notices
        if round(t, 3) not in noticed and e.get("kind") in ("incident", "attempt_ended")
    ]  # fmt: skip
    high = max((s for _, s, _ in steps), default=-1)
    progress_steps = sched.steps if reached else high + 1
    return {
        "reached_final_step": reached,
        "progress_steps": progress_steps,
        "right_outcome": reached if sched.finish else not reached and not marks.capped,
        "time_to_final_step_s": round(done[0] - marks.t0, 2) if done else None,
        "wall_s": round(wall, 2),
        "capped": marks.capped,
        "exit_code": marks.exit_code,
        "goodput": round(prod / wall, 4) if wall > 0 else 0.0,
        "productive_s": round(prod, 2),
        "high_step": high,
        "steps_recomputed": redone,
        "attempts": len(starts),
        "false_alarms": len(false_alarms),
        "false_alarm_notes": [
            str(e.get("data", {}).get("summary", e.get("kind")))[:160] for e in false_alarms
        ],
        "final_loss": final_loss(events, sched.steps),
        "faults": per_fault,
        "trace": trace(steps, marks.t0),
        "injected_at_s": {k: round(v - marks.t0, 2) for k, v in injected.items()},
    }


def trace(steps: list[tuple[float, int, float]], t0: float, points: int = 400) -> list[list[float]]:
    """[seconds since start, step] for the plot, thinned to about `points` pairs."""
    every = max(1, len(steps) // points)
    return [[round(t - t0, 2), step] for i, (t, step, _) in enumerate(steps) if i % every == 0]


def fault_figures(
    name: str,
    at: float | None,
    until: float,
    way: str,
    notices: list[tuple[float, dict[str, Any]]],
    starts: list[float],
    steps: list[tuple[float, int, float]],
    marks: Marks,
    events: list[dict[str, Any]],
) -> dict[str, Any]:
    """Detection and recovery of one fault. babysit: detected = its first notice (incident,
    hang, failed attempt) after the injection and before the next fault; the baselines notice
    only a process that ended: detected = the next start of the trainer (the loop's or
    torchrun's relaunch), None if there was none. Recovered = the first new step record after
    detection (training progressing again: a step, or a skipped window announced). A bug has no
    recovery: stopped_after_s instead (the injection -> the way's exit, None if capped).
    babysit_kill: nothing to detect; recovered = the
    first step after babysit was started again."""
    out: dict[str, Any] = {"injected": at is not None, "detected_after_s": None,
                           "recovered_after_s": None, "category": None,
                           "_noticed": []}  # fmt: skip
    if at is None:
        return out
    if name == "babysit_kill":
        back = _first(marks.babysit_restarted_at, at)
        nxt = _first([t for t, _, _ in steps], back) if back is not None else None
        out["recovered_after_s"] = round(nxt - at, 2) if nxt is not None else None
        return out
    progress = [t for t, _, _ in steps] + [float(e["t"]) for e in events
                                            if e.get("kind") in ("skip", "done")]  # fmt: skip
    detected: float | None = None
    if way == "babysit":
        mine = [(t, e) for t, e in notices if at <= t < until]
        if mine:
            detected = mine[0][0]
            out["_noticed"] = [t for t, _ in mine]
            cats = [c for _, e in mine if (c := category_of(e)) is not None]
            out["category"] = cats[0] if cats else None
            out["categories"] = sorted(set(cats))
    else:
        detected = _first(starts, at)
        if detected is not None and detected >= until:
            detected = None
    if detected is None:
        return out
    out["detected_after_s"] = round(detected - at, 2)
    if name == "bug":  # nothing to recover: the right response is to stop, and say why
        out["stopped_after_s"] = None if marks.capped else round(marks.t_end - at, 2)
        return out
    nxt = _first(progress, detected)
    if nxt is not None:
        out["recovered_after_s"] = round(nxt - detected, 2)
    return out


def median_of(xs: list[Any]) -> Any:
    """The median of the numbers among xs (None when there are none); booleans: all true."""
    if xs and all(isinstance(x, bool) for x in xs):
        return all(xs)
    nums = [float(x) for x in xs if isinstance(x, (int, float)) and not isinstance(x, bool)]
    nums = [x for x in nums if math.isfinite(x)]
    if not nums:
        return None
    med = statistics.median(nums)
    if all(isinstance(x, int) for x in xs if x is not None) and med == int(med):
        return int(med)  # counts stay counts
    return round(med, 4)
