"""Quality of the vital-sign detectors on a labelled set: spikes, non-finite values, hangs.

    python benchmarks/quality_vitals.py              # uses benchmarks/data/tinygpt_curves.jsonl
    python benchmarks/quality_vitals.py --regenerate # trains the tiny GPT again (~3 min, 2 cores)
    python benchmarks/quality_vitals.py -v           # also lists every miss and false alarm
    python benchmarks/quality_vitals.py --quick      # smoke test: 40 synthetic curves, same targets

Targets (issue 3): precision and recall >= 0.95 for loss spikes, grad-norm spikes and
non-finite values; zero false spikes on real healthy runs (issue 11); loss divergence (a spike
that does not settle, issue 15): recall >= 0.95 on jumps that stay up, climb or sit on a
plateau, and zero on spikes that decay back or on any curve above; zero false hang alarms
on runs that pause 10x the step time for checkpoints and evals; a real hang flagged within 3x
the median step interval + 5 s. Exit status 1 when a target is missed. The shipped defaults
are measured (`VitalsRules()`), through `VitalSigns.feed` and `.tick`, with the time carried by
the records: nothing here sleeps.

The labelled set:
- tiny GPT runs (examples/tinygpt/train.py, 300 steps): clean, `--spike-at N` (5 garbage
  batches at lr x10: the label covers steps N..N+4) and `--nan-at N` (NaN from N on).
- synthetic curves (seeded): exponential or power-law decay from ~10 to ~2, fine-tuning curves
  (flat, slow drift), warm-up bumps, LR-schedule drops, plateaus then a second descent; noise
  proportional to the loss, 0.5%-10% (robust sigma), gaussian or Student-t (3, 4, 6 degrees of
  freedom, scaled to the same robust sigma). A quarter of the curves are clean; the others get
  loss spikes, grad-norm spikes, NaN/inf in loss and/or grad_norm (1-3 steps, or to the end).
  Any curve may print each step from several ranks or restart from an earlier step.

Definitions:
- a spike a human calls a spike: its noise-free peak is >= 1.5x the local level (5x for the
  grad norm, whose healthy noise reaches 2-3x: see detect/spike.py) and >= 8 robust sigmas of the
  noise above it. Injected spikes range over 1.2x-6x (loss) and 1.3x-30x (grad norm), 1-10
  steps, shaped as a
  block, a jump with a decay, or a ramp up and down, placed after step 50 (and 50 steps after a
  restart: the detector needs history). Injections below the definition are "don't care":
  neither a miss nor, when flagged, a false alarm; so are noise excursions of the clean curve
  that meet the definition (heavy tails make some).
- a detection is a true positive when it falls inside an injected window: [start, start +
  duration + 2] for spikes and transient non-finite values, [start, start + 2] for a non-finite
  value that lasts; each window counts once (further detections in it are "dup"); any other
  detection of that category is a false positive. Positions are line indices, not step numbers
  (a restart repeats step numbers).
- healthy runs (tests/fixtures/healthy/*.log): real HF Trainer, Lightning and 2-rank DDP logs
  with nothing injected, read as `babysit watch` reads them (the parser, then the detectors);
  every loss or grad-norm spike flagged in them is false. The `heldout-*` files were not looked
  at while the rules were chosen and are reported apart.
- divergence (seeded, apart from the above): a synthetic loss jumps to 2-6x its level at a
  random step after 60, then either stays there, climbs, or falls back to a plateau of 1.5x up
  to 60% of the peak for the rest of the curve (each a divergence: LOSS_DIVERGED must follow),
  or decays back to the level with a half-life of 1-16 values, half of them after a fast drop
  to 1.5-3x within 3 values (none must follow). Every
  LOSS_DIVERGED on the curves above is false too: their spikes last 10 steps at most.
- hangs: steps every 0.05, 1 or 10 s (+-20% jitter) with a pause of 10x the step time every 50
  or 200 steps, announced by Activity("checkpoint"|"eval") or showing only as
  Activity("checkpoint_write") every second of the pause (the first as the save starts); `tick`
  every 0.2 s of simulated time.
  Then the same runs stop at a random step: the delay is from the last progress to the alarm.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import parse_args

from babysit.detect.vitals import VitalSigns, VitalsRules
from babysit.records import Activity, Incident, IncidentKind, Metric, OutputLine, Progress
from babysit.supervise.pipeline import Pipeline

HERE = Path(__file__).resolve().parent
HEALTHY = HERE.parent / "tests" / "fixtures" / "healthy"
CACHE = HERE / "data" / "tinygpt_curves.jsonl"
TINYGPT = HERE.parent / "examples" / "tinygpt" / "train.py"
TARGET = 0.95

LOSS, GRAD, NONFINITE = "loss spike", "grad-norm spike", "nonfinite"
CATEGORIES = (LOSS, GRAD, NONFINITE)
KIND_CATEGORY = {
    IncidentKind.LOSS_SPIKE: LOSS,
    IncidentKind.GRAD_NORM_SPIKE: GRAD,
    IncidentKind.NONFINITE: NONFINITE,
}
# What a human calls a spike: (minimum ratio to the level, minimum robust sigmas above it).
HUMAN = {"loss": (1.5, 8.0), "grad_norm": (5.0, 8.0)}
# Robust sigma (1.4826 * MAD) of Student's t with df degrees of freedom: 1.4826 * t_0.75(df).
T_Q75 = {3: 0.76489, 4: 0.74070, 6: 0.71756}


# ----------------------------------------------------------------------------------------------
# The labelled curves


@dataclass
class Window:
    category: str
    lo: int  # line indices, inclusive
    hi: int
    counted: bool  # False: "don't care" (below the definition, or a natural noise excursion)
    note: str


@dataclass
class Row:
    step: int
    values: list[dict[str, float]]  # one per rank printing the step
    ts: float
    new_attempt: bool = False


@dataclass
class Curve:
    name: str
    rows: list[Row]
    windows: list[Window] = field(default_factory=list)


def load_tinygpt(regenerate: bool) -> list[Curve]:
    if regenerate or not CACHE.exists():
        regenerate_tinygpt()
    curves = []
    for line in CACHE.read_text().splitlines():
        run = json.loads(line)
        rows, ts = [], 1000.0
        for step, loss, ms in zip(run["steps"], run["loss"], run["time_ms"], strict=True):
            ts += ms / 1000
            value = math.nan if loss is None else loss
            rows.append(Row(step, [{"loss": value, "step_time_ms": ms}], ts))
        index = {row.step: i for i, row in enumerate(rows)}
        windows = []
        if run["spike_at"] is not None:
            i = index[run["spike_at"]]
            windows.append(Window(LOSS, i, i + 4 + 2, True, f"--spike-at {run['spike_at']}"))
        if run["nan_at"] is not None:
            i = index[run["nan_at"]]
            windows.append(Window(NONFINITE, i, i + 2, True, f"--nan-at {run['nan_at']}"))
        curves.append(Curve(run["name"], rows, windows))
    return curves


TINYGPT_RUNS = (
    [{"seed": s} for s in (1, 2, 3, 4)]
    + [{"seed": s, "spike_at": n} for s in (1, 2, 3) for n in (50, 120, 200, 270)]
    + [{"seed": s, "nan_at": n} for s in (1, 2) for n in (80, 220)]
)
ITER_RE = re.compile(r"^iter (\d+): loss (\S+), time ([\d.]+)ms$")


def regenerate_tinygpt() -> None:
    """Train the tiny GPT once per labelled run (one per core, up to 4) and cache the curves."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(4, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as tmp:
        procs: list[tuple[str, dict[str, int], subprocess.Popen[str]]] = []
        results = []
        pending = list(TINYGPT_RUNS)
        while pending or procs:
            while pending and len(procs) < jobs:
                spec = pending.pop(0)
                name = "tinygpt-" + "-".join(f"{k}{v}" for k, v in spec.items())
                cmd = [sys.executable, str(TINYGPT), "--out-dir", f"{tmp}/{name}"]
                cmd += ["--max-steps", "300", "--ckpt-every", "0", "--eval-every", "0"]
                cmd += [f"--{k.replace('_', '-')}={v}" for k, v in spec.items()]
                print(f"training {name}", file=sys.stderr, flush=True)
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
                procs.append((name, spec, proc))
            name, spec, proc = procs.pop(0)
            out, _ = proc.communicate()
            if proc.returncode != 0:
                sys.exit(f"tiny GPT run {name} failed with exit code {proc.returncode}")
            steps, loss, ms = [], [], []
            for line in out.splitlines():
                if m := ITER_RE.match(line):
                    value = float(m.group(2))
                    steps.append(int(m.group(1)))
                    loss.append(value if math.isfinite(value) else None)
                    ms.append(float(m.group(3)))
            results.append(
                {
                    "name": name,
                    "seed": spec["seed"],
                    "spike_at": spec.get("spike_at"),
                    "nan_at": spec.get("nan_at"),
                    "steps": steps,
                    "loss": loss,
                    "time_ms": ms,
                }
            )
    CACHE.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in results))


