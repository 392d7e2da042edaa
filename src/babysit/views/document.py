"""The run as one JSON-able document: what `status --json` and `logbook --format json` print.

    doc = run_document(store.run("gpt"), store.attempts("gpt"), store.events("gpt"), alive=True)

Stable keys (scripts depend on them): run, state, attempts[].{number, pid, started, ended,
exit_code, signal, last_step, cause}, events[], incidents[].{kind, category, step, metric,
value, baseline, message}, diagnoses[].{ts, attempt, category, transient, suspect, summary,
action, evidence, consequences, fingerprint, confidence} (see views.triage). Times are ISO
8601 in UTC. The document is strict JSON: a non-finite number (an incident's value of inf) is
the string "inf", "-inf" or "nan", as `watch --json` writes it (babysit.strictjson).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psutil

from babysit.durations import iso_utc
from babysit.strictjson import finite


def iso(ts: float | None) -> str | None:
    return iso_utc(ts)  # the one format of every time in babysit's JSON


def supervisor_alive(run: Mapping[str, Any], hostname: str) -> bool:
    """Whether the babysit recorded as supervising the run is still alive (on this host)."""
    pid, started = run.get("supervisor_pid"), run.get("supervisor_started")
    if pid is None or started is None or run.get("supervisor_host") != hostname:
        return False
    try:
        return abs(psutil.Process(int(pid)).create_time() - float(started)) < 1.0
    except psutil.Error:
        return False


def attempt_document(a: Mapping[str, Any]) -> dict[str, Any]:
    duration = (a["ended"] - a["started"]) if a.get("ended") is not None else None
    return {
        "number": a["number"],
        "pid": a.get("pid"),
        "host": a.get("host"),
        "started": iso(a["started"]),
        "ended": iso(a.get("ended")),
        "duration_s": round(duration, 3) if duration is not None else None,
        "outcome": a.get("outcome"),
        "exit_code": a.get("exit_code"),
        "signal": a.get("signal"),
        "first_step": a.get("first_step"),
        "last_step": a.get("last_step"),
        "cause": a.get("category"),
        "transient": a.get("transient"),
        "summary": a.get("summary"),
        "resume_from": a.get("resume_from"),
        "resume_step": a.get("resume_step"),
        "skip_steps": [list(w) for w in a.get("skip_steps") or []],
        "lr_scale": a.get("lr_scale"),
        "anomaly_step": a.get("anomaly_step"),
        "suspect_host": a.get("suspect_host"),
        "hosts": a.get("hosts"),
        "argv": a.get("argv"),
        "log_dir": a.get("log_dir"),
    }


def event_document(e: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "ts": iso(e["ts"]),
        "attempt": e.get("attempt"),
        "kind": e["kind"],
        "message": e["message"],
        "data": e.get("data") or {},
    }


def incident_document(i: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "ts": iso(i["ts"]),
        "attempt": i.get("attempt"),
        "kind": i["kind"],
        "category": i["category"],
        "step": i.get("step"),
        "metric": i.get("metric"),
        "value": i.get("value"),
        "baseline": i.get("baseline"),
        "message": i["message"],
        "window": i.get("window") or [],
    }


def run_document(
    run: Mapping[str, Any],
    attempts: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    alive: bool,
    incidents: Sequence[Mapping[str, Any]] = (),
    diagnoses: Sequence[Mapping[str, Any]] = (),
    stacks: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    doc = {
        "run": run["name"],
        "state": run["state"],
        "reason": run.get("reason"),
        "exit_code": run.get("exit_code"),
        "supervised": alive,
        "supervisor_pid": run.get("supervisor_pid") if alive else None,
        "command": run.get("command"),
        "cwd": run.get("cwd"),
        "created": iso(run.get("created")),
        "updated": iso(run.get("updated")),
        "attempts": [attempt_document(a) for a in attempts],
        "events": [event_document(e) for e in events],
        "incidents": [incident_document(i) for i in incidents],
        "diagnoses": [diagnosis_row_document(d) for d in diagnoses],
        "stacks": [
            {**(x.get("report") or {}), "ts": iso(x["ts"]), "attempt": x.get("attempt")}
            for x in stacks
        ],
    }
    strict: dict[str, Any] = finite(doc)
    return strict


def diagnosis_row_document(d: Mapping[str, Any]) -> dict[str, Any]:
    """A stored triage verdict: when, which attempt, and the triage document itself."""
    return {"ts": iso(d["ts"]), "attempt": d.get("attempt"), **(d.get("document") or {})}
