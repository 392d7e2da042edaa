"""The logbook as a chronicle: what happened to a run, in order, with the reasons, from store rows.

    rows = LogbookRows(store.run("gpt"), store.attempts("gpt"), store.events("gpt"),
                       store.incidents("gpt"), store.diagnoses("gpt"), store.stacks("gpt"),
                       store.metrics("gpt"))
    chron = chronicle(rows)              # a JSON-able dict: `logbook --format json`'s "chronicle"
    chronicle_markdown(chron)            # its Markdown sections (views.chronicle_md)
    # views.chronicle_html.logbook_html(doc, chron): the self-contained HTML file

The chronicle (schema 1; keys are stable, more may be added):

- `summary`: attempts, started, ended, wall_s, state, restarts, rollbacks, bans, incidents,
  notes, last_step.
- `timeline[]`: one entry per attempt: number, started, ended, duration_s, gap_before_s (the
  wait since the previous attempt ended), outcome, how ("failed (exit 1)"), exit_code, signal,
  cause, transient, summary, host, hosts, first_step, last_step, resume_from, resume_step,
  skip_steps, lr_scale.
- `incidents[]`: id ("I1", ...), ts, attempt, kind (an attempt's end: "failed", "killed",
  "lost"; else a vital-sign incident's kind: "loss_spike", "hang", ...; or "triage"), category,
  title, step, summary; `signals[]` (the vital-sign incidents it gathers: ts, kind, step,
  metric, value, baseline, message); `triage` (category, transient, suspect {kind, host, rank,
  gpu}, confidence, summary, action, fingerprint, rule; null when nothing judged it);
  `evidence[]` (file, line, text: at most EVIDENCE_LINES lines, each at most EVIDENCE_CHARS);
  `consequences[]`; `stacks[]` (ts, summary, groups [{where, count, ranks, pids, odd}],
  evidence); `vitals[]` (metric, points [[step, value]], marks [step], bands [[lo, hi]]: the
  vital signs around it, the anomaly's step marked and the skipped data shaded).
- `decisions[]`: ts, attempt, kind (the event's kind), action (plain words: "restart",
  "rollback", "ban node", "give up", ...), reason, details (the event's data).
- `notes[]`: ts, attempt, author, text (`babysit note`).

An attempt that failed, was killed or was lost is an incident; the vital-sign incidents of that
attempt that explain its end (its cause's category, the anomaly it was rolled back for, a hang)
are its signals, and every other vital-sign incident stands alone. Times are ISO 8601 in UTC;
non-finite numbers are the strings "nan", "inf", "-inf" (strict JSON). Pure: rows in, data out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babysit.strictjson import finite
from babysit.views.document import iso
from babysit.views.live import LOSS_KEYS, THROUGHPUT_KEYS
from babysit.views.render import _how

__all__ = [
    "HUMAN",
    "SCHEMA",
    "LogbookRows",
    "chronicle",
    "is_human_note",
    "metric_value",
]

SCHEMA = 1
HUMAN = "human"  # the `source` of a note a person wrote (babysit's own notes have none)
EVIDENCE_LINES = 8
EVIDENCE_CHARS = 300
MAX_POINTS = 240  # per vital sign and incident: the chart stays small
MAX_VITALS = 3  # charts per incident: the loss, the grad norm, one throughput
VITAL_KEYS = (*LOSS_KEYS, "grad_norm", *THROUGHPUT_KEYS)
FAILED = ("failed", "killed", "lost")

# Events that are something babysit (or an operator) did or decided, and how to say it.
ACTIONS = {
    "restart_scheduled": "restart",
    "rollback": "rollback",
    "checkpoint": "resume from checkpoint",
    "banned": "ban node",
    "unbanned": "unban node",
    "gave_up": "give up",
    "stop_requested": "stop requested",
    "stopped": "stopped",
    "force_killed": "force kill",
    "succeeded": "finished",
    "hang_evidence": "looked at the hang",
    "reattached": "re-attached",
    "preflight": "preflight",
    "warning": "warning",
    "note": "observed",
}


@dataclass(frozen=True)
class LogbookRows:
    """What the store holds of one run (its read methods' rows, unchanged)."""

    run: Mapping[str, Any]
    attempts: Sequence[Mapping[str, Any]]
    events: Sequence[Mapping[str, Any]]
    incidents: Sequence[Mapping[str, Any]] = ()
    diagnoses: Sequence[Mapping[str, Any]] = ()
    stacks: Sequence[Mapping[str, Any]] = ()
    metrics: Sequence[Mapping[str, Any]] = ()


def is_human_note(event: Mapping[str, Any]) -> bool:
    return event.get("kind") == "note" and (event.get("data") or {}).get("source") == HUMAN


def chronicle(rows: LogbookRows) -> dict[str, Any]:
    """The chronicle of the run in `rows` (see the module docstring for its keys)."""
    timeline = _timeline(rows.attempts)
    incidents = _incidents(rows)
    decisions = [
        {
            "ts": iso(e["ts"]),
            "attempt": e.get("attempt"),
            "kind": e["kind"],
            "action": ACTIONS[e["kind"]],
            "reason": e["message"],
            "details": e.get("data") or {},
        }
        for e in rows.events
        if e["kind"] in ACTIONS and not is_human_note(e)
    ]
    notes = [
        {
            "ts": iso(e["ts"]),
            "attempt": e.get("attempt"),
            "author": (e.get("data") or {}).get("author"),
            "text": e["message"],
        }
        for e in rows.events
        if is_human_note(e)
    ]
    kinds = [e["kind"] for e in rows.events]
    starts = [a["started"] for a in rows.attempts]
    ends = [a["ended"] for a in rows.attempts if a.get("ended") is not None]
    running = any(a.get("ended") is None for a in rows.attempts)
    last_steps = [a["last_step"] for a in rows.attempts if a.get("last_step") is not None]
    summary = {
        "attempts": len(rows.attempts),
        "started": iso(min(starts)) if starts else None,
        "ended": iso(max(ends)) if ends and not running else None,
        "wall_s": round(max(ends) - min(starts), 3) if ends and starts and not running else None,
        "state": rows.run.get("state"),
        "restarts": kinds.count("restart_scheduled"),
        "rollbacks": kinds.count("rollback"),
        "bans": kinds.count("banned"),
        "incidents": len(incidents),
        "notes": len(notes),
        "last_step": max(last_steps) if last_steps else None,
    }
    out: dict[str, Any] = finite(
        {
            "schema": SCHEMA,
            "summary": summary,
            "timeline": timeline,
            "incidents": incidents,
            "decisions": decisions,
            "notes": notes,
        }
    )
    return out


def _timeline(attempts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    previous_end: float | None = None
    for a in attempts:
        ended = a.get("ended")
        duration = ended - a["started"] if ended is not None else None
        gap = a["started"] - previous_end if previous_end is not None else None
        previous_end = ended if ended is not None else previous_end
        out.append(
            {
                "number": a["number"],
                "started": iso(a["started"]),
                "ended": iso(ended),
                "duration_s": round(duration, 3) if duration is not None else None,
                "gap_before_s": round(max(gap, 0.0), 3) if gap is not None else None,
                "outcome": a.get("outcome"),
                "how": _how(a),
                "exit_code": a.get("exit_code"),
                "signal": a.get("signal"),
                "cause": a.get("category"),
                "transient": a.get("transient"),
                "summary": a.get("summary"),
                "host": a.get("host"),
                "hosts": a.get("hosts"),
                "first_step": a.get("first_step"),
                "last_step": a.get("last_step"),
                "resume_from": a.get("resume_from"),
                "resume_step": a.get("resume_step"),
                "skip_steps": [list(w) for w in a.get("skip_steps") or []],
                "lr_scale": a.get("lr_scale"),
            }
        )
    return out


# -- incidents -----------------------------------------------------------------------------------


def _explains(inc: Mapping[str, Any], a: Mapping[str, Any]) -> bool:
    """Whether the vital-sign incident `inc` explains how attempt `a` ended."""
    if inc.get("attempt") != a["number"]:
        return False
    if inc["kind"] == "hang":
        return True
    anomaly = a.get("anomaly_step")
    if anomaly is not None:  # rolled back for one anomaly: an earlier spike that settled is not it
        return bool(inc.get("step") == anomaly)
    return a.get("category") is not None and inc.get("category") == a.get("category")


@dataclass(frozen=True)
class _Index:
    """The rows of each attempt, looked up once (a long run has thousands of attempts)."""

    incidents: Mapping[int | None, list[int]]  # positions in rows.incidents
    diagnosis: Mapping[int | None, Mapping[str, Any]]  # the newest of the attempt
    verdict: Mapping[int | None, Mapping[str, Any]]  # of its attempt_ended event
    stacks: Mapping[int | None, list[Mapping[str, Any]]]
    samples: Mapping[int | None, list[Mapping[str, Any]]]  # metrics rows with a step


def _index(rows: LogbookRows) -> _Index:
    incidents: dict[int | None, list[int]] = {}
    for k, i in enumerate(rows.incidents):
        incidents.setdefault(i.get("attempt"), []).append(k)
    verdict = {}
    for e in rows.events:
        v = (e.get("data") or {}).get("verdict") if e["kind"] == "attempt_ended" else None
        if isinstance(v, Mapping):
            verdict[e.get("attempt")] = v
    stacks: dict[int | None, list[Mapping[str, Any]]] = {}
    for x in rows.stacks:
        stacks.setdefault(x.get("attempt"), []).append(x)
    samples: dict[int | None, list[Mapping[str, Any]]] = {}
    for m in rows.metrics:
        if m.get("step") is not None:
            samples.setdefault(m.get("attempt"), []).append(m)
    return _Index(
        incidents, {d.get("attempt"): d for d in rows.diagnoses}, verdict, stacks, samples
    )


def _incidents(rows: LogbookRows) -> list[dict[str, Any]]:
    by_number = {a["number"]: a for a in rows.attempts}
    failed = [a for a in rows.attempts if a.get("outcome") in FAILED]
    index = _index(rows)
    taken: set[int] = set()
    out: list[tuple[float, dict[str, Any]]] = []
    for a in failed:
        mine = [k for k in index.incidents.get(a["number"], []) if k not in taken]
        explains = [k for k in mine if _explains(rows.incidents[k], a)]
        taken.update(explains)
        signals = [rows.incidents[k] for k in explains]
        diag = index.diagnosis.get(a["number"])
        verdict = index.verdict.get(a["number"])
        ts = a["ended"] if a.get("ended") is not None else a["started"]
        step = a.get("anomaly_step")
        if step is None:
            step = signals[0].get("step") if signals else a.get("last_step")
        entry = _incident(
            kind=str(a["outcome"]),
            category=a.get("category") or "unknown",
            title=f"attempt {a['number']} {_how(a)}",
            ts=ts,
            attempt=a["number"],
            step=step,
            summary=a.get("summary"),
            signals=signals,
            diagnosis=diag,
            fallback_triage=_attempt_triage(a, verdict),
            fallback_evidence=[str(t) for t in (verdict or {}).get("evidence") or []],
            stacks=index.stacks.get(a["number"], []),
        )
        entry["vitals"] = _vitals(signals, index, a, step, by_number.get(a["number"] + 1))
        out.append((ts, entry))
    for k, i in enumerate(rows.incidents):
        if k in taken:
            continue
        owner = by_number.get(i["attempt"]) if i.get("attempt") is not None else None
        entry = _incident(
            kind=i["kind"],
            category=i["category"],
            title=f"{i['kind']}" + (f" at step {i['step']}" if i.get("step") is not None else ""),
            ts=i["ts"],
            attempt=i.get("attempt"),
            step=i.get("step"),
            summary=i["message"],
            signals=[i],
            stacks=[],
        )
        nxt = by_number.get(i["attempt"] + 1) if i.get("attempt") is not None else None
        entry["vitals"] = _vitals([i], index, owner, i.get("step"), nxt)
        out.append((i["ts"], entry))
    attached = {a["number"] for a in failed}
    for d in rows.diagnoses:  # a verdict on no failed attempt: `babysit watch` on a log
        if d.get("attempt") in attached:
            continue
        doc = d.get("document") or {}
        entry = _incident(
            kind="triage",
            category=doc.get("category") or d.get("category") or "unknown",
            title=f"triage: {doc.get('category') or d.get('category')}",
            ts=d["ts"],
            attempt=d.get("attempt"),
            step=None,
            summary=doc.get("summary") or d.get("summary"),
            signals=[],
            diagnosis=d,
            stacks=[],
        )
        entry["vitals"] = []
        out.append((d["ts"], entry))
    out.sort(key=lambda pair: pair[0])
    for n, (_, entry) in enumerate(out, start=1):
        entry["id"] = f"I{n}"
    return [{"id": e.pop("id"), **e} for _, e in out]


def _attempt_triage(
    a: Mapping[str, Any], verdict: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """What the attempt row (and its end event) say when no triage document was kept."""
    if a.get("category") is None and verdict is None:
        return None
    host = a.get("suspect_host")
    return {
        "category": a.get("category") or (verdict or {}).get("category") or "unknown",
        "transient": a.get("transient"),
        "suspect": {"kind": "node" if host else "unknown", "host": host, "rank": None, "gpu": None},
        "confidence": None,
        "summary": a.get("summary") or (verdict or {}).get("summary"),
        "action": None,
        "fingerprint": a.get("fingerprint"),
        "rule": None,
    }


def _incident(
    kind: str,
    category: str,
    title: str,
    ts: float,
    attempt: int | None,
    step: int | None,
    summary: str | None,
    signals: Sequence[Mapping[str, Any]],
    stacks: Sequence[Mapping[str, Any]],
    diagnosis: Mapping[str, Any] | None = None,
    fallback_triage: dict[str, Any] | None = None,
    fallback_evidence: Sequence[str] = (),
) -> dict[str, Any]:
    doc = (diagnosis or {}).get("document") or {}
    if doc:
        triage: dict[str, Any] | None = {
            "category": doc.get("category"),
            "transient": doc.get("transient"),
            "suspect": doc.get("suspect") or {"kind": "unknown"},
            "confidence": doc.get("confidence"),
            "summary": doc.get("summary"),
            "action": doc.get("action"),
            "fingerprint": doc.get("fingerprint"),
            "rule": doc.get("rule"),
        }
        evidence = [
            {"file": e.get("file"), "line": e.get("line"), "text": _cut(e.get("text"))}
            for e in (doc.get("evidence") or [])[:EVIDENCE_LINES]
        ]
    else:
        triage = fallback_triage
        evidence = [
            {"file": None, "line": None, "text": _cut(t)}
            for t in fallback_evidence[:EVIDENCE_LINES]
        ]
    return {
        "id": "",
        "ts": iso(ts),
        "attempt": attempt,
        "kind": kind,
        "category": category,
        "title": title,
        "step": step,
        "summary": summary,
        "signals": [
            {
                "ts": iso(i["ts"]),
                "kind": i["kind"],
                "step": i.get("step"),
                "metric": i.get("metric"),
                "value": i.get("value"),
                "baseline": i.get("baseline"),
                "message": i["message"],
            }
            for i in signals
        ],
        "triage": triage,
        "evidence": evidence,
        "consequences": list(doc.get("consequences") or [])[:5],
        "stacks": [
            {
                "ts": iso(x["ts"]),
                "summary": (x.get("report") or {}).get("summary") or x.get("summary"),
                "groups": [
                    {k: g.get(k) for k in ("where", "count", "ranks", "pids", "odd")}
                    for g in (x.get("report") or {}).get("groups") or []
                ],
                "evidence": (x.get("report") or {}).get("evidence"),
            }
            for x in stacks
        ],
    }


def _cut(text: object) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= EVIDENCE_CHARS else s[: EVIDENCE_CHARS - 1] + "…"


# -- the vital signs around an incident --------------------------------------------------------


def metric_value(v: Any) -> float | None:
    """A stored metric value: a number, or the text of a non-finite one ("nan", "inf")."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _vitals(
    signals: Sequence[Mapping[str, Any]],
    index: _Index,
    attempt: Mapping[str, Any] | None,
    step: int | None,
    next_attempt: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    """Each vital sign around the incident: the incidents' own windows (the values the detector
    saw), then the sampled metrics of the attempt in the same range of steps."""
    series: dict[str, dict[float, float]] = {}
    for i in signals:
        metric = i.get("metric")
        for point in i.get("window") or []:
            x, y = point[0], metric_value(point[1])
            if metric and x is not None and y is not None:
                series.setdefault(metric, {})[float(x)] = y
        if metric and i.get("step") is not None and metric_value(i.get("value")) is not None:
            series.setdefault(metric, {}).setdefault(float(i["step"]), float(i["value"]))
    window = [x for s in series.values() for x in s]
    number = attempt["number"] if attempt else None
    samples = index.samples.get(number, [])
    if window:
        lo, hi = min(window), max(window)
        pad = max(hi - lo, 10.0)
        lo, hi = lo - pad, hi + pad
    elif step is not None:
        lo, hi = -math.inf, float(step) + 1
    else:
        lo, hi = -math.inf, math.inf
    for m in samples:
        x = float(m["step"])
        if not lo <= x <= hi:
            continue
        for key, raw in (m.get("vals") or {}).items():
            y = metric_value(raw)
            if key in VITAL_KEYS and y is not None:
                series.setdefault(key, {}).setdefault(x, y)
    marks = sorted({float(i["step"]) for i in signals if i.get("step") is not None})
    if not marks and step is not None:
        marks = [float(step)]
    bands = (
        [[float(w[0]), float(w[1])] for w in (next_attempt or {}).get("skip_steps") or []]
        if marks
        else []
    )
    out = []
    for key in sorted(series, key=lambda k: VITAL_KEYS.index(k) if k in VITAL_KEYS else 99):
        points = sorted(series[key].items())[-MAX_POINTS:]
        if len(points) < 2:
            continue
        out.append(
            {
                "metric": key,
                "points": [[_int(x), y] for x, y in points],
                "marks": marks,
                "bands": bands,
            }
        )
    return out[:MAX_VITALS]


def _int(x: float) -> int | float:
    return int(x) if x.is_integer() else x