def noise_sampler(rng: random.Random) -> tuple[Callable[[], float], str]:
    """A unit-robust-sigma noise source: gaussian, or Student-t scaled to the same robust sigma."""
    if rng.random() < 0.5:
        return lambda: rng.gauss(0.0, 1.0), "gauss"
    df = rng.choice(list(T_Q75))
    scale = 1.0 / (1.4826 * T_Q75[df])

    def student() -> float:
        return rng.gauss(0.0, 1.0) / math.sqrt(rng.gammavariate(df / 2, 2.0) / df) * scale

    return student, f"t{df}"


def loss_level(rng: random.Random, n: int) -> tuple[list[float], str]:
    l_inf, l0 = rng.uniform(1.5, 3.0), rng.uniform(8.0, 11.0)
    base = rng.choice(["exp", "power", "finetune", "plateau"])
    level: list[float]
    if base == "exp":
        tau = rng.uniform(15, 150)
        level = [l_inf + (l0 - l_inf) * math.exp(-t / tau) for t in range(n)]
    elif base == "power":
        t0, alpha = rng.uniform(3, 30), rng.uniform(0.5, 1.5)
        level = [l_inf + (l0 - l_inf) * (1 + t / t0) ** -alpha for t in range(n)]
    elif base == "finetune":  # starts near its floor, drifts down slowly
        tau, rise = rng.uniform(50, 600), rng.uniform(0.05, 0.3)
        level = [l_inf * (1 + rise * math.exp(-t / tau)) for t in range(n)]
    else:  # a plateau, then a second descent
        plateau, tau, tau2 = (
            l_inf * rng.uniform(1.3, 2.0),
            rng.uniform(15, 80),
            rng.uniform(30, 200),
        )
        tp = rng.randint(150, 400)
        at_tp = plateau + (l0 - plateau) * math.exp(-tp / tau)
        level = [
            plateau + (l0 - plateau) * math.exp(-t / tau)
            if t < tp
            else l_inf + (at_tp - l_inf) * math.exp(-(t - tp) / tau2)
            for t in range(n)
        ]
    desc = base
    if rng.random() < 0.3:  # a warm-up bump
        c, w, a = rng.uniform(10, 80), rng.uniform(5, 25), rng.uniform(0.03, 0.15)
        level = [v * (1 + a * math.exp(-(((t - c) / w) ** 2))) for t, v in enumerate(level)]
        desc += "+bump"
    if rng.random() < 0.35:  # LR-schedule drops (step decay)
        for _ in range(rng.randint(1, 3)):
            at, width, f = rng.uniform(150, 580), rng.uniform(1, 10), rng.uniform(0.75, 0.95)
            level = [
                v * (1 - (1 - f) / (1 + math.exp(-max(-50.0, min(50.0, (t - at) / width)))))
                for t, v in enumerate(level)
            ]
        desc += "+drops"
    return level, desc


