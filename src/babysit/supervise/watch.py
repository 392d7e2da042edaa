"""`babysit watch`: the vital signs of a run babysit did not launch, from its log files.

    report = replay([Path("slurm-1234.out")])          # the whole file, then a report
    follow([Path("slurm-1234.out")], store, "job1234", say, stop=lambda: False)

The same Pipeline as `babysit run` (parse + detectors), so a replay of a log decides what live
supervision decided, except for hangs: a replay has no clock of its own (lines rarely carry
timestamps), so hangs are detected only when following live. Nothing is restarted here.
The same triage as `babysit run` names the root cause of a failure in the files: at the end of
a replay, and when following, each time the files go quiet after an error (a crash ends the
output) and when the watch ends; a new, confident verdict is recorded in the store.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babysit.alerts import Alerts
from babysit.detect.outcome import TRUSTED
from babysit.detect.straggler import StragglerRule
from babysit.detect.vitals import VitalsRules
from babysit.errors import UsageError
from babysit.records import Event, EventKind, Incident, Level, RunState, Say
from babysit.sources.follow import Follower
from babysit.store import Store
from babysit.store.writes import AddDiagnosis, AddEventRow, AddIncident
from babysit.supervise.pipeline import Pipeline
from babysit.supervise.postmortem import Postmortem
from babysit.triage import Knowledge, load_knowledge

QUIET_S = 30.0  # files silent this long after growing: triage them


def _check(paths: list[Path]) -> None:
    for path in paths:
        if not path.exists():
            raise UsageError(f"no such log file: {path}")
        if path.is_dir():
            raise UsageError(f"{path} is a directory: pass the log files in it")
        if not path.is_file():
            raise UsageError(
                f"{path} is not a regular file (a FIFO, socket or device): give the log file "
                "it comes from"
            )


def wait_for_files(
    paths: list[Path],
    say: Say,
    stop: Callable[[], bool],
    poll_s: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Wait until every path exists (a pending Slurm job's `slurm-%j.out` appears when the job
    starts). False when stop() said to stop first."""
    missing = [p for p in paths if not p.exists()]
    if missing:
        names = ", ".join(map(str, missing))
        say(Level.INFO, f"waiting for {names} to appear (Ctrl-C to stop)")
    while missing:
        if stop():
            return False
        sleep(poll_s)
        missing = [p for p in missing if not p.exists()]
    return True


def incident_document(inc: Incident, file: str | None = None) -> dict[str, Any]:
    def num(v: float | None) -> float | str | None:
        return v if v is None or math.isfinite(v) else str(v)

    return {
        "kind": inc.kind.value,
        "category": inc.category.value,
        "step": inc.step,
        "metric": inc.metric,
        "value": num(inc.value),
        "baseline": num(inc.baseline),
        "line": inc.line,
        "file": file,
        "message": inc.message,
    }


def replay(
    paths: list[Path],
    rules: VitalsRules | None = None,
    kb: Knowledge | None = None,
    straggler: StragglerRule | None = None,
) -> dict[str, Any]:
    """Read every file to its end through the pipeline; the JSON report of `watch --json`
    (its `triage` is the verdict on a failure in the files, null when triage found none)."""
    _check(paths)
    pipeline = Pipeline(rules, straggler)
    incidents: list[dict[str, Any]] = []
    now = time.time()
    pipeline.new_attempt(now)
    for path in paths:
        follower = Follower(path, str(path))  # each file its own detectors (per-rank logs)
        while True:
            chunk = follower.poll(now, final=True)
            incidents += [incident_document(i, str(path)) for i in pipeline.lines(chunk.lines)]
            if not chunk.data:
                break
    incidents += [incident_document(i) for i in pipeline.flush()]  # lines held for a next one
    return {
        "files": [str(p) for p in paths],
        "progress": {
            "first_step": pipeline.first_step,
            "last_step": pipeline.last_step,
            "lines": pipeline.lines_seen,
            "metric_records": pipeline.metric_records,
            "unparsable_lines": pipeline.failures,
        },
        "metrics": pipeline.metric_names,
        "latest": {k: (v if math.isfinite(v) else str(v)) for k, v in pipeline.latest.items()},
        "incidents": incidents,
        "triage": _triage_document(paths, kb),
    }


