"""Goodput of one run: where its wall time went, by category and by cause. Pure: rows in, a
JSON-able document out; no store, no clock, no I/O.

    doc = goodput_document(run_row, attempt_rows, samples, incident_rows, now=time.time(), gpus=8)
    doc["goodput"]                      # productive share of the wall time, 0..1
    doc["categories"]["recomputation"]  # {"seconds", "share", "gpu_hours", "by_cause"}

The wall time runs from the first attempt's launch to the last one's end (`now` while it runs)
and is cut, with no gap and no overlap, into CATEGORIES. An attempt's launch is when its
launcher's process was created (`launcher_started`), else when babysit recorded it (`started`,
taken before babysit writes its journal and spawns the launcher, which a busy disk stretches):

    restart_overhead  launch -> the attempt's first step (attempt 1's is charged to "start")
    recomputation     steps at or below the highest step an earlier attempt reached, redone
    productive        new steps
    hang              last progress -> detection -> kill, for an attempt that hung
    tail              last step -> end of any other attempt: a crash's last moments, the final
                      save and exit, or (running) the time since the last step
    backoff           an attempt's end -> the next one's launch (backoff, queue, requeue)

Time of each step: `samples` are the store's metrics rows, (attempt, ts, step), read into a
clock per attempt by views/stepclock.py. A hang incident's own time and value (seconds since
progress) give a hung attempt's last progress exactly. An attempt without any sample is placed
from its steps x the run's mean step time, and the document says so in `notes`.

The cause of a figure is the cause of the attempt that made it necessary: a restart's overhead,
its recomputation and the backoff before it are charged to the attempt that ended; a hang and a
tail to the attempt they happened in (its triage category, else its outcome).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babysit.durations import format_duration, iso_utc
from babysit.views.stepclock import own_samples, run_step_s, step_clock, step_points

CATEGORIES = ("productive", "recomputation", "restart_overhead", "hang", "tail", "backoff")
FAILED = ("failed", "killed", "lost")  # outcomes that count as a failure (not stopped, not ok)
FIRST_START = "start"  # the cause charged with the first attempt's start-up
RECENT_S = 2.5  # a sample's lag behind the step it saw (babysit samples every 2 s)
# The most a launcher's creation may follow babysit's record of the launch and still be taken as
# the launch: the journal's write and the spawn in between (more: a clock that jumped).
LAUNCH_LAG_S = 60.0

Sample = tuple[int | None, float, int | None]  # (attempt, ts, step): a metrics row


def _launched(a: Mapping[str, Any]) -> float:
    """When attempt `a` launched: its launcher process's creation time, when the store has it
    and it comes after babysit's record of the launch (by at most LAUNCH_LAG_S); else that
    record."""
    started = float(a["started"])
    spawned = a.get("launcher_started")
    if isinstance(spawned, (int, float)) and 0.0 <= spawned - started <= LAUNCH_LAG_S:
        return float(spawned)
    return started


@dataclass(frozen=True)
class Segment:
    """A stretch of the run's wall time in one category, charged to one cause."""

    attempt: int
    category: str
    cause: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Placed:
    """One attempt on the timeline: when its first and last steps were printed (None: it made
    none), how that was known, and when its hang began (None: no hang)."""

    number: int
    start: float
    end: float
    first_at: float | None
    last_at: float | None
    redo_until: float | None  # end of its recomputation (None: nothing redone)
    hang_from: float | None
    hang_detected: float | None
    measured: str  # "samples" | "incident" | "estimated" | "none"


def cause_of(a: Mapping[str, Any]) -> str:
    """An attempt's cause: its triage category, else its outcome (`succeeded`, `stopped`...)."""
    return str(a.get("category") or a.get("outcome") or "unknown")


# -- placing attempts --------------------------------------------------------------------------