def grad_level(rng: random.Random, n: int) -> list[float]:
    g_inf, k, tau = rng.uniform(0.2, 1.5), rng.uniform(2, 10), rng.uniform(5, 60)
    drift = rng.uniform(0, 0.6)
    return [g_inf * (1 + (k - 1) * math.exp(-t / tau)) * (1 + drift * t / n) for t in range(n)]


def spike_shape(rng: random.Random, peak: float, d: int) -> list[float]:
    """Multipliers of the level over the d steps of a spike whose noise-free peak is `peak`."""
    shape = rng.choice(["block", "decay", "ramp"])
    if shape == "block" or d == 1:
        return [peak] * d
    if shape == "decay":
        return [1 + (peak - 1) * math.exp(-3 * k / d) for k in range(d)]
    top = d // 2
    return [1 + (peak - 1) * (1 - abs(k - top) / (top + 1)) for k in range(d)]


def synthetic_curve(rng: random.Random, index: int, n: int) -> Curve:
    level, desc = loss_level(rng, n)
    sigma = math.exp(rng.uniform(math.log(0.005), math.log(0.10)))
    noise, ndesc = noise_sampler(rng)
    has_grad = rng.random() < 0.75
    glevel = grad_level(rng, n) if has_grad else []
    gsigma = math.exp(rng.uniform(math.log(0.02), math.log(0.15)))
    gnoise, _ = noise_sampler(rng)
    ranks = rng.randint(2, 8) if rng.random() < 0.2 else 1
    same_on_ranks = rng.random() < 0.5
    restart = rng.randint(250, 500) if rng.random() < 0.15 else None
    back = rng.randint(20, 150)
    # Line i prints step steps[i]; after a restart the steps (and the levels) repeat.
    steps = [i if restart is None or i < restart else i - back for i in range(n)]
    clean = index % 4 == 0
    windows: list[Window] = []
    busy: list[tuple[int, int]] = []
    if restart is not None:
        busy.append((restart - 15, restart + 50))

    def place(d: int, last: int = n - 13) -> int | None:
        for _ in range(50):
            s = rng.randint(50, last)
            if all(s + d + 30 <= lo or s >= hi + 30 for lo, hi in busy):
                busy.append((s, s + d))
                return s
        return None

    # The injected values, line by line: multipliers of the level, or non-finite values.
    loss_mult = [1.0] * n
    grad_mult = [1.0] * n
    loss_bad: dict[int, float] = {}
    grad_bad: dict[int, float] = {}
    plan: list[str] = []
    if not clean:
        while not plan:
            if rng.random() < 0.6:
                plan += ["loss"] * rng.randint(1, 3)
            if has_grad and rng.random() < 0.5:
                plan += ["grad"] * rng.randint(1, 2)
            if rng.random() < 0.35:
                plan += ["nonfinite"] * rng.randint(1, 2)
    persistent_done = False
    plan.sort(key=lambda w: w == "nonfinite")  # a lasting non-finite value comes last
    for what in plan:
        if what in ("loss", "grad"):
            metric = "loss" if what == "loss" else "grad_norm"
            lo_x, hi_x = (1.2, 6.0) if what == "loss" else (1.3, 30.0)
            peak = math.exp(rng.uniform(math.log(lo_x), math.log(hi_x)))
            d = rng.randint(1, 10)
            s = place(d)
            if s is None:
                continue
            target = loss_mult if what == "loss" else grad_mult
            for k, m in enumerate(spike_shape(rng, peak, d)):
                target[s + k] = m
            ratio, zs = HUMAN[metric]
            sig = sigma if what == "loss" else gsigma
            counted = peak >= ratio and peak - 1 >= zs * sig
            note = f"{metric} {peak:.2f}x for {d} ({(peak - 1) / sig:.0f} sigma)"
            windows.append(Window(LOSS if what == "loss" else GRAD, s, s + d + 2, counted, note))
        else:
            which = rng.choice(["loss", "grad_norm", "both"] if has_grad else ["loss"])
            value = rng.choice([math.nan, math.inf])
            lasting = what == "nonfinite" and not persistent_done and rng.random() < 0.5
            if lasting:  # a divergence: non-finite to the end, after every other injection
                first = max([50] + [hi + 30 for _, hi in busy])
                s = rng.randint(first, n - 20) if first <= n - 20 else None
                d = n - s if s is not None else 0
                busy.append((s or n, n))
            else:
                d = rng.randint(1, 3)
                s = place(d)
            if s is None:
                continue
            persistent_done = persistent_done or lasting
            for k in range(s, s + d):
                if which in ("loss", "both"):
                    loss_bad[k] = value
                if which in ("grad_norm", "both"):
                    grad_bad[k] = value
            hi = s + 2 if lasting else s + d + 2
            note = f"{value} in {which} for {'the rest' if lasting else d}"
            windows.append(Window(NONFINITE, s, hi, True, note))
    rows = []
    for i in range(n):
        st = steps[i]
        base_eps, base_geps = noise(), gnoise() if has_grad else 0.0
        loss = max(0.2, 1 + sigma * base_eps) * level[st] * loss_mult[i]
        grad = max(0.1, 1 + gsigma * base_geps) * glevel[st] * grad_mult[i] if has_grad else 0.0
        # A noise excursion that meets the definition of a spike is nobody's false alarm.
        for metric, eps, sig, mult in (
            ("loss", base_eps, sigma, loss_mult[i]),
            ("grad_norm", base_geps, gsigma, grad_mult[i]),
        ):
            ratio, zs = HUMAN[metric]
            if mult == 1.0 and eps >= zs and sig * eps >= ratio - 1:
                cat = LOSS if metric == "loss" else GRAD
                windows.append(Window(cat, i, i + 2, False, f"noise excursion {eps:.0f} sigma"))
        values = []
        for r in range(ranks):
            local = 1.0 if same_on_ranks or r == 0 else 1 + 0.3 * sigma * rng.gauss(0, 1)
            v = {"loss": loss_bad.get(i, loss * local)}
            if has_grad:
                v["grad_norm"] = grad_bad.get(i, grad * local)
            values.append(v)
        new_attempt = restart is not None and i == restart and rng.random() < 0.5
        rows.append(Row(st, values, 1000.0 + i, new_attempt))
    extra = f"{ranks} ranks, " if ranks > 1 else ""
    extra += f"restart at line {restart} back {back}, " if restart is not None else ""
    name = f"syn{index:03d} {desc} {ndesc} {sigma * 100:.1f}% {extra}".rstrip(", ")
    return Curve(name, rows, windows)


