"""Render the chaos suite's results: the markdown of docs/chaos.md and its SVG plot (the step
reached over time on the `mixed` schedule, one line per way, the faults marked).

    md = render_markdown(doc); svg = render_svg(doc)    # doc: chaos.py's JSON
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

COLOURS = {"babysit": "#1b7f3b", "loop": "#b8860b", "torchrun": "#3b5bdb"}


def fmt(v: Any, unit: str = "", nd: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return f"{v:.{nd}f}{unit}"
    return f"{v}{unit}"


def pct(v: Any) -> str:
    return "—" if v is None else f"{100 * float(v):.0f}%"


PREAMBLE = """# The chaos suite

The same training, the same faults, three ways of running it, and how far each got. The tiny
GPT of `babysit demo` (real PyTorch, `torchrun` with two gloo ranks on the CPU) is trained to a
fixed step under a fixed, seeded schedule of faults:

- **loop**: `while true; do torchrun ... && break; done`, the trainer resuming from its newest
  checkpoint by itself;
- **torchrun**: `torchrun --max-restarts 10 ...`, the same resume;
- **babysit**: `babysit run --checkpoint 'out/ckpt_*.pt' --resume-args '--resume {checkpoint}'
  -- torchrun ...`, babysit's defaults plus what the README tells a user to set (and
  `--hostfile hosts.txt --min-nodes 2` where the run has hosts).

Schedules: `mixed` (a crash with NCCL's message, a rank SIGKILLed, a rank hung inside a
collective, a rank hung reading its data, a stalled checkpoint write, babysit itself SIGKILLed
and started again, then a data window that makes the loss spike and stay up and a NaN batch,
both of which come back whenever that data is trained on), `bad_node` (three hosts; the second
one's GPU fails every attempt it is part of) and `bug` (a `KeyError` at a step: the right
outcome is to stop, not to loop). Every run has a wall-clock cap, so a hung baseline ends the
measurement rather than the suite.

```sh
make chaos                                        # this page: three repeats, medians
python benchmarks/chaos.py                        # every schedule once (part of `make bench`)
python benchmarks/chaos.py --quick --json r.json  # the short version that CI runs
```

These schedules are compressed (eight faults in under a minute of training): each restart's
fixed cost outweighs the training between faults. The same faults at a rate a long run meets,
one every few minutes, against the fault-free run: [chaos-sparse.md](chaos-sparse.md).
"""

DEFINITIONS = """## How it is measured

From the trainer's own event log (`--events-log`: every step, save, fault, start and eval with
its wall-clock time), babysit's `events.jsonl` and the driver's marks:

- **goodput**: productive time / wall time. A step is productive the first time it is trained
  (the high-water mark rises), counted for the time it took (at most 4x the fault-free step
  time, so that a restart's gap is never work). Summed over the schedules.
- **progress rate**: steps reached on `mixed` per second of wall time, against the fault-free
  run's (issue 15's "goodput >= 95% of the fault-free run's progress rate").
- **detected after**: for babysit, its first incident, hang evidence or failed attempt after
  the fault was injected (and before the next fault); for the baselines, their relaunch of the
  trainer. **recovered after**: from detection to the next step trained (or a data window
  announced skipped). For the bug: how long after it the way stopped. For babysit SIGKILLed:
  from the kill to the next step (the training does not stop).
- **false alarms**: babysit's incidents and ended attempts that no fault called for (before the
  first fault, or after a quiet one: the slow save, its own restart).
- **final loss**: the validation loss of the eval at the final step.
- **steps recomputed**: steps trained more than once (a restart from an older checkpoint).

