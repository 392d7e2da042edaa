"""Finding the attempt an earlier babysit left behind: the one to re-attach to on start-up.

    row, handle = unfinished(run_dir, rows, name, journal, say, engine)   # or None

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
from babysit.errors import RunBusy
from babysit.records import Level, Outcome, Say
from babysit.store.writes import AddAttempt
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
