"""Node telemetry during the run: GPU, host and filesystem figures, sampled off the loop.

    t = Telemetry(ctx, targets, host)     # the run's context (supervise/context.py)
    t.start()
    t.poll(attempt)     # store what was sampled since; -> the incidents it shows
    t.stop()

The sampler runs on its own thread (a hung mount must not hold the loop); the figures go to the
store as metrics, GPU trouble onto the node's record too. A sampler or detector that fails is
reported once and turned off; the run goes on.
"""

from __future__ import annotations

from babysit.detect.telemetry import TelemetryDetector
from babysit.records import Incident, IncidentKind, Level
from babysit.sources.health import HealthTargets
from babysit.sources.telemetry import TelemetrySampler, TelemetryThread
from babysit.store.writes import AddMetrics, AddNodeEvent
from babysit.supervise.context import RunContext
from babysit.supervise.journal import Journal


class Telemetry:
    def __init__(self, ctx: RunContext, targets: HealthTargets, host: str) -> None:
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.run = ctx.name
        self.say = ctx.say
        self.targets = targets
        self.host = host
        self.wall = ctx.seams.wall
        self._telemetry: TelemetryThread | None = None
        self._telemetry_told = False
        self._detector: TelemetryDetector | None = None
        self._gpu_util: float | None = None  # the busiest GPU's utilisation, latest sample

    @property
    def journal(self) -> Journal:
        return self.ctx.journal

    def start(self) -> None:
        h = self.cfg.health
        if not h.telemetry or self._telemetry is not None:
            return
        try:
            sampler = TelemetrySampler(
                self.targets, fs_every_s=h.fs_probe_every_s, stall_s=h.telemetry_every_s
            )
            self._detector = TelemetryDetector(dirs=sampler.fs_labels)
            self._telemetry = TelemetryThread(sampler, h.telemetry_every_s, self.wall)
            self._telemetry.start()
        except Exception as exc:
            self.say(Level.WARN, f"node telemetry is off: {type(exc).__name__}: {exc}")
            self._telemetry = None

    def poll(self, attempt: int | None) -> list[Incident]:
        """Store what was sampled since the last call; the incidents it shows."""
        if self._telemetry is None:
            return []
        out: list[Incident] = []
        if self._telemetry.error and not self._telemetry_told:
            self._telemetry_told = True
            self.say(
                Level.WARN,
                f"node telemetry stopped ({self._telemetry.error}), a babysit bug (please report "
                "it): GPU, host and filesystem figures are off for this run; the run goes on",
            )
        for m in self._telemetry.drain():
            self._store_sample(attempt, m.ts, dict(m.values))
            utils = [v for k, v in m.values.items() if k.endswith("/util_pct")]
            self._gpu_util = max(utils) if utils else None
            if self._detector is None:
                continue  # it failed before: the figures are still stored
            try:
                found = self._detector.feed(m)
            except Exception as exc:
                self._detector = None
                self.say(
                    Level.WARN,
                    f"node telemetry: the detector failed ({type(exc).__name__}: {exc}), a "
                    "babysit bug (please report it); the figures are still stored, but GPU and "
                    "filesystem incidents are off for this run",
                )
                continue
            for inc in found:
                if inc.kind in (IncidentKind.GPU_ECC, IncidentKind.GPU_THROTTLE):
                    self._node_incident(attempt, inc)
            out += found
        return out

    def gpu_util(self) -> float | None:
        """The busiest GPU's utilisation in the latest sample (None: no GPU, or no sample)."""
        return self._gpu_util

    def _node_incident(self, attempt: int | None, inc: Incident) -> None:
        """GPU trouble goes on the node's record too (`babysit nodes list`), not only the run's;
        it does not count as a failure for bans: the run may still be fine."""
        host, now, what = self.host, self.wall(), inc.message
        cat = inc.category.value
        self.journal.write(AddNodeEvent(now, host, "incident", what, self.run, attempt, None, cat))

    def _store_sample(self, attempt: int | None, ts: float, values: dict[str, float]) -> None:
        self.journal.write(AddMetrics(self.run, attempt, ts, None, values), droppable=True)

    def stop(self) -> None:
        if self._telemetry is not None:
            self._telemetry.stop()
            self._telemetry = None
