"""Stragglers: the rank whose step lines come persistently later than the median rank's.

    d = StragglerDetector(StragglerRule(), hosts={17: "node-03"})
    for rank, step, ts in reports:        # each rank's step lines, as they were seen
        incidents += d.feed(rank, step, ts)

Rule (defaults in StragglerRule), from per-rank step arrival times only:
- A step is judged once `min_ranks` ranks have reported a step `settle_steps` past it, and only
  when at least `min_ranks` ranks reported it (ranks that print every 10th step, or never, are
  not late on the steps they do not print). Its median arrival is the median rank's time for
  that step; each report's lag is its time minus that median, as a fraction of the median step
  time (the median interval between the judged steps' median arrivals); a lag under
  `min_lag_s` is none (the output is read every few tenths of a second: finer lags are the
  reads' noise). A report that comes after its step was judged is compared with the kept
  median: a rank falling further behind every step keeps lagging more.
- A step far from a rank's own counter (a few windows ahead: "decay the lr at step 50000";
  behind: "saved the checkpoint of step 40") is not its progress. A counter far back starts its
  rank over; half the ranks' counters far back is a restart: everything starts over.
- A rank is a straggler when, over its reports of the last `window_steps` steps (at least
  `min_reports` of them, spread over half the window), more than `most` of them lag by more
  than `lag`. One slow step (a checkpoint on rank 0, a GC pause) is a few reports: never a
  straggler. All ranks slow together move the median with them: a throughput drop, for
  detect.throughput, never a straggler. The episode ends when fewer than `recover` of its
  window's reports lag; a new episode is a new incident.
- A straggler still flagged `ban_window_steps` after it was first flagged is a ban candidate:
  said once, in an incident of its own (supervise counts it against the rank's host).

One incident per judged step at most, naming every rank newly flagged (grouped by host):
"rank 17 on node-03 is 38% slower than the median rank over the last 50 steps (...)". How much
slower: the rank's typical lag as a fraction of the median step time; for a rank that falls
further behind every step, how much more of a step it loses each step.

Pure: time comes from the reports. Memory is bounded: `window_steps` reports per rank (ranks
capped at MAX_RANKS), the medians of the last few hundred steps; new_attempt() starts everything
over. Arrival times are only as good as the reads of the output (supervise stamps a read's lines
with the read's time): lags shorter than the time between reads are seen only now and then, and
a replay of an old log, read at once, has no timing and flags nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from babysit.detect.window import RobustWindow, median
from babysit.records import Incident, IncidentKind

MAX_RANKS = 65536  # ranks followed at most (a garbage rank number must not eat the memory)
MAX_OPEN_STEPS = 64  # steps waiting to be judged at most (the oldest are dropped beyond it)
_NONE: list[StragglerIncident] = []  # returned (never mutated) for the reports that say nothing
METRIC = "rank_lag"  # the incident's metric: its window holds (step, lag as a fraction of a step)


@dataclass(frozen=True)
class StragglerRule:
    """The [straggler] section of babysit.toml: the detector's rule."""

    enabled: bool = True  # follow per-rank step lines at all (off: the parser skips them)
    window_steps: int = 50  # steps over which a rank's lag is judged
    lag: float = 0.2  # a report lags when it comes this much of a step after the median rank's
    min_lag_s: float = 0.05  # ... and at least this long after it (below: the reads' own noise)
    most: float = 0.7  # the share of the window's reports that must lag
    recover: float = 0.3  # below this share, the episode ends
    ban_window_steps: int = 200  # flagged this long (steps): a ban candidate
    settle_steps: int = 2  # a step is judged when ranks report this many steps past it
    min_ranks: int = 3  # ranks that must report a step for it to be judged
    min_reports: int = 5  # a rank's reports in the window before it is judged
    warmup_steps: int = 5  # judged steps before any lag counts (the median step time settles)


@dataclass(frozen=True)
class Straggler:
    """One rank that lags, as the incident names it."""

    rank: int
    host: str | None
    slower: float  # 0.38: 38% slower than the median rank
    lag_s: float  # its typical lag behind the median rank, in seconds
    step_s: float  # the median step time, in seconds
    behind_steps: float  # how many steps behind the median rank it is now
    drifting: bool  # it falls further behind every step (not a steady lag)
    window_steps: int  # the steps judged
    ban_candidate: bool = False  # flagged for ban_window_steps: evidence against its host


@dataclass(frozen=True)
class StragglerIncident(Incident):
    """A throughput_drop incident naming straggling ranks (and their hosts, when known)."""

    stragglers: tuple[Straggler, ...] = ()

    @property
    def ban_candidates(self) -> tuple[Straggler, ...]:
        return tuple(s for s in self.stragglers if s.ban_candidate)


class _Rank:
    __slots__ = ("banned", "flagged_at", "last_step", "late", "reports", "restarted")

    def __init__(self) -> None:
        self.restarted = False  # its counter went far back (until it is among the others')
        self.last_step = -1
        self.reports: deque[tuple[int, float]] = deque()  # (step, lag in steps), in the window
        self.late = 0  # how many of `reports` lag
        self.flagged_at: int | None = None  # the step its episode was flagged at
        self.banned = False  # its ban candidacy was said, this episode