def _hangs(incidents: Sequence[Mapping[str, Any]]) -> dict[int, Mapping[str, Any]]:
    """Each attempt's latest hang incident (its ts: detected; ts - value: last progress)."""
    out: dict[int, Mapping[str, Any]] = {}
    for i in incidents:
        n = i.get("attempt")
        if i.get("kind") == "hang" and n is not None and (n not in out or i["ts"] >= out[n]["ts"]):
            out[n] = i
    return out


def place(
    a: Mapping[str, Any],
    start: float,
    end: float,
    points: Sequence[tuple[float, int]],
    step_s: float | None,
    prior_max: int | None,
    hang: Mapping[str, Any] | None,
) -> Placed:
    """When the attempt's first step, last step, end of recomputation and hang happened."""
    first, last = a.get("first_step"), a.get("last_step")
    hung = a.get("category") == "hang"

    def clamp(t: float, lo: float, hi: float) -> float:
        return max(lo, min(t, hi))

    hang_from = detected = None
    if hang is not None and (hung or a.get("ended") is None):
        detected = clamp(float(hang["ts"]), start, end)
        hang_from = clamp(detected - float(hang.get("value") or 0.0), start, detected)
    if first is None or last is None:
        if hung and hang_from is None:
            hang_from = start
        return Placed(a["number"], start, end, None, None, None, hang_from, detected, "none")
    clock = step_clock(points, step_s)
    measured = "samples"
    pace = step_s or 0.0
    if clock is None:
        measured, stop = "estimated", hang_from if hang_from is not None else end

        def clock(s: int) -> float:
            return float(stop - (last - s) * pace)

    first_at = clamp(clock(first), start, end)
    last_at = clamp(clock(last), first_at, end)
    if hang_from is not None and not hung and hang_from < last_at - max(pace, RECENT_S):
        hang_from = detected = None  # running, and progress came back after that hang
    if hang_from is not None:
        last_at = clamp(hang_from, first_at, end)  # the detector's own time of the last step
        hang_from = last_at
    elif hung:
        hang_from = last_at
    redo_until = None
    if prior_max is not None and first <= prior_max:
        redo_until = clamp(clock(min(prior_max, last)), first_at, last_at)
    return Placed(
        a["number"], start, end, first_at, last_at, redo_until, hang_from, detected, measured
    )


@dataclass(frozen=True)
class Timeline:
    """The run's wall time cut into segments (in time order), each attempt placed (in number
    order), the mean step time, and notes on what could not be measured."""

    segments: tuple[Segment, ...]
    placed: tuple[Placed, ...]
    step_s: float | None
    notes: tuple[str, ...]


def timeline(
    attempts: Sequence[Mapping[str, Any]],
    samples: Sequence[Sample],
    incidents: Sequence[Mapping[str, Any]],
    now: float,
) -> Timeline:
    """Cut the run's wall time (see the module docstring)."""
    raw: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for number, ts, step in samples:
        if number is not None and step is not None:
            raw[number].append((ts, step))
    rows = sorted(attempts, key=lambda r: r["number"])
    by_attempt = {
        a["number"]: step_points(
            own_samples(raw.get(a["number"], []), a, rows[i - 1] if i else None)
        )
        for i, a in enumerate(rows)
    }
    step_s, how = run_step_s(by_attempt, attempts)
    hangs = _hangs(incidents)
    notes: list[str] = []
    out: list[Segment] = []
    placed: list[Placed] = []
    prev_end: float | None = None
    prev: Mapping[str, Any] | None = None
    prior_max: int | None = None
    for a in rows:
        launched = _launched(a)
        start = launched if prev_end is None else max(launched, prev_end)
        end = max(start, a["ended"] if a.get("ended") is not None else now)
        cause = cause_of(a)
        before = FIRST_START if prev is None else cause_of(prev)
        if prev_end is not None and start > prev_end:
            out.append(Segment(a["number"], "backoff", before, prev_end, start))
        pts = by_attempt[a["number"]]
        p = place(a, start, end, pts, step_s, prior_max, hangs.get(a["number"]))
        placed.append(p)
        if p.measured == "estimated":
            pace = f"{step_s:.3g}s" if step_s is not None else "unknown"
            notes.append(
                f"attempt {a['number']}: no step timestamps in the store; its steps are placed "
                f"from steps x the run's mean step time ({pace}, {how}), ending at its "
                "last progress"
            )
        stop = p.hang_from if p.hang_from is not None else end
        if p.first_at is None or p.last_at is None:
            out.append(Segment(a["number"], "restart_overhead", before, start, stop))
        else:
            out.append(Segment(a["number"], "restart_overhead", before, start, p.first_at))
            if p.redo_until is not None:
                out.append(Segment(a["number"], "recomputation", before, p.first_at, p.redo_until))
            out.append(
                Segment(a["number"], "productive", cause, p.redo_until or p.first_at, p.last_at)
            )
            if p.hang_from is None:
                out.append(Segment(a["number"], "tail", cause, p.last_at, end))
        if p.hang_from is not None:
            out.append(Segment(a["number"], "hang", cause, p.hang_from, end))
        if a.get("last_step") is not None:
            prior_max = max(prior_max or a["last_step"], a["last_step"])
        prev_end, prev = end, a
    if how == "attempt_time":
        notes.append(
            "no step timestamps in the whole run: the mean step time is attempt time / steps, "
            "which counts start-up as training (restart overhead is underestimated)"
        )
    kept = tuple(s for s in out if s.end > s.start)
    return Timeline(kept, tuple(placed), step_s, tuple(notes))


