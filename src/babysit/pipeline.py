"""parse -> detect for one run's output: the path shared by `babysit run` and `babysit watch`.

    p = Pipeline()
    p.new_attempt(ts)
    incidents = p.lines(chunk.lines)   # OutputLines in, Incidents out
    incidents += p.tick(now)           # hangs need time to pass
    p.first_step, p.last_step, p.errors, p.latest

A wiring module like the supervisor: it may import parse and detect, which never import each
other. Memory is bounded: the detectors keep fixed windows, `errors` keeps the last 20.
"""

from __future__ import annotations

from collections import deque

from babysit.detect.vitals import VitalSigns, VitalsRules
from babysit.parse.lines import LineParser
from babysit.records import Activity, Incident, Metric, OutputLine, Progress, PythonError


class Pipeline:
    def __init__(self, rules: VitalsRules | None = None) -> None:
        self.parser = LineParser()
        self.vitals = VitalSigns(rules)
        self.errors: deque[PythonError] = deque(maxlen=20)
        self.first_step: int | None = None  # of the current attempt
        self.last_step: int | None = None
        self.latest: dict[str, float] = {}  # the newest value of each metric
        self.latest_step: int | None = None
        self.lines_seen = 0
        self.metric_records = 0

    def new_attempt(
        self, ts: float, first_step: int | None = None, last_step: int | None = None
    ) -> None:
        self.parser = LineParser()
        self.vitals.new_attempt(ts)
        self.errors.clear()
        self.first_step, self.last_step = first_step, last_step

    def _progress(self, step: int) -> None:
        # An error followed by more steps was survived: it is not what ended the attempt.
        self.errors.clear()
        if self.first_step is None:
            self.first_step = step
        self.last_step = step

    def lines(self, lines: list[OutputLine]) -> list[Incident]:
        out: list[Incident] = []
        feed = self.vitals.feed
        for line in lines:
            self.lines_seen += 1
            for rec in self.parser.feed(line):
                if isinstance(rec, PythonError):
                    self.errors.append(rec)
                    continue
                if isinstance(rec, Progress):
                    self._progress(rec.step)
                elif isinstance(rec, Metric):
                    self.metric_records += 1
                    if rec.step is not None:
                        self._progress(rec.step)
                        self.latest_step = rec.step
                    if len(self.latest) < 512 or all(k in self.latest for k in rec.values):
                        self.latest.update(rec.values)
                elif not isinstance(rec, Activity):  # pragma: no cover - exhaustive
                    continue
                out += feed(rec)
        return out

    def metrics(self, records: list[Metric]) -> list[Incident]:
        """Metrics from a source that is not the output (TensorBoard event files)."""
        out: list[Incident] = []
        for rec in records:
            self.metric_records += 1
            if rec.step is not None:
                self._progress(rec.step)
                self.latest_step = rec.step
            self.latest.update(rec.values)
            out += self.vitals.feed(rec)
        return out

    def activity(self, act: Activity) -> None:
        """A sign of life from outside the output (writes in the checkpoint directory)."""
        self.vitals.feed(act)

    def tick(self, now: float) -> list[Incident]:
        return self.vitals.tick(now)

    @property
    def metric_names(self) -> list[str]:
        return sorted(self.vitals.metric_names)