# ----------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    dup: int = 0
    ignored: int = 0  # flagged "don't care" windows
    dont_care: int = 0

    def add(self, other: Score) -> None:
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def incidents(curve: Curve, rules: VitalsRules) -> list[tuple[int, Incident]]:
    """(line index, incident) of everything the detectors report on the curve."""
    v = VitalSigns(rules)
    v.new_attempt(curve.rows[0].ts - 1.0)
    found = []
    for i, row in enumerate(curve.rows):
        if row.new_attempt:
            v.new_attempt(row.ts)
        for values in row.values:
            metric = Metric(row.step, values, row.ts, "quality", line=i)
            found += [(i, inc) for inc in v.feed(metric)]
    return found


def detect(curve: Curve, rules: VitalsRules) -> list[tuple[str, int, str]]:
    """(category, line index, message) of every detection of the three categories."""
    return [
        (cat, i, inc.message)
        for i, inc in incidents(curve, rules)
        if (cat := KIND_CATEGORY.get(inc.kind)) is not None
    ]


def diverged_lines(curve: Curve, rules: VitalsRules) -> list[int]:
    """Line indices where LOSS_DIVERGED was reported."""
    return [i for i, inc in incidents(curve, rules) if inc.kind == IncidentKind.LOSS_DIVERGED]


