"""parse -> detect for one run's output: the path shared by `babysit run` and `babysit watch`.

    p = Pipeline()
    p.new_attempt(ts)
    incidents = p.lines(chunk.lines)   # OutputLines in, Incidents out
    incidents += p.tick(now)           # hangs need time to pass
    p.first_step, p.last_step, p.errors, p.latest

A wiring module like the supervisor: it may import parse and detect, which never import each
other. Each source (stdout, stderr, the client's file, a metrics file, each watched log) gets
its own value detectors, so two sources printing the same steps in turn never look like a step
counter going back; the hang clock is shared: progress anywhere is progress (the cadence
counts each source's steps apart, by the source's name). Memory is bounded:
the detectors keep fixed windows, `errors` keeps the last 20, `latest` at most 512 names.
A line that makes a parser or a detector fail is counted and skipped: supervision goes on.

Stragglers (detect/straggler.py): the parser keeps every rank's step lines, each at the time
of the read that brought it (the Follower stamps a read with one time), so a rank whose lines
come a read or more later than the others' is seen late. set_hosts() names the ranks' hosts
when the engine knows them; ban_evidence(incident) is what supervise counts against a host
(supervise/nodes.py, node events of kind "straggler").
"""

from __future__ import annotations

import dataclasses
from collections import deque

from babysit.detect.hang import HangDetector
from babysit.detect.straggler import StragglerDetector, StragglerIncident, StragglerRule
from babysit.detect.vitals import VitalSigns, VitalsRules
from babysit.parse.lines import LineParser, Record
from babysit.records import Activity, Incident, Metric, OutputLine, Progress, PythonError

MAX_STEP = 1 << 62  # past this a "step" is garbage (and would not fit SQLite's integers)
MAX_SOURCES = 64


