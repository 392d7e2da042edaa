"""Telemetry: the sampler through its seams (fake pynvml, a probe that hangs, a hand clock),
the sampling thread, and the detector's episodes on hand-made series."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from babysit.detect.telemetry import TelemetryDetector, TelemetryRule
from babysit.records import IncidentKind, Metric
from babysit.sources.fsprobe import write_probe
from babysit.sources.health import HealthTargets
from babysit.sources.telemetry import TelemetrySampler, TelemetryThread
from tests.conftest import wait_for
from tests.unit.nvml_fake import FakeNvml, gpu


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def m(ts: float, **values: float) -> Metric:
    return Metric(None, {k.replace("__", "/"): v for k, v in values.items()}, ts, "telemetry")


# -- the sampler ----------------------------------------------------------------------------


def test_gpu_and_host_values_with_nvml_opened_once() -> None:
    nv = FakeNvml([gpu(reasons=0x40 | 0x4, temp=88), gpu(ecc_volatile=None)])
    s = TelemetrySampler(HealthTargets(), nvml_module=nv)
    first = s.sample(5.0)
    second = s.sample(10.0)
    assert nv.inits == 1
    assert first.source == "telemetry" and first.step is None and second.ts == 10.0
    v = first.values
    assert v["gpu0/temp_c"] == 88 and v["gpu0/power_w"] == 120.0
    assert v["gpu0/throttle_thermal"] == 1.0 and v["gpu0/throttle_power"] == 0.0
    assert v["gpu0/power_capped"] == 1.0
    assert v["gpu0/mem_used_gib"] == 2.0 and v["gpu0/ecc_uncorrected"] == 0
    assert "gpu1/ecc_uncorrected" not in v  # not supported there: not reported
    assert {"host/cpu_pct", "host/mem_available_gib", "host/load1"} <= set(v)
    s.close()
    assert nv.shutdowns == 1


def test_xid_events_are_counted_per_gpu() -> None:
    nv = FakeNvml([gpu(), gpu()])
    s = TelemetrySampler(HealthTargets(), nvml_module=nv)
    assert "gpu1/xid_count" not in s.sample(0.0).values
    nv.pending_xids = [(1, 79), (1, 48)]
    v = s.sample(5.0).values
    assert v["gpu1/xid_count"] == 2.0 and v["gpu1/xid_last"] == 48.0


def test_without_gpus_there_are_just_no_gpu_values() -> None:
    s = TelemetrySampler(HealthTargets(), nvml_module=FakeNvml([gpu()], init_error=9))
    v = s.sample(0.0).values
    assert not any(k.startswith("gpu") for k in v)
    assert s.gpu_skip and "no NVIDIA driver" in s.gpu_skip


def test_fs_probe_every_n_seconds_and_a_hung_one_is_reported(tmp_path: Path) -> None:
    clock = Clock()
    gate = threading.Event()
    calls: list[Path] = []

    def probe(d: Path) -> None:
        clock.t += 0.004  # took 4 ms (before calls grows: the test waits on calls)
        calls.append(d)
        if len(calls) == 2:
            gate.wait(10)  # the second probe hangs until released

    s = TelemetrySampler(
        HealthTargets(checkpoint_dirs=(tmp_path,)),
        fs_every_s=30.0,
        stall_s=5.0,
        gpus=False,
        probe=probe,
        clock=clock,
    )
    assert s.fs_labels == {tmp_path.name: str(tmp_path)}
    key = f"fs/{tmp_path.name}/write_ms"
    s.sample(0.0)  # launches the first probe
    wait_for(lambda: s._probes[tmp_path.name].started is None, 5, "the first probe")
    assert s.sample(1.0).values[key] == pytest.approx(4.0)
    clock.t += 10
    assert key not in s.sample(2.0).values  # not due yet: no second probe
    clock.t += 20
    s.sample(3.0)  # due: the second probe starts, and hangs
    wait_for(lambda: len(calls) == 2, 5, "the second probe")
    clock.t += 6
    stalled = s.sample(4.0).values
    assert stalled[key] == pytest.approx(6004.0) and stalled[f"fs/{tmp_path.name}/stalled"] == 1
    clock.t += 5
    assert s.sample(5.0).values[key] == pytest.approx(11004.0)
    gate.set()
    wait_for(lambda: s._probes[tmp_path.name].started is None, 5, "the hung probe to end")
    done = s.sample(6.0).values
    assert done[key] > 11000 and f"fs/{tmp_path.name}/stalled" not in done


def test_real_probe_and_unwritable_dirs(tmp_path: Path) -> None:
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "data").mkdir()

    def probe(d: Path) -> None:
        if d.name == "data":
            raise PermissionError(13, "Permission denied")
        write_probe(d)

    t = HealthTargets(checkpoint_dirs=(tmp_path / "ckpt",), data_dirs=(tmp_path / "data",))
    s = TelemetrySampler(t, gpus=False, probe=probe)
    s.sample(0.0)
    got = wait_for(lambda: s.sample(1.0).values.get("fs/ckpt/write_ms"), 5, "a probe result")
    assert got > 0
    assert list((tmp_path / "ckpt").iterdir()) == []
    assert s._probes["data"].disabled and "fs/data/write_ms" not in s.sample(2.0).values


def test_labels_stay_unique(tmp_path: Path) -> None:
    (tmp_path / "a" / "out").mkdir(parents=True)
    (tmp_path / "b" / "out").mkdir(parents=True)
    t = HealthTargets(checkpoint_dirs=(tmp_path / "a" / "out", tmp_path / "b" / "out"))
    s = TelemetrySampler(t, gpus=False)
    assert list(s.fs_labels) == ["out", "out-2"]


def test_the_thread_samples_and_drains() -> None:
    s = TelemetrySampler(HealthTargets(), nvml_module=FakeNvml([gpu()]))
    th = TelemetryThread(s, every_s=0.01)
    th.start()
    got: list[Metric] = []
    wait_for(lambda: got.extend(th.drain()) or len(got) >= 3, 5, "three samples")
    th.stop()
    assert all(x.source == "telemetry" and "gpu0/temp_c" in x.values for x in got)
    assert th.error is None


# -- the detector ---------------------------------------------------------------------------


def test_throttle_once_per_episode_and_again_after_it_cleared() -> None:
    d = TelemetryDetector(TelemetryRule(throttle_samples=3, recover_samples=2))
    series = [1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1]
    fired = [
        i
        for i, v in enumerate(series)
        if d.feed(m(float(i), gpu0__throttle_thermal=v, gpu0__temp_c=89.0))
    ]
    assert fired == [2, 13]  # one 0 does not end the episode; two do


def test_throttle_messages() -> None:
    d = TelemetryDetector()
    incs = [d.feed(m(t, gpu2__throttle_power=1, gpu2__power_w=700.0)) for t in range(3)]
    (inc,) = incs[-1]
    assert inc.kind is IncidentKind.GPU_THROTTLE and inc.ts == 2
    assert "GPU 2" in inc.message and "700 W" in inc.message and "power" in inc.message
    d = TelemetryDetector()
    incs = [d.feed(m(t, gpu0__throttle_thermal=1, gpu0__temp_c=91.0)) for t in range(3)]
    assert "temperature at 91 C" in incs[-1][0].message
    quiet = TelemetryDetector()
    assert not any(quiet.feed(m(t, gpu0__power_capped=1)) for t in range(10))


def test_ecc_rises_above_first_seen_value() -> None:
    d = TelemetryDetector()
    assert d.feed(m(0, gpu1__ecc_uncorrected=2, gpu1__remapped_pending=0)) == []
    assert d.feed(m(5, gpu1__ecc_uncorrected=2, gpu1__remapped_pending=0)) == []
    (inc,) = d.feed(m(10, gpu1__ecc_uncorrected=3, gpu1__remapped_pending=0))
    assert inc.kind is IncidentKind.GPU_ECC and inc.baseline == 2 and inc.value == 3
    assert "GPU 1" in inc.message and "ecc_uncorrected 2 -> 3" in inc.message
    assert "drain this node and run the NVIDIA field diagnostic" in inc.message
    assert d.feed(m(15, gpu1__ecc_uncorrected=3)) == []
    (inc,) = d.feed(m(20, gpu1__remapped_pending=1))
    assert "pending memory row remap" in inc.message


def test_hardware_xids_only() -> None:
    d = TelemetryDetector()
    assert d.feed(m(0, gpu0__xid_count=1, gpu0__xid_last=13)) == []  # the program's own fault
    (inc,) = d.feed(m(5, gpu0__xid_count=2, gpu0__xid_last=79))
    assert inc.kind is IncidentKind.GPU_ECC and "Xid 79 (GPU has fallen off the bus)" in inc.message
    assert d.feed(m(10, gpu0__xid_count=2, gpu0__xid_last=79)) == []


def test_fs_latency_jump_is_the_slow_nfs_case() -> None:
    d = TelemetryDetector(dirs={"ckpt": "/nfs/run1/ckpt"})
    for t, v in enumerate([4.0, 5.0, 6.0, 5.0, 4.0]):
        assert d.feed(m(t, fs__ckpt__write_ms=v)) == []
    assert d.feed(m(10, fs__ckpt__write_ms=300.0)) == []  # 60x usual, but under the floor
    fired = [d.feed(m(20 + t, fs__ckpt__write_ms=2500.0)) for t in range(5)]
    assert [len(f) for f in fired] == [0, 0, 1, 0, 0]
    inc = fired[2][0]
    assert inc.kind is IncidentKind.SLOW_FILESYSTEM and inc.value == 2500.0
    assert inc.baseline == 5.0 and "/nfs/run1/ckpt" in inc.message
    assert "the slow-NFS case: checkpoints and data loading will stall" in inc.message


def test_a_hung_probe_counts_once_it_is_slow() -> None:
    d = TelemetryDetector(TelemetryRule(fs_samples=2))
    assert d.feed(m(0, fs__data__write_ms=3.0)) == []
    stalled = {"fs__data__stalled": 1.0}
    assert d.feed(m(1, fs__data__write_ms=400.0, **stalled)) == []  # in flight, not yet slow
    assert d.feed(m(2, fs__data__write_ms=5400.0, **stalled)) == []
    (inc,) = d.feed(m(3, fs__data__write_ms=10400.0, **stalled))
    assert "has not finished after 10400 ms" in inc.message and "data" in inc.message