DIVERGING = ("stays", "climbs", "plateau")


def divergence_curve(rng: random.Random, index: int, n: int) -> tuple[Curve, str]:
    """A loss that jumps at a random step and then does one of DIVERGING or "decays"."""
    level, desc = loss_level(rng, n)
    sigma = math.exp(rng.uniform(math.log(0.005), math.log(0.05)))
    noise, _ = noise_sampler(rng)
    shape = (*DIVERGING, "decays")[index % 4]
    at, peak = rng.randint(60, n - 80), rng.uniform(2.0, 6.0)
    floor = rng.uniform(1.5, max(1.5, 0.6 * peak))
    half_life = rng.uniform(1.0, 16.0)
    two_phase = rng.random() < 0.5  # a fast drop first, then the slow decay
    knee = rng.uniform(1.5, min(3.0, peak))
    rows = []
    for i in range(n):
        k = i - at
        if k < 0:
            mult = 1.0
        elif shape == "stays":
            mult = peak
        elif shape == "climbs":
            mult = peak * (1 + 0.02 * k)
        elif shape == "plateau":
            mult = floor + (peak - floor) * 0.5 ** k  # falls to the plateau within a few values
        elif two_phase and k < 3:
            mult = knee + (peak - knee) * (1 - k / 3)
        elif two_phase:
            mult = 1 + (knee - 1) * 0.5 ** ((k - 3) / half_life)
        else:
            mult = 1 + (peak - 1) * 0.5 ** (k / half_life)
        loss = max(0.2, 1 + sigma * noise()) * level[i] * mult
        rows.append(Row(i, [{"loss": loss}], 1000.0 + i))
    return Curve(f"diverge-{index}-{shape}-{desc}", rows), shape


