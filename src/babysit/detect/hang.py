"""Hang (flatline): no progress for longer than the run's own cadence allows.

    d = HangDetector(HangRule())
    d.new_attempt(ts)                      # the attempt started: the start-up allowance applies
    d.progress(step, ts, source, stamp)    # a step was printed (stamp: the line's own time)
    d.beat(ts, source, stamp)              # metrics without a step: progress for the clock
    d.activity(activity)                   # a checkpoint save or an eval is visibly under way
    d.check(now)                           # -> Incident | None, at most one per stall
    d.restore(timeout_s, ts, step)         # re-attached: the timeout an earlier babysit learned

Rule (defaults in HangRule), with zero code changes: the timeout is learned from the intervals
between *steps*: `mult` (2) times their `quantile` (0.99) over the last `window` (200) steps (one
read teaching at most `per_read` (25) of them), plus `floor_s` (3 s), and never less than
`survived` (1.2) times the longest unannounced silence the run has already come through (an
epoch boundary respawning DataLoader workers, say), nor than `mult` times the median silence
between reads that saw progress (output that arrives in bursts, block-buffered or relayed by a
launcher, is only seen that often). With a steady cadence a real hang is flagged within about
2x the step interval + 3 s.

babysit reads the log every 0.2 s, and a fast trainer prints dozens of steps between two reads.
A read that saw k new steps over the g seconds since the previous read that saw progress
teaches k intervals of g/k (not one of g): the cadence is the steps', not the reads'. Steps are
counted per source (stdout, the client's file, ...): the same steps told by two sources are not
twice as many. Where the lines carry their own time (babysit.client's rows), the intervals
between consecutive stamped steps are taken as they are. Before the first step of an attempt,
and until `min_intervals` (5) step intervals are known, the start-up allowance `startup_s`
(30 min) applies instead. While a checkpoint save or an eval is announced in the output (a line
saying so since the last step), the pause allowance `pause_s` (30 min) applies, counted from the
announcement, until the save is seen finished: a complete checkpoint written since it
appeared (Activity "checkpoint_saved"); the learned timeout, but at least as long as the save
took (a save in several files may pause between them), then counts from that moment, so a rank
that hangs right after a quick save is flagged as quickly as anywhere else. A read after an
announcement teaches nothing. A write in the checkpoint directory (a save in progress grows its
file) is a sign of life: the learned timeout counts from the latest one instead of from the
last step. The step counter going back (a restart, a rollback) is not an
anomaly. Time comes only from the records and from `now`, never from a clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from babysit.detect.window import median, quantile
from babysit.records import Activity, Incident, IncidentKind

MAX_SOURCES = 64  # sources counted apart; more share one count (bounded memory)


@dataclass(frozen=True)
class HangRule:
    """The detector's half of the [hang] section of babysit.toml (see the module docstring)."""

    mult: float = 2.0  # timeout = mult * quantile(step interval) + floor_s
    quantile: float = 0.99
    floor_s: float = 3.0
    survived: float = 1.2  # x the longest unannounced silence the run already came through
    window: int = 200  # step intervals
    min_intervals: int = 5  # step intervals known before the learned timeout applies
    # The most intervals one read teaches. A read of a backlog (lines written long before, as
    # when following a big log from its start) spreads its thousands of steps over the poll
    # interval: capped, it cannot outweigh the top of the window, and a few real intervals
    # are enough for the quantile to see the true cadence again.
    per_read: int = 25
    startup_s: float = 1800.0  # allowance before the first steps of an attempt
    pause_s: float = 1800.0  # allowance while a checkpoint save or an eval is under way


@dataclass
class _Source:
    """What one source last told: its step, and that line's own time (None after an activity:
    a stamped interval across a save or an eval teaches nothing)."""

    step: int | None = None
    stamp: float | None = None


