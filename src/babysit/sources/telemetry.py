"""Node telemetry during a run: GPU, host and filesystem figures every few seconds, as Metrics.

    sampler = TelemetrySampler(HealthTargets(checkpoint_dirs=(Path("out"),)))
    thread = TelemetryThread(sampler, every_s=5.0)
    thread.start()
    ...
    for m in thread.drain():       # Metric(step=None, source="telemetry", values={...})
        store_and_detect(m)        # detect/telemetry.py turns them into incidents
    thread.stop()
    sampler.fs_labels              # {"out": "/abs/out"}: the directory behind fs/<label>/...

Values: gpu<i>/temp_c, power_w, util_pct, mem_used_gib, throttle_thermal, throttle_power,
power_capped (0/1: at its power limit, normal under full load), ecc_uncorrected (volatile),
remapped_pending, remapped_failed, retired_pending, xid_count and xid_last (critical Xid events
NVML reported since the sampler started, where the driver lets us register for them),
nvml_error (1: NVML failed on this GPU); host/cpu_pct, host/mem_available_gib, host/load1;
fs/<label>/write_ms (4 KiB write + fsync + delete, every fs_every_s) and fs/<label>/stalled.

Cheap and off the training's path: NVML handles are opened once (a node without GPUs or
without nvidia-ml-py just has no gpu values), and each filesystem probe runs in its own daemon
thread, so a hung NFS mount never blocks a sample. A probe still running after `stall_s` is
reported at every sample as fs/<label>/write_ms = the time so far, with fs/<label>/stalled = 1.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from babysit.records import Metric
from babysit.sources.fsprobe import nearest_existing, write_probe
from babysit.sources.health import HealthTargets
from babysit.sources.nvml import GIB, Nvml, NvmlError, NvmlUnavailable

SOURCE = "telemetry"
Probe = Callable[[Path], None]


class _FsProbe:
    """One directory's probe: at most one in flight (a hung mount must not pile up threads)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: float | None = None  # clock() of the probe in flight, else None
        self.last_start: float | None = None
        self.result_ms: float | None = None  # a finished probe's time, until reported
        self.disabled = False  # cannot write there (a read-only data directory): stop trying

    def launch(self, probe: Probe, clock: Callable[[], float]) -> None:
        self.started = self.last_start = clock()

        def work() -> None:
            t0 = clock()
            try:
                probe(self.directory)
            except OSError:
                self.disabled = True
            else:
                self.result_ms = (clock() - t0) * 1e3
            self.started = None

        threading.Thread(target=work, name="babysit-fs-probe", daemon=True).start()


