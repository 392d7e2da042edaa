"""What a live run is doing now: its step, loss, speed, ETA and last incident, from the store.

    live = live_document(run, attempts, metrics, incidents, now=time.time(), total=5000)
    live_lines(live)  # -> ["step 1,234 of 5,000 (24.7%) · 2.31 steps/s · ETA 27m10s", ...]
    total_from_command(["python", "train.py", "--max_iters=5000"])  # -> 5000
    total_from_bar(tail_of_log)                                   # `500/1000 [01:23<...` -> 1000

The metrics the loop samples (store.metrics: one row every few seconds with the latest value of
each metric and the step) give the loss, the throughput, when the step last moved and the step
rate over the last RATE_WINDOW_S. The total steps, when known (babysit.toml's [run]
total_steps, the command's --max-steps-like flag, a progress bar's N/M), gives the ETA; without
one there is no ETA. The document's keys are stable (`status --json` has it as `live`): step,
total_steps, percent, steps_per_s, eta_s, eta, loss, throughput {name: value},
last_step_at, since_last_step_s, last_output_at, since_last_output_s, last_incident.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from babysit.durations import format_duration, iso_utc
from babysit.views.safe import plain

__all__ = ["live_document", "live_lines", "total_from_bar", "total_from_command"]

RATE_WINDOW_S = 600.0  # the step rate is measured over the last ten minutes of samples
LOSS_KEYS = ("loss", "train_loss", "lm_loss")
THROUGHPUT_KEYS = ("tokens_per_s", "samples_per_s", "iters_per_s", "tflops", "mfu", "step_time_ms")
_UNITS = {
    "tokens_per_s": "tokens/s",
    "samples_per_s": "samples/s",
    "iters_per_s": "it/s",
    "tflops": "TFLOPS",
    "mfu": "% MFU",
    "step_time_ms": "ms/step",
}
_TOTAL_FLAGS = re.compile(
    r"^--?(?:max[-_]?steps|max[-_]?iters|train[-_]iters|total[-_]steps|num[-_]train[-_]steps|"
    r"num[-_]steps|training\.steps|trainer\.max_steps)$"
)
# A tqdm-style bar with a known total: `500/1000 [01:23<01:23, 6.00it/s]` (HF Trainer's bar
# counts optimizer steps). Lightning's `Epoch 3: ... 4/18` counts batches of one epoch: not it.
_BAR = re.compile(r"(?<![\d/])(\d+)/(\d+) \[[\d:]+<")
_NOT_STEPS = re.compile(r"epoch|eval|valid|test|predict|sanity|download|map|token", re.I)


def total_from_command(argv: Sequence[str]) -> int | None:
    """The steps the run trains for, from a flag of its command (`--max-steps 300`,
    `--max_iters=5000`, `--train-iters`, `--training.steps`); None when none says."""
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if not _TOTAL_FLAGS.match(flag):
            continue
        if not eq:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


def total_from_bar(text: str) -> int | None:
    """The total of the last training progress bar in `text` (a log's tail); None if none."""
    for line in reversed(re.split(r"[\r\n]", text)):
        m = _BAR.search(line)
        if m is not None and not _NOT_STEPS.search(line[: m.start()]):
            total = int(m.group(2))
            return total if total > 0 else None
    return None


def live_document(
    attempts: Sequence[Mapping[str, Any]],
    metrics: Sequence[Mapping[str, Any]],
    incidents: Sequence[Mapping[str, Any]],
    now: float,
    total: int | None = None,
    last_output: float | None = None,
) -> dict[str, Any]:
    """The live figures of the run's current attempt (the last one), from store rows: attempts
    (store.attempts), metrics (store.metrics, oldest first), incidents (store.incidents)."""
    current = attempts[-1] if attempts else None
    number = current["number"] if current else None
    samples = [m for m in metrics if m.get("step") is not None and m.get("attempt") == number]
    step = current.get("last_step") if current else None
    if samples and (step is None or samples[-1]["step"] > step):
        step = samples[-1]["step"]
    latest: dict[str, Any] = {}
    for m in samples:
        latest.update({k: v for k, v in m["vals"].items() if _finite_or_text(v)})
    first_seen = _first_seen(samples)
    last_step_at = first_seen[-1][0] if first_seen else None
    rate = _rate(first_seen)
    eta_s = None
    if total is not None and step is not None and rate and step < total:
        eta_s = (total - step) / rate
    last = incidents[-1] if incidents else None
    return {
        "attempt": number,
        "step": step,
        "total_steps": total,
        "percent": round(100.0 * step / total, 1) if total and step is not None else None,
        "steps_per_s": round(rate, 4) if rate else None,
        "eta_s": round(eta_s, 1) if eta_s is not None else None,
        "eta": iso_utc(now + eta_s) if eta_s is not None else None,
        "loss": next((latest[k] for k in LOSS_KEYS if k in latest), None),
        "throughput": {k: latest[k] for k in THROUGHPUT_KEYS if k in latest},
        "last_step_at": iso_utc(last_step_at),
        "since_last_step_s": _since(now, last_step_at),
        "last_output_at": iso_utc(last_output),
        "since_last_output_s": _since(now, last_output),
        "last_incident": None
        if last is None
        else {
            "ts": iso_utc(last["ts"]),
            "attempt": last.get("attempt"),
            "kind": last["kind"],
            "step": last.get("step"),
            "message": last["message"],
        },
    }


def live_lines(live: Mapping[str, Any]) -> list[str]:
    """The live figures in words, one short line per topic (plain text, safe to print)."""
    out = []
    step, total = live["step"], live["total_steps"]
    if step is not None:
        parts = [f"step {step:,}" + (f" of {total:,} ({live['percent']:g}%)" if total else "")]
        if live["steps_per_s"]:
            parts.append(_rate_words(live["steps_per_s"]))
        if live["eta_s"] is not None:
            parts.append(f"ETA {format_duration(live['eta_s'])} ({_clock(live['eta'])})")
        out.append(" · ".join(parts))
    figures = []
    if live["loss"] is not None:
        figures.append(f"loss {_num(live['loss'])}")
    for key, value in live["throughput"].items():
        figures.append(f"{_num(value)} {_UNITS.get(key, key)}")
    if live["since_last_step_s"] is not None:
        figures.append(f"last step {format_duration(live['since_last_step_s'])} ago")
    if live["since_last_output_s"] is not None:
        figures.append(f"last output {format_duration(live['since_last_output_s'])} ago")
    if figures:
        out.append(" · ".join(figures))
    inc = live["last_incident"]
    if inc is not None:
        at = f" at step {inc['step']}" if inc["step"] is not None else ""
        out.append(f"last incident: {_clock(inc['ts'])} {inc['kind']}{at}: {plain(inc['message'])}")
    return out


def _first_seen(samples: Sequence[Mapping[str, Any]]) -> list[tuple[float, int]]:
    """(when each new highest step was first sampled, the step), oldest first."""
    out: list[tuple[float, int]] = []
    for m in samples:
        if not out or m["step"] > out[-1][1]:
            out.append((float(m["ts"]), int(m["step"])))
    return out


def _rate(first_seen: Sequence[tuple[float, int]]) -> float | None:
    if len(first_seen) < 2:
        return None
    t1, s1 = first_seen[-1]
    recent = [(t, s) for t, s in first_seen if t >= t1 - RATE_WINDOW_S]
    t0, s0 = recent[0] if len(recent) >= 2 else first_seen[-2]
    return (s1 - s0) / (t1 - t0) if t1 > t0 else None


def _since(now: float, ts: float | None) -> float | None:
    return None if ts is None else round(max(now - ts, 0.0), 1)


def _finite_or_text(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, (int, float)) and math.isfinite(v))


def _num(v: Any) -> str:
    if isinstance(v, str):
        return plain(v)  # "nan", "inf": stored as text
    if 1000 <= abs(v) < 1e12:  # 91,234 tokens/s; a loss of 1e308 is 1e+308, not 309 digits
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _rate_words(steps_per_s: float) -> str:
    if steps_per_s >= 0.1:
        return f"{steps_per_s:.3g} steps/s"
    return f"{1 / steps_per_s:.3g} s/step"


def _clock(iso: str | None) -> str:
    return iso[11:19] + "Z" if iso else "-"