def score(curve: Curve, found: list[tuple[str, int, str]], log: list[str]) -> dict[str, Score]:
    scores = {c: Score() for c in CATEGORIES}
    hit: set[int] = set()
    for cat, i, msg in found:
        match = [k for k, w in enumerate(curve.windows) if w.category == cat and w.lo <= i <= w.hi]
        counted = [k for k in match if curve.windows[k].counted]
        if counted:
            first = next((k for k in counted if k not in hit), None)
            if first is None:
                scores[cat].dup += 1
            else:
                hit.add(first)
                scores[cat].tp += 1
        elif match:
            scores[cat].ignored += 1
        else:
            scores[cat].fp += 1
            log.append(f"  FP {cat:16} {curve.name}: line {i}: {msg}")
    for k, w in enumerate(curve.windows):
        if not w.counted:
            scores[w.category].dont_care += 1
        elif k not in hit:
            scores[w.category].fn += 1
            log.append(f"  FN {w.category:16} {curve.name}: lines {w.lo}-{w.hi}: {w.note}")
    return scores


# ----------------------------------------------------------------------------------------------
# Healthy runs


@dataclass
class Healthy:
    name: str
    steps: int  # the last step read: zero false spikes means something only if steps were read
    metric_lines: int  # lines with metrics read
    false: dict[str, list[str]]  # the spikes flagged (all false), by metric


def healthy_run(path: Path, rules: VitalsRules) -> Healthy:
    """One recorded log through the pipeline `babysit watch` uses (lines split at \\n and \\r,
    as the follower splits them)."""
    pipeline = Pipeline(rules)
    pipeline.new_attempt(0.0)
    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = [OutputLine(path.name, n, t, 0.0) for n, t in enumerate(re.split(r"[\r\n]", text)) if t]
    false: dict[str, list[str]] = {"loss": [], "grad_norm": []}
    for inc in pipeline.lines(lines):
        if inc.kind in (IncidentKind.LOSS_SPIKE, IncidentKind.GRAD_NORM_SPIKE):
            false["loss" if inc.kind == IncidentKind.LOSS_SPIKE else "grad_norm"].append(
                f"  FP {path.name}: {inc.message}"
            )
    return Healthy(path.stem, pipeline.last_step or 0, pipeline.metric_records, false)


