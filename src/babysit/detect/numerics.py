"""Non-finite values and fp16 loss-scale collapse.

    d = NumericsDetector()
    d.feed(metric_record)   # -> list[Incident]

- nonfinite: any metric that is NaN or +-inf (HF's `grad_norm: nan` even when the printed loss
  looks fine, since HF replaces a NaN loss by the running average in its logs), and Megatron's
  `number of nan iterations` going above 0. One incident per metric until it is finite again.
  Megatron-LM leaves a loss out of its iteration line when the loss's average is not above 0,
  NaN included (`training_log`: `if avg > 0.0: log_string += ...`): its `lm loss` that earlier
  lines carried and this one lacks, with no iteration skipped, is a NaN that never prints as
  `nan` (a skipped interval, an fp16 overflow, also leaves it out, averaging 0).
  Metrics named `*_z` (llm.c prints `(+nanz)` before its z-scores warm up) are not checked.
- loss_scale_collapse: the dynamic fp16 loss scale has fallen to 1/1024 of the highest value seen,
  or to 1 or below after having been above 1 (bf16 runs print a constant 1.0: not a collapse).
  An early warning: the run is overflowing step after step and will soon diverge.
"""

from __future__ import annotations

import math

from babysit.records import Incident, IncidentKind, Metric

COLLAPSE_FACTOR = 1024.0


class NumericsDetector:
    def __init__(self) -> None:
        self.bad: set[str] = set()
        self.max_scale = 0.0
        self.collapsed = False
        self.nan_iterations = 0.0
        self.megatron_loss = False  # an iteration line of Megatron's carried `lm loss`

    def reset(self) -> None:
        self.bad.clear()
        self.max_scale = 0.0
        self.collapsed = False
        self.nan_iterations = 0.0
        self.megatron_loss = False

    def feed(self, m: Metric) -> list[Incident]:
        out: list[Incident] = []
        at = f" at step {m.step}" if m.step is not None else ""
        for name, value in m.values.items():
            if math.isfinite(value):
                self.bad.discard(name)
                continue
            if name.endswith("_z") or name in self.bad:
                continue
            self.bad.add(name)
            out.append(
                Incident(
                    IncidentKind.NONFINITE,
                    f"{name} is {value}{at}",
                    m.ts,
                    m.step,
                    name,
                    value,
                    None,
                    m.line,
                )
            )
        if m.source == "megatron" and m.step is not None:
            self._megatron_loss(m, at, out)
        nan_its = m.values.get("nan_iterations")
        if nan_its is not None and math.isfinite(nan_its):
            if nan_its > 0 and self.nan_iterations == 0:
                out.append(
                    Incident(
                        IncidentKind.NONFINITE,
                        f"the trainer reports {nan_its:g} NaN iteration(s){at}",
                        m.ts,
                        m.step,
                        "nan_iterations",
                        nan_its,
                        0.0,
                        m.line,
                    )
                )
            self.nan_iterations = nan_its
        scale = m.values.get("loss_scale")
        if scale is not None and math.isfinite(scale):
            self._scale(scale, m, at, out)
        return out

    def _megatron_loss(self, m: Metric, at: str, out: list[Incident]) -> None:
        if "loss" in m.values:
            self.megatron_loss = True
        elif self.megatron_loss and "loss" not in self.bad and m.values.get("skipped") == 0:
            # An iteration line without its loss, none of its iterations skipped: a loss left
            # out because every iteration of the interval was skipped (an fp16 overflow while
            # the loss scale settles) averages 0, not NaN, and says so in `skipped`.
            self.bad.add("loss")
            out.append(
                Incident(
                    IncidentKind.NONFINITE,
                    f"loss is missing from Megatron's iteration line{at}: Megatron leaves out a "
                    "loss whose average is NaN (or not above zero)",
                    m.ts,
                    m.step,
                    "loss",
                    math.nan,
                    None,
                    m.line,
                )
            )

    def _scale(self, scale: float, m: Metric, at: str, out: list[Incident]) -> None:
        self.max_scale = max(self.max_scale, scale)
        low = scale <= self.max_scale / COLLAPSE_FACTOR or (scale <= 1.0 < self.max_scale)
        if low and not self.collapsed:
            self.collapsed = True
            out.append(
                Incident(
                    IncidentKind.LOSS_SCALE_COLLAPSE,
                    f"fp16 loss scale fell to {scale:g}{at} (highest seen {self.max_scale:g}): "
                    "gradients overflow step after step; a divergence is likely",
                    m.ts,
                    m.step,
                    "loss_scale",
                    scale,
                    self.max_scale,
                    m.line,
                )
            )
        elif not low:
            self.collapsed = False
