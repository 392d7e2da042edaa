"""Node telemetry -> incidents: GPU throttling, new ECC/remap/retire/Xid errors, a slow filesystem.

    d = TelemetryDetector(TelemetryRule(), dirs={"out": "/data/run1/out"})
    d.feed(metric)   # a Metric of sources/telemetry.py -> [Incident, ...]

Pure: time comes from the records. Rules (defaults in TelemetryRule):
- GPU_THROTTLE: gpu<i>/throttle_thermal or gpu<i>/throttle_power at 1 for `throttle_samples`
  samples in a row (3): one incident per episode; the episode ends after `recover_samples`
  samples (2) without it, and a new episode is a new incident. Sitting at the power cap
  (power_capped) is normal under full load and never an incident.
- GPU_ECC: a counter (ecc_uncorrected, remapped_pending, remapped_failed, retired_pending) above
  the first value seen for that GPU: one incident per rise. A critical Xid event (xid_count
  rising) is one too when the Xid names the hardware (HW_XIDS); the others (13, 31, 43: an
  illegal memory access, mostly the program's own fault) show in the run's own crash.
- SLOW_FILESYSTEM: fs/<label>/write_ms above max(fs_k x the rolling median of that directory's
  healthy probes, fs_floor_ms) for `fs_samples` samples in a row (3); once per episode. Slow
  values never enter the median, so a slow mount cannot become the new normal; an in-flight
  probe (fs/<label>/stalled) below the threshold is no measurement and is ignored.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from babysit.detect.window import median
from babysit.records import Incident, IncidentKind, Metric

ECC_COUNTERS = {
    "ecc_uncorrected": "uncorrected ECC errors",
    "remapped_pending": "a pending memory row remap",
    "remapped_failed": "a FAILED memory row remap",
    "retired_pending": "a pending memory page retirement",
}
# Xids that name the GPU or its links rather than the program (NVIDIA's Xid catalog).
HW_XIDS = {
    48: "double-bit ECC error",
    63: "ECC page retirement or row remap recorded",
    64: "ECC page retirement or row remap failed",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained uncorrectable ECC error",
    95: "uncontained uncorrectable ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
}
DRAIN = "drain this node and run the NVIDIA field diagnostic"
_GPU = re.compile(r"^gpu(\d+)/(\w+)$")
_FS = re.compile(r"^fs/(.+)/write_ms$")


@dataclass(frozen=True)
class TelemetryRule:
    throttle_samples: int = 3
    recover_samples: int = 2
    fs_k: float = 10.0
    fs_floor_ms: float = 500.0  # a 4 KiB write + fsync slower than this is slow anywhere
    fs_samples: int = 3
    fs_window: int = 30
    fs_min_history: int = 3  # below this, only the floor applies


class _Episode:
    """Consecutive bad samples -> one incident; `recover` good ones in a row end the episode."""

    def __init__(self) -> None:
        self.bad = 0
        self.good = 0
        self.active = False

    def step(self, bad: bool, need: int, recover: int) -> bool:
        """Feed one sample; True when this one opens an episode."""
        if bad:
            self.bad, self.good = self.bad + 1, 0
            if not self.active and self.bad >= need:
                self.active = True
                return True
            return False
        self.bad, self.good = 0, self.good + 1
        if self.active and self.good >= recover:
            self.active = False
        return False


class TelemetryDetector:
    def __init__(
        self, rule: TelemetryRule | None = None, dirs: Mapping[str, str] | None = None
    ) -> None:
        self.rule = rule or TelemetryRule()
        self.dirs = dict(dirs or {})  # fs label -> the directory, to name it in messages
        self._episodes: dict[str, _Episode] = {}
        self._first: dict[str, float] = {}  # ECC-like counter -> the highest value seen
        self._fs_hist: dict[str, deque[float]] = {}

    def feed(self, m: Metric) -> list[Incident]:
        out: list[Incident] = []
        for name, value in m.values.items():
            g = _GPU.match(name)
            if g is not None:
                out += self._gpu(m, name, int(g[1]), g[2], value)
                continue
            f = _FS.match(name)
            if f is not None:
                stalled = m.values.get(f"fs/{f[1]}/stalled", 0.0) >= 1.0
                out += self._fs(m, name, f[1], value, stalled)
        return out

    def _episode(self, key: str) -> _Episode:
        return self._episodes.setdefault(key, _Episode())

    def _gpu(self, m: Metric, name: str, gpu: int, what: str, v: float) -> list[Incident]:
        r = self.rule
        if what in ("throttle_thermal", "throttle_power"):
            if not self._episode(name).step(v >= 1.0, r.throttle_samples, r.recover_samples):
                return []
            temp = m.values.get(f"gpu{gpu}/temp_c")
            power = m.values.get(f"gpu{gpu}/power_w")
            if what == "throttle_thermal":
                at = f" at {temp:.0f} C" if temp is not None else ""
                why = f"slowed its clocks for temperature{at}: check cooling and airflow"
            else:
                at = f" at {power:.0f} W" if power is not None else ""
                why = (
                    f"is in hardware slowdown or power brake{at}: check the node's power "
                    f"supply; if it persists, {DRAIN}"
                )
            msg = (
                f"GPU {gpu} {why} ({r.throttle_samples} samples in a row); the whole job runs "
                "at the pace of its slowest GPU"
            )
            return [Incident(IncidentKind.GPU_THROTTLE, msg, m.ts, None, name, v)]
        if what in ECC_COUNTERS:
            base = self._first.setdefault(name, v)
            if v <= base:
                return []
            self._first[name] = v
            msg = (
                f"GPU {gpu} reports {ECC_COUNTERS[what]} ({what} {base:g} -> {v:g}); "
                f"results on it may be wrong: {DRAIN}"
            )
            return [Incident(IncidentKind.GPU_ECC, msg, m.ts, None, name, v, base)]
        if what == "xid_count":
            base = self._first.setdefault(name, 0.0)
            self._first[name] = max(base, v)
            xid = int(m.values.get(f"gpu{gpu}/xid_last", 0.0))
            if v <= base or xid not in HW_XIDS:
                return []
            msg = f"GPU {gpu} reported Xid {xid} ({HW_XIDS[xid]}): {DRAIN}"
            return [Incident(IncidentKind.GPU_ECC, msg, m.ts, None, name, float(xid), base)]
        return []

    def _fs(self, m: Metric, name: str, label: str, v: float, stalled: bool) -> list[Incident]:
        r = self.rule
        hist = self._fs_hist.setdefault(label, deque(maxlen=r.fs_window))
        usual = median(list(hist)) if len(hist) >= r.fs_min_history else None
        limit = max(r.fs_k * usual, r.fs_floor_ms) if usual is not None else r.fs_floor_ms
        slow = v > limit
        if stalled and not slow:
            return []  # a probe still under way, not yet slow: no measurement
        if not slow:
            hist.append(v)
        if not self._episode(name).step(slow, r.fs_samples, r.recover_samples):
            return []
        where = self.dirs.get(label, label)
        how = "has not finished after" if stalled else "took"
        usual_txt = f" (usual: {usual:.0f} ms)" if usual is not None else ""
        msg = (
            f"writes to {where} are slow: a 4 KiB write+fsync {how} {v:.0f} ms{usual_txt}, "
            f"{r.fs_samples} probes in a row; the slow-NFS case: checkpoints and data loading "
            "will stall. Check the file server, or save checkpoints to local disk"
        )
        return [Incident(IncidentKind.SLOW_FILESYSTEM, msg, m.ts, None, name, v, usual)]