class Pipeline:
    def __init__(
        self, rules: VitalsRules | None = None, straggler: StragglerRule | None = None
    ) -> None:
        self.rules = rules or VitalsRules()
        rule = straggler or StragglerRule()
        # Stragglers: off, the parser does not even look for other ranks' steps.
        self.straggler = StragglerDetector(rule) if rule.enabled else None
        self.parser = LineParser(rank_steps=self.straggler is not None)
        self.hang = HangDetector(self.rules.hang)
        self.vitals: dict[str, VitalSigns] = {}
        self.errors: deque[PythonError] = deque(maxlen=20)
        self.first_step: int | None = None  # of the current attempt
        self.last_step: int | None = None
        self.latest: dict[str, float] = {}  # the newest value of each metric
        self.latest_step: int | None = None
        self.lines_seen = 0
        self.metric_records = 0
        self._reported: deque[tuple[str, int, str | None]] = deque(maxlen=64)
        self.failures = 0  # lines a parser or detector choked on (skipped)
        self.last_failure: str | None = None

    def _vitals(self, source: str) -> VitalSigns:
        v = self.vitals.get(source)
        if v is None:
            if len(self.vitals) >= MAX_SOURCES:
                source = "other"
                v = self.vitals.get(source)
            if v is None:
                v = self.vitals[source] = VitalSigns(self.rules, self.hang, source)
        return v

    def new_attempt(
        self, ts: float, first_step: int | None = None, last_step: int | None = None
    ) -> None:
        self.parser = LineParser(rank_steps=self.straggler is not None)
        if self.straggler is not None:
            self.straggler.new_attempt()
        self.hang.new_attempt(ts)
        for v in self.vitals.values():
            v.new_attempt(ts)
        self.errors.clear()
        self._reported.clear()  # a rollback replays the same steps: their incidents count again
        self.first_step, self.last_step = first_step, last_step

    def _progress(self, step: int) -> None:
        # An error followed by more steps was survived: it is not what ended the attempt.
        self.errors.clear()
        if self.first_step is None:
            self.first_step = step
        self.last_step = step

    def lines(self, lines: list[OutputLine]) -> list[Incident]:
        out: list[Incident] = []
        self.lines_seen += len(lines)
        feed = self.parser.feed
        for line in lines:
            try:  # one odd line must never end the supervision
                records = feed(line)
                if records:  # most lines say nothing: their cost stays the parser's
                    out += self._records(records, line.stream)
            except Exception as exc:
                self._failed(exc, f"{line.stream}.log line {line.number}")
        if self.parser.rank_steps:
            out += self._rank_steps()
        return out

    def set_hosts(self, rank_hosts: dict[int, str], host: str | None = None) -> None:
        """Name the ranks' hosts for the straggler incidents (rank -> host, as the engine maps
        them; `host`: the host of every other rank, for a job on one node)."""
        if self.straggler is not None:
            self.straggler.hosts, self.straggler.host = dict(rank_hosts), host

    def _rank_steps(self) -> list[Incident]:
        """Feed the read's rank step lines to the straggler detector, each at its line's time:
        the time of the read. Lines are not spread over the time between reads: ranks may print
        a step's lines in the same order every time, and spreading a read's lines over its span
        would make the last rank of every read look late."""
        steps, detector = self.parser.rank_steps or [], self.straggler
        self.parser.rank_steps = []
        out: list[Incident] = []
        if detector is None:
            return out
        try:
            for rank, step, ts, _ in steps:
                out += detector.feed(rank, step, ts)
        except Exception as exc:
            self._failed(exc, "a rank's step line")
        return out

    def _failed(self, exc: Exception, where: str) -> None:
        self.failures += 1
        self.last_failure = f"{where}: {type(exc).__name__}: {exc}"[:300]

    def _records(self, records: list[Record], stream: str) -> list[Incident]:
        out: list[Incident] = []
        for rec in records:
            if isinstance(rec, PythonError):
                self.errors.append(rec)
                continue
            if isinstance(rec, Progress):
                if not 0 <= rec.step < MAX_STEP:
                    continue
                self._progress(rec.step)
            elif isinstance(rec, Metric):
                if rec.step is not None and not 0 <= rec.step < MAX_STEP:
                    rec = dataclasses.replace(rec, step=None)
                self._metric(rec)
            # A record goes to the detectors of the stream that printed it (an HF log dict
            # from stdout may be released by its progress bar's frame on stderr).
            source = rec.stream if isinstance(rec, Metric) else stream
            out += self._once(self._vitals(source).feed(rec))
        return out

    def _once(self, incidents: list[Incident]) -> list[Incident]:
        """The same incident seen by two sources (stdout and the client) is reported once."""
        out = []
        for inc in incidents:
            key = (inc.kind.value, inc.step, inc.metric) if inc.step is not None else None
            if key is not None and key in self._reported:
                continue
            if key is not None:
                self._reported.append(key)
            out.append(inc)
        return out

    def _metric(self, rec: Metric) -> None:
        self.metric_records += 1
        if rec.step is not None:
            self._progress(rec.step)
            self.latest_step = rec.step
        if len(self.latest) < 512 or all(k in self.latest for k in rec.values):
            self.latest.update(rec.values)

    def flush(self) -> list[Incident]:
        """The end of the input (a replay's): what the parser still holds back."""
        try:
            return self._records(self.parser.flush(), "")
        except Exception as exc:
            self._failed(exc, "the end of the input")
            return []

    def metrics(self, records: list[Metric], source: str = "tensorboard") -> list[Incident]:
        """Metrics from a source that is not the output (TensorBoard event files)."""
        out: list[Incident] = []
        for rec in records:
            try:
                self._metric(rec)
                out += self._once(self._vitals(source).feed(rec))
            except Exception as exc:
                self._failed(exc, f"a {source} metric at step {rec.step}")
        return out

    def activity(self, act: Activity) -> None:
        """A sign of life from outside the output (writes in the checkpoint directory)."""
        self.hang.activity(act)

    def tick(self, now: float) -> list[Incident]:
        inc = self.hang.check(now)
        return [inc] if inc is not None else []

    def stragglers(self) -> list[int]:
        """The ranks flagged as stragglers now."""
        return self.straggler.stragglers() if self.straggler is not None else []

    @property
    def metric_names(self) -> list[str]:
        return sorted(set().union(*(v.metric_names for v in self.vitals.values())))


def ban_evidence(inc: Incident) -> list[tuple[str, str]]:
    """(host, why) for each host a straggler incident counts against: the hosts of its ban
    candidates, where known, once each (8 slow ranks of one node are one piece of evidence
    against it; supervise/nodes.py records it as a node event of kind "straggler")."""
    if not isinstance(inc, StragglerIncident):
        return []
    hosts = dict.fromkeys(s.host for s in inc.ban_candidates if s.host)
    return [(host, inc.message) for host in hosts if host]