class StragglerDetector:
    def __init__(
        self,
        rule: StragglerRule | None = None,
        hosts: Mapping[int, str] | None = None,
        host: str | None = None,
    ) -> None:
        self.rule = rule or StragglerRule()
        self.hosts: Mapping[int, str] = hosts or {}  # rank -> host, where the engine knows it
        self.host = host  # the host of every rank not in `hosts` (one node), None: unknown
        self.new_attempt()

    def new_attempt(self) -> None:
        """The step counters start over: everything is forgotten."""
        self.ranks: dict[int, _Rank] = {}
        self.open: dict[int, list[tuple[int, float]]] = {}  # step -> [(rank, ts)], unjudged
        self.medians: dict[int, float] = {}  # judged step -> median arrival (bounded)
        self.judged = -1  # the newest step judged
        self._restarted = 0  # ranks whose counter went far back since
        self.step_time = RobustWindow(64, refresh=4)
        self._last_median: tuple[int, float] | None = None
        self._keep = max(4 * self.rule.window_steps, self.rule.ban_window_steps) + 16

    # -- reports -------------------------------------------------------------------------------

    def feed(self, rank: int, step: int, ts: float) -> list[StragglerIncident]:
        """One rank's step line: `rank` reported `step` at `ts`."""
        r = self.ranks.get(rank)
        if r is None:
            if len(self.ranks) >= MAX_RANKS or rank < 0:
                return _NONE
            if self.judged >= 0 and step > self.judged + self._keep:
                return _NONE  # a first line far ahead of every rank: not its step counter
            r = self.ranks[rank] = _Rank()
        last = r.last_step
        if step <= last:
            if step >= last - self._keep:
                # The same step again (another line of it), or an older step named in passing
                # ("saved the checkpoint of step 40" at step 45).
                return _NONE
            # The counter went far back: this rank starts over (its first line was not its
            # step, "warm up until step 2000"), or every rank does (a restart nobody announced:
            # once half the ranks went back, everything starts over).
            self.ranks[rank] = r = _Rank()
            r.restarted = True
            self._restarted += 1
            if self._restarted >= max(self.rule.min_ranks, len(self.ranks) // 2):
                self.new_attempt()
                return self.feed(rank, step, ts)
        if last >= 0 and step > last + self._keep:
            return _NONE  # far ahead of its own counter: "decay the lr at step 50000"
        r.last_step = step
        median_ts = self.medians.get(step)
        if median_ts is not None:
            # A latecomer for a step already judged.
            if r.restarted:
                r.restarted = False  # back among the steps the others are at
                self._restarted -= 1
            return self._lagged(rank, r, step, ts, ts - median_ts)
        if r.restarted and step <= self.judged:
            return _NONE  # a rank that went back, not (yet) among the others' steps
        if step <= self.judged:
            # Older than the medians kept (a rank far behind), or a step too few ranks reported.
            oldest = next(iter(self.medians), None)
            if oldest is not None and step < oldest:
                return self._lagged(rank, r, step, ts, ts - self.medians[oldest])
            return _NONE
        arrivals = self.open.get(step)
        if arrivals is None:
            arrivals = self.open[step] = []
        arrivals.append((rank, ts))
        # A step enough ranks reported is the counter's (one rank's odd line is not): the steps
        # settle_steps before it are judged.
        if len(arrivals) == self.rule.min_ranks:
            return self._judge_up_to(step - self.rule.settle_steps)
        return _NONE

    def _judge_up_to(self, last: int) -> list[StragglerIncident]:
        out: list[StragglerIncident] = []
        ready = sorted(s for s in self.open if s <= last)
        if len(self.open) - len(ready) > MAX_OPEN_STEPS:
            ready = sorted(self.open)[: len(self.open) - MAX_OPEN_STEPS]
        for step in ready:
            arrivals = self.open.pop(step)
            self.judged = max(self.judged, step)
            if len(arrivals) < self.rule.min_ranks:
                continue
            med = median([ts for _, ts in arrivals])
            self.medians[step] = med
            if len(self.medians) > self._keep:
                del self.medians[next(iter(self.medians))]  # the oldest: judged in order
            if self._last_median is not None:
                prev_step, prev_ts = self._last_median
                if step > prev_step and med >= prev_ts:
                    self.step_time.add((med - prev_ts) / (step - prev_step))
            self._last_median = (step, med)
            flagged: list[Straggler] = []
            last_ts = med
            for rank, ts in arrivals:
                last_ts = max(last_ts, ts)
                r = self.ranks[rank]
                found = self._lag(rank, r, step, ts - med)
                if found is not None:
                    flagged.append(found)
            if flagged:
                out.append(self._incident(step, last_ts, flagged))
        return out

    def _lagged(
        self, rank: int, r: _Rank, step: int, ts: float, lag_s: float
    ) -> list[StragglerIncident]:
        found = self._lag(rank, r, step, lag_s)
        return [self._incident(step, ts, [found])] if found is not None else []

    # -- judging one rank ----------------------------------------------------------------------

    def _lag(self, rank: int, r: _Rank, step: int, lag_s: float) -> Straggler | None:
        rule = self.rule
        if len(self.step_time) < rule.warmup_steps:
            return None
        step_s = self.step_time.stats()[0]
        if not step_s > 1e-6:
            return None  # no timing (every line read at once): nothing to say
        lag = lag_s / step_s
        if lag_s <= rule.min_lag_s:
            lag = min(lag, 0.0)  # under min_lag_s: no lag at all, never late
        reports = r.reports
        reports.append((step, lag))
        if lag > rule.lag:
            r.late += 1
        horizon = max(self.judged, step) - rule.window_steps
        while reports and reports[0][0] <= horizon:
            if reports.popleft()[1] > rule.lag:
                r.late -= 1
        n = len(reports)
        if n < rule.min_reports or reports[-1][0] - reports[0][0] < rule.window_steps // 2:
            return None
        share = r.late / n
        if r.flagged_at is None:
            if share <= rule.most:
                return None
            r.flagged_at, r.banned = step, False
            return self._straggler(rank, r, step_s, ban=False)
        if share < rule.recover:
            r.flagged_at, r.banned = None, False  # recovered: a new episode is a new incident
            return None
        if not r.banned and step - r.flagged_at >= rule.ban_window_steps - rule.window_steps:
            # Flagged over the whole long window (the flag itself looked back one window).
            r.banned = True
            return self._straggler(rank, r, step_s, ban=True)
        return None

    def _straggler(self, rank: int, r: _Rank, step_s: float, ban: bool) -> Straggler:
        lags = [lag for _, lag in r.reports]
        slope = _slope(list(r.reports))
        drifting = slope > self.rule.lag
        slower = slope if drifting else median(lags)
        return Straggler(
            rank,
            self.hosts.get(rank, self.host),
            slower,
            median(lags) * step_s,
            step_s,
            lags[-1],
            drifting,
            self.rule.window_steps if not ban else self.rule.ban_window_steps,
            ban,
        )

    def stragglers(self) -> list[int]:
        """The ranks flagged now (their episode not over)."""
        return sorted(rank for rank, r in self.ranks.items() if r.flagged_at is not None)

    # -- the incident --------------------------------------------------------------------------

    def _incident(self, step: int, ts: float, found: list[Straggler]) -> StragglerIncident:
        worst = max(found, key=lambda s: s.slower)
        r = self.ranks[worst.rank]
        return StragglerIncident(
            IncidentKind.THROUGHPUT_DROP,
            message(found),
            ts,
            step,
            METRIC,
            worst.slower,
            self.rule.lag,
            None,
            tuple((s, round(lag, 4)) for s, lag in list(r.reports)[-16:]),
            tuple(found),
        )


def _slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of lag over steps: how much more of a step a rank lags each step."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(s for s, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((s - mx) ** 2 for s, _ in points)
    if sxx <= 0:
        return 0.0
    return sum((s - mx) * (v - my) for s, v in points) / sxx


def _ranks(ranks: list[int]) -> str:
    """`17`, `16, 17`, `16-23`, `1, 4-6`: rank numbers as a person writes them."""
    ranks = sorted(set(ranks))
    parts: list[str] = []
    start = prev = ranks[0]
    for r in [*ranks[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(
            f"{start}-{prev}"
            if prev > start + 1
            else ", ".join(str(x) for x in range(start, prev + 1))
        )
        if r is not None:
            start = prev = r
    return ", ".join(parts)


def _pct(values: list[float]) -> str:
    lo, hi = round(min(values) * 100), round(max(values) * 100)
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def message(found: list[Straggler]) -> str:
    """One line in plain words: which ranks lag, where, by how much, over how long, and whether
    they are ban candidates."""
    by_host: dict[str | None, list[Straggler]] = {}
    for s in found:
        by_host.setdefault(s.host, []).append(s)
    parts = []
    for host, group in by_host.items():
        many = len(group) > 1
        where = f" on {host}" if host else ""
        parts.append(
            f"rank{'s' if many else ''} {_ranks([s.rank for s in group])}{where} "
            f"{'are' if many else 'is'} {_pct([s.slower for s in group])} slower"
        )
    first = found[0]
    steps = max(s.window_steps for s in found)
    text = " and ".join(parts) + f" than the median rank over the last {steps} steps"
    if len(found) == 1 and first.drifting:
        text += (
            f" (it falls {first.slower * first.step_s:.3g}s further behind every "
            f"{first.step_s:.3g}s step, {first.behind_steps:.0f} steps behind now)"
        )
    elif len(found) == 1:
        text += (
            f" (its step lines come {first.lag_s:.3g}s after the median rank's; a step "
            f"takes {first.step_s:.3g}s)"
        )
    bans = [s for s in found if s.ban_candidate]
    if bans:
        hosts = sorted({s.host for s in bans if s.host})
        text += ": a ban candidate" if len(bans) == 1 else ": ban candidates"
        text += f", counted against {', '.join(hosts)}" if hosts else ""
    else:
        text += " (a slow GPU, a throttled node, a bad link?)"
    return text
