"""Finding what an earlier babysit left behind: the attempt to re-attach to on start-up, the one
it recorded but never launched, the backoff it did not see through; and a start that fails.

    row, handle = unfinished(run_dir, rows, name, journal, say, engine)   # or None
    number = unlaunched(rows, engine)           # recorded, never launched: launch it, uncounted
    wait_s, why = stored_backoff(store, run, now)   # the rest of the stored backoff
    failed_start(journal, exc)                  # the run is not left `starting` under no babysit

The store's last attempt when it is still marked running, or an attempt directory the store does
not know (babysit died between writing the directory and the store) whose processes still live:
that one is adopted, with a row written for it. A wiring module of the supervisor's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from babysit.engines import Engine
from babysit.engines.process import Handle
from babysit.errors import BabysitError, RunBusy
from babysit.records import EventKind, ExitCode, Level, Outcome, RunState, Say
from babysit.store import Store
from babysit.store.writes import AddAttempt, SetRunState
from babysit.supervise.journal import Journal

_ATTEMPT_DIR = re.compile(r"^attempt-(\d+)$")


def highest_attempt_dir(run_dir: Path) -> int:
    """Attempt directories can exist that the store does not know (babysit died around a
    launch): their numbers are never reused."""
    try:
        names = os.listdir(run_dir)
    except OSError:
        return 0
    return max((int(m.group(1)) for n in names if (m := _ATTEMPT_DIR.match(n))), default=0)


def unfinished(
    run_dir: Path,
    rows: Sequence[dict[str, Any]],
    name: str,
    journal: Journal,
    say: Say,
    engine: Engine,
) -> tuple[dict[str, Any], Handle] | None:
    """The unfinished attempt's row and a handle on its processes (a handle that finds nothing
    when the launch never happened), or None. Raises RunBusy for an attempt of another host."""
    row = dict(rows[-1]) if rows and rows[-1]["outcome"] == Outcome.RUNNING.value else None
    known = {r["number"] for r in rows}
    if row is None:
        for n in range(highest_attempt_dir(run_dir), 0, -1):
            if n in known:
                break
            adopted = engine.adopt(run_dir / f"attempt-{n:04d}")
            if adopted is not None and engine.poll(adopted) is None:
                row = _adopt_row(n, adopted, name, journal, say, engine.host)
                break
    if row is None:
        return None
    attempt_dir = Path(row["log_dir"])
    here = engine.host
    if row.get("host") and row["host"] != here and not (attempt_dir / "exit.json").exists():
        raise RunBusy(
            f"attempt {row['number']} of run {name!r} was started on host "
            f"{row['host']}, and babysit can only watch processes of its own host: run "
            f"this command there, or pick another --name"
        )
    handle = engine.reattach(
        row["launcher_pid"], row["launcher_started"], attempt_dir, row.get("token") or ""
    ) or engine.adopt(attempt_dir, row.get("token"))
    if handle is None:  # never launched: the intent was written, the launch never happened
        handle = Handle(0, 0.0, attempt_dir, row.get("token") or "")
    return row, handle


def _adopt_row(
    number: int, handle: Handle, name: str, journal: Journal, say: Say, host: str
) -> dict[str, Any]:
    attempt_dir = handle.attempt_dir
    fields = {
        "started": os.path.getmtime(attempt_dir),
        "host": host,
        "launcher_pid": handle.launcher_pid,
        "launcher_started": handle.launcher_started,
        "log_dir": str(attempt_dir),
        "token": handle.token,
    }
    journal.write(AddAttempt(name, number, fields))
    say(
        Level.WARN,
        f"found attempt {number} running without a record (babysit died while "
        "launching it): adopting it",
    )
    return {
        "number": number,
        "outcome": Outcome.RUNNING.value,
        "first_step": None,
        "last_step": None,
        "stdout_offset": 0,
        "stderr_offset": 0,
        **fields,
    }


def unlaunched(rows: Sequence[dict[str, Any]], engine: Engine) -> int | None:
    """The number of the run's last attempt when it was recorded but never launched (babysit
    was killed between writing its row and starting its launcher): no launcher pid in the row,
    nothing the launcher writes in its directory, no process carrying its token. That attempt
    is no failure: the next babysit launches it, under the same number. None otherwise."""
    if not rows:
        return None
    row = rows[-1]
    if row["outcome"] != Outcome.RUNNING.value or row.get("launcher_pid") is not None:
        return None
    if row.get("host") and row["host"] != engine.host:
        return None  # another host's attempt: not this babysit's to judge (unfinished says so)
    attempt_dir = Path(row["log_dir"]) if row.get("log_dir") else None
    if attempt_dir is None:
        return None
    if (attempt_dir / "launcher.json").exists() or (attempt_dir / "exit.json").exists():
        return None
    token = row.get("token") or ""
    if token and engine.survivors(Handle(0, 0.0, attempt_dir, token)):
        return None
    number: int = row["number"]
    return number


RESTART_KINDS = (EventKind.RESTART_SCHEDULED.value, EventKind.ROLLBACK.value)


def stored_backoff(store: Store, run: dict[str, Any] | None, now: float) -> tuple[float, str]:
    """The rest of a backoff an earlier babysit decided and did not see through (it was killed
    during it): (seconds still to wait, what to tell the operator); (0, "") when none. The
    relaunch is due at the time that babysit stored, not one backoff after this one starts."""
    if run is None or RunState(run["state"]).final:
        return 0.0, ""  # a new run, or one started again after it ended: no decision pending
    kinds = (*RESTART_KINDS, EventKind.ATTEMPT_STARTED.value, EventKind.REATTACHED.value)
    last = store.last_event(run["name"], kinds)
    if last is None or last["kind"] not in RESTART_KINDS:
        return 0.0, ""
    delay = last["data"].get("delay_s")
    if not isinstance(delay, (int, float)):
        return 0.0, ""
    left = float(last["ts"]) + float(delay) - now
    attempt = len(store.attempts(run["name"])) + 1
    if left <= 0:
        return 0.0, ""
    return left, (
        f"babysit was away during the backoff before attempt {attempt}: relaunching it when "
        f"it was due, in {left:.1f}s (decided before: {last['message']})"
    )


def failed_start(journal: Journal, exc: BabysitError) -> None:
    """This babysit took the run (its row says `starting`) and cannot go on (command not found,
    attempt of another host, a bad hostfile). The store must not keep a run `starting` under no
    babysit, which `status` would offer to re-attach: a run that ran nothing is marked failed to
    start; a run an earlier babysit left unfinished gets its state back, with a note."""
    run = journal.run
    found = journal.ledger.found if journal.ledger is not None else None
    if journal.run_state not in (None, RunState.STARTING):
        # Mid-run: what was launched is over; the run stops here, with the reason.
        journal.event(EventKind.GAVE_UP, str(exc), exit_code=int(ExitCode.USAGE))
        journal.state(RunState.FAILED, str(exc), ExitCode.USAGE)
        return
    if found is None or RunState(found["state"]).final:
        reason = f"failed to start: {exc}"
        journal.event(EventKind.GAVE_UP, reason, exit_code=int(ExitCode.USAGE))
        journal.state(RunState.FAILED, reason, ExitCode.USAGE)
        return
    journal.event(EventKind.NOTE, f"a babysit could not take over the run: {exc}")
    state = RunState(found["state"])
    journal.run_state = state
    journal.write(SetRunState(run, state, found.get("reason"), found.get("exit_code")))
