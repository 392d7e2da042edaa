"""The chaos suite: the tiny GPT (real PyTorch, torchrun with 2 gloo ranks on the CPU) trained to
a fixed step under a fixed, seeded schedule of faults, three ways, and how far each got.

    python benchmarks/chaos.py                       # every schedule once; prints the table
    python benchmarks/chaos.py --repeats 3 --docs docs/chaos.md   # make chaos: medians, docs
    python benchmarks/chaos.py --quick --json FILE   # the short version (CI): same schema

Ways:
- loop:     `while true; do torchrun ... && break; done`; the trainer resumes from its newest
            checkpoint by itself;
- torchrun: `torchrun --max-restarts 10 ...`, the same resume;
- babysit:  `babysit run --checkpoint 'out/ckpt_*.pt' --resume-args '--resume {checkpoint}'
            [--hostfile hosts.txt --min-nodes 2] -- torchrun ...`: the defaults plus what the
            README tells a user to set.
Schedules (seeded steps; see _chaos_schedule.py): `mixed` (a crash with NCCL's message, a rank
SIGKILLed, a rank hung in a collective, a rank hung reading data, a NaN batch, a data window
that makes the loss spike and stay up, a stalled checkpoint write, babysit SIGKILLed and
started again), `bad_node` (three hosts, the second one's GPU fails every attempt it is part
of; babysit gets the hostfile) and `bug` (a KeyError at a step: the right outcome is to stop).
Every run has a wall-clock cap, so a hung baseline ends the measurement, not the suite.

Figures, per way (medians over the repeats), from the trainer's --events-log, babysit's
events.jsonl and the driver's own marks:
- reached_final_step: every schedule meant to finish did (and `bug` stopped, uncapped);
- wall_s, time to the final step, goodput (productive step time / wall time), the progress
  rate on `mixed` against the fault-free run's, steps recomputed, attempts;
- per fault: detected_after_s (babysit: its first incident, hang evidence or failed attempt
  after the injection; the baselines: their relaunch of the trainer) and recovered_after_s
  (detection -> the next step record), null where it never was; babysit's category for it;
- false_alarms: babysit's incidents and ended attempts that no fault called for;
- final loss (mean of the last 20 steps) against the fault-free run's.
Checked every time, also with --quick: the JSON schema, and babysit's verdicts (it finishes
`mixed` and stops `bug` with exit 3). The targets of issue 15 are reported against, not checked.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _chaos_report import render_markdown, render_svg
from _chaos_schedule import FAULTS, SPARSE, Schedule, measure, median_of, schedules, sparse
from _chaos_ways import WAYS, Config, run_way
from _common import REPO, check, parse_args

FULL = {"steps": 1000, "ckpt_every": 50, "repeats": 1}
QUICK = {"steps": 120, "ckpt_every": 20, "repeats": 1}
STEP_S = 0.05  # --min-step-s: a steady cadence whatever the load
TARGETS = {"goodput_vs_fault_free": 0.95, "goodput_vs_loop": 1.5, "false_alarms": 0}


def caps(steps: int, quick: bool) -> dict[str, float]:
    """Wall-clock caps per schedule: generous for babysit's recoveries (backoffs of 10 s and
    up), short where a baseline can only loop (a bad node, a bug)."""
    if quick:
        return {"fault_free": 60.0, "mixed": 75.0, "bad_node": 150.0, "bug": 30.0}
    run_s = steps * STEP_S
    return {"fault_free": 120 + 2 * run_s, "mixed": 100 + 4 * run_s, "bad_node": 150.0,
            "bug": 60.0}  # fmt: skip


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch  # the trainer's torch, for the record

    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "torch": torch.__version__,
        "os": f"{platform.system()} {platform.release()}",
    }


def one_repeat(
    scheds: dict[str, Schedule], cfg: Config, work: Path, ways: list[str]
) -> dict[str, Any]:
    """Every schedule every way, once; plus the fault-free run the figures are held against."""
    ff_sched = Schedule("fault_free", scheds["mixed"].steps, ())
    print("  fault-free run (torchrun, no faults)", flush=True)
    ff = run_way("torchrun", ff_sched, cfg, work)
    intervals = step_intervals(ff.events)
    step_s = statistics.median(intervals) if intervals else STEP_S
    ffm = measure(ff.events, ff.marks, ff_sched, step_s, "torchrun")
    check(ffm["reached_final_step"], f"the fault-free run did not finish: {ff.stderr_tail}")
    out: dict[str, Any] = {"fault_free": {**ffm, "step_s": step_s}, "runs": {}}
    for sname, sched in scheds.items():
        for way in ways:
            print(f"  {sname:9} {way:9}", end=" ", flush=True)
            ran = run_way(way, sched, cfg, work)
            m = measure(ran.events, ran.marks, sched, step_s, way, ran.bevents)
            m.update(ran.babysit_extra)
            if way == "babysit":
                m["stderr_tail"] = ran.stderr_tail[-1500:]
            out["runs"][f"{sname}/{way}"] = m
            print(
                f"exit {m['exit_code']}  reached {m['reached_final_step']}  "
                f"wall {m['wall_s']:.0f}s{' (cap)' if m['capped'] else ''}  "
                f"high step {m['high_step']}  false alarms {m['false_alarms']}",
                flush=True,
            )
    return out


def step_intervals(events: list[dict[str, Any]]) -> list[float]:
    steps = sorted((e["t"], e["step"]) for e in events if e.get("kind") == "step")
    return [b[0] - a[0] for a, b in itertools.pairwise(steps) if b[1] == a[1] + 1]


def way_figures(
    reps: list[dict[str, Any]], scheds: dict[str, Schedule], way: str
) -> dict[str, Any]:
    """One way's figures, each the median over the repeats."""
    per: list[dict[str, Any]] = []
    for rep in reps:
        ff = rep["fault_free"]
        runs = {s: rep["runs"][f"{s}/{way}"] for s in scheds if f"{s}/{way}" in rep["runs"]}
        mixed = runs["mixed"]
        rate = mixed["progress_steps"] / mixed["wall_s"] if mixed["wall_s"] else 0.0
        ff_rate = scheds["mixed"].steps / ff["time_to_final_step_s"]
        walls = sum(r["wall_s"] for r in runs.values())
        per.append({
            "reached_final_step": all(
                r["reached_final_step"] for s, r in runs.items() if scheds[s].finish
            ),
            "right_outcome": all(r["right_outcome"] for r in runs.values()),
            "wall_s": walls,
            "goodput": sum(r["productive_s"] for r in runs.values()) / walls if walls else 0.0,
            "progress_rate_vs_fault_free": rate / ff_rate if ff_rate else None,
            "false_alarms": sum(r["false_alarms"] for r in runs.values()),
            "steps_recomputed": sum(r["steps_recomputed"] for r in runs.values()),
            "attempts": sum(r["attempts"] for r in runs.values()),
            "final_loss": mixed["final_loss"],
            "fault_free_final_loss": ff["final_loss"],
            "final_loss_delta": (mixed["final_loss"] - ff["final_loss"])
            if mixed["final_loss"] is not None and ff["final_loss"] is not None else None,
        })  # fmt: skip
    fig: dict[str, Any] = {k: median_of([p[k] for p in per]) for k in per[0]}
    fig["schedules"] = {}
    for s in scheds:
        ms = [rep["runs"][f"{s}/{way}"] for rep in reps if f"{s}/{way}" in rep["runs"]]
        skip = {"faults", "logbook", "logbook_keys", "stderr_tail", "false_alarm_notes", "trace",
                "injected_at_s"}  # fmt: skip
        keys = [k for k in ms[0] if k not in skip]
        row = {k: median_of([m[k] for m in ms]) if k not in ("right_outcome",) else
               all(m[k] for m in ms) for k in keys}  # fmt: skip
        row["false_alarm_notes"] = [n for m in ms for n in m.get("false_alarm_notes", [])]
        row["gave_up"] = sorted({g for m in ms if (g := m.get("gave_up"))})
        if way == "babysit":
            row["logbook"] = ms[0].get("logbook")
        fig["schedules"][s] = row
    fig["faults"] = {}
    for s, sched in scheds.items():
        for f in sched.faults:
            vals = [rep["runs"][f"{s}/{way}"]["faults"][f.name] for rep in reps]
            fig["faults"][f.name] = {
                "detected_after_s": median_of([v["detected_after_s"] for v in vals]),
                "recovered_after_s": median_of([v["recovered_after_s"] for v in vals]),
                "category": vals[0].get("category"),
                "stopped_after_s": median_of([v.get("stopped_after_s") for v in vals]),
                "categories": vals[0].get("categories", []),
                "injected": all(v["injected"] for v in vals),
            }
    return fig


