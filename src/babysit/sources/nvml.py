"""Read this node's GPUs through NVML (nvidia-ml-py, imported lazily), for `doctor` and telemetry.

    try:
        gpus = Nvml()                  # or Nvml(fake_module) in tests
    except NvmlUnavailable as exc:
        print(f"skip: {exc}")          # no nvidia-ml-py, no driver, no GPU
    else:
        for i in range(gpus.count):
            r = gpus.read(i)           # GpuReading; None where this GPU does not support a call
        gpus.xids()                    # [(gpu index, Xid code), ...] since the last call
        gpus.close()

Handles are opened once. A call this GPU or driver does not support (NOT_SUPPORTED,
FUNCTION_NOT_FOUND, NO_PERMISSION) is simply not reported; any other NVML error (GPU_IS_LOST,
UNKNOWN, ...) is raised as NvmlError, because it is itself news about the GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from dataclasses import dataclass
from typing import Any

GIB = float(1 << 30)

# Clock event ("throttle") reason bits, as in nvml.h (the same under both of their names).
HW_SLOWDOWN = 0x8  # clocks halved or worse: too hot, power brake asserted, or power draw spiking
SW_THERMAL = 0x20
HW_THERMAL = 0x40
HW_POWER_BRAKE = 0x80
SW_POWER_CAP = 0x4  # at its power limit: normal under full load, so never an alarm by itself
THERMAL_BITS = SW_THERMAL | HW_THERMAL
POWER_BITS = HW_POWER_BRAKE | HW_SLOWDOWN

# Codes to swallow: the GPU or driver cannot answer this question, which says nothing about it.
_UNSUPPORTED = {
    "NVML_ERROR_NOT_SUPPORTED": 3,
    "NVML_ERROR_NO_PERMISSION": 4,
    "NVML_ERROR_FUNCTION_NOT_FOUND": 13,
}


class NvmlUnavailable(Exception):
    """No GPU can be read here; the message says why (a clean skip, not a failure)."""


class NvmlError(Exception):
    """NVML answered with an error about a GPU (lost, unknown): worth reporting."""


@dataclass(frozen=True)
class GpuReading:
    """One GPU at one moment; None where the GPU or driver does not support the question."""

    index: int
    name: str
    uuid: str | None = None
    temp_c: float | None = None
    slowdown_c: float | None = None  # the temperature at which the GPU slows itself down
    power_w: float | None = None
    util_pct: float | None = None
    mem_used_gib: float | None = None
    mem_total_gib: float | None = None
    reasons: int | None = None  # clock event ("throttle") reason bits
    ecc_volatile: int | None = None  # uncorrected ECC errors since the driver loaded
    ecc_aggregate: int | None = None  # uncorrected ECC errors over the GPU's life
    remapped_pending: int | None = None  # 1: a row remap waits for a GPU reset
    remapped_failed: int | None = None  # 1: a row remap failed (the GPU needs replacing)
    retired_pending: int | None = None  # 1: a page retirement waits for a GPU reset

    @property
    def throttle_thermal(self) -> bool:
        return bool(self.reasons and self.reasons & THERMAL_BITS)

    @property
    def throttle_power(self) -> bool:
        return bool(self.reasons and self.reasons & POWER_BITS)

    @property
    def power_capped(self) -> bool:
        return bool(self.reasons and self.reasons & SW_POWER_CAP)


def load_pynvml() -> Any:
    """The pynvml module of nvidia-ml-py, or NvmlUnavailable."""
    try:
        return importlib.import_module("pynvml")
    except ImportError as exc:
        raise NvmlUnavailable(
            "nvidia-ml-py is not installed (pip install nvidia-ml-py to check GPUs)"
        ) from exc


class Nvml:
    """An open NVML session with a handle per GPU (see the module docstring)."""

    def __init__(self, module: Any = None) -> None:
        self.nv = module if module is not None else load_pynvml()
        self._unsupported = {
            getattr(self.nv, name, default) for name, default in _UNSUPPORTED.items()
        }
        self._events: Any = None  # before any close(): it reads them
        self._events_tried = False
        try:
            self.nv.nvmlInit()
        except Exception as exc:  # NVMLError subclasses vary by version: any failure = no driver
            raise NvmlUnavailable(f"no NVIDIA driver answered ({_err(exc)})") from exc
        try:
            self.count = int(self.nv.nvmlDeviceGetCount())
            self.handles = [self.nv.nvmlDeviceGetHandleByIndex(i) for i in range(self.count)]
        except Exception as exc:
            self.close()
            raise NvmlUnavailable(f"NVML could not list the GPUs ({_err(exc)})") from exc
        if self.count == 0:
            self.close()
            raise NvmlUnavailable("the NVIDIA driver sees no GPU on this node")

    def close(self) -> None:
        try:
            if self._events is not None:
                self.nv.nvmlEventSetFree(self._events)
            self.nv.nvmlShutdown()
        except Exception:  # closing is best effort: the session is going away either way
            pass
        self._events = None

    def _call(self, fn_name: str, *args: Any) -> Any:
        fn = getattr(self.nv, fn_name, None)
        if fn is None:  # an older nvidia-ml-py without this call
            return None
        try:
            return fn(*args)
        except Exception as exc:
            if getattr(exc, "value", None) in self._unsupported:
                return None
            raise NvmlError(f"{fn_name}: {_err(exc)}") from exc

    def read(self, index: int, health: bool = True) -> GpuReading:
        """One reading of GPU `index`; `health` adds the ECC, remapping and retirement counters
        (telemetry reads them too, each a cheap driver query)."""
        nv, h = self.nv, self.handles[index]
        name = self._call("nvmlDeviceGetName", h)
        uuid = self._call("nvmlDeviceGetUUID", h)
        temp = self._call("nvmlDeviceGetTemperature", h, getattr(nv, "NVML_TEMPERATURE_GPU", 0))
        slowdown = self._call(
            "nvmlDeviceGetTemperatureThreshold",
            h,
            getattr(nv, "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1),
        )
        power_mw = self._call("nvmlDeviceGetPowerUsage", h)
        util = self._call("nvmlDeviceGetUtilizationRates", h)
        mem = self._call("nvmlDeviceGetMemoryInfo", h)
        # Renamed in newer drivers (throttle -> clocks event); the older name may be removed.
        reasons = self._call("nvmlDeviceGetCurrentClocksEventReasons", h)
        if reasons is None:
            reasons = self._call("nvmlDeviceGetCurrentClocksThrottleReasons", h)
        reading = GpuReading(
            index=index,
            name=_text(name) or f"GPU {index}",
            uuid=_text(uuid),
            temp_c=_num(temp),
            slowdown_c=_num(slowdown),
            power_w=None if power_mw is None else float(power_mw) / 1000.0,
            util_pct=_num(getattr(util, "gpu", None)),
            mem_used_gib=None if mem is None else float(mem.used) / GIB,
            mem_total_gib=None if mem is None else float(mem.total) / GIB,
            reasons=None if reasons is None else int(reasons),
        )
        if not health:
            return reading
        unc = getattr(nv, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
        vol = self._call("nvmlDeviceGetTotalEccErrors", h, unc, getattr(nv, "NVML_VOLATILE_ECC", 0))
        agg = self._call(
            "nvmlDeviceGetTotalEccErrors", h, unc, getattr(nv, "NVML_AGGREGATE_ECC", 1)
        )
        rows = self._call("nvmlDeviceGetRemappedRows", h)  # (corr, unc, pending, failure)
        retired = self._call("nvmlDeviceGetRetiredPagesPendingStatus", h)
        return dataclasses.replace(
            reading,
            ecc_volatile=_int(vol),
            ecc_aggregate=_int(agg),
            remapped_pending=None if rows is None else int(bool(rows[2])),
            remapped_failed=None if rows is None else int(bool(rows[3])),
            retired_pending=_int(retired),
        )

    def xids(self) -> list[tuple[int, int]]:
        """Critical Xid events since the last call, as (GPU index, Xid), without waiting.
        [] where events are not supported (many containers)."""
        nv = self.nv
        if not self._events_tried:
            self._events_tried = True
            events = None
            try:
                events = nv.nvmlEventSetCreate()
                for h in self.handles:
                    nv.nvmlDeviceRegisterEvents(h, nv.nvmlEventTypeXidCriticalError, events)
                self._events = events
            except Exception:  # not supported here: Xids then come only from the kernel log
                if events is not None:
                    with contextlib.suppress(Exception):
                        nv.nvmlEventSetFree(events)
        if self._events is None:
            return []
        found: list[tuple[int, int]] = []
        for _ in range(64):  # bounded: a storm of events must not stall the sampler
            try:
                data = nv.nvmlEventSetWait_v2(self._events, 0)
            except Exception:  # NVML_ERROR_TIMEOUT: nothing pending
                break
            try:
                index = int(nv.nvmlDeviceGetIndex(data.device))
            except Exception:
                index = -1
            found.append((index, int(data.eventData)))
        return found


def _err(exc: BaseException) -> str:
    try:
        return str(exc) or type(exc).__name__
    except Exception:  # pynvml's __str__ itself calls into the library, which may be missing
        return type(exc).__name__


def _text(v: Any) -> str | None:
    if v is None:
        return None
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def _int(v: Any) -> int | None:
    return None if v is None else int(v)