Reading it: the schedule is compressed. `mixed` puts eight faults into about a minute of
training, where a real run meets them hours apart. Every restart costs a few seconds that do not
shrink with the run: torch's import and gloo's rendezvous, babysit's backoff (2 s after an
attempt that trained, then 20 s, doubling while failures come in a row), the hang detection
and the two looks. No way can keep 95% of the fault-free progress rate at this density; the
figure says how far from it each way stays (at ~15 s a fault, 95% needs the faults about 5
minutes of training apart: [chaos-sparse.md](chaos-sparse.md) measures that). The rules babysit
sizes for long runs weigh more here: a rollback skips the data of 200 steps (`[rollback]
skip_before`/`skip_after`), a fifth of this run. The tiny GPT trains those steps on batches drawn
afresh (the README's "skip the batch, or draw another"; PaLM went on training past the batches
it skipped), so no update is lost; a trainer that skips the updates too (Megatron's
`--skip-train-iteration-range`) ends a short run with fewer of them, and a higher final loss.
"""


def findings(doc: dict[str, Any]) -> list[str]:
    """What babysit missed, in words, from the figures: targets missed, give-ups, wrong
    categories, false alarms."""
    b = doc["ways"].get("babysit")
    if b is None:
        return []
    out = []
    for s, row in b["schedules"].items():
        want = doc["schedules"][s]["finish"]
        if want and not row["reached_final_step"]:
            why = "; ".join(row.get("gave_up") or []) or f"exit {row['exit_code']}"
            out.append(f"- `{s}`: babysit did not reach the final step: {why}")
        if not want and row["exit_code"] != 3:
            out.append(f"- `{s}`: babysit exited {row['exit_code']}, not 3 (stop and page)")
        for note in row.get("false_alarm_notes") or []:
            out.append(f"- `{s}`: false alarm: {note}")
    mixed = b["schedules"].get("mixed") or {}
    spike = b["faults"].get("spike_data") or {}
    if spike.get("injected") and "loss_diverged" not in (mixed.get("logbook") or {}).get(
        "incidents", []
    ):
        out.append(
            "- `spike_data`: the loss that jumped and stayed up (the data window's garbage "
            "batches) was logged as a loss spike, never judged diverged, never rolled back past "
            "(its data is not skipped: it comes back on any restart from before it)"
        )
    t = doc.get("targets") or {}
    for k, label in (
        ("progress_rate_vs_fault_free", "progress rate against the fault-free run's"),
        ("goodput_vs_loop", "goodput against the bare loop's"),
    ):
        if k in t and not t[k]["met"]:
            where = " on these compressed schedules (see chaos-sparse.md)" if k.startswith(
                "progress") else ""
            out.append(f"- {label}: {fmt(t[k]['value'], '', 2)}, target {t[k]['target']}{where}")
    for c in t.get("categories", []):
        if not c["right"]:
            got = ", ".join(c["got"]) or "nothing"
            out.append(f"- {c['fault']}: babysit called it {got}, want {c['want']}")
    return out


def render_markdown(doc: dict[str, Any]) -> str:
    """The whole of docs/chaos.md."""
    found = findings(doc)
    missed = ["## What babysit missed", ""] + (found or ["Nothing: every target was met."])
    return "\n".join(
        [PREAMBLE, table(doc), "![step over time](chaos.svg)", "", *missed, "", DEFINITIONS]
    )


def table(doc: dict[str, Any]) -> str:
    ways = doc["ways"]
    names = list(ways)
    cfg, m, ff = doc["config"], doc["machine"], doc["fault_free"]
    lines = [
        "## The table",
        "",
        f"Tiny GPT, torchrun with {cfg['ranks']} gloo ranks on the CPU, {cfg['steps']} steps "
        f"(`mixed`), a checkpoint every {cfg['ckpt_every']}; each figure the median of "
        f"{cfg['repeats']} repeat(s){' (--quick)' if cfg['quick'] else ''}. Fault-free: "
        f"{fmt(ff['time_to_final_step_s'], ' s')} to the final step, final loss "
        f"{fmt(ff['final_loss'], '', 3)}.",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    rows: list[tuple[str, str, Callable[[Any], str]]] = [
        ("reached the final step (`mixed`, `bad_node`)", "reached_final_step", lambda v: fmt(v)),
        ("right outcome everywhere (the bug: stopped)", "right_outcome", lambda v: fmt(v)),
        ("wall time, all schedules", "wall_s", lambda v: fmt(v, " s", 0)),
        ("goodput (productive / wall)", "goodput", pct),
        ("progress rate on `mixed` vs fault-free", "progress_rate_vs_fault_free", pct),
        ("false alarms", "false_alarms", lambda v: fmt(v)),
        ("steps recomputed", "steps_recomputed", lambda v: fmt(v, "", 0)),
        ("attempts (trainer starts)", "attempts", lambda v: fmt(v, "", 0)),
        ("final loss on `mixed` (fault-free: see above)", "final_loss", lambda v: fmt(v, "", 3)),
    ]
    for label, key, f in rows:
        lines.append(f"| {label} | " + " | ".join(f(ways[w].get(key)) for w in names) + " |")
    lines += ["", "Per schedule: reached the final step / wall time / high step / exit code.", ""]
    lines += ["| schedule | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for s in doc["schedules"]:
        cells = []
        for w in names:
            r = ways[w]["schedules"][s]
            cap = " (cap)" if r.get("capped") else ""
            cells.append(
                f"{fmt(r['reached_final_step'])} / {fmt(r['wall_s'], ' s', 0)}{cap} / "
                f"{fmt(r['high_step'], '', 0)} / {fmt(r['exit_code'], '', 0)}"
            )
        lines.append(f"| `{s}` | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Per fault: detected after / recovered after (seconds; — never; for the bug: stopped "
        "after), and what babysit called it.",
        "",
        "| fault | step | " + " | ".join(names) + " | babysit called it (want) |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for row in doc["faults"]:
        cells = []
        for w in names:
            f = row["ways"][w]
            after = f["recovered_after_s"] if row["fault"] != "bug" else f.get("stopped_after_s")
            cells.append(f"{fmt(f['detected_after_s'])} / {fmt(after)}")
        got = ", ".join(row["ways"].get("babysit", {}).get("categories") or []) or "—"
        want = row["expected_category"] or "nothing"
        lines.append(
            f"| {row['fault']} ({row['schedule']}) | {row['step']} | "
            + " | ".join(cells)
            + f" | {got} ({want}) |"
        )
    t = doc.get("targets") or {}
    if t:
        lines += ["", "Targets (issue 15), babysit:", ""]
        lines.append(f"- reaches the final step on every schedule: {fmt(t['reaches_final_step'])}")
        for k, label in (
            ("progress_rate_vs_fault_free", "progress rate >= 95% of the fault-free run's"),
            ("goodput_vs_loop", "goodput >= 1.5x the bare loop's"),
        ):
            if k in t:
                v = t[k]
                lines.append(
                    f"- {label}: {fmt(v['value'], '', 2)} ({'met' if v['met'] else '**missed**'})"
                )
        lines.append(f"- zero false alarms: {fmt(t['zero_false_alarms'])}")
        lines.append(
            f"- final loss minus the fault-free run's: {fmt(t['final_loss_delta'], '', 3)}"
        )
        wrong = [c for c in t.get("categories", []) if not c["right"]]
        lines.append(
            "- every incident in the logbook with the right category: "
            + ("yes" if not wrong else "**no**: " + "; ".join(
                f"{c['fault']} want {c['want']}, got {', '.join(c['got']) or 'nothing'}"
                for c in wrong))
        )  # fmt: skip
    lines += [
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (load {m['load_avg_at_start']} at the start), "
        f"{m['os']}, Python {m['python']}, torch {m['torch']}; the suite took "
        f"{fmt(cfg['suite_s'], ' s', 0)}.",
        "",
    ]
    return "\n".join(lines)


def render_svg(doc: dict[str, Any]) -> str:
    """Step reached over wall time on `mixed`, one polyline per way; faults as ticks."""
    tr = doc.get("traces") or {}
    names = [w for w in doc["ways"] if w in tr]
    w, h, pad = 760, 360, 50
    t_max = max([float(tr[n]["wall_s"] or 0) for n in names] + [1.0])
    s_max = float(tr.get("steps") or 1)

    def xy(t: float, s: float) -> str:
        return f"{pad + (w - 2 * pad) * t / t_max:.1f},{h - pad - (h - 2 * pad) * s / s_max:.1f}"

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{pad}" y="20" font-size="14">Step reached over time, schedule `mixed` '
        f"(first repeat)</text>",
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
        f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">seconds</text>',
        f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" '
        f'text-anchor="middle">step</text>',
    ]
    for i in range(5):
        t = t_max * i / 4
        s = s_max * i / 4
        out.append(f'<text x="{xy(t, 0).split(",")[0]}" y="{h - pad + 15}" '
                   f'text-anchor="middle">{t:.0f}</text>')  # fmt: skip
        out.append(f'<text x="{pad - 6}" y="{xy(0, s).split(",")[1]}" '
                   f'text-anchor="end">{s:.0f}</text>')  # fmt: skip
    for k, n in enumerate(names):
        pts = " ".join(xy(t, s) for t, s in tr[n]["trace"])
        colour = COLOURS.get(n, "gray")
        if pts:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                       f'points="{pts}"/>')  # fmt: skip
        for fault, t in (tr[n].get("faults") or {}).items():
            x = xy(float(t), 0).split(",")[0]
            y0 = pad + 12 * k
            out.append(f'<line x1="{x}" y1="{y0}" x2="{x}" y2="{h - pad}" stroke="{colour}" '
                       f'stroke-opacity="0.35" stroke-dasharray="3,3"><title>{escape(n)}: '
                       f"{escape(fault)} at {t} s</title></line>")  # fmt: skip
            if k == 0:
                at = f'x="{x}" y="{pad - 4}" transform="rotate(-30 {x} {pad - 4})"'
                out.append(f'<text {at} font-size="9" fill="{colour}">{escape(fault)}</text>')
        cap = " (capped)" if tr[n].get("capped") else ""
        out.append(f'<text x="{w - pad - 150}" y="{pad + 16 * k + 10}" fill="{colour}">'
                   f"{escape(n)}{cap}</text>")  # fmt: skip
    out.append("</svg>")
    return "\n".join(out) + "\n"