# -- the document ------------------------------------------------------------------------------


def _mtbf_mttr(
    attempts: Sequence[Mapping[str, Any]], placed: Sequence[Placed]
) -> tuple[float, list[tuple[str, float | None]]]:
    """Uptime (attempt time) and, for each failure, its cause and its repair time: from its
    last progress (its launch, if none) to the next attempt's first step (None: none since)."""
    rows = sorted(attempts, key=lambda r: r["number"])
    uptime = sum(p.end - p.start for p in placed)
    repairs: list[tuple[str, float | None]] = []
    back: float | None = None  # the next attempt's first step, walking back from the end
    for a, p in reversed(list(zip(rows, placed, strict=True))):
        if a.get("outcome") in FAILED:
            stalled = p.last_at if p.last_at is not None else p.start
            repairs.append((cause_of(a), None if back is None else back - stalled))
        if p.first_at is not None:
            back = p.first_at
    return uptime, repairs[::-1]


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _gpu_h(seconds: float, gpus: int | None) -> float | None:
    return None if gpus is None else round(seconds * gpus / 3600.0, 4)


def goodput_document(
    run: Mapping[str, Any],
    attempts: Sequence[Mapping[str, Any]],
    samples: Sequence[Sample],
    incidents: Sequence[Mapping[str, Any]],
    now: float,
    gpus: int | None = None,
) -> dict[str, Any]:
    """The report of one run (see the module docstring; README: `babysit report`)."""
    tl = timeline(attempts, samples, incidents, now)
    segs, placed, notes = tl.segments, tl.placed, list(tl.notes)
    t0 = placed[0].start if placed else None
    t1 = placed[-1].end if placed else None
    wall = (t1 - t0) if t0 is not None and t1 is not None else 0.0
    running = bool(attempts) and any(a.get("ended") is None for a in attempts)
    cats: dict[str, dict[str, Any]] = {}
    for c in CATEGORIES:
        mine = [s for s in segs if s.category == c]
        secs = sum(s.seconds for s in mine)
        by_cause: dict[str, float] = defaultdict(float)
        for s in mine:
            by_cause[s.cause] += s.seconds
        cats[c] = {
            "seconds": round(secs, 3),
            "share": round(secs / wall, 5) if wall > 0 else 0.0,
            "gpu_hours": _gpu_h(secs, gpus),
            "by_cause": {k: round(v, 3) for k, v in sorted(by_cause.items())},
        }
    hang_detect = sum(
        (p.hang_detected - p.hang_from)
        for p in placed
        if p.hang_from is not None and p.hang_detected is not None
    )
    cats["hang"]["detect_s"] = round(hang_detect, 3)
    cats["hang"]["act_s"] = round(cats["hang"]["seconds"] - hang_detect, 3)
    uptime, repairs = _mtbf_mttr(attempts, placed)
    causes: dict[str, dict[str, Any]] = {}
    for cause in sorted(
        {s.cause for s in segs if s.category != "productive"} | {c for c, _ in repairs}
    ):
        lost = sum(s.seconds for s in segs if s.cause == cause and s.category != "productive")
        fails = [r for c, r in repairs if c == cause]
        causes[cause] = {
            "failures": len(fails),
            "lost_s": round(lost, 3),
            "gpu_hours_lost": _gpu_h(lost, gpus),
            "mtbf_s": round(uptime / len(fails), 3) if fails else None,
            "mttr_s": _round(_mean(fails)),
        }
    productive = cats["productive"]["seconds"]
    if any(r is None for _, r in repairs):
        notes.append(
            "a failure with no progress since (the run gave up, or is restarting) has "
            "no repair time: MTTR counts the failures that were repaired"
        )
    if not attempts:
        notes.append("no attempts: the run never launched, nothing to report")
    if gpus is None:
        notes.append("GPU-hours: unknown (pass --gpus N)")
    return {
        "run": run.get("name"),
        "state": run.get("state"),
        "started": iso_utc(t0),
        "ended": None if running else iso_utc(t1),
        "as_of": iso_utc(now) if running else iso_utc(t1),
        "wall_s": round(wall, 3),
        "attempts": len(attempts),
        "failures": len(repairs),
        "goodput": round(productive / wall, 5) if wall > 0 else None,
        "gpus": gpus,
        "gpu_hours": _gpu_h(wall, gpus),
        "gpu_hours_lost": _gpu_h(wall - productive, gpus),
        "uptime_s": round(uptime, 3),
        "mtbf_s": round(uptime / len(repairs), 3) if repairs else None,
        "mttr_s": _round(_mean([r for _, r in repairs])),
        "step_time_s": _round(tl.step_s, 4),
        "categories": cats,
        "causes": causes,
        "per_attempt": _attempt_rows(attempts, placed, segs),
        "timeline": [
            {
                "attempt": s.attempt,
                "category": s.category,
                "cause": s.cause,
                "start_s": round(s.start - (t0 or 0.0), 3),
                "end_s": round(s.end - (t0 or 0.0), 3),
            }
            for s in segs
        ],
        "notes": notes,
    }