def fault_rows(ways: dict[str, Any], scheds: dict[str, Schedule]) -> list[dict[str, Any]]:
    rows = []
    for s, sched in scheds.items():
        for f in sched.faults:
            what, want = FAULTS[f.name]
            rows.append({
                "fault": f.name, "schedule": s, "step": f.step, "what": what,
                "expected_category": want,
                "ways": {w: ways[w]["faults"][f.name] for w in ways},
            })  # fmt: skip
    return rows


def targets(ways: dict[str, Any], ff: dict[str, Any]) -> dict[str, Any]:
    """Issue 15's targets, each with the figure and whether it holds (reported, not checked)."""
    b, loop = ways.get("babysit"), ways.get("loop")
    if b is None:
        return {}
    out: dict[str, Any] = {
        "reaches_final_step": b["reached_final_step"],
        "progress_rate_vs_fault_free": {
            "value": b["progress_rate_vs_fault_free"],
            "target": TARGETS["goodput_vs_fault_free"],
        },
        "zero_false_alarms": b["false_alarms"] == 0,
        "final_loss_delta": b["final_loss_delta"],
    }
    if loop is not None and loop["goodput"]:
        out["goodput_vs_loop"] = {
            "value": round(b["goodput"] / loop["goodput"], 2),
            "target": TARGETS["goodput_vs_loop"],
        }
    for k in ("progress_rate_vs_fault_free", "goodput_vs_loop"):
        if k in out:
            v = out[k]["value"]
            out[k]["met"] = v is not None and v >= out[k]["target"]
    cats = []
    for name, f in b["faults"].items():
        want = FAULTS[name][1]
        if want is not None:
            cats.append({"fault": name, "want": want, "got": f["categories"],
                         "right": want in f["categories"]})  # fmt: skip
    out["categories"] = cats
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=FULL["steps"])
    ap.add_argument("--ckpt-every", type=int, default=FULL["ckpt_every"])
    ap.add_argument("--repeats", type=int, default=FULL["repeats"])
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--schedules", default="mixed,bad_node,bug")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument(
        "--render-from", type=Path, help="a FILE.reps.json an earlier run saved: render it again"
    )
    ap.add_argument("--workdir", type=Path, help="keep the runs' files here (default: a temp dir)")
    ap.add_argument("--docs", type=Path, help="write the markdown table here (+ the .svg plot)")
    ap.add_argument(
        "--sparse", type=float, metavar="SECONDS",
        help="instead: babysit alone, one fault every SECONDS of training (--sparse-faults), "
        "against a fault-free run (the progress-rate target at a fault rate a long run meets)",
    )  # fmt: skip
    ap.add_argument("--sparse-faults", default=",".join(SPARSE))
    args = parse_args(ap, {**QUICK, "schedules": "mixed,bug"})
    if args.sparse is not None:
        check(args.sparse > 0, "--sparse: seconds of training between faults, > 0")
        run_sparse(args)
        return
    ways = [w for w in args.ways.split(",") if w]
    check(all(w in WAYS for w in ways), f"--ways: pick from {', '.join(WAYS)}")
    cfg = Config(
        steps=args.steps, ckpt_every=args.ckpt_every, step_s=STEP_S, ranks=2, hang_rank=1,
        slow_ckpt_s=8.0 if args.quick else 20.0, caps_s=caps(args.steps, args.quick),
        seed=args.seed,
    )  # fmt: skip
    every = schedules(args.steps, args.seed, args.ckpt_every, quick=args.quick)
    names = [s for s in args.schedules.split(",") if s]
    check(all(s in every for s in names) and "mixed" in names, "--schedules: mixed plus any of "
          "bad_node, bug")  # fmt: skip
    scheds = {s: every[s] for s in names}
    info = machine()
    t0 = time.monotonic()
    reps: list[dict[str, Any]] = []
    suite_s = 0.0
    if args.render_from:  # the raw runs a run saved: render them again, run nothing
        saved = json.loads(args.render_from.read_text())
        reps, info, suite_s = saved["reps"], saved["machine"], saved["suite_s"]
        args.repeats = len(reps)
    with tempfile.TemporaryDirectory(prefix="babysit-chaos-") as tmp_dir:
        tmp = args.workdir or tmp_dir
        for r in range(0 if args.render_from else args.repeats):
            print(f"repeat {r + 1}/{args.repeats}", flush=True)
            work = Path(tmp) / f"r{r}"
            work.mkdir(parents=True, exist_ok=bool(args.workdir))
            reps.append(one_repeat(scheds, cfg, work, ways))
            suite_s = time.monotonic() - t0
            if args.json:  # after each repeat: a long suite cut short keeps what it measured
                raw = {"reps": reps, "machine": info, "suite_s": suite_s}
                args.json.with_suffix(".reps.json").write_text(json.dumps(raw))
    way_figs = {w: way_figures(reps, scheds, w) for w in ways}
    ff = {k: median_of([rep["fault_free"][k] for rep in reps])
          for k in ("wall_s", "time_to_final_step_s", "final_loss", "step_s")}  # fmt: skip
    doc: dict[str, Any] = {
        "ways": way_figs,
        "faults": fault_rows(way_figs, scheds),
        "fault_free": ff,
        "targets": targets(way_figs, ff),
        "schedules": {
            s: {
                "steps": v.steps,
                "faults": [[f.name, f.step] for f in v.faults],
                "finish": v.finish,
            }
            for s, v in scheds.items()
        },
        "config": {
            "quick": args.quick,
            "repeats": args.repeats,
            "seed": args.seed,
            "steps": args.steps,
            "ckpt_every": args.ckpt_every,
            "ranks": cfg.ranks,
            "min_step_s": STEP_S,
            "caps_s": cfg.caps_s,
            "suite_s": round(suite_s, 1),
        },
        "machine": info,
        "traces": traces(reps[0], scheds["mixed"], ways),
    }
    check_schema(doc, ways)
    md = render_markdown(doc)
    print(md)
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1))
    if args.docs:
        svg = args.docs.with_suffix(".svg")
        svg.write_text(render_svg(doc))
        args.docs.write_text(md)
    if "babysit" in ways:  # the verdicts, after the figures are written: a miss is a finding
        b = doc["ways"]["babysit"]["schedules"]
        why = "; ".join(b["mixed"]["gave_up"]) or f"exit {b['mixed']['exit_code']}"
        if args.quick and not b["mixed"]["reached_final_step"]:
            # Whether it finishes depends on the machine's speed (the restart-storm rule counts
            # attempts within a time window): the test suite's quick run reports it, it does
            # not fail on it. The full suite does.
            print(f"FINDING (not checked in --quick): babysit did not finish mixed: {why}")
        else:
            check(b["mixed"]["reached_final_step"], f"babysit did not finish mixed: {why}")
        if "bug" in b:
            check(b["bug"]["exit_code"] == 3, f"babysit on the bug exited {b['bug']['exit_code']}")


