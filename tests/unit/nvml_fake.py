"""A fake pynvml module: GPUs as dicts of what each NVML call answers (no GPU needed).

    nv = FakeNvml([{"temp": 40}, {"temp": 90, "reasons": 0x40}])
    check_gpus(HealthThresholds(), module=nv)

A key missing from a GPU's dict answers NOT_SUPPORTED; a value that is an int in ERRORS' range
wrapped in Err(...) raises that NVML error instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


@dataclass(frozen=True)
class Err:
    code: int


HEALTHY: dict[str, Any] = {
    "name": b"NVIDIA H100 80GB HBM3",
    "uuid": "GPU-1234",
    "temp": 41,
    "slowdown": 87,
    "power_mw": 120_000,
    "util": 0,
    "mem": (2 << 30, 80 << 30),
    "reasons": 0x1,  # idle
    "ecc_volatile": 0,
    "ecc_aggregate": 0,
    "remapped": (0, 0, 0, 0),
    "retired_pending": 0,
}


class FakeNvml:
    NVML_ERROR_NOT_SUPPORTED = 3
    NVML_ERROR_NO_PERMISSION = 4
    NVML_ERROR_FUNCTION_NOT_FOUND = 13
    NVML_ERROR_TIMEOUT = 10
    NVML_ERROR_GPU_IS_LOST = 15
    NVML_TEMPERATURE_GPU = 0
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
    NVML_VOLATILE_ECC = 0
    NVML_AGGREGATE_ECC = 1
    nvmlEventTypeXidCriticalError = 0x8
    NVMLError = NVMLError

    def __init__(self, gpus: list[dict[str, Any]], init_error: int | None = None) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.inits = 0
        self.shutdowns = 0
        self.calls = 0
        self.pending_xids: list[tuple[int, int]] = []
        self.events_supported = True

    def _get(self, h: int, key: str) -> Any:
        self.calls += 1
        v = self.gpus[h].get(key)
        if v is None:
            raise NVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        if isinstance(v, Err):
            raise NVMLError(v.code)
        return v

    def nvmlInit(self) -> None:
        self.inits += 1
        if self.init_error is not None:
            raise NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetIndex(self, h: int) -> int:
        return h

    def nvmlDeviceGetName(self, h: int) -> Any:
        return self._get(h, "name")

    def nvmlDeviceGetUUID(self, h: int) -> Any:
        return self._get(h, "uuid")

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> Any:
        assert sensor == self.NVML_TEMPERATURE_GPU
        return self._get(h, "temp")

    def nvmlDeviceGetTemperatureThreshold(self, h: int, which: int) -> Any:
        assert which == self.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
        return self._get(h, "slowdown")

    def nvmlDeviceGetPowerUsage(self, h: int) -> Any:
        return self._get(h, "power_mw")

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        return SimpleNamespace(gpu=self._get(h, "util"), memory=0)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        used, total = self._get(h, "mem")
        return SimpleNamespace(used=used, total=total, free=total - used)

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> Any:
        return self._get(h, "reasons")

    def nvmlDeviceGetTotalEccErrors(self, h: int, kind: int, counter: int) -> Any:
        assert kind == self.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        key = "ecc_volatile" if counter == self.NVML_VOLATILE_ECC else "ecc_aggregate"
        return self._get(h, key)

    def nvmlDeviceGetRemappedRows(self, h: int) -> Any:
        return self._get(h, "remapped")

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h: int) -> Any:
        return self._get(h, "retired_pending")

    def nvmlEventSetCreate(self) -> object:
        if not self.events_supported:
            raise NVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        return object()

    def nvmlDeviceRegisterEvents(self, h: int, kinds: int, events: object) -> None:
        pass

    def nvmlEventSetWait_v2(self, events: object, timeout_ms: int) -> Any:
        if not self.pending_xids:
            raise NVMLError(self.NVML_ERROR_TIMEOUT)
        gpu, xid = self.pending_xids.pop(0)
        return SimpleNamespace(device=gpu, eventData=xid)

    def nvmlEventSetFree(self, events: object) -> None:
        pass


def gpu(**changes: Any) -> dict[str, Any]:
    """A healthy GPU with some answers changed (None: that call is not supported)."""
    return {**HEALTHY, **changes}