def _round(v: float | None, digits: int = 3) -> float | None:
    return None if v is None else round(v, digits)


def _attempt_rows(
    attempts: Sequence[Mapping[str, Any]], placed: Sequence[Placed], segs: Sequence[Segment]
) -> list[dict[str, Any]]:
    """Each attempt's own figures (backoff belongs between attempts: not here)."""
    own: dict[int, dict[str, float]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0.0))
    for s in segs:
        own[s.attempt][s.category] += s.seconds
    rows = sorted(attempts, key=lambda r: r["number"])
    return [
        {
            "number": p.number,
            "cause": cause_of(a),
            "outcome": a.get("outcome"),
            "first_step": a.get("first_step"),
            "last_step": a.get("last_step"),
            "step_times": p.measured,
            "duration_s": round(p.end - p.start, 3),
            **{f"{c}_s": round(own[p.number][c], 3) for c in CATEGORIES if c != "backoff"},
        }
        for a, p in zip(rows, placed, strict=True)
    ]


def describe(doc: Mapping[str, Any]) -> str:
    """One line: `goodput 81.2% of 3h05m (5 attempt(s), 4 failure(s))`."""
    if not doc["attempts"]:
        return f"run {doc['run']} has no attempts yet: nothing to report"
    share = doc["goodput"]
    pct = f"{share * 100:.1f}%" if share is not None else "-"
    return (
        f"goodput {pct} of {format_duration(doc['wall_s'])} ({doc['attempts']} attempt(s), "
        f"{doc['failures']} failure(s))"
    )