class TelemetrySampler:
    """One sample() per call; see the module docstring. `nvml_module`, `probe` and `clock` are
    seams for tests (a fake pynvml, a probe that hangs, a hand-driven monotonic clock)."""

    def __init__(
        self,
        targets: HealthTargets,
        fs_every_s: float = 30.0,
        stall_s: float = 5.0,
        gpus: bool = True,
        nvml_module: Any = None,
        probe: Probe = write_probe,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fs_every_s = fs_every_s
        self.stall_s = stall_s
        self.probe = probe
        self.clock = clock
        self._want_gpus = gpus
        self._nvml_module = nvml_module
        self._nvml: Nvml | None = None
        self.gpu_skip: str | None = None  # why there are no gpu values, once known
        self._xids: dict[int, tuple[int, int]] = {}  # gpu -> (count, last Xid)
        self.fs_labels: dict[str, str] = {}
        self._probes: dict[str, _FsProbe] = {}
        for d in (*targets.checkpoint_dirs, *targets.data_dirs):
            real = nearest_existing(d)
            if str(real) in self.fs_labels.values():
                continue
            label = _label(real, self.fs_labels)
            self.fs_labels[label] = str(real)
            self._probes[label] = _FsProbe(real)
        psutil.cpu_percent(None)  # the first call only starts the count

    def sample(self, now: float) -> Metric:
        values: dict[str, float] = {}
        self._gpu_values(values)
        self._host_values(values)
        self._fs_values(values)
        return Metric(None, values, now, SOURCE)

    def close(self) -> None:
        if self._nvml is not None:
            self._nvml.close()
            self._nvml = None

    def _gpu_values(self, out: dict[str, float]) -> None:
        if not self._want_gpus or self.gpu_skip is not None:
            return
        if self._nvml is None:
            try:
                self._nvml = Nvml(self._nvml_module)
            except NvmlUnavailable as exc:
                self.gpu_skip = str(exc)
                return
        nvml = self._nvml
        for i in range(nvml.count):
            p = f"gpu{i}/"
            try:
                r = nvml.read(i)
            except NvmlError:
                out[p + "nvml_error"] = 1.0
                continue
            figures = {
                "temp_c": r.temp_c,
                "power_w": r.power_w,
                "util_pct": r.util_pct,
                "mem_used_gib": r.mem_used_gib,
                "ecc_uncorrected": r.ecc_volatile,
                "remapped_pending": r.remapped_pending,
                "remapped_failed": r.remapped_failed,
                "retired_pending": r.retired_pending,
            }
            if r.reasons is not None:
                figures["throttle_thermal"] = float(r.throttle_thermal)
                figures["throttle_power"] = float(r.throttle_power)
                figures["power_capped"] = float(r.power_capped)
            out.update({p + k: float(v) for k, v in figures.items() if v is not None})
        try:
            events = nvml.xids()
        except Exception:  # events are a bonus: never let them cost the other figures
            events = []
        for gpu, xid in events:
            count, _ = self._xids.get(gpu, (0, 0))
            self._xids[gpu] = (count + 1, xid)
        for gpu, (count, last) in self._xids.items():
            out[f"gpu{gpu}/xid_count"] = float(count)
            out[f"gpu{gpu}/xid_last"] = float(last)

    def _host_values(self, out: dict[str, float]) -> None:
        out["host/cpu_pct"] = psutil.cpu_percent(None)
        out["host/mem_available_gib"] = psutil.virtual_memory().available / GIB
        out["host/load1"] = os.getloadavg()[0]

    def _fs_values(self, out: dict[str, float]) -> None:
        now = self.clock()
        for label, p in self._probes.items():
            if p.disabled:
                continue
            if p.result_ms is not None:
                out[f"fs/{label}/write_ms"] = p.result_ms
                p.result_ms = None
            started = p.started
            if started is not None:
                if now - started >= self.stall_s:
                    out[f"fs/{label}/write_ms"] = (now - started) * 1e3
                    out[f"fs/{label}/stalled"] = 1.0
            elif p.last_start is None or now - p.last_start >= self.fs_every_s:
                p.launch(self.probe, self.clock)


def _label(path: Path, taken: dict[str, str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", path.name).strip("_") or "root"
    label, n = base, 2
    while label in taken:
        label, n = f"{base}-{n}", n + 1
    return label


class TelemetryThread:
    """Samples in a daemon thread every `every_s`; drain() hands over what was sampled."""

    def __init__(
        self,
        sampler: TelemetrySampler,
        every_s: float = 5.0,
        wall: Callable[[], float] = time.time,
        keep: int = 1000,
    ) -> None:
        self.sampler = sampler
        self.every_s = every_s
        self.wall = wall
        self._buf: deque[Metric] = deque(maxlen=keep)  # a caller that stops draining loses old
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None  # why sampling stopped early, if it did

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="babysit-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                m = self.sampler.sample(self.wall())
            except Exception as exc:  # telemetry must never take the run's supervision down
                self.error = f"{type(exc).__name__}: {exc}"
                return
            with self._lock:
                self._buf.append(m)
            self._stop.wait(self.every_s)

    def drain(self) -> list[Metric]:
        with self._lock:
            out = list(self._buf)
            self._buf.clear()
        return out

    def stop(self, timeout_s: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        if self._thread is None or not self._thread.is_alive():
            self.sampler.close()  # else a sample is stuck in the driver: leave NVML to it