def _triage_document(paths: list[Path], kb: Knowledge | None) -> dict[str, Any] | None:
    pm = Postmortem(kb or load_knowledge(), lambda level, msg: None, kernel=False)
    d = pm.diagnose(paths, started=0.0)
    if d is None or d.rule is None:
        return None
    return pm.document(d, None)[0]


def follow(
    paths: list[Path],
    store: Store,
    name: str,
    say: Say,
    stop: Callable[[], bool],
    rules: VitalsRules | None = None,
    poll_s: float = 0.5,
    kb: Knowledge | None = None,
    quiet_s: float = QUIET_S,
    alerts: Alerts | None = None,
    straggler: StragglerRule | None = None,
) -> int | None:
    """Follow the files (from their start, once they exist) until stop() says so; record
    incidents in the store under run `name` (and tell `alerts`, opened with watching=True).
    Returns the number of incidents; None when stopped before the files appeared."""
    if not wait_for_files(paths, say, stop, poll_s):
        return None
    _check(paths)
    store.start_run(name, ["babysit", "watch", *map(str, paths)], str(Path.cwd()), {})
    store.set_run_state(name, RunState.RUNNING, "watched (babysit watch --follow)")
    followers = [Follower(p, str(p)) for p in paths]
    pipeline = Pipeline(rules, straggler)
    pipeline.new_attempt(time.time())
    pm = Postmortem(kb or load_knowledge(), say, kernel=False)
    count = 0
    grew_at: float | None = None  # when the files last grew, while not yet triaged
    # The newest Python error the pipeline had seen at the last triage (it keeps the last 20).
    last_error: object = None

    def new_error() -> bool:
        return bool(pipeline.errors) and pipeline.errors[-1] is not last_error

    told: set[str | None] = set()  # fingerprints already recorded

    def triage(now: float) -> None:
        nonlocal count
        d = pm.diagnose(paths, started=0.0)
        if d is None or d.rule is None or d.confidence < TRUSTED or d.fingerprint in told:
            return
        told.add(d.fingerprint)
        count += 1
        doc, seen = pm.document(d, store, now)
        store.apply(AddDiagnosis(name, None, now, doc))  # apply(): redacted on the way in
        tell(
            Event(
                name,
                EventKind.NOTE,
                f"triage: {d.category.value}: {d.summary}",
                now,
                None,
                {"fingerprint": d.fingerprint},
            )
        )
        say(Level.WARN, f"triage: {d.category.value}: {d.summary}")
        pm.tell(d, seen)

    def tell(ev: Event) -> None:
        store.apply(AddEventRow(ev))
        if alerts is not None:
            alerts.event(ev)  # returns at once: alerts go out on their own threads

    def record(inc: Incident, path: Path) -> None:
        nonlocal count
        count += 1
        store.apply(AddIncident(name, None, inc))
        tell(_event(name, inc, path))
        say(Level.WARN, f"{path.name}: {inc.kind.value.replace('_', ' ')}: {inc.message}")

    say(Level.INFO, f"watching {', '.join(map(str, paths))} as run {name!r} (Ctrl-C to stop)")
    while not stop():
        now = time.time()
        for path, f in zip(paths, followers, strict=True):
            chunk = f.poll(now)
            if chunk.data:
                grew_at = now
            for inc in pipeline.lines(chunk.lines):
                record(inc, path)
        for inc in pipeline.tick(now):
            record(inc, paths[0])
        if grew_at is not None and now - grew_at >= quiet_s:
            grew_at = None
            if new_error():  # a quiet spell after an error: a crash?
                last_error = pipeline.errors[-1]
                triage(now)
        time.sleep(poll_s)
    if new_error() or grew_at is not None:
        triage(time.time())
    if alerts is not None:
        alerts.close()  # what is still on its way gets [alerts] drain_s to go out
    store.set_run_state(name, RunState.STOPPED, "watch ended")
    store.release_run(name)
    return count


def _event(run: str, inc: Incident, path: Path) -> Event:
    return Event(
        run,
        EventKind.INCIDENT,
        f"{path.name}: {inc.message}",
        inc.ts,
        None,
        {"incident": inc.kind.value, "step": inc.step, "metric": inc.metric},
    )