def run_sparse(args: argparse.Namespace) -> None:
    """babysit on `sparse`: the faults one at a time, SECONDS of training apart, and the
    fault-free run of the same steps; the progress rate of one against the other (issue 15's
    95% target, at a fault rate that is still far above a real cluster's)."""
    spacing = max(4 * args.ckpt_every, round(args.sparse / STEP_S))
    names = [n for n in args.sparse_faults.split(",") if n]
    allowed = [*SPARSE, "hang_data"]  # each one restart, each injected once
    check(bool(names) and len(set(names)) == len(names) and all(n in allowed for n in names),
          f"--sparse-faults: some of {', '.join(allowed)}, each once")  # fmt: skip
    sched = sparse(spacing, names, args.seed, args.ckpt_every)
    run_s = sched.steps * STEP_S
    cfg = Config(
        steps=sched.steps, ckpt_every=args.ckpt_every, step_s=STEP_S, ranks=2, hang_rank=1,
        slow_ckpt_s=20.0, seed=args.seed,
        caps_s={"fault_free": 120 + 2 * run_s, "sparse": 300 + 2 * run_s},
    )  # fmt: skip
    info = machine()
    with tempfile.TemporaryDirectory(prefix="babysit-chaos-") as tmp_dir:
        work = Path(args.workdir or tmp_dir)
        work.mkdir(parents=True, exist_ok=True)
        ff_sched = Schedule("fault_free", sched.steps, ())
        print(f"  fault-free run, {sched.steps} steps", flush=True)
        ff = run_way("torchrun", ff_sched, cfg, work)
        intervals = step_intervals(ff.events)
        step_s = statistics.median(intervals) if intervals else STEP_S
        ffm = measure(ff.events, ff.marks, ff_sched, step_s, "torchrun")
        check(ffm["reached_final_step"], f"the fault-free run did not finish: {ff.stderr_tail}")
        print(f"  sparse: {', '.join(f'{f.name}@{f.step}' for f in sched.faults)}", flush=True)
        ran = run_way("babysit", sched, cfg, work)
        m = measure(ran.events, ran.marks, sched, step_s, "babysit", ran.bevents)
    # Both to their final step (babysit's exit after it is not training time lost); a run that
    # did not get there, to the end of its wall time.
    ff_rate = sched.steps / ffm["time_to_final_step_s"]
    took = m["time_to_final_step_s"] or m["wall_s"]
    rate = m["progress_steps"] / took if took else 0.0
    lost = took - ffm["time_to_final_step_s"]
    doc = {
        "spacing_s": round(spacing * STEP_S, 1),
        "steps": sched.steps,
        "faults": [[f.name, f.step] for f in sched.faults],
        "fault_free": {"time_to_final_step_s": ffm["time_to_final_step_s"], "step_s": step_s,
                       "final_loss": ffm["final_loss"]},
        "babysit": {
            "reached_final_step": m["reached_final_step"], "wall_s": m["wall_s"],
            "time_to_final_step_s": m["time_to_final_step_s"],
            "exit_code": m["exit_code"], "goodput": m["goodput"],
            "progress_rate_vs_fault_free": round(rate / ff_rate, 4),
            "lost_per_fault_s": round(lost / len(sched.faults), 1),
            "false_alarms": m["false_alarms"], "attempts": m["attempts"],
            "steps_recomputed": m["steps_recomputed"], "final_loss": m["final_loss"],
            "faults": {k: {x: v.get(x) for x in ("detected_after_s", "recovered_after_s",
                                                  "category")} for k, v in m["faults"].items()},
        },
        "target": TARGETS["goodput_vs_fault_free"],
        "machine": info,
    }  # fmt: skip
    md = sparse_markdown(doc)
    print(md)
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1))
    if args.docs:
        args.docs.write_text(md)
    check(m["reached_final_step"], f"babysit did not finish the sparse schedule: {m['exit_code']}")