def healthy_runs(rules: VitalsRules) -> dict[str, list[Healthy]]:
    """{"calibration": [...], "held out": [...]}"""
    out: dict[str, list[Healthy]] = {"calibration": [], "held out": []}
    for path in sorted(HEALTHY.glob("*.log")):
        part = "held out" if path.name.startswith("heldout-") else "calibration"
        out[part].append(healthy_run(path, rules))
    return out


# ----------------------------------------------------------------------------------------------
# Hangs


@dataclass
class HangResult:
    runs: int = 0
    false_alarms: int = 0
    delays: list[float] = field(default_factory=list)
    bounds: list[float] = field(default_factory=list)
    late: int = 0
    missed: int = 0


def hang_run(
    rng: random.Random, dt: float, every: int, mode: str, hang_at: int | None, rules: VitalsRules
) -> tuple[int, float | None, float]:
    """(alarms before the end or the hang, delay from the last progress to the alarm, bound)."""
    steps = 400
    records: list[Progress | Activity] = []
    t = 3.0
    intervals: list[float] = []
    for s in range(steps if hang_at is None else hang_at + 1):
        step_s = dt * rng.uniform(0.8, 1.2)
        t += step_s
        intervals.append(step_s)
        records.append(Progress(s, t))
        if s == hang_at:
            break
        if s > 0 and s % every == 0:
            pause = 10 * dt
            if mode == "announced":
                kind = "checkpoint" if (s // every) % 2 else "eval"
                records.append(Activity(kind, t + 0.01 * dt, f"{kind} at step {s}"))
            else:  # a save that shows only as writes in the checkpoint directory, every second
                writes = range(math.ceil(pause - 0.1))
                records += [Activity("checkpoint_write", t + 0.1 + k) for k in writes]
            t += pause
            intervals[-1] += pause
    v = VitalSigns(rules)
    v.new_attempt(0.0)
    alarms = 0
    now = 0.0
    for rec in records:
        while now + 0.2 <= rec.ts:
            now += 0.2
            alarms += len(v.tick(now))
        v.feed(rec)
    bound = 3 * statistics.median(intervals) + 5
    if hang_at is None:
        return alarms, None, bound
    last = records[-1].ts
    while now < last + 3600:
        now += 0.2
        if v.tick(now):
            return alarms, now - last, bound
    return alarms, math.inf, bound


def hangs(rules: VitalsRules, seed: int) -> dict[float, HangResult]:
    rng = random.Random(seed)
    out = {}
    for dt in (0.05, 1.0, 10.0):
        res = HangResult()
        for every in (50, 200):
            for mode in ("announced", "writes"):
                for _ in range(3):
                    res.runs += 1
                    alarms, _, _ = hang_run(rng, dt, every, mode, None, rules)
                    res.false_alarms += alarms
                    alarms, delay, bound = hang_run(
                        rng, dt, every, mode, rng.randint(30, 380), rules
                    )
                    res.false_alarms += alarms
                    assert delay is not None
                    if math.isinf(delay):
                        res.missed += 1
                        continue
                    res.delays.append(delay)
                    res.bounds.append(bound)
                    res.late += delay > bound
        out[dt] = res
    return out


# ----------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--regenerate", action="store_true", help="train the tiny GPT runs again")
    ap.add_argument("--curves", type=int, default=300)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="list misses and false alarms")
    args = parse_args(ap, quick={"curves": 40})
    rules = VitalsRules()  # the shipped defaults

    rng = random.Random(args.seed)
    sets = {
        "tinygpt": load_tinygpt(args.regenerate),
        "synthetic": [synthetic_curve(rng, i, args.steps) for i in range(args.curves)],
    }
    log: list[str] = []
    table: dict[tuple[str, str], Score] = {}
    for source, curves in sets.items():
        for curve in curves:
            for cat, sc in score(curve, detect(curve, rules), log).items():
                table.setdefault((source, cat), Score()).add(sc)
    ok = True
    print(f"tiny GPT runs: {len(sets['tinygpt'])}; synthetic curves: {args.curves} x {args.steps}")
    print(f"{'':28}{'TP':>5}{'FP':>5}{'FN':>5}{'dup':>5}{'dc':>8}  precision  recall")
    for cat in CATEGORIES:
        total = Score()
        for source in sets:
            sc = table.get((source, cat), Score())
            total.add(sc)
            if sc.tp + sc.fp + sc.fn:
                print(f"  {source:10}{cat:16}{row(sc)}")
        miss = total.precision < TARGET or total.recall < TARGET
        ok &= not miss
        print(f"  {'all':10}{cat:16}{row(total)}  {'MISSED' if miss else 'ok'}")
    print("  (dup: more detections in a counted window; dc: don't-care windows, flagged/all)")

    false_div = [c.name for cs in sets.values() for c in cs if diverged_lines(c, rules)]
    drng = random.Random(args.seed + 1)
    div_set = [divergence_curve(drng, i, args.steps) for i in range(args.curves)]
    caught = [c.name for c, shape in div_set if shape in DIVERGING and diverged_lines(c, rules)]
    settling = [c.name for c, shape in div_set if shape == "decays" and diverged_lines(c, rules)]
    want = sum(1 for _, shape in div_set if shape in DIVERGING)
    recall = len(caught) / want if want else 1.0
    miss = recall < TARGET or bool(false_div) or bool(settling)
    ok &= not miss
    print(
        f"loss divergence: caught {len(caught)}/{want} that stay up, climb or plateau "
        f"(recall {recall:.3f}); false on {len(settling)} spikes that decay back and on "
        f"{len(false_div)} spike curves above  {'MISSED' if miss else 'ok'}"
    )
    log += [f"  FP divergence {name}" for name in settling + false_div]
    log += [
        f"  FN divergence {c.name}"
        for c, shape in div_set
        if shape in DIVERGING and c.name not in caught
    ]
    print("healthy runs (tests/fixtures/healthy): every spike flagged is false; target: none")
    for part, runs in healthy_runs(rules).items():
        steps = sum(r.steps for r in runs)
        lines = sum(r.metric_lines for r in runs)
        print(f"  {part:12} {len(runs)} runs, {steps} steps, {lines} metric lines:")
        for metric in ("grad_norm", "loss"):
            flagged = [f for r in runs for f in r.false[metric]]
            miss = bool(flagged) or not lines
            ok &= not miss
            print(f"    {metric:10} {len(flagged):3} false spikes  {'MISSED' if miss else 'ok'}")
            log += flagged
    print("hangs (12 paused runs, then 12 hanging ones, per step interval):")
    print(f"  {'step':>6}  false alarms  delay min / median / max      bound  late  missed")
    for dt, res in hangs(rules, args.seed).items():
        d = sorted(res.delays) or [math.nan]
        miss = res.false_alarms > 0 or res.late > 0 or res.missed > 0
        ok &= not miss
        print(
            f"  {dt:>5g}s  {res.false_alarms:>12}  {d[0]:6.1f} / {statistics.median(d):6.1f} / "
            f"{d[-1]:6.1f}s  {min(res.bounds or [math.nan]):5.1f}s  {res.late:>4}  "
            f"{res.missed:>6}  {'MISSED' if miss else 'ok'}"
        )
    if args.verbose:
        print("\n".join(log))
    print("all targets met" if ok else "some targets missed")
    return 0 if ok else 1


def row(sc: Score) -> str:
    dc = f"{sc.ignored}/{sc.dont_care}"
    return (
        f"{sc.tp:>5}{sc.fp:>5}{sc.fn:>5}{sc.dup:>5}{dc:>8}  {sc.precision:9.3f}  {sc.recall:6.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
