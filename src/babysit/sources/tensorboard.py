"""TensorBoard event files as a source of metrics (optional: needs the `tensorboard` package).

    src = TensorBoardSource(Path("runs/exp1"))
    src.poll(now)     # -> [Metric(step=120, values={"loss": 2.31, "grad_norm": 0.8}, ...), ...]

Every `events.out.tfevents.*` file under the directory is followed from where the last poll
stopped (the loader keeps its place), scalars are grouped by (file, step) into one Metric.
Tags become metric names: the last part of the tag when it is a name babysit knows (`train/loss`
-> `loss`, `train/grad_norm` -> `grad_norm`), `val_loss` for a loss under `eval/`, `val/` or
`validation/`, and the whole tag otherwise. `pip install 'babysit[tensorboard]'` brings the
reader; without it, asking for this source is a clear error, and nothing else needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.errors import UsageError
from babysit.records import Metric

KNOWN = frozenset(
    {
        "loss",
        "grad_norm",
        "lr",
        "learning_rate",
        "entropy",
        "kl",
        "reward",
        "reward_std",
        "tokens_per_s",
        "samples_per_s",
        "mfu",
        "tflops",
        "loss_scale",
        "step_time_ms",
    }
)
_EVAL = ("eval", "val", "valid", "validation", "test")


def metric_name(tag: str) -> str:
    parts = tag.replace("\\", "/").split("/")
    last = parts[-1].lower()
    if last == "learning_rate":
        last = "lr"
    if len(parts) > 1 and parts[0].lower() in _EVAL:
        return "val_loss" if last == "loss" else tag
    return last if last in KNOWN else tag


def _loader_class() -> Any:
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    except ImportError as exc:
        raise UsageError(
            "reading TensorBoard event files needs the tensorboard package: "
            "pip install 'babysit[tensorboard]'"
        ) from exc
    return EventFileLoader


def _value(v: Any) -> float | None:
    kind = v.WhichOneof("value")
    if kind == "simple_value":
        return float(v.simple_value)
    if kind == "tensor":
        from tensorboard.util import tensor_util

        arr = tensor_util.make_ndarray(v.tensor)
        return float(arr.item()) if arr.size == 1 else None
    return None


class TensorBoardSource:
    def __init__(self, logdir: Path) -> None:
        self.logdir = logdir
        self._loader_cls = _loader_class()
        self._loaders: dict[Path, Any] = {}

    def poll(self, now: float) -> list[Metric]:
        out: list[Metric] = []
        try:
            files = sorted(self.logdir.rglob("events.out.tfevents.*"))
        except OSError:
            return out
        for path in files:
            by_step: dict[int, dict[str, float]] = {}
            try:  # a torn, vanished or foreign file must not stop the supervision
                loader = self._loaders.get(path)
                if loader is None:
                    loader = self._loaders[path] = self._loader_cls(str(path))
                for event in loader.Load():
                    for v in event.summary.value:
                        try:
                            value = _value(v)
                        except (TypeError, ValueError):  # a text summary (HF's `args`), ...
                            continue
                        if value is not None:
                            by_step.setdefault(int(event.step), {})[metric_name(v.tag)] = value
            except Exception:
                continue
            out += [
                Metric(step, values, now, "tensorboard", None, "tensorboard")
                for step, values in sorted(by_step.items())
            ]
        return out