def sparse_markdown(doc: dict[str, Any]) -> str:
    b, ff = doc["babysit"], doc["fault_free"]
    rate = b["progress_rate_vs_fault_free"]
    met = "met" if rate >= doc["target"] else "**not met**"
    reached = "yes" if b["reached_final_step"] else "**no**"
    n, lost = len(doc["faults"]), b["lost_per_fault_s"]
    train_s = doc["steps"] * doc["fault_free"]["step_s"]
    per_fault = train_s / n
    took = b.get("time_to_final_step_s")
    to_final = (f"| time to the final step | {took:.0f} s | {ff['time_to_final_step_s']:.0f} s |"
                if took is not None else
                f"| wall time (babysit: to its exit after the final step) | {b['wall_s']:.0f} s | "
                f"{ff['time_to_final_step_s']:.0f} s to the final step |")  # fmt: skip
    lost_note = "" if took is not None else (
        " (measured to babysit's exit: its own start-up and its exit after the last step are in "
        "it too)"
    )
    rows = "\n".join(
        f"| {name} | {step} | {_s(b['faults'][name]['detected_after_s'])} | "
        f"{_s(b['faults'][name]['recovered_after_s'])} | {b['faults'][name]['category']} |"
        for name, step in doc["faults"]
    )
    m = doc["machine"]
    return f"""# The chaos suite at a fault rate a long run meets

The tiny GPT of the chaos suite ([chaos.md](chaos.md)), torchrun with 2 gloo ranks on the CPU,
{doc['steps']} steps (about {train_s / 60:.0f} min of training), under babysit, with {n}
faults ({', '.join(name for name, _ in doc['faults'])}) {doc['spacing_s']:g} s of training apart,
the first after {doc['spacing_s']:g} s and the last followed by {doc['spacing_s']:g} s more: one
fault per {per_fault:.0f} s of training, against the same training without faults. A real
cluster of a thousand GPUs meets a fault every few hours, not minutes; the time lost per fault
depends on the restart's cost (loading the model and the checkpoint, the rendezvous) and the
checkpoint interval: the figure to measure again at your scale.

```sh
python benchmarks/chaos.py --sparse {doc['spacing_s']:g} --docs docs/chaos-sparse.md
```

| | babysit | fault-free |
|---|---|---|
| reached the final step | {reached} (exit {b['exit_code']}) | yes |
{to_final}
| progress rate vs fault-free (target >= {doc['target']:.0%}: {met}) | {rate:.1%} | 100% |
| time lost per fault (detect, stop, back off, restart, recompute) | {lost:.1f} s | — |
| goodput (productive / wall) | {b['goodput']:.0%} | — |
| false alarms | {b['false_alarms']} | — |
| attempts (trainer starts) | {b['attempts']} | 1 |
| steps recomputed | {b['steps_recomputed']} | 0 |
| final loss (mean of the last 20 steps) | {_s(b['final_loss'], 3)} | {_s(ff['final_loss'], 3)} |

The time lost per fault is babysit's time less the fault-free run's, over the faults{lost_note}.
At {b['lost_per_fault_s']:.1f} s lost per fault, the progress rate is 95% of the fault-free
one when faults come {19 * b['lost_per_fault_s'] / 60:.1f} minutes of training apart or more,
and {3600 / (3600 + b['lost_per_fault_s']):.1%} at one an hour (a projection from the measured
cost, not a measurement).

| fault | step | detected after (s) | recovered after (s) | babysit called it |
|---|---|---|---|---|
{rows}

Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, torch {m['torch']}, {m['os']}
(load average at the start {m['load_avg_at_start']}).
"""