@dataclass
class _Read:
    """The read of the log that saw the newest progress, and the new steps each source told
    in it (beats: lines with metrics but no step, counted for a source that tells no step)."""

    ts: float
    gap: float | None  # since the read before that saw progress; None: it teaches nothing
    counts: dict[str, list[int]] = field(default_factory=dict)  # source -> [steps, beats]

    def steps(self) -> int:
        """How many steps the read saw: the source that saw the most (not their sum)."""
        return max((s or b for s, b in self.counts.values()), default=0)

    def intervals(self, per_read: int) -> list[float]:
        """What the read teaches: k steps over its gap are k intervals of gap/k (at most
        per_read of them: a backlog must not bury the cadence)."""
        k = self.steps()
        return [self.gap / k] * min(k, per_read) if self.gap is not None and k > 0 else []


class HangDetector:
    def __init__(self, rule: HangRule) -> None:
        self.rule = rule
        # The last `window` step intervals (a read of 30 steps adds its interval 30 times).
        self.intervals: deque[float] = deque(maxlen=rule.window)
        self.gaps: deque[float] = deque(maxlen=rule.window)  # silences between reads
        self.last_progress_ts: float | None = None
        self.last_step: int | None = None
        self.started_ts: float | None = None
        self.pause: Activity | None = None
        self.alive_ts: float | None = None  # the latest write seen in the checkpoint directory
        # How long the save seen finished since the last step took: until the next step, the
        # timeout is at least that (a save in several files may pause between them).
        self.save_s = 0.0
        self.flagged = False
        self.longest = 0.0  # the longest unannounced silence seen in the run
        self._read: _Read | None = None  # its intervals are learned when the next read comes
        self._sources: dict[str, _Source] = {}
        self._version = 0  # changes with what was learned (the cache key)
        self._cache: tuple[int, float | None] | None = None
        self._restored: float | None = None  # a re-attach's timeout, until one is learned again

    def new_attempt(self, ts: float) -> None:
        self._close_read()  # what the attempt taught about the cadence stays
        self._sources.clear()
        self.started_ts = ts
        self._restored = None
        self.last_progress_ts = None
        self.last_step = None
        self.pause = None
        self.alive_ts = None
        self.save_s = 0.0
        self.flagged = False
        self._version += 1

    def restore(self, timeout_s: float, ts: float, step: int | None) -> None:
        """Re-attached to an attempt past its start-up: the timeout the babysit before learned
        applies (from `ts`, the re-attach) until this one has learned the cadence again."""
        self._restored = timeout_s
        self.last_progress_ts = ts
        self.last_step = step
        self._version += 1

    def progress(self, step: int, ts: float, source: str = "", stamp: float | None = None) -> None:
        name, src = self._source(source)
        if src.step == step:
            return  # the same step from another rank
        fresh = src.step is None or step > src.step  # a step counter going back teaches nothing
        self._seen(src, name, ts, fresh, stamp, 0)
        src.step = step
        self.last_step = step

    def beat(self, ts: float, source: str = "", stamp: float | None = None) -> None:
        """Metrics without a step (an HF dict, a Lightning bar): progress for the clock."""
        name, src = self._source(source)
        self._seen(src, name, ts, True, stamp, 1)

    def _source(self, name: str) -> tuple[str, _Source]:
        src = self._sources.get(name)
        if src is None:
            if len(self._sources) >= MAX_SOURCES:
                name = ""
            src = self._sources.setdefault(name, _Source())
        return name, src

    def _seen(
        self, src: _Source, name: str, ts: float, fresh: bool, stamp: float | None, kind: int
    ) -> None:
        """A step (kind 0) or a beat (kind 1) of `src`, read at `ts`."""
        read = self._read
        if read is None or ts != read.ts:
            read = self._open_read(ts, fresh)
        if fresh:
            prev = src.stamp
            if stamp is not None and prev is not None and stamp > prev:
                self.intervals.append(stamp - prev)  # the line's own times: an exact interval
            else:
                counts = read.counts.get(name)
                if counts is None:
                    counts = read.counts[name] = [0, 0]
                counts[kind] += 1
        src.stamp = stamp
        self.last_progress_ts = ts
        self.pause = None
        self.alive_ts = None
        self.save_s = 0.0
        self.flagged = False
        self._version += 1

    def _open_read(self, ts: float, fresh: bool) -> _Read:
        """The first progress of a new read: the previous read's intervals are now complete."""
        self._close_read()
        last = self.last_progress_ts
        gap = None
        if (
            last is not None
            and ts > last  # lines read together are one read; a clock going back teaches nothing
            and fresh
            and self.pause is None  # announced pauses do not teach the cadence
            and self.alive_ts is None
        ):
            gap = ts - last
            self.gaps.append(gap)
            self.longest = max(self.longest, gap)
        self._read = _Read(ts, gap)
        return self._read

    def _close_read(self) -> None:
        if self._read is not None:
            self.intervals.extend(self._read.intervals(self.rule.per_read))
        self._read = None

    def _known(self) -> list[float]:
        """The step intervals known: those learned and those of the read still open."""
        read = self._read
        return list(self.intervals) + (read.intervals(self.rule.per_read) if read else [])

    def saving_since(self) -> float | None:
        """When the checkpoint save under way was announced (None: no save announced)."""
        return self.pause.ts if self.pause is not None and self.pause.kind == "checkpoint" else None

    def activity(self, act: Activity) -> None:
        if act.kind == "checkpoint_write":
            self.alive_ts = act.ts
        elif act.kind == "checkpoint_saved":
            since = self.saving_since()
            if since is None:
                return
            self.pause = None  # the announced save is done: back to the learned cadence
            self.alive_ts = max(self.alive_ts or act.ts, act.ts)
            self.save_s = max(self.save_s, act.ts - since)
        else:
            self.pause = act
        self.flagged = False
        for src in self._sources.values():
            src.stamp = None  # a stamped interval across an activity teaches nothing
        self._version += 1

    def typical_interval_s(self) -> float | None:
        """The median interval between steps, or None before one is known."""
        known = self._known()
        return median(known) if known else None

    def learned_timeout_s(self) -> float | None:
        """max(mult * quantile(step intervals) + floor_s, survived * longest, mult * median
        silence between reads), or None until min_intervals step intervals are known."""
        if self._cache is None or self._cache[0] != self._version:
            self._cache = (self._version, self._learned())
        return self._cache[1]

    def _learned(self) -> float | None:
        known = self._known()
        if len(known) < self.rule.min_intervals:
            return self._restored
        rule = self.rule
        cadence = rule.mult * quantile(known, rule.quantile) + rule.floor_s
        # Output that arrives in bursts is seen no more often than the reads that bring it.
        bursts = rule.mult * median(list(self.gaps)) if self.gaps else 0.0
        return max(cadence, rule.survived * self.longest, bursts)

    def deadline(self) -> tuple[float, str] | None:
        """When the run counts as hung, and the allowance that sets it."""
        if self.pause is not None:
            return self.pause.ts + self.rule.pause_s, f"{self.pause.kind} in progress"
        learned = self.learned_timeout_s()
        if self.last_progress_ts is not None and learned is not None:
            learned = max(learned, self.save_s)
            alive = max(self.last_progress_ts, self.alive_ts or 0.0)
            restored = self._restored is not None and len(self._known()) < self.rule.min_intervals
            return alive + learned, "cadence learned before the re-attach" if restored else (
                "learned cadence"
            )
        since = self.last_progress_ts if self.last_progress_ts is not None else self.started_ts
        if since is None:
            return None
        return since + self.rule.startup_s, "start-up allowance"

    def check(self, now: float) -> Incident | None:
        due = self.deadline()
        if self.flagged or due is None or now < due[0]:
            return None
        self.flagged = True
        since = self.last_progress_ts if self.last_progress_ts is not None else self.started_ts
        quiet = now - (since if since is not None else now)
        typical = self.typical_interval_s()
        cadence = f": steps usually come every {_seconds(typical)}" if typical else ""
        last = f"since step {self.last_step}" if self.last_step is not None else "since start"
        limit = due[0] - (since if since is not None else due[0])
        return Incident(
            IncidentKind.HANG,
            f"no progress for {quiet:.0f}s {last} (limit {_seconds(limit)}, from the "
            f"{due[1]}{cadence}): the run looks hung",
            now,
            self.last_step,
            "step",
            quiet,
            typical,
            None,
        )


def _seconds(s: float) -> str:
    """3.2s, 51ms, 1800s: a duration as a person reads it."""
    return f"{s * 1000:.3g}ms" if s < 1 else f"{s:.3g}s" if s < 100 else f"{s:.0f}s"