def _s(v: Any, digits: int = 1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def traces(rep: dict[str, Any], mixed: Schedule, ways: list[str]) -> dict[str, Any]:
    """The first repeat's `mixed` runs, step over time, with the faults' times: the plot."""
    out: dict[str, Any] = {"steps": mixed.steps}
    for w in ways:
        run = rep["runs"].get(f"mixed/{w}", {})
        out[w] = {"trace": run.get("trace", []), "faults": run.get("injected_at_s", {}),
                  "wall_s": run.get("wall_s"), "capped": run.get("capped")}  # fmt: skip
    return out


def check_schema(doc: dict[str, Any], ways: list[str]) -> None:
    """The schema other tools read (issue 15): keep it stable."""
    check(set(doc["ways"]) == set(ways), f"ways: {sorted(doc['ways'])}")
    for w, fig in doc["ways"].items():
        for key in ("reached_final_step", "wall_s", "goodput", "false_alarms", "faults"):
            check(key in fig, f"ways.{w} lacks {key}")
        for name, f in fig["faults"].items():
            for key in ("detected_after_s", "recovered_after_s"):
                check(key in f, f"ways.{w}.faults.{name} lacks {key}")
    check(isinstance(doc["faults"], list) and bool(doc["faults"]), "faults: a non-empty list")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "benchmarks"))
    main()
